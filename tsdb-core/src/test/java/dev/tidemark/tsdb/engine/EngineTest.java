package dev.tidemark.tsdb.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.tidemark.tsdb.append.AppendResult;
import dev.tidemark.tsdb.append.RejectReason;
import dev.tidemark.tsdb.append.SampleBatch;
import dev.tidemark.tsdb.codec.Keys;
import dev.tidemark.tsdb.codec.RecordType;
import dev.tidemark.tsdb.codec.TimeBucket;
import dev.tidemark.tsdb.kv.InMemoryKvStore;
import dev.tidemark.tsdb.kv.KvCursor;
import dev.tidemark.tsdb.kv.WriteBatch;
import dev.tidemark.tsdb.model.Labels;
import dev.tidemark.tsdb.model.MetricMetadata;
import dev.tidemark.tsdb.model.MetricType;
import dev.tidemark.tsdb.model.Temporality;
import dev.tidemark.tsdb.query.LabelMatcher;
import dev.tidemark.tsdb.query.SampleIterator;
import dev.tidemark.tsdb.query.Series;
import dev.tidemark.tsdb.time.ManualClock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class EngineTest {
  /** 2023-11-14T22:00:00Z: a bucket boundary. */
  static final long T0 = 1_700_000_000_000L - 1_700_000_000_000L % 3_600_000L;

  static final long MIN = 60_000L;
  static final MetricMetadata GAUGE =
      new MetricMetadata(MetricType.GAUGE, "s", Temporality.UNSPECIFIED, false);
  static final Labels UP = Labels.of("__name__", "up", "job", "a");

  final ManualClock clock = new ManualClock(T0 + 30 * MIN);
  InMemoryKvStore kv = new InMemoryKvStore();
  EngineConfig config;
  Engine engine;

  @BeforeEach
  void open() {
    config = EngineConfig.builder().clock(clock).retentionInterval(Duration.ZERO).build();
    engine = Engine.open(kv, config);
  }

  @AfterEach
  void close() {
    engine.close();
  }

  private AppendResult append(Labels l, long t, double v) {
    return engine.append(new SampleBatch().addPoint(l, GAUGE, t, v));
  }

  private RejectReason reason(Labels l, long t, double v) {
    return append(l, t, v).pointReason(0);
  }

  static List<String> samples(Series s) {
    List<String> out = new ArrayList<>();
    SampleIterator it = s.iterator();
    while (it.next()) {
      out.add((it.timestampMillis() - T0) / 1000 + "s=" + it.value());
    }
    return out;
  }

  private List<String> all(Labels l) {
    List<Series> found = engine.select(0, Long.MAX_VALUE / 2, matchersOf(l)).toList();
    return found.isEmpty() ? List.of() : samples(found.get(0));
  }

  private static List<LabelMatcher> matchersOf(Labels l) {
    List<LabelMatcher> m = new ArrayList<>();
    for (int i = 0; i < l.size(); i++) {
      m.add(LabelMatcher.equal(l.name(i), l.value(i)));
    }
    return m;
  }

  @Test
  void selectReturnsOnlySamplesInRange() {
    SampleBatch b = new SampleBatch();
    b.addPoint(UP, GAUGE, T0 + MIN, 1);
    b.addPoint(UP, GAUGE, T0 + 2 * MIN, 2);
    b.addPoint(UP, GAUGE, T0 + 3 * MIN, 3);
    assertThat(engine.append(b).rejectedPoints()).isZero();
    assertThat(all(UP)).containsExactly("60s=1.0", "120s=2.0", "180s=3.0");
    assertThat(samples(engine.select(T0 + 90_000, T0 + 2 * MIN, List.of()).toList().get(0)))
        .containsExactly("120s=2.0");
    assertThat(engine.select(T0 + 4 * MIN, T0 + 5 * MIN, List.of()).toList()).isEmpty();
    assertThat(engine.select(T0, T0 + 5 * MIN, List.of(LabelMatcher.equal("job", "b"))).toList())
        .isEmpty();
    assertThatThrownBy(() -> engine.select(2, 1, List.of()).toList())
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void everyRejectionReason() {
    assertThat(reason(UP, T0 + 10 * MIN, 1)).isNull();
    assertThat(reason(UP, T0 + 10 * MIN, 1)).as("same bits: idempotent").isNull();
    assertThat(reason(UP, T0 + 10 * MIN, 2)).isEqualTo(RejectReason.DUPLICATE);
    assertThat(reason(UP, T0 + 10 * MIN - 31 * MIN, 1)).isEqualTo(RejectReason.OUT_OF_ORDER);
    assertThat(reason(UP, T0 + 10 * MIN - 29 * MIN, 1)).as("inside the window").isNull();
    assertThat(reason(UP, clock.millis() + 11 * MIN, 1)).isEqualTo(RejectReason.TOO_FAR_IN_FUTURE);
    assertThat(reason(UP, clock.millis() + 9 * MIN, 1)).isNull();
    assertThat(
            reason(
                Labels.of("__name__", "old"), clock.millis() - Duration.ofDays(16).toMillis(), 1))
        .isEqualTo(RejectReason.TOO_OLD);
    assertThat(reason(Labels.of("job", "nameless"), T0, 1)).isEqualTo(RejectReason.INVALID);
    assertThat(reason(UP, -1, 1)).isEqualTo(RejectReason.INVALID);
    assertThat(all(UP)).containsExactly("-1140s=1.0", "600s=1.0", "2340s=1.0");
  }

  @Test
  void aRejectedPointLeavesNoTrace() {
    Labels a = Labels.of("__name__", "h_bucket", "le", "1");
    Labels b = Labels.of("__name__", "h_bucket", "le", "+Inf");
    assertThat(reason(b, T0 + 10 * MIN, 5)).isNull();
    SampleBatch batch = new SampleBatch();
    batch.add(a, GAUGE, T0 + 10 * MIN, 1).add(b, GAUGE, T0 + 10 * MIN, 6).endPoint(); // b conflicts
    batch.add(a, GAUGE, T0 + 11 * MIN, 1).add(b, GAUGE, T0 + 11 * MIN, 6).endPoint();
    AppendResult r = engine.append(batch);
    assertThat(r.pointReason(0)).isEqualTo(RejectReason.DUPLICATE);
    assertThat(r.sampleReason(0)).isNull();
    assertThat(r.sampleReason(1)).isEqualTo(RejectReason.DUPLICATE);
    assertThat(r.pointReason(1)).isNull();
    assertThat(all(a)).containsExactly("660s=1.0");
    assertThat(all(b)).containsExactly("600s=5.0", "660s=6.0");
  }

  @Test
  void lateSamplesEndUpSortedInTheSealedChunk() {
    for (long t : new long[] {10, 14, 12, 11, 15, 13}) {
      assertThat(reason(UP, T0 + t * MIN, t)).isNull();
    }
    assertThat(all(UP))
        .containsExactly(
            "600s=10.0", "660s=11.0", "720s=12.0", "780s=13.0", "840s=14.0", "900s=15.0");
    engine.flush();
    assertThat(engine.stats().openBuckets()).isZero();
    assertThat(all(UP))
        .containsExactly(
            "600s=10.0", "660s=11.0", "720s=12.0", "780s=13.0", "840s=14.0", "900s=15.0");
  }

  @Test
  void aFlushedBucketReopensAndRetriesStayIdempotent() {
    assertThat(reason(UP, T0 + 10 * MIN, 1)).isNull();
    assertThat(reason(UP, T0 + 20 * MIN, 2)).isNull();
    engine.flush();
    assertThat(reason(UP, T0 + 20 * MIN, 2)).as("retry of a sealed sample").isNull();
    assertThat(reason(UP, T0 + 10 * MIN, 9)).isEqualTo(RejectReason.DUPLICATE);
    assertThat(reason(UP, T0 + 15 * MIN, 3)).isNull();
    assertThat(reason(UP, T0 + 25 * MIN, 4)).isNull();
    assertThat(all(UP)).containsExactly("600s=1.0", "900s=3.0", "1200s=2.0", "1500s=4.0");
    engine.flush();
    assertThat(all(UP)).containsExactly("600s=1.0", "900s=3.0", "1200s=2.0", "1500s=4.0");
  }

  @Test
  void bucketsSealOnceTheWindowHasPassed() throws Exception {
    clock.set(T0 + 2 * 60 * MIN);
    assertThat(reason(UP, T0 + 50 * MIN, 1)).isNull();
    assertThat(reason(UP, T0 + 91 * MIN, 2)).isNull(); // end of first bucket + 31 min
    long deadline = System.nanoTime() + 10_000_000_000L;
    while (engine.stats().openBuckets() > 1 && System.nanoTime() < deadline) {
      Thread.onSpinWait();
    }
    assertThat(engine.stats().openBuckets()).isEqualTo(1);
    assertThat(all(UP)).containsExactly("3000s=1.0", "5460s=2.0");
    try (KvCursor c =
        kv.scanPrefix(Keys.bucketPrefix(RecordType.TIME_SERIES, TimeBucket.containing(T0, 1)))) {
      assertThat(c.next()).isTrue();
    }
  }

  @Test
  void aCrashLosesNothingAcknowledged() {
    for (int i = 0; i < 20; i++) {
      assertThat(reason(Labels.of("__name__", "c", "i", Integer.toString(i % 3)), T0 + i * MIN, i))
          .isNull();
    }
    engine.abandon();
    engine = Engine.open(kv, config);
    assertThat(engine.stats().headSeries()).isEqualTo(3);
    assertThat(all(Labels.of("__name__", "c", "i", "1"))).hasSize(7);
    assertThat(reason(Labels.of("__name__", "c", "i", "1"), T0 + MIN, 1))
        .as("retry after the crash")
        .isNull();
    assertThat(reason(Labels.of("__name__", "c", "i", "1"), T0 + MIN, 2))
        .isEqualTo(RejectReason.DUPLICATE);
  }

  @Test
  void knownSeriesAreAppendedWithoutKeyValueReads() {
    engine.close();
    CountingKvStore counting = new CountingKvStore(kv);
    engine = Engine.open(counting, config);
    SampleBatch batch = new SampleBatch();
    for (int i = 0; i < 100; i++) {
      batch.addPoint(Labels.of("__name__", "m", "i", Integer.toString(i)), GAUGE, T0 + 20 * MIN, i);
    }
    assertThat(engine.append(batch).rejectedPoints()).isZero();
    long readsBefore = counting.reads.get();
    for (int round = 1; round < 10; round++) {
      batch.clear();
      for (int i = 0; i < 100; i++) {
        batch.addPoint(
            Labels.of("__name__", "m", "i", Integer.toString(i)),
            GAUGE,
            T0 + 20 * MIN + round * 15_000,
            i);
      }
      assertThat(engine.append(batch).rejectedPoints()).isZero();
    }
    assertThat(counting.reads.get()).isEqualTo(readsBefore);
    assertThat(counting.writes.get()).isGreaterThan(9);
  }

  @Test
  void retentionDropsWholeBuckets() {
    assertThat(reason(UP, T0 + 10 * MIN, 1)).isNull();
    engine.flush();
    clock.set(T0 + Duration.ofDays(15).toMillis() + 30 * MIN);
    assertThat(reason(UP, clock.millis(), 2)).isNull();
    assertThat(engine.applyRetention()).isZero();
    clock.set(T0 + Duration.ofDays(15).toMillis() + 61 * MIN);
    assertThat(engine.applyRetention()).isEqualTo(1);
    assertThat(all(UP)).hasSize(1);
    try (KvCursor c =
        kv.scanPrefix(Keys.bucketPrefix(RecordType.FORWARD_INDEX, TimeBucket.containing(T0, 1)))) {
      assertThat(c.next()).isFalse();
    }
    assertThat(engine.buckets())
        .containsExactly(TimeBucket.containing(clock.millis() - 31 * MIN, 1));
  }

  @Test
  void matchersFollowPrometheusSemantics() {
    Labels a = Labels.of("__name__", "http", "code", "200", "path", "/a");
    Labels b = Labels.of("__name__", "http", "code", "500");
    Labels c = Labels.of("__name__", "http", "code", "201", "path", "/c");
    SampleBatch batch = new SampleBatch();
    for (Labels l : List.of(a, b, c)) {
      batch.addPoint(l, GAUGE, T0 + MIN, 1);
    }
    engine.append(batch);
    for (int sealed = 0; sealed < 2; sealed++) {
      assertThat(engine.series(T0, T0 + 2 * MIN, List.of(LabelMatcher.equal("path", ""))))
          .containsExactly(b);
      assertThat(engine.series(T0, T0 + 2 * MIN, List.of(LabelMatcher.regex("code", "20"))))
          .isEmpty();
      assertThat(engine.series(T0, T0 + 2 * MIN, List.of(LabelMatcher.regex("code", "2.*"))))
          .containsExactly(a, c);
      assertThat(engine.series(T0, T0 + 2 * MIN, List.of(LabelMatcher.regex("code", "200|500"))))
          .containsExactly(a, b);
      assertThat(engine.series(T0, T0 + 2 * MIN, List.of(LabelMatcher.notRegex("path", "/a"))))
          .containsExactly(c, b);
      assertThat(engine.series(T0, T0 + 2 * MIN, List.of(LabelMatcher.notEqual("path", ""))))
          .containsExactly(a, c);
      assertThat(engine.series(T0, T0 + 2 * MIN, List.of(LabelMatcher.regex("path", "|/c"))))
          .containsExactly(c, b);
      assertThat(
              engine.labelValues(
                  "code", T0, T0 + 2 * MIN, List.of(LabelMatcher.regex("path", ".+"))))
          .containsExactly("200", "201");
      assertThat(engine.labelNames(T0, T0 + 2 * MIN, List.of(LabelMatcher.equal("code", "500"))))
          .containsExactly("__name__", "code");
      assertThat(engine.select(T0, T0 + 2 * MIN, List.of()).toList().get(0).metadata())
          .isEqualTo(GAUGE);
      engine.flush();
    }
    assertThatThrownBy(() -> LabelMatcher.regex("code", "("))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("code=~\"(\"");
  }

  /** Reopens the engine with a 40 KiB head budget and fills it: 300 series at T0 + 1 min. */
  private SampleBatch fillASmallHead() {
    engine.close();
    engine = Engine.open(kv, config.toBuilder().maxHeadBytes(40 * 1024).build());
    SampleBatch batch = new SampleBatch();
    for (int i = 0; i < 300; i++) {
      batch.addPoint(Labels.of("__name__", "m", "i", Integer.toString(i)), GAUGE, T0 + MIN, i);
    }
    engine.append(batch);
    return batch;
  }

  @Test
  void aHeadOverItsBudgetRefusesOnlyNewSeriesEachOnItsOwnPointAndSaysWhy() {
    assertThat(engine.newSeriesRefusal()).isNull();
    fillASmallHead();
    assertThat(engine.stats().headSeries()).isEqualTo(300);
    assertThat(engine.stats().headBytesPerSeries()).isPositive();
    assertThat(engine.writeRefusal()).as("writes are not refused: /-/ready stays 200").isNull();
    assertThat(engine.newSeriesRefusal())
        .isEqualTo(
            "head memory is over its budget of 40960 bytes: new series are refused until a seal"
                + " frees memory, series already in the head are still accepted");

    // One request: a known series, a new one, another known one.
    Labels known7 = Labels.of("__name__", "m", "i", "7");
    Labels known8 = Labels.of("__name__", "m", "i", "8");
    AppendResult r =
        engine.append(
            new SampleBatch()
                .addPoint(known7, GAUGE, T0 + 2 * MIN, 70)
                .addPoint(UP, GAUGE, T0 + 2 * MIN, 1)
                .addPoint(known8, GAUGE, T0 + 2 * MIN, 80));
    assertThat(r.rejectedPoints()).isEqualTo(1);
    assertThat(r.pointReason(0)).isNull();
    assertThat(r.pointReason(1)).isEqualTo(RejectReason.SERIES_LIMIT);
    assertThat(r.pointDetail(1)).isEqualTo(engine.newSeriesRefusal());
    assertThat(r.pointReason(2)).isNull();
    assertThat(all(known7)).containsExactly("60s=7.0", "120s=70.0");
    assertThat(all(UP)).isEmpty();

    engine.flush(); // the head is empty again: new series are taken
    assertThat(engine.stats().headSeries()).isZero();
    assertThat(engine.newSeriesRefusal()).isNull();
    assertThat(reason(UP, T0 + 35 * MIN, 1)).isNull();
  }

  @Test
  void aHeadOverItsBudgetTakesNewSeriesAgainOnceItsBucketIsDueByTheClock() {
    fillASmallHead();
    assertThat(reason(UP, T0 + 2 * MIN, 1)).isEqualTo(RejectReason.SERIES_LIMIT);
    // Known series keep writing into the bucket; once the clock has passed its end (plus the
    // out-of-order window) and they stop, the idle checks seal it.
    assertThat(reason(Labels.of("__name__", "m", "i", "7"), T0 + 3 * MIN, 8)).isNull();
    assertThat(engine.sealIdleBuckets()).as("the bucket is not over by the clock yet").isZero();
    clock.set(T0 + HOUR_MS + 31 * MIN); // past the bucket's end plus the out-of-order window
    assertThat(idleChecksUntilASeal())
        .as("sealed once no append came for the required checks in a row")
        .isEqualTo(Sealer.IDLE_CHECKS);
    assertThat(engine.stats().headSeries()).isZero();
    assertThat(reason(UP, T0 + HOUR_MS + 30 * MIN, 1)).isNull();
    assertThat(all(Labels.of("__name__", "m", "i", "7"))).containsExactly("60s=7.0", "180s=8.0");
  }

  @Test
  void aBucketIsSealedByTheClockOnlyAfterChecksInARowWithoutAppends() {
    assertThat(reason(UP, T0 + MIN, 1)).isNull();
    clock.set(T0 + 2 * HOUR_MS); // the bucket's end plus the window has passed
    for (int i = 0; i < Sealer.IDLE_CHECKS; i++) {
      assertThat(engine.sealIdleBuckets()).as("check %d", i).isZero();
    }
    assertThat(reason(UP, T0 + 40 * MIN, 2)).as("a sender still writing into it").isNull();
    assertThat(engine.sealIdleBuckets()).as("appended to since the last check").isZero();
    assertThat(engine.bucketInfo().get(0).open()).isTrue();
    assertThat(idleChecksUntilASeal()).isEqualTo(Sealer.IDLE_CHECKS);
    assertThat(engine.bucketInfo().get(0).open()).isFalse();
    assertThat(reason(UP, T0 + 50 * MIN, 3)).as("a late sample reopens it").isNull();
    assertThat(all(UP)).containsExactly("60s=1.0", "2400s=2.0", "3000s=3.0");
  }

  /** Runs idle checks until one seals a bucket; returns how many it took. */
  private int idleChecksUntilASeal() {
    for (int i = 1; i <= 3 * Sealer.IDLE_CHECKS; i++) {
      if (engine.sealIdleBuckets() > 0) {
        return i;
      }
    }
    return -1;
  }

  @Test
  void aStoreWithOtherSettingsRefusesToOpen() {
    engine.close();
    kv.write(new WriteBatch().put(Keys.schema(), new SchemaRecord(1, 2, 1).encode()));
    assertThatThrownBy(() -> Engine.open(kv, config))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("bucket size code 2");
    kv.write(new WriteBatch().put(Keys.schema(), new SchemaRecord(9, 1, 1).encode()));
    assertThatThrownBy(() -> Engine.open(kv, config))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("schema version 9");
    InMemoryKvStore foreign = new InMemoryKvStore();
    foreign.write(new WriteBatch().put(new byte[] {9}, new byte[] {9}));
    assertThatThrownBy(() -> Engine.open(foreign, config)).hasMessageContaining("no schema record");
    kv.write(new WriteBatch().put(Keys.schema(), new SchemaRecord(1, 1, 1).encode()));
    engine = Engine.open(kv, config);
  }

  @Test
  void configIsValidatedWithTheBadValue() {
    assertThatThrownBy(() -> EngineConfig.builder().maxHeadBytes(-1).build())
        .hasMessage("maxHeadBytes must be positive, was -1");
    assertThatThrownBy(
            () -> EngineConfig.builder().outOfOrderWindow(Duration.ofMinutes(-1)).build())
        .hasMessageContaining("outOfOrderWindow must not be negative");
  }

  @Test
  void deletedSamplesStayDeletedAcrossRestartsAndBucketsLeaveWhenEmpty() {
    Labels other = Labels.of("__name__", "up", "job", "b");
    SampleBatch batch = new SampleBatch();
    for (int m = 1; m <= 5; m++) {
      batch.addPoint(UP, GAUGE, T0 + m * MIN, m);
      batch.addPoint(other, GAUGE, T0 + m * MIN, 10 + m);
    }
    engine.append(batch);
    Engine.DeleteResult r =
        engine.deleteSeries(T0 + 2 * MIN, T0 + 3 * MIN, List.of(LabelMatcher.equal("job", "a")));
    assertThat(r).isEqualTo(new Engine.DeleteResult(1, 1, 2));
    assertThat(all(UP)).containsExactly("60s=1.0", "240s=4.0", "300s=5.0");
    engine.abandon();
    engine = Engine.open(kv, config);
    assertThat(all(UP))
        .as("a crash does not bring them back")
        .containsExactly("60s=1.0", "240s=4.0", "300s=5.0");
    assertThat(all(other)).hasSize(5);
    assertThat(reason(UP, T0 + 2 * MIN, 7)).as("the slot is free again").isNull();

    engine.deleteSeries(0, T0 + 10 * MIN, List.of(LabelMatcher.equal("job", "a")));
    assertThat(all(UP)).isEmpty();
    assertThat(engine.labelValues("job", 0, T0 + HOUR_MS, List.of())).containsExactly("b");
    assertThat(engine.bucketInfo()).hasSize(1);
    assertThat(engine.bucketInfo().get(0).seriesCount()).isEqualTo(1);
    engine.deleteSeries(0, T0 + 10 * MIN, List.of());
    assertThat(engine.buckets()).isEmpty();
    assertThat(engine.bucketInfo()).isEmpty();
    engine.close();
    engine = Engine.open(kv, config);
    assertThat(engine.select(0, T0 + HOUR_MS, List.of()).toList()).isEmpty();
  }

  @Test
  void aLabelSetsStorageHintIsTrustedOnlyByItsOwnEngineAndOnlyWhileCurrent() {
    Labels s = Labels.of("__name__", "hinted", "job", "h");
    assertThat(reason(s, T0 + 39 * MIN, 1)).isNull();
    assertThat(s.storageHint()).as("the engine hangs its series ref on the instance").isNotNull();

    Engine other = Engine.open(new InMemoryKvStore(), config);
    try {
      assertThat(other.append(new SampleBatch().addPoint(s, GAUGE, T0 + 5 * MIN, 1)).pointReason(0))
          .as("another engine: nothing stored there yet")
          .isNull();
    } finally {
      other.close();
    }
    assertThat(reason(s, T0 + 5 * MIN, 2))
        .as("the other engine's ref (newest 5 min) is not this engine's (newest 39 min)")
        .isEqualTo(RejectReason.OUT_OF_ORDER);

    engine.deleteSeries(0, T0 + HOUR_MS, List.of(LabelMatcher.equal("job", "h")));
    assertThat(reason(s, T0 + 5 * MIN, 3))
        .as("after the delete the ref hung on the instance is stale; nothing newer is stored")
        .isNull();
    assertThat(all(s)).containsExactly("300s=3.0");
    assertThat(reason(Labels.of("__name__", "hinted", "job", "h"), T0 + 4 * MIN, 4))
        .as("an equal label set without the hint finds the same series")
        .isNull();
    assertThat(reason(s, T0 + 4 * MIN, 5)).isEqualTo(RejectReason.DUPLICATE);
  }

  @Test
  void retentionCanChangeAtRuntime() {
    assertThatThrownBy(() -> engine.setRetention(Duration.ofMinutes(59)))
        .hasMessageContaining("at least 1h");
    engine.setRetention(Duration.ofHours(2));
    assertThat(engine.retention()).isEqualTo(Duration.ofHours(2));
    assertThat(reason(UP, clock.millis() - Duration.ofHours(3).toMillis(), 1))
        .isEqualTo(RejectReason.TOO_OLD);
  }

  static final long HOUR_MS = 3_600_000L;

  @Test
  void aSeriesBeyondAFormatLimitIsRefusedOnItsOwnAndTheRestSurvivesARestart() {
    Labels overLong = Labels.of("__name__", "db_calls", "db_statement", "s".repeat(70_000));
    Labels ok = Labels.of("__name__", "db_calls", "db_statement", "select 1");
    SampleBatch batch =
        new SampleBatch()
            .addPoint(ok, GAUGE, T0 + MIN, 1)
            .addPoint(overLong, GAUGE, T0 + MIN, 2)
            .addPoint(Labels.of("__name__", "u".repeat(65_536)), GAUGE, T0 + MIN, 3);
    AppendResult r = engine.append(batch);
    assertThat(r.pointReason(0)).isNull();
    assertThat(r.pointReason(1)).isEqualTo(RejectReason.LIMIT_EXCEEDED);
    assertThat(r.pointDetail(1))
        .isEqualTo(
            "label value of 70000 bytes exceeds the 65535-byte limit (label \"db_statement\")");
    assertThat(r.pointReason(2)).isEqualTo(RejectReason.LIMIT_EXCEEDED);
    assertThat(r.pointDetail(2))
        .startsWith("metric name of 65536 bytes exceeds the 65535-byte limit (\"uuuu");
    MetricMetadata longUnit =
        new MetricMetadata(MetricType.GAUGE, "b".repeat(65_536), Temporality.UNSPECIFIED, false);
    AppendResult unit =
        engine.append(
            new SampleBatch().addPoint(Labels.of("__name__", "x"), longUnit, T0 + MIN, 1));
    assertThat(unit.pointDetail(0))
        .isEqualTo("metric unit of 65536 bytes exceeds the 65535-byte limit");

    engine.abandon();
    engine = Engine.open(kv, config);
    assertThat(engine.series(0, Long.MAX_VALUE, List.of())).containsExactly(ok);
    engine.flush();
    assertThat(
            engine
                .select(0, Long.MAX_VALUE, List.of(LabelMatcher.equal("__name__", "db_calls")))
                .toList())
        .hasSize(1);
    EngineFaultTest.assertConsistent(kv, "after a limit rejection");
  }

  @Test
  void aReadSkipsAPostingWithoutItsForwardIndexRecordAndCountsIt() {
    append(UP, T0 + MIN, 1);
    Labels other = Labels.of("__name__", "up", "job", "b");
    append(other, T0 + MIN, 2);
    engine.flush();
    // Damage as an affected version left it: series 0 named by its postings, its ForwardIndex gone.
    TimeBucket b = TimeBucket.containing(T0, 1);
    kv.write(new WriteBatch().delete(Keys.forwardIndex(b, 0)));
    List<Series> got =
        engine.select(0, Long.MAX_VALUE, List.of(LabelMatcher.equal("__name__", "up"))).toList();
    assertThat(got).extracting(Series::labels).containsExactly(other);
    assertThat(engine.stats().unreadableRecords()).isEqualTo(1);
  }
}
