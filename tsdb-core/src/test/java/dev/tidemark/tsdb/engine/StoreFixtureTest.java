package dev.tidemark.tsdb.engine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.tidemark.tsdb.append.SampleBatch;
import dev.tidemark.tsdb.kv.InMemoryKvStore;
import dev.tidemark.tsdb.kv.KvCursor;
import dev.tidemark.tsdb.kv.WriteBatch;
import dev.tidemark.tsdb.model.Labels;
import dev.tidemark.tsdb.model.MetricMetadata;
import dev.tidemark.tsdb.model.MetricType;
import dev.tidemark.tsdb.model.Temporality;
import dev.tidemark.tsdb.query.SampleIterator;
import dev.tidemark.tsdb.query.Series;
import dev.tidemark.tsdb.time.ManualClock;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * Persisted bytes are a contract: {@code fixtures/store-2026-11-gorilla.hex} is a whole store
 * (every key-value pair, one {@code key value} hex line each) written by the engine before the
 * decimal chunk encoding existed, so every chunk in it is Gorilla ({@code 0x01}). The current
 * engine must open it and read the very samples {@link #data()} describes, bit-exact.
 *
 * <p>How the fixture was produced: at commit {@code 9a1d062} (before TimeSeries encoding {@code
 * 0x02}), by running {@link #main} from the tsdb-core test classpath with the path of the file as
 * its argument. It is never regenerated: a failing test here means a stored store no longer reads
 * back.
 */
class StoreFixtureTest {
  static final String FIXTURE = "/fixtures/store-2026-11-gorilla.hex";
  static final String HOURLY_FIXTURE = "/fixtures/store-2026-11-hourly.hex";

  /** 2023-11-14T22:00:00Z: a bucket boundary. */
  static final long T0 = 1_700_000_000_000L - 1_700_000_000_000L % 3_600_000L;

  static final MetricMetadata GAUGE =
      new MetricMetadata(MetricType.GAUGE, "", Temporality.UNSPECIFIED, false);
  static final MetricMetadata SUM =
      new MetricMetadata(MetricType.SUM, "", Temporality.CUMULATIVE, true);

  record Sample(Labels labels, long timestampMillis, long valueBits) {}

  /**
   * The fixture's samples, deterministic (seed 20261124): two hours at 15 s with a few ms of
   * jitter; a 2-decimal gauge, a counter with a reset, a random-bits series, one with special
   * values (staleness marker, other NaN payloads, -0.0, ±Inf, subnormal) and a one-sample series.
   */
  static List<Sample> data() {
    SplittableRandom rnd = new SplittableRandom(20261124);
    List<Sample> out = new ArrayList<>();
    Labels gauge = Labels.of("__name__", "node_load1", "instance", "a:9100");
    Labels counter =
        Labels.of("__name__", "node_cpu_seconds_total", "cpu", "0", "instance", "a:9100");
    Labels random = Labels.of("__name__", "random_bits", "instance", "a:9100");
    Labels special = Labels.of("__name__", "special_values", "instance", "a:9100");
    long[] specials = {
      SampleBatch.STALE_NAN_BITS,
      0x7ff8000000000000L,
      0xfff8000000000001L,
      0x8000000000000000L,
      0x7ff0000000000000L,
      0xfff0000000000000L,
      0x0000000000000001L,
      0x3ff0000000000000L
    };
    long centi = 123;
    long c = 5_000_000;
    for (int i = 0; i < 480; i++) {
      long t = T0 + i * 15_000L + rnd.nextInt(-3, 4);
      centi = Math.max(0, centi + rnd.nextInt(-7, 8));
      out.add(new Sample(gauge, t, Double.doubleToRawLongBits(centi / 100.0)));
      c = i == 300 ? 17 : c + rnd.nextInt(0, 40) * 5;
      out.add(new Sample(counter, t, Double.doubleToRawLongBits(c / 100.0)));
      out.add(new Sample(random, t, rnd.nextLong()));
      if (i % 3 == 0) {
        out.add(new Sample(special, t, specials[(i / 3) % specials.length]));
      }
    }
    out.add(
        new Sample(
            Labels.of("__name__", "one_sample"), T0 + 4_000, Double.doubleToRawLongBits(42.5)));
    return out;
  }

  private static Engine open(InMemoryKvStore kv) {
    ManualClock clock = new ManualClock(T0 + 2 * 3_600_000L + 60_000);
    return Engine.open(
        kv,
        EngineConfig.builder()
            .clock(clock)
            .retention(Duration.ofDays(100_000))
            .retentionInterval(Duration.ZERO)
            .compactionInterval(Duration.ZERO)
            .build());
  }

  /** Writes the fixture (see the class comment); the argument is the output file. */
  public static void main(String[] args) throws IOException {
    InMemoryKvStore kv = new InMemoryKvStore();
    StringBuilder sb = new StringBuilder();
    HexFormat hex = HexFormat.of();
    try (Engine engine = open(kv)) {
      for (Sample s : data()) {
        SampleBatch b = new SampleBatch();
        b.add(
            s.labels(),
            s.labels().get("__name__").endsWith("_total") ? SUM : GAUGE,
            s.timestampMillis(),
            Double.longBitsToDouble(s.valueBits()));
        b.endPoint();
        if (b.size() != 1 || engine.append(b).rejectedPoints() != 0) {
          throw new IllegalStateException("rejected " + s);
        }
      }
      engine.flush();
      try (KvCursor cur = kv.scan(null, null)) {
        while (cur.next()) {
          sb.append(hex.formatHex(cur.key()))
              .append(' ')
              .append(hex.formatHex(cur.value()))
              .append('\n');
        }
      }
    }
    Files.writeString(Path.of(args[0]), sb.toString(), StandardCharsets.US_ASCII);
  }

  static InMemoryKvStore loadFixture() {
    return loadFixture(FIXTURE);
  }

  static InMemoryKvStore loadFixture(String fixture) {
    InMemoryKvStore kv = new InMemoryKvStore();
    WriteBatch wb = new WriteBatch();
    HexFormat hex = HexFormat.of();
    try (InputStream in = StoreFixtureTest.class.getResourceAsStream(fixture)) {
      for (String line : new String(in.readAllBytes(), StandardCharsets.US_ASCII).split("\n")) {
        if (!line.isBlank()) {
          String[] kvHex = line.split(" ");
          wb.put(hex.parseHex(kvHex[0]), hex.parseHex(kvHex[1]));
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    kv.write(wb);
    return kv;
  }

  @Test
  void theStoreWrittenBeforeTheDecimalEncodingReadsBackBitExact() {
    InMemoryKvStore kv = loadFixture();
    try (Engine engine = open(kv)) {
      assertThat(readAll(engine)).hasSize(expected().size()).isEqualTo(expected());
      assertThat(engine.buckets()).hasSize(2);
    }
  }

  /**
   * A store written before the Metadata record existed (both fixtures have none) opens with no
   * metadata and its samples unchanged; metadata registered then is saved beside them, and the
   * store still verifies clean and reads back after a reopen.
   */
  @org.junit.jupiter.params.ParameterizedTest
  @org.junit.jupiter.params.provider.ValueSource(strings = {FIXTURE, HOURLY_FIXTURE})
  void aStoreWrittenWithoutMetadataRecordsOpensAndTakesThem(String fixture) {
    InMemoryKvStore kv = loadFixture(fixture);
    dev.tidemark.tsdb.model.FamilyMetadata up =
        new dev.tidemark.tsdb.model.FamilyMetadata(
            "up", dev.tidemark.tsdb.model.PromType.GAUGE, "", "1 if up.");
    try (Engine engine = open(kv)) {
      assertThat(engine.metadata().size()).isZero();
      assertThat(readAll(engine)).isEqualTo(expected());
      engine.metadata().register(up);
    }
    assertThat(StoreVerifier.verify(kv).clean()).isTrue();
    try (Engine engine = open(kv)) {
      assertThat(engine.metadata().snapshot()).containsOnlyKeys("up");
      assertThat(readAll(engine)).isEqualTo(expected());
    }
  }

  /**
   * Both fixtures (Gorilla only, and the hourly store with decimal chunks) compact into one 2-hour
   * bucket that reads back bit-exact, verifies clean, and reads back again after a reopen.
   */
  @org.junit.jupiter.params.ParameterizedTest
  @org.junit.jupiter.params.provider.ValueSource(strings = {FIXTURE, HOURLY_FIXTURE})
  void aStoreOfOneHourBucketsCompactsAndReadsBackBitExact(String fixture) {
    InMemoryKvStore kv = loadFixture(fixture);
    EngineConfig config =
        EngineConfig.builder()
            .clock(
                new ManualClock(
                    T0 + 3 * 3_600_000L)) // the 2 h bucket ended more than the window ago
            .retention(Duration.ofDays(100_000))
            .retentionInterval(Duration.ZERO)
            .compactionInterval(Duration.ZERO)
            .compactionDelay(Duration.ZERO)
            .compactionLevels(List.of(Duration.ofHours(1), Duration.ofHours(2)))
            .build();
    try (Engine engine = Engine.open(kv, config)) {
      assertThat(readAll(engine)).isEqualTo(expected());
      assertThat(engine.compactNow()).isEqualTo(1);
      assertThat(engine.buckets())
          .extracting(dev.tidemark.tsdb.codec.TimeBucket::sizeHours)
          .containsExactly(2);
      assertThat(readAll(engine)).isEqualTo(expected());
    }
    assertThat(StoreVerifier.verify(kv).clean()).isTrue();
    try (Engine engine = Engine.open(kv, config)) {
      assertThat(readAll(engine)).isEqualTo(expected());
    }
  }

  /**
   * {@code fixtures/store-2026-11-hourly.hex}: the same data written by the hourly engine after the
   * decimal encoding (chunks in {@code 0x01} or {@code 0x02}, whichever is smaller), the format
   * before compaction; produced by {@link #main} on branch h-compact before compaction was switched
   * on in it (sealing unchanged since {@code de062bd}). Never regenerated.
   */
  @Test
  void theHourlyStoreWithDecimalChunksReadsBackBitExact() {
    InMemoryKvStore kv = loadFixture(HOURLY_FIXTURE);
    try (Engine engine = open(kv)) {
      assertThat(readAll(engine)).isEqualTo(expected());
      assertThat(engine.buckets())
          .extracting(dev.tidemark.tsdb.codec.TimeBucket::sizeHours)
          .containsExactly(1, 1);
    }
  }

  private static List<String> expected() {
    List<String> expected = new ArrayList<>();
    for (Sample s : data()) {
      expected.add(line(s.labels(), s.timestampMillis(), s.valueBits()));
    }
    expected.sort(null);
    return expected;
  }

  private static List<String> readAll(Engine engine) {
    List<String> actual = new ArrayList<>();
    for (Series s : engine.select(0, Long.MAX_VALUE / 2, List.of()).toList()) {
      SampleIterator it = s.iterator();
      while (it.next()) {
        actual.add(line(s.labels(), it.timestampMillis(), it.valueBits()));
      }
    }
    actual.sort(null);
    return actual;
  }

  private static String line(Labels l, long t, long bits) {
    return l + " " + t + " " + Long.toHexString(bits);
  }
}
