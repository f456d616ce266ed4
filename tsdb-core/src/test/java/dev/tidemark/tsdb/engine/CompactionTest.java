package dev.tidemark.tsdb.engine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.tidemark.tsdb.append.AppendResult;
import dev.tidemark.tsdb.append.RejectReason;
import dev.tidemark.tsdb.append.SampleBatch;
import dev.tidemark.tsdb.codec.BucketListValue;
import dev.tidemark.tsdb.codec.Keys;
import dev.tidemark.tsdb.codec.TimeBucket;
import dev.tidemark.tsdb.kv.ForwardingKvStore;
import dev.tidemark.tsdb.kv.InMemoryKvStore;
import dev.tidemark.tsdb.kv.KvCursor;
import dev.tidemark.tsdb.kv.KvStore;
import dev.tidemark.tsdb.kv.KvStoreException;
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
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.TreeSet;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Compaction into coarser buckets (docs/architecture.md, Compaction): the reference model across
 * compactions, reads before and after, late data into a compacted range, retention and deletes on
 * coarse buckets, and a crash at every write of a compaction.
 */
class CompactionTest {

  private static final long HOUR = 3_600_000L;
  private static final long START = 1_700_000_000_000L - 1_700_000_000_000L % (64 * HOUR);
  private static final MetricMetadata META =
      new MetricMetadata(MetricType.GAUGE, "", Temporality.UNSPECIFIED, false);
  private static final List<Duration> LEVELS =
      List.of(Duration.ofHours(1), Duration.ofHours(2), Duration.ofHours(4), Duration.ofHours(8));

  private static EngineConfig config(ManualClock clock, Duration retention) {
    return EngineConfig.builder()
        .clock(clock)
        .outOfOrderWindow(Duration.ofMinutes(30))
        .retention(retention)
        .retentionInterval(Duration.ZERO)
        .compactionLevels(LEVELS)
        .compactionInterval(Duration.ZERO)
        .compactionDelay(Duration.ZERO)
        .build();
  }

  /** The bucket of the layout containing {@code t}, else its hour (what the model asks). */
  static TimeBucket bucketIn(List<TimeBucket> layout, long t) {
    for (TimeBucket b : layout) {
      if (b.contains(t)) {
        return b;
      }
    }
    return TimeBucket.containing(t, 1);
  }

  // ---------------------------------------------------------------------------------------------
  // The reference model across compactions

  @ParameterizedTest
  @ValueSource(longs = {11L, 12L, 13L, 14L})
  void engineMatchesReferenceModelAcrossCompactions(long baseSeed) {
    long seed = Long.getLong("tidemark.seed", baseSeed);
    SplittableRandom rnd = new SplittableRandom(seed);
    ManualClock clock = new ManualClock(START + 5 * 60_000);
    EngineConfig config = config(clock, Duration.ofHours(14));
    InMemoryKvStore kv = new InMemoryKvStore();
    Engine[] engine = {Engine.open(kv, config)};
    ReferenceModel model = new ReferenceModel(config);
    model.bucketOf = t -> bucketIn(engine[0].buckets(), t);
    Labels[] series = EngineModelTest.testSeries();
    int compacted = 0;
    try {
      for (int step = 0; step < 120; step++) {
        String where = "seed " + seed + " step " + step;
        int op = rnd.nextInt(100);
        if (op < 55) {
          // one kind per series, so that groups merge (histogram chunks too)
          SampleBatch batch =
              EngineModelTest.randomBatch(rnd, series, model, clock.millis(), false);
          AppendResult r = engine[0].append(batch);
          RejectReason[] want = model.append(batch, clock.millis());
          for (int p = 0; p < want.length; p++) {
            assertThat(r.pointReason(p)).as(where + " point " + p).isEqualTo(want[p]);
          }
        } else if (op < 72) {
          clock.advance(rnd.nextLong(10 * 60_000, 90 * 60_000));
        } else if (op < 80) {
          engine[0].flush();
        } else if (op < 88) {
          compacted += engine[0].compactNow();
          assertNoOverlap(engine[0].buckets(), where);
        } else if (op < 91) {
          engine[0].close();
          engine[0] = Engine.open(kv, config);
        } else if (op < 94) {
          engine[0].abandon();
          engine[0] = Engine.open(kv, config);
        } else if (op < 97) {
          List<TimeBucket> before = engine[0].buckets();
          engine[0].applyRetention();
          model.bucketOf = t -> bucketIn(before, t);
          model.applyRetention(clock.millis());
          model.bucketOf = t -> bucketIn(engine[0].buckets(), t);
        } else {
          long maxT = clock.millis() - rnd.nextLong(0, 6 * HOUR);
          long minT = maxT - rnd.nextLong(0, 3 * HOUR);
          List<LabelMatcher> matchers = EngineModelTest.randomMatchers(rnd);
          List<TimeBucket> before = engine[0].buckets();
          engine[0].deleteSeries(minT, maxT, matchers);
          model.delete(minT, maxT, matchers);
          assertThat(engine[0].buckets()).as(where).isSubsetOf(before);
        }
        EngineModelTest.compare(engine[0], model, rnd, clock.millis(), where);
      }
      compacted += engine[0].compactNow();
      EngineModelTest.compare(
          engine[0], model, rnd, clock.millis(), "seed " + seed + " at the end");
      engine[0].close();
      assertClean(kv, "seed " + seed);
      engine[0] = Engine.open(kv, config);
      EngineModelTest.compare(engine[0], model, rnd, clock.millis(), "seed " + seed + " reopened");
    } finally {
      engine[0].close();
    }
    assertThat(compacted).as("coarse buckets made").isGreaterThan(3);
  }

  // ---------------------------------------------------------------------------------------------
  // Reads, stats, late data, retention, deletes

  /** 40 series at 15 s over {@code hours} hours from START, sealed. */
  private static void fill(Engine engine, ManualClock clock, int hours) {
    for (long t = START; t < START + hours * HOUR; t += 15_000) {
      clock.set(t);
      SampleBatch batch = new SampleBatch();
      for (int i = 0; i < 40; i++) {
        if (i == 39 && t > START + 3 * HOUR) {
          continue; // a series that stops early: its late samples may still come
        }
        batch.addPoint(
            Labels.of("__name__", "m" + i % 4, "instance", "i" + i),
            META,
            t,
            (t / 15_000 % 100 + i) / 4.0);
      }
      assertThat(engine.append(batch).rejectedPoints()).isZero();
    }
    clock.set(START + hours * HOUR + HOUR);
    engine.flush();
  }

  private static List<String> dump(Engine engine) {
    List<String> out = new ArrayList<>();
    for (Series s : engine.select(0, Long.MAX_VALUE, List.of()).toList()) {
      StringBuilder sb = new StringBuilder(s.labels().toString()).append(' ').append(s.metadata());
      SampleIterator it = s.iterator();
      while (it.next()) {
        sb.append(' ')
            .append(it.timestampMillis())
            .append('=')
            .append(Long.toHexString(it.valueBits()));
      }
      out.add(sb.toString());
    }
    return out;
  }

  @Test
  void compactedBucketsReadTheSameAndVerify() {
    ManualClock clock = new ManualClock(START);
    EngineConfig config = config(clock, Duration.ofDays(30));
    InMemoryKvStore kv = new InMemoryKvStore();
    Engine engine = Engine.open(kv, config);
    try {
      fill(engine, clock, 20);
      List<String> before = dump(engine);
      long bytesBefore = storeBytes(kv);
      assertThat(engine.buckets()).hasSize(20);
      int made = engine.compactNow();
      // 20 hours from a 64-hour boundary: two 8 h buckets, one 4 h bucket; nothing left to merge
      assertThat(engine.buckets()).extracting(TimeBucket::sizeHours).containsExactly(8, 8, 4);
      assertThat(made).isEqualTo(3);
      assertThat(dump(engine)).isEqualTo(before);
      Engine.Stats stats = engine.stats();
      assertThat(stats.coarseBuckets()).isEqualTo(3);
      assertThat(stats.compactions()).isEqualTo(3);
      assertThat(stats.compactedBuckets()).isEqualTo(20);
      assertThat(stats.compactionBytesWritten()).isPositive();
      assertThat(engine.compactNow()).isZero();
      assertThat(
              engine.series(
                  START + 9 * HOUR,
                  START + 9 * HOUR,
                  List.of(LabelMatcher.equal("instance", "i3"))))
          .containsExactly(Labels.of("__name__", "m3", "instance", "i3"));
      assertThat(
              engine.labelValues(
                  "instance", START, START + HOUR, List.of(LabelMatcher.equal("__name__", "m0"))))
          .hasSize(10);
      assertThat(engine.bucketInfo())
          .extracting(i -> i.bucket().sizeHours())
          .containsExactly(8, 8, 4);
      engine.close();
      assertThat(storeBytes(kv)).isLessThan(bytesBefore);
      assertClean(kv, "after compaction");
      engine = Engine.open(kv, config);
      assertThat(dump(engine)).isEqualTo(before);
    } finally {
      engine.close();
    }
  }

  @Test
  void theDelayKeepsRecentGroupsInOneHourBuckets() {
    ManualClock clock = new ManualClock(START);
    EngineConfig config =
        config(clock, Duration.ofDays(30)).toBuilder().compactionDelay(Duration.ofHours(8)).build();
    InMemoryKvStore kv = new InMemoryKvStore();
    Engine engine = Engine.open(kv, config);
    try {
      fill(engine, clock, 16); // the clock ends at 17 h
      assertThat(engine.compactNow())
          .isEqualTo(1); // [0 h, 8 h) ended 9 h ago; [8 h, 16 h) only 1 h ago
      assertThat(engine.buckets())
          .extracting(TimeBucket::sizeHours)
          .containsExactly(8, 1, 1, 1, 1, 1, 1, 1, 1);
      clock.set(START + 24 * HOUR);
      assertThat(engine.compactNow()).isEqualTo(1);
      assertThat(engine.buckets()).extracting(TimeBucket::sizeHours).containsExactly(8, 8);
    } finally {
      engine.close();
    }
  }

  @Test
  void lateDataReopensTheCoarseBucket() {
    ManualClock clock = new ManualClock(START);
    EngineConfig config = config(clock, Duration.ofDays(30));
    InMemoryKvStore kv = new InMemoryKvStore();
    Engine engine = Engine.open(kv, config);
    CountDownLatch hold = new CountDownLatch(1);
    try {
      fill(engine, clock, 16);
      engine.compactNow();
      assertThat(engine.buckets()).extracting(TimeBucket::sizeHours).containsExactly(8, 8);
      // The coarse bucket is due for a seal as soon as late data reopens it (the head's newest
      // sample is hours past it): the background thread is held until the head was looked at and
      // the engine abandoned, so the seal an append schedules cannot run first.
      engine.holdBackgroundForTests(hold);
      Labels stopped = Labels.of("__name__", "m3", "instance", "i39");
      long last = START + 3 * HOUR; // i39's newest sample
      SampleBatch late = new SampleBatch();
      late.addPoint(stopped, META, last + 60_000, 7.5); // newer for its series: in order
      late.addPoint(stopped, META, last + 45_000, 7.25); // inside its out-of-order window
      late.addPoint(stopped, META, last, 99); // a duplicate with other bits
      AppendResult r = engine.append(late);
      assertThat(r.pointReason(0)).isNull();
      assertThat(r.pointReason(1)).isNull();
      assertThat(r.pointReason(2)).isEqualTo(RejectReason.DUPLICATE);
      SampleBatch fresh = new SampleBatch();
      fresh.addPoint(Labels.of("__name__", "new", "instance", "x"), META, START + 5 * HOUR, 1);
      assertThat(engine.append(fresh).pointReason(0)).isNull(); // a new series in a compacted range
      assertThat(engine.stats().openBuckets()).isEqualTo(1);
      assertThat(engine.buckets()).extracting(TimeBucket::sizeHours).containsExactly(8, 8);
      List<String> want = dump(engine);
      assertThat(String.join("\n", want))
          .contains(" " + (last + 45_000) + "=", " " + (last + 60_000) + "=");
      engine.abandon();
      hold.countDown();
      engine = Engine.open(kv, config); // the head log of the reopened coarse bucket replays
      assertThat(dump(engine)).isEqualTo(want);
      engine.flush();
      assertThat(engine.buckets()).extracting(TimeBucket::sizeHours).containsExactly(8, 8);
      assertThat(dump(engine)).isEqualTo(want);
      engine.close();
      assertClean(kv, "after late data");
      engine = Engine.open(kv, config);
      assertThat(dump(engine)).isEqualTo(want);
    } finally {
      hold.countDown();
      engine.close();
    }
  }

  @Test
  void retentionDropsACoarseBucketOnlyWhenAllOfItExpired() {
    ManualClock clock = new ManualClock(START);
    EngineConfig config = config(clock, Duration.ofHours(12));
    InMemoryKvStore kv = new InMemoryKvStore();
    Engine engine = Engine.open(kv, config);
    try {
      fill(engine, clock, 16);
      engine.compactNow();
      assertThat(engine.buckets()).extracting(TimeBucket::sizeHours).containsExactly(8, 8);
      clock.set(START + 12 * HOUR + 7 * HOUR); // cutoff at 7 h: inside the first 8 h bucket
      assertThat(engine.applyRetention()).isZero();
      assertThat(engine.select(START, START + 1, List.of()).toList()).isNotEmpty();
      clock.set(START + 12 * HOUR + 8 * HOUR); // cutoff at its end
      assertThat(engine.applyRetention()).isEqualTo(1);
      assertThat(engine.buckets())
          .extracting(TimeBucket::startMillis)
          .containsExactly(START + 8 * HOUR);
      assertThat(engine.select(0, START + 8 * HOUR - 1, List.of()).toList()).isEmpty();
      engine.close();
      assertClean(kv, "after retention");
    } finally {
      engine.close();
    }
  }

  @Test
  void deletesWorkOnCoarseBuckets() {
    ManualClock clock = new ManualClock(START);
    EngineConfig config = config(clock, Duration.ofDays(30));
    InMemoryKvStore kv = new InMemoryKvStore();
    Engine engine = Engine.open(kv, config);
    try {
      fill(engine, clock, 16);
      engine.compactNow();
      Engine.DeleteResult d =
          engine.deleteSeries(
              START + 2 * HOUR, START + 10 * HOUR, List.of(LabelMatcher.equal("__name__", "m1")));
      assertThat(d.buckets()).isEqualTo(2);
      assertThat(d.series()).isEqualTo(20);
      for (Series s :
          engine
              .select(
                  START + 2 * HOUR,
                  START + 10 * HOUR,
                  List.of(LabelMatcher.equal("__name__", "m1")))
              .toList()) {
        throw new AssertionError("not deleted: " + s.labels());
      }
      assertThat(
              engine
                  .select(0, START + 2 * HOUR - 1, List.of(LabelMatcher.equal("__name__", "m1")))
                  .toList())
          .hasSize(10);
      // the whole first coarse bucket, every series: the bucket goes
      engine.deleteSeries(START, START + 8 * HOUR - 1, List.of());
      assertThat(engine.buckets())
          .extracting(TimeBucket::startMillis)
          .containsExactly(START + 8 * HOUR);
      engine.close();
      assertClean(kv, "after deletes");
    } finally {
      engine.close();
    }
  }

  @Test
  void aGroupWithAnUndecodableChunkStaysAsItIsAndIsNotRetried() {
    ManualClock clock = new ManualClock(START);
    EngineConfig config = config(clock, Duration.ofDays(30));
    InMemoryKvStore kv = new InMemoryKvStore();
    Engine engine = Engine.open(kv, config);
    try {
      fill(engine, clock, 16);
      engine.close();
      kv.write(
          new WriteBatch()
              .put(
                  Keys.timeSeries(new TimeBucket(1, (int) (START / 60_000 + 120)), 3),
                  new byte[] {1, 5}));
      engine = Engine.open(kv, config);
      // hour 2 is unreadable: the 8 h, 4 h and 2 h groups holding it stay; the rest compacts
      assertThat(engine.compactNow()).isEqualTo(3);
      assertThat(engine.buckets()).extracting(TimeBucket::sizeHours).containsExactly(2, 1, 1, 4, 8);
      assertThat(engine.stats().compactionFailures()).isEqualTo(3);
      assertThat(engine.compactNow()).isZero();
      assertThat(engine.stats().compactionFailures()).isEqualTo(3);
      engine.close();
      engine = Engine.open(kv, config);
      assertThat(engine.compactNow()).isZero(); // tried again after a restart, failing again
      assertThat(engine.buckets()).extracting(TimeBucket::sizeHours).containsExactly(2, 1, 1, 4, 8);
    } finally {
      engine.close();
    }
  }

  @Test
  void closingDuringACompactionAbandonsItAndReadsTheSame() throws Exception {
    ManualClock clock = new ManualClock(START);
    EngineConfig config = config(clock, Duration.ofDays(30));
    InMemoryKvStore kv = new InMemoryKvStore();
    Engine engine = Engine.open(kv, config);
    fill(engine, clock, 8);
    List<String> want = dump(engine);
    Thread[] closer = new Thread[1];
    engine.compactionFaults(
        () -> {
          if (closer[0] == null) {
            closer[0] = new Thread(engine::close, "closer");
            closer[0].start();
            while (!engine.compactorStopping()) {
              Thread.onSpinWait();
            }
          }
        });
    assertThat(engine.compactNow()).isZero();
    closer[0].join();
    assertThat(engine.stats().compactionsAbandoned()).isEqualTo(1);
    assertClean(kv, "after a close during a compaction");
    Engine reopened = Engine.open(kv, config);
    try {
      assertThat(reopened.buckets()).hasSize(8).allMatch(b -> b.sizeHours() == 1);
      assertThat(dump(reopened)).isEqualTo(want);
    } finally {
      reopened.close();
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Crashes

  /**
   * A crash at every write of a compaction (the store takes nothing after the Nth write, as after a
   * SIGKILL), then a restart: the store reads the same, holds no orphans, and a second compaction
   * finishes it.
   */
  @Test
  void aCrashAtAnyWriteOfACompactionLosesAndDuplicatesNothing() {
    List<String> want = null;
    int crashes = 0;
    long unfinished = 0;
    for (int budget = 0; ; budget++) {
      ManualClock clock = new ManualClock(START);
      EngineConfig config = config(clock, Duration.ofDays(30));
      InMemoryKvStore inner = new InMemoryKvStore();
      Engine engine = Engine.open(inner, config);
      fill(engine, clock, 16);
      if (want == null) {
        want = dump(engine);
      }
      engine.close();
      CrashingKvStore kv = new CrashingKvStore(inner, budget);
      engine = Engine.open(kv, config);
      boolean crashed = false;
      try {
        engine.compactNow();
      } catch (KvStoreException e) {
        crashed = true;
      }
      engine.abandon();
      assertThat(crashed).as("budget " + budget).isEqualTo(kv.crashed);
      // tidemark verify on the crashed store: an unfinished compaction, never a bucket to add back
      VerifyReport report = StoreVerifier.verify(inner);
      assertThat(report.count(StoreProblem.Kind.BUCKET_NOT_LISTED)).as("budget " + budget).isZero();
      assertThat(report.problemCount())
          .as("budget " + budget + " " + report.counts())
          .isEqualTo(report.count(StoreProblem.Kind.UNFINISHED_COMPACTION));
      unfinished += report.count(StoreProblem.Kind.UNFINISHED_COMPACTION);
      if (budget % 2 == 0) {
        StoreVerifier.repair(inner); // or the engine's open deletes them: both must read the same
        assertThat(StoreVerifier.verify(inner).clean()).as("budget " + budget).isTrue();
      }
      Engine restarted = Engine.open(inner, config);
      try {
        assertThat(dump(restarted)).as("budget " + budget).isEqualTo(want);
        restarted.compactNow();
        assertThat(restarted.buckets()).extracting(TimeBucket::sizeHours).containsExactly(8, 8);
        assertThat(dump(restarted)).as("budget " + budget + " compacted again").isEqualTo(want);
      } finally {
        restarted.close();
      }
      assertClean(inner, "budget " + budget);
      if (!crashed) {
        break;
      }
      crashes++;
    }
    assertThat(crashes).as("writes a compaction of two groups makes").isGreaterThanOrEqualTo(4);
    assertThat(unfinished).as("crashes that left an unfinished compaction").isPositive();
  }

  /** Every write after the first {@code budget} ones fails, as if the process had died there. */
  static final class CrashingKvStore extends ForwardingKvStore {
    private int budget;
    boolean crashed;

    CrashingKvStore(KvStore inner, int budget) {
      super(inner);
      this.budget = budget;
    }

    @Override
    public synchronized void write(WriteBatch batch) {
      if (budget-- <= 0) {
        crashed = true;
        throw new KvStoreException("crashed");
      }
      super.write(batch);
    }
  }

  // ---------------------------------------------------------------------------------------------

  private static long storeBytes(KvStore kv) {
    long n = 0;
    try (KvCursor c = kv.scan(null, null)) {
      while (c.next()) {
        n += c.key().length + c.value().length;
      }
    }
    return n;
  }

  private static void assertNoOverlap(List<TimeBucket> buckets, String where) {
    for (int i = 1; i < buckets.size(); i++) {
      assertThat(buckets.get(i).startMillis())
          .as(where + " " + buckets)
          .isGreaterThanOrEqualTo(buckets.get(i - 1).endMillis());
    }
  }

  /**
   * The store of a closed engine: buckets do not overlap, every bucket-scoped record belongs to a
   * listed bucket (of any size), and the verifier finds nothing.
   */
  static void assertClean(KvStore kv, String where) {
    byte[] list = kv.get(Keys.bucketList());
    List<TimeBucket> listed = list == null ? List.of() : BucketListValue.decode(list);
    assertNoOverlap(listed, where);
    Set<TimeBucket> set = new HashSet<>(listed);
    TreeSet<String> strays = new TreeSet<>();
    try (KvCursor c = kv.scan(new byte[] {1, 0x20}, new byte[] {1, 0x70})) {
      while (c.next()) {
        TimeBucket b = Keys.timeBucket(c.key());
        if (!set.contains(b)) {
          strays.add(b.toString());
        }
      }
    }
    assertThat(strays).as(where + ": records of unlisted buckets").isEmpty();
    VerifyReport report = StoreVerifier.verify(kv);
    assertThat(report.clean()).as(where + " verify: " + report.counts()).isTrue();
  }
}
