package dev.tidemark.rocksdb;

import dev.tidemark.tsdb.append.AppendResult;
import dev.tidemark.tsdb.append.RejectReason;
import dev.tidemark.tsdb.append.SampleBatch;
import dev.tidemark.tsdb.engine.Engine;
import dev.tidemark.tsdb.engine.EngineConfig;
import dev.tidemark.tsdb.model.Labels;
import dev.tidemark.tsdb.model.MetricMetadata;
import dev.tidemark.tsdb.model.MetricType;
import dev.tidemark.tsdb.model.Temporality;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;

/**
 * The child process of {@link EngineCrashTest}, run in its own JVM, and the deterministic workload
 * both sides share.
 *
 * <p>{@code main(dir, nowMillis, round, firstBatch, fsync)} opens a {@link RocksDbKvStore} and an
 * {@link Engine} on {@code dir} with a clock fixed at {@code nowMillis}, prints {@code READY
 * <recoveryMillis> <headSeries>}, then appends {@link #generate batches} {@code firstBatch,
 * firstBatch+1, ...} forever. After each {@code append} returns it prints {@code ACK <batch>
 * <rejected points>} (flushed) and, every {@link #FLUSH_EVERY} batches, calls {@link
 * Engine#flush()} so later late samples reopen sealed buckets. The parent kills it with SIGKILL.
 *
 * <p>Batch {@code b} holds samples at {@link #time time(b)} = {@link #T0} + b * 10 s for 200 series
 * (140 gauges, 20 histograms of 3 series each as 3-sample points), late samples 15 s and 55 s
 * behind (inside the 1 min out-of-order window, sometimes in the previous bucket), an idempotent
 * retry, and 6 points that must be rejected, each mixing a valid sample with the invalid one: too
 * far in the future (with a brand-new series that must never appear), duplicate, two invalid ones,
 * out of order, too old. Values depend on (round, batch, series), so the parent can recompute
 * exactly what any batch of any round contained.
 */
public final class EngineCrashingWriter {

  /** 2026-01-01T00:00:00Z, a bucket boundary. */
  static final long T0 = 1_767_225_600_000L;

  static final long STEP_MILLIS = 10_000;
  static final long HOUR = 3_600_000L;
  static final Duration OUT_OF_ORDER_WINDOW = Duration.ofMinutes(1);
  static final Duration RETENTION = Duration.ofDays(30);

  /** The fixed "now" of every round: well after all the data time the test produces. */
  static final long NOW = T0 + 3 * 24 * HOUR;

  static final int GAUGES = 140;

  /** Gauges below this index get a sample in every batch; the others skip one batch in 9. */
  static final int ALWAYS = 100;

  static final int HISTOGRAMS = 20;
  static final int SERIES = GAUGES + 3 * HISTOGRAMS;

  /** The child flushes after batch b when {@code b % FLUSH_EVERY == FLUSH_EVERY / 2}. */
  static final int FLUSH_EVERY = 45;

  /** Batches per bucket, and the batch (mod that) whose append makes the previous bucket due. */
  static final long BATCHES_PER_BUCKET = HOUR / STEP_MILLIS;

  static final long SEAL_TRIGGER_OFFSET = OUT_OF_ORDER_WINDOW.toMillis() / STEP_MILLIS;

  static final MetricMetadata GAUGE_META =
      new MetricMetadata(MetricType.GAUGE, "bytes", Temporality.UNSPECIFIED, false);
  static final MetricMetadata HISTOGRAM_META =
      new MetricMetadata(MetricType.HISTOGRAM, "seconds", Temporality.CUMULATIVE, true);

  static final Labels[] GAUGE_LABELS = new Labels[GAUGES];
  static final Labels[] HIST_BUCKET = new Labels[HISTOGRAMS];
  static final Labels[] HIST_SUM = new Labels[HISTOGRAMS];
  static final Labels[] HIST_COUNT = new Labels[HISTOGRAMS];

  private static final long[] SPECIAL_BITS = {
    SampleBatch.STALE_NAN_BITS,
    0x7ff8000000000001L,
    Double.doubleToRawLongBits(-0.0),
    Double.doubleToRawLongBits(Double.POSITIVE_INFINITY),
    0x7ff8dead0000beefL,
    1L,
  };

  static {
    for (int i = 0; i < GAUGES; i++) {
      GAUGE_LABELS[i] =
          Labels.builder()
              .add(Labels.METRIC_NAME, "crash_gauge_" + (i % 7))
              .add("job", "job-" + (i % 4))
              .add("instance", "host-" + (i % 23) + ":9100")
              .add("series", "g" + i)
              .build();
    }
    for (int j = 0; j < HISTOGRAMS; j++) {
      Labels base =
          Labels.builder()
              .add("job", "job-" + (j % 4))
              .add("instance", "host-" + (j % 23) + ":9100")
              .add("handler", "/api/v" + j)
              .build();
      HIST_BUCKET[j] =
          base.toBuilder()
              .add(Labels.METRIC_NAME, "crash_latency_bucket")
              .add("le", "0.25")
              .build();
      HIST_SUM[j] = base.toBuilder().add(Labels.METRIC_NAME, "crash_latency_sum").build();
      HIST_COUNT[j] = base.toBuilder().add(Labels.METRIC_NAME, "crash_latency_count").build();
    }
  }

  private EngineCrashingWriter() {}

  static long time(long batch) {
    return T0 + batch * STEP_MILLIS;
  }

  static EngineConfig engineConfig(long nowMillis, boolean fsync) {
    return EngineConfig.builder()
        .clock(Clock.fixed(Instant.ofEpochMilli(nowMillis), ZoneOffset.UTC))
        .outOfOrderWindow(OUT_OF_ORDER_WINDOW)
        .retention(RETENTION)
        .retentionInterval(Duration.ZERO)
        .fsync(fsync)
        .build();
  }

  /** Small memtables so that RocksDB flushes SST files during the run (and gets killed in one). */
  static RocksDbConfig storeConfig() {
    return RocksDbConfig.builder().blockCacheBytes(8L << 20).writeBufferBytes(512L << 10).build();
  }

  /** One batch and the reason each of its points must get (null: accepted). */
  record Generated(SampleBatch batch, RejectReason[] expected) {}

  /** Deterministic, well-mixed 64 bits (SplitMix64 finaliser). */
  static long mix(long x) {
    x += 0x9E3779B97F4A7C15L;
    x = (x ^ (x >>> 30)) * 0xBF58476D1CE4E5B9L;
    x = (x ^ (x >>> 27)) * 0x94D049BB133111EBL;
    return x ^ (x >>> 31);
  }

  /** The value bits of a sample: mostly plain decimals, sometimes NaN payloads, -0, +Inf. */
  static long bits(int round, long batch, int series, int salt) {
    long h = mix(mix(mix(round * 1_000_003L + salt) + batch) + series);
    if ((h & 63) == 0) {
      return SPECIAL_BITS[(int) ((h >>> 6) % SPECIAL_BITS.length)];
    }
    return Double.doubleToRawLongBits(((h >>> 20) % 10_000_000) / 8.0);
  }

  private static void add(SampleBatch batch, Labels l, MetricMetadata meta, long t, long bits) {
    if (bits == SampleBatch.STALE_NAN_BITS) {
      batch.addStaleMarker(l, meta, t);
    } else {
      batch.add(l, meta, t, Double.longBitsToDouble(bits));
    }
  }

  static boolean gaugePresent(long batch, int i) {
    return i < ALWAYS || (batch + i) % 9 != 0;
  }

  /** The content of batch {@code b} of round {@code round}; see the class comment. */
  static Generated generate(int round, long b, long nowMillis) {
    SampleBatch batch = new SampleBatch(320);
    java.util.List<RejectReason> expected = new java.util.ArrayList<>();
    long t = time(b);
    // In order: every gauge (some skip a batch), one 3-sample point per histogram.
    for (int i = 0; i < GAUGES; i++) {
      if (gaugePresent(b, i)) {
        add(batch, GAUGE_LABELS[i], GAUGE_META, t, bits(round, b, i, 0));
        batch.endPoint();
        expected.add(null);
      }
    }
    for (int j = 0; j < HISTOGRAMS; j++) {
      add(batch, HIST_BUCKET[j], HISTOGRAM_META, t, bits(round, b, GAUGES + j, 0));
      add(batch, HIST_SUM[j], HISTOGRAM_META, t, bits(round, b, GAUGES + HISTOGRAMS + j, 0));
      add(batch, HIST_COUNT[j], HISTOGRAM_META, t, bits(round, b, GAUGES + 2 * HISTOGRAMS + j, 0));
      batch.endPoint();
      expected.add(null);
    }
    // Late but inside the window: 15 s behind (same bucket mostly) and 55 s behind (previous
    // bucket right after a boundary). Off the 10 s grid, so they never collide with anything.
    for (int k = 0; k < 4; k++) {
      int i = (int) ((b * 37 + k * 53) % GAUGES);
      add(batch, GAUGE_LABELS[i], GAUGE_META, t - 15_000, bits(round, b, i, 1));
      batch.endPoint();
      expected.add(null);
    }
    for (int k = 0; k < 2; k++) {
      int i = (int) ((b * 11 + k * 71 + 5) % GAUGES);
      add(batch, GAUGE_LABELS[i], GAUGE_META, t - 54_999, bits(round, b, i, 2));
      batch.endPoint();
      expected.add(null);
    }
    // An idempotent retry of a sample of this batch: accepted, stored once.
    int retry = (int) (b % ALWAYS);
    add(batch, GAUGE_LABELS[retry], GAUGE_META, t, bits(round, b, retry, 0));
    batch.endPoint();
    expected.add(null);

    // Points that must be rejected; each also holds a valid sample that must not be written.
    Labels ghost = Labels.of(Labels.METRIC_NAME, "crash_ghost", "batch", Long.toString(b));
    add(batch, ghost, GAUGE_META, t, bits(round, b, -1, 3));
    add(
        batch,
        GAUGE_LABELS[(int) (b * 7 % ALWAYS)],
        GAUGE_META,
        nowMillis + 24 * HOUR,
        bits(round, b, -1, 4));
    batch.endPoint();
    expected.add(RejectReason.TOO_FAR_IN_FUTURE);

    int dupOf = (int) ((b * 13 + 2) % ALWAYS);
    add(
        batch,
        GAUGE_LABELS[(int) ((b * 3 + 1) % ALWAYS)],
        GAUGE_META,
        t + 7_001,
        bits(round, b, -1, 5));
    add(batch, GAUGE_LABELS[dupOf], GAUGE_META, t, bits(round, b, dupOf, 0) ^ 1);
    batch.endPoint();
    expected.add(RejectReason.DUPLICATE);

    add(batch, HIST_COUNT[(int) (b % HISTOGRAMS)], HISTOGRAM_META, t + 1, bits(round, b, -1, 6));
    add(
        batch,
        Labels.of("job", "nameless", "batch", Long.toString(b)),
        GAUGE_META,
        t,
        bits(round, b, -1, 7));
    batch.endPoint();
    expected.add(RejectReason.INVALID);

    add(
        batch,
        GAUGE_LABELS[(int) ((b * 19 + 4) % ALWAYS)],
        GAUGE_META,
        -1_000,
        bits(round, b, -1, 8));
    batch.endPoint();
    expected.add(RejectReason.INVALID);

    add(
        batch,
        GAUGE_LABELS[(int) ((b * 17 + 3) % ALWAYS)],
        GAUGE_META,
        t - 295_000,
        bits(round, b, -1, 9));
    batch.endPoint();
    expected.add(RejectReason.OUT_OF_ORDER);

    add(
        batch,
        HIST_SUM[(int) ((b + 7) % HISTOGRAMS)],
        HISTOGRAM_META,
        t + 2,
        bits(round, b, -1, 10));
    add(
        batch,
        GAUGE_LABELS[(int) ((b * 23 + 5) % ALWAYS)],
        GAUGE_META,
        nowMillis - RETENTION.toMillis() - HOUR,
        bits(round, b, -1, 11));
    batch.endPoint();
    expected.add(RejectReason.TOO_OLD);

    return new Generated(batch, expected.toArray(new RejectReason[0]));
  }

  /** The rejected points of a result as {@code p:REASON,...}, or {@code -} if none. */
  static String rejected(AppendResult r) {
    StringBuilder sb = new StringBuilder();
    for (int p = 0; p < r.pointCount(); p++) {
      if (r.pointReason(p) != null) {
        sb.append(sb.length() == 0 ? "" : ",").append(p).append(':').append(r.pointReason(p));
      }
    }
    return sb.length() == 0 ? "-" : sb.toString();
  }

  /** The same rendering for the expected reasons of a generated batch. */
  static String rejected(RejectReason[] expected) {
    return rejected(new AppendResult(expected.clone(), new RejectReason[0]));
  }

  public static void main(String[] args) {
    PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
    Path dir = Path.of(args[0]);
    long now = Long.parseLong(args[1]);
    int round = Integer.parseInt(args[2]);
    long next = Long.parseLong(args[3]);
    boolean fsync = Boolean.parseBoolean(args[4]);
    long giveUp =
        System.nanoTime() + Duration.ofSeconds(60).toNanos(); // never outlive a lost parent
    RocksDbKvStore store = RocksDbKvStore.open(dir, storeConfig()); // never closed: we get killed
    Engine engine = Engine.open(store, engineConfig(now, fsync));
    Engine.Stats s = engine.stats();
    out.println("READY " + s.recoveryMillis() + " " + s.headSeries() + " " + s.openBuckets());
    out.flush();
    while (System.nanoTime() < giveUp) {
      Generated g = generate(round, next, now);
      AppendResult r = engine.append(g.batch());
      out.println("ACK " + next + " " + rejected(r)); // acknowledged: append returned
      out.flush();
      if (next % FLUSH_EVERY == FLUSH_EVERY / 2) {
        engine.flush();
      }
      next++;
    }
    System.exit(3);
  }
}
