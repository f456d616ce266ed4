package dev.tidemark.tsdb.engine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.tidemark.tsdb.append.AppendResult;
import dev.tidemark.tsdb.append.RejectReason;
import dev.tidemark.tsdb.append.SampleBatch;
import dev.tidemark.tsdb.codec.Keys;
import dev.tidemark.tsdb.codec.TimeBucket;
import dev.tidemark.tsdb.codec.TimeSeriesValue;
import dev.tidemark.tsdb.kv.InMemoryKvStore;
import dev.tidemark.tsdb.model.CounterResetHint;
import dev.tidemark.tsdb.model.HistogramLayout;
import dev.tidemark.tsdb.model.IntegerHistogram;
import dev.tidemark.tsdb.model.Labels;
import dev.tidemark.tsdb.model.MetricMetadata;
import dev.tidemark.tsdb.model.MetricType;
import dev.tidemark.tsdb.model.NativeHistogram;
import dev.tidemark.tsdb.model.Temporality;
import dev.tidemark.tsdb.query.HistogramIterator;
import dev.tidemark.tsdb.query.LabelMatcher;
import dev.tidemark.tsdb.query.SampleIterator;
import dev.tidemark.tsdb.query.Series;
import dev.tidemark.tsdb.time.ManualClock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Native histogram samples through the engine (issue #25, step 1): the head, the kind rule, the
 * seal into a {@code 0x03} record, recovery from the head log after a crash, a reopened bucket,
 * compaction and deletes; {@link EngineModelTest} runs them at random against the reference model.
 */
class HistogramEngineTest {
  static final long HOUR = 3_600_000L;
  static final long T0 = 1_700_000_000_000L - 1_700_000_000_000L % (8 * HOUR);
  static final long MIN = 60_000L;
  static final MetricMetadata META =
      new MetricMetadata(MetricType.HISTOGRAM, "s", Temporality.CUMULATIVE, false);
  static final Labels H = Labels.of("__name__", "latency", "job", "a");

  final ManualClock clock = new ManualClock(T0 + 30 * MIN);
  final InMemoryKvStore kv = new InMemoryKvStore();
  final EngineConfig config =
      EngineConfig.builder()
          .clock(clock)
          .outOfOrderWindow(Duration.ofMinutes(30))
          .retentionInterval(Duration.ZERO)
          .compactionInterval(Duration.ZERO)
          .compactionDelay(Duration.ZERO)
          .compactionLevels(List.of(Duration.ofHours(1), Duration.ofHours(8)))
          .build();
  Engine engine = Engine.open(kv, config);

  @AfterEach
  void close() {
    engine.close();
  }

  /** Count {@code n} in one bucket of schema 0 (index 1), sum {@code n * 1.5}. */
  static IntegerHistogram h(long n) {
    return IntegerHistogram.of(
        HistogramLayout.exponential(0, 1e-128, new int[] {1, 1}, null),
        CounterResetHint.UNKNOWN,
        n,
        0,
        n * 1.5,
        new long[] {n},
        null);
  }

  private AppendResult appendHistogram(Labels l, long t, NativeHistogram h) {
    SampleBatch b = new SampleBatch().addHistogram(l, META, t, h);
    b.endPoint();
    return engine.append(b);
  }

  private RejectReason reason(Labels l, long t, NativeHistogram h) {
    return appendHistogram(l, t, h).pointReason(0);
  }

  private RejectReason floatReason(Labels l, long t, double v) {
    return engine.append(new SampleBatch().addPoint(l, META, t, v)).pointReason(0);
  }

  /** Every sample of {@code l}: floats as {@code min=value}, histograms as {@code min=h(count)}. */
  private List<String> all(Labels l) {
    List<Series> found =
        engine
            .select(0, Long.MAX_VALUE / 2, List.of(LabelMatcher.equal("job", l.get("job"))))
            .toList();
    List<String> out = new ArrayList<>();
    for (Series s : found) {
      SampleIterator it = s.iterator();
      while (it.next()) {
        out.add((it.timestampMillis() - T0) / MIN + "=" + it.value());
      }
      for (HistogramIterator hi = s.histogramIterator(); hi.next(); ) {
        out.add((hi.timestampMillis() - T0) / MIN + "=" + describe(hi.histogram()));
      }
    }
    return out;
  }

  static String describe(NativeHistogram h) {
    return h.isStale()
        ? "stale"
        : "h("
            + ((IntegerHistogram) h).count()
            + ")"
            + (h.equals(h(((IntegerHistogram) h).count())) ? "" : "?");
  }

  @Test
  void histogramSamplesAreStoredAndReadBackFromTheHeadAndAfterTheSeal() {
    assertThat(reason(H, T0 + 10 * MIN, h(1))).isNull();
    assertThat(reason(H, T0 + 20 * MIN, h(2))).isNull();
    assertThat(reason(H, T0 + 15 * MIN, h(5))).as("late, inside the window").isNull();
    assertThat(reason(H, T0 + 20 * MIN, h(2))).as("the same sample: a retry").isNull();
    assertThat(reason(H, T0 + 20 * MIN, h(3))).isEqualTo(RejectReason.DUPLICATE);
    assertThat(reason(H, T0 + 15 * MIN, h(6)))
        .as("late duplicate")
        .isEqualTo(RejectReason.DUPLICATE);
    assertThat(reason(H, T0 + 10 * MIN, h(1))).as("in the stream: a retry").isNull();
    assertThat(reason(H, T0 + 20 * MIN - 31 * MIN, h(1))).isEqualTo(RejectReason.OUT_OF_ORDER);
    List<String> want = List.of("10=h(1)", "15=h(5)", "20=h(2)");
    assertThat(all(H)).isEqualTo(want);
    Series s = engine.select(0, Long.MAX_VALUE / 2, List.of()).toList().get(0);
    assertThat(s.hasHistograms()).isTrue();
    assertThat(s.iterator().next()).as("no float samples").isFalse();
    HistogramIterator it = s.histogramIterator();
    assertThat(it.seek(T0 + 12 * MIN)).isTrue();
    assertThat(it.timestampMillis()).isEqualTo(T0 + 15 * MIN);
    assertThat(it.seek(T0)).as("never backwards").isTrue();
    assertThat(it.timestampMillis()).isEqualTo(T0 + 15 * MIN);
    assertThat(engine.select(T0 + 11 * MIN, T0 + 14 * MIN, List.of()).toList())
        .as("a range with no sample")
        .isEmpty();

    engine.flush();
    byte[] record = kv.get(Keys.timeSeries(TimeBucket.containing(T0, 1), 0));
    assertThat(record[0]).isEqualTo((byte) TimeSeriesValue.ENCODING_HISTOGRAM);
    assertThat(all(H)).isEqualTo(want);
    assertThat(StoreVerifier.verify(kv).clean()).isTrue();
    engine.close();
    engine = Engine.open(kv, config);
    assertThat(all(H)).isEqualTo(want);
    // a late sample reopens the sealed bucket: its 0x03 chunk is loaded back into the head
    clock.advance(5 * MIN);
    assertThat(reason(H, T0 + 12 * MIN, h(7))).isNull();
    assertThat(reason(H, T0 + 15 * MIN, h(6))).isEqualTo(RejectReason.DUPLICATE);
    assertThat(all(H)).containsExactly("10=h(1)", "12=h(7)", "15=h(5)", "20=h(2)");
  }

  @Test
  void theVerifierDecodesHistogramRecords() {
    assertThat(reason(H, T0 + 10 * MIN, h(1))).isNull();
    assertThat(reason(H, T0 + 11 * MIN, h(2))).isNull();
    engine.close();
    byte[] key = Keys.timeSeries(TimeBucket.containing(T0, 1), 0);
    assertThat(StoreVerifier.verify(kv).clean()).isTrue();
    byte[] good = kv.get(key);
    // a chunk cut short, and one announcing a third sample it does not hold
    byte[] bad = java.util.Arrays.copyOf(good, good.length - 1);
    dev.tidemark.tsdb.kv.WriteBatch wb = new dev.tidemark.tsdb.kv.WriteBatch();
    wb.put(key, bad);
    kv.write(wb);
    VerifyReport r = StoreVerifier.verify(kv);
    assertThat(r.count(StoreProblem.Kind.UNDECODABLE_RECORD)).as(r.toString()).isEqualTo(1);
    // a head log record of format 0x03 cut short
    wb = new dev.tidemark.tsdb.kv.WriteBatch();
    wb.put(key, good);
    HeadLogHistograms l = new HeadLogHistograms();
    l.add(0, T0 + 12 * MIN, h(3));
    byte[] log = l.toByteArray();
    wb.put(
        Recovery.headLogKey(TimeBucket.containing(T0, 1), 1_000),
        java.util.Arrays.copyOf(log, log.length - 1));
    kv.write(wb);
    r = StoreVerifier.verify(kv);
    assertThat(r.count(StoreProblem.Kind.UNDECODABLE_RECORD)).as(r.toString()).isEqualTo(1);
    wb = new dev.tidemark.tsdb.kv.WriteBatch();
    wb.delete(Recovery.headLogKey(TimeBucket.containing(T0, 1), 1_000));
    kv.write(wb);
    engine = Engine.open(kv, config);
    assertThat(all(H)).containsExactly("10=h(1)", "11=h(2)");
  }

  @Test
  void aSeriesHoldsOneKindPerBucket() {
    Labels f = Labels.of("__name__", "latency", "job", "b");
    assertThat(reason(H, T0 + 10 * MIN, h(1))).isNull();
    assertThat(floatReason(H, T0 + 11 * MIN, 1.0)).isEqualTo(RejectReason.KIND_CONFLICT);
    assertThat(floatReason(H, T0 + 10 * MIN, 1.0)).isEqualTo(RejectReason.KIND_CONFLICT);
    assertThat(floatReason(f, T0 + 10 * MIN, 1.0)).isNull();
    assertThat(reason(f, T0 + 11 * MIN, h(1))).isEqualTo(RejectReason.KIND_CONFLICT);
    // the next hour is another bucket: the other kind is taken there
    clock.advance(HOUR);
    assertThat(floatReason(H, T0 + HOUR + 10 * MIN, 4.0)).isNull();
    assertThat(reason(f, T0 + HOUR + 10 * MIN, h(3))).isNull();
    assertThat(all(H)).containsExactly("70=4.0", "10=h(1)");
    assertThat(all(f)).containsExactly("10=1.0", "70=h(3)");
    engine.flush();
    assertThat(all(H)).containsExactly("70=4.0", "10=h(1)");
    assertThat(StoreVerifier.verify(kv).clean()).isTrue();
  }

  @Test
  void aCrashLosesNoAcknowledgedHistogram() {
    Labels f = Labels.of("__name__", "up", "job", "c");
    SampleBatch b = new SampleBatch();
    b.addHistogram(H, META, T0 + 10 * MIN, h(1));
    b.endPoint();
    b.addPoint(f, META, T0 + 10 * MIN, 1.0); // floats and histograms in one append
    b.addHistogram(H, META, T0 + 20 * MIN, h(2));
    b.endPoint();
    assertThat(engine.append(b).rejectedPoints()).isZero();
    assertThat(reason(H, T0 + 15 * MIN, h(5))).as("late").isNull();
    NativeHistogram stale =
        IntegerHistogram.ofBits(
            HistogramLayout.exponential(0, 1e-128, null, null),
            CounterResetHint.UNKNOWN,
            0,
            0,
            NativeHistogram.STALE_SUM_BITS,
            new long[0],
            new long[0]);
    assertThat(reason(H, T0 + 25 * MIN, stale)).isNull();
    List<String> want = List.of("10=h(1)", "15=h(5)", "20=h(2)", "25=stale");
    assertThat(all(H)).isEqualTo(want);
    engine.abandon(); // as a SIGKILL: nothing sealed, the head log holds everything
    assertThat(StoreVerifier.verify(kv).clean()).isTrue();
    engine = Engine.open(kv, config);
    assertThat(all(H)).isEqualTo(want);
    assertThat(all(f)).containsExactly("10=1.0");
    assertThat(reason(H, T0 + 20 * MIN, h(3)))
        .as("duplicate after replay")
        .isEqualTo(RejectReason.DUPLICATE);
    // a crash halfway through a seal: the chunk written and the head log still there
    engine.flush();
    engine.abandon();
    engine = Engine.open(kv, config);
    assertThat(all(H)).isEqualTo(want);
  }

  @Test
  void compactionMergesHistogramChunksAndSkipsASeriesOfBothKinds() {
    clock.set(T0 + 9 * HOUR);
    for (int hour = 0; hour < 8; hour++) {
      assertThat(reason(H, T0 + hour * HOUR + 5 * MIN, h(hour + 1))).isNull();
    }
    engine.flush();
    assertThat(engine.compactNow()).isEqualTo(1);
    assertThat(engine.buckets()).extracting(TimeBucket::sizeHours).containsExactly(8);
    List<String> want = new ArrayList<>();
    for (int hour = 0; hour < 8; hour++) {
      want.add((hour * 60 + 5) + "=h(" + (hour + 1) + ")");
    }
    assertThat(all(H)).isEqualTo(want);
    assertThat(StoreVerifier.verify(kv).clean()).isTrue();
    // a delete cuts a histogram chunk
    engine.deleteSeries(T0, T0 + 65 * MIN, List.of(LabelMatcher.equal("job", "a")));
    assertThat(all(H)).isEqualTo(want.subList(2, 8));
    assertThat(StoreVerifier.verify(kv).clean()).isTrue();

    // the next 8 hours: one series takes floats in one hour and histograms in the others
    Labels mixed = Labels.of("__name__", "latency", "job", "m");
    clock.set(T0 + 17 * HOUR);
    for (int hour = 8; hour < 16; hour++) {
      RejectReason r =
          hour == 9
              ? floatReason(mixed, T0 + hour * HOUR, 1.0)
              : reason(mixed, T0 + hour * HOUR, h(hour));
      assertThat(r).isNull();
    }
    engine.flush();
    assertThat(engine.compactNow()).as("the group holding both kinds is not merged").isZero();
    assertThat(engine.buckets()).hasSize(9);
    assertThat(all(mixed)).hasSize(8).contains("540=1.0", "480=h(8)");
  }
}
