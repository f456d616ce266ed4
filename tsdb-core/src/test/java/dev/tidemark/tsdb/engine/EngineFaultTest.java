package dev.tidemark.tsdb.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.tidemark.tsdb.append.AppendResult;
import dev.tidemark.tsdb.append.RejectReason;
import dev.tidemark.tsdb.append.SampleBatch;
import dev.tidemark.tsdb.append.StorageUnavailableException;
import dev.tidemark.tsdb.codec.BucketListValue;
import dev.tidemark.tsdb.codec.InvertedIndexValue;
import dev.tidemark.tsdb.codec.Keys;
import dev.tidemark.tsdb.codec.RecordType;
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
import dev.tidemark.tsdb.time.ManualClock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.roaringbitmap.RoaringBitmap;

/**
 * Appends that fail anywhere leave nothing behind. A seeded workload against {@link
 * ReferenceModel}, with faults injected at random: the KV store failing the Nth write (the append's
 * own write, a seal's, retention's), an exception or an {@link Error} thrown while the append
 * builds its batch (before any sample, between samples, after the last one), and series that break
 * a format limit mixed into the batches. A failed append must change nothing the model would not;
 * every answer, before and after clean and crash restarts, must equal the model's; and the store
 * must stay consistent (every posting id has its ForwardIndex record, every bucket with records is
 * in the BucketList).
 */
class EngineFaultTest {

  private static final MetricMetadata META =
      new MetricMetadata(MetricType.GAUGE, "", Temporality.UNSPECIFIED, false);
  private static final String LONG_VALUE = "x".repeat(70_000);

  @ParameterizedTest
  @ValueSource(longs = {7L, 8L, 9L})
  void failuresAnywhereLeaveTheHeadAsTheStoreHasIt(long baseSeed) {
    failuresAnywhereLeaveTheHeadAsTheStoreHasIt(baseSeed, EngineConfig.DEFAULT_HEAD_FREEZE_SAMPLES);
  }

  /** The same with head series frozen after every two samples: undos meet frozen parts. */
  @ParameterizedTest
  @ValueSource(longs = {7L, 8L, 9L})
  void failuresAnywhereLeaveTheHeadAsTheStoreHasItWithHeadSeriesFrozenOften(long baseSeed) {
    failuresAnywhereLeaveTheHeadAsTheStoreHasIt(baseSeed, 2);
  }

  private void failuresAnywhereLeaveTheHeadAsTheStoreHasIt(long baseSeed, int headFreezeSamples) {
    long seed = Long.getLong("tidemark.seed", baseSeed);
    SplittableRandom rnd = new SplittableRandom(seed);
    ManualClock clock = new ManualClock(1_700_000_000_000L);
    EngineConfig config =
        EngineConfig.builder()
            .clock(clock)
            .outOfOrderWindow(Duration.ofMinutes(30))
            .retention(Duration.ofHours(6))
            .retentionInterval(Duration.ZERO)
            .compactionLevels(
                List.of(Duration.ofHours(1), Duration.ofHours(2), Duration.ofHours(4)))
            .compactionInterval(Duration.ZERO)
            .compactionDelay(Duration.ZERO)
            .headFreezeSamples(headFreezeSamples)
            .build();
    FailingKvStore kv = new FailingKvStore(new InMemoryKvStore());
    Engine[] live = {Engine.open(kv, config)};
    Engine engine = live[0];
    ReferenceModel model = new ReferenceModel(config);
    model.bucketOf = t -> CompactionTest.bucketIn(live[0].buckets(), t);
    Labels[] series = EngineModelTest.testSeries();
    int faultsSeen = 0;
    int limitRejections = 0;
    int compactions = 0;
    try {
      for (int step = 0; step < 80; step++) {
        String where = "seed " + seed + " step " + step;
        assertThat(live[0].headSampleBytesDrift()).as(where + " head byte count").isZero();
        int op = rnd.nextInt(100);
        if (op < 70) {
          // one kind per series: compactions go through, merging histogram chunks too
          SampleBatch batch =
              EngineModelTest.randomBatch(rnd, series, model, clock.millis(), false);
          if (rnd.nextInt(3) == 0) {
            addOverLongPoint(batch, rnd, series, clock.millis());
          }
          int fault = rnd.nextInt(5);
          armAppendFault(engine, kv, fault, rnd, batch.size());
          AppendResult r;
          try {
            r = engine.append(batch);
          } catch (StorageUnavailableException | InjectedFault | InjectedError e) {
            faultsSeen++;
            assertThat(fault)
                .as(where + " only an injected fault fails an append: " + e)
                .isNotZero();
            disarm(engine, kv);
            EngineModelTest.compare(
                engine, model, rnd, clock.millis(), where + " after a failed append");
            continue;
          }
          disarm(engine, kv);
          RejectReason[] want = model.append(batch, clock.millis());
          for (int p = 0; p < want.length; p++) {
            assertThat(r.pointReason(p)).as(where + " point " + p).isEqualTo(want[p]);
            if (want[p] == RejectReason.LIMIT_EXCEEDED) {
              limitRejections++;
              assertThat(r.pointDetail(p)).as(where).contains("exceeds the 65535-byte limit");
            }
          }
        } else if (op < 80) {
          clock.advance(rnd.nextLong(60_000, 50 * 60_000));
        } else if (op < 86) {
          if (rnd.nextBoolean()) {
            kv.failWriteAfter(rnd.nextInt(3)); // a seal's write fails: the bucket stays in the head
          }
          try {
            engine.flush();
          } catch (KvStoreException e) {
            faultsSeen++;
          }
          kv.disarm();
        } else if (op < 91) {
          if (rnd.nextBoolean()) {
            kv.failWriteAfter(rnd.nextInt(3));
          }
          try {
            engine.close();
          } catch (KvStoreException e) {
            faultsSeen++; // closed without sealing: the head log recovers it
          }
          kv.disarm();
          engine = Engine.open(kv, config);
        } else if (op < 93) {
          engine.abandon();
          engine = Engine.open(kv, config);
        } else if (op < 97) {
          // a compaction's write fails (its merge batches or its switch): reads stay the same
          if (rnd.nextBoolean()) {
            kv.failWriteAfter(rnd.nextInt(4));
          }
          try {
            compactions += engine.compactNow();
          } catch (KvStoreException e) {
            faultsSeen++;
          }
          kv.disarm();
        } else {
          boolean fail = rnd.nextBoolean();
          if (fail) {
            kv.failWriteAfter(0);
          }
          List<TimeBucket> layout = engine.buckets();
          try {
            engine.applyRetention();
            model.bucketOf = t -> CompactionTest.bucketIn(layout, t);
            model.applyRetention(clock.millis());
          } catch (KvStoreException e) {
            faultsSeen++;
          }
          model.bucketOf = t -> CompactionTest.bucketIn(live[0].buckets(), t);
          kv.disarm();
        }
        live[0] = engine;
        EngineModelTest.compare(engine, model, rnd, clock.millis(), where);
      }
      engine.close();
      assertConsistent(kv, "seed " + seed + " at the end");
      engine = Engine.open(kv, config);
      live[0] = engine;
      CompactionTest.assertClean(kv, "seed " + seed + " at the end");
      EngineModelTest.compare(engine, model, rnd, clock.millis(), "seed " + seed + " reopened");
    } finally {
      engine.close();
    }
    assertThat(faultsSeen).as("faults injected").isGreaterThan(5);
    assertThat(limitRejections).as("over-long series refused").isGreaterThan(0);
    assertThat(compactions).as("compactions that went through").isPositive();
  }

  @ParameterizedTest
  @ValueSource(ints = {0, 1, 2, 5})
  void aFailedWriteOfTheFirstAppendToABucketLeavesNoTrace(int failAt) {
    // The hostile client's case: the first write into an hour fails, a later one succeeds; after
    // a restart the later one must still be there, and the bucket readable.
    ManualClock clock = new ManualClock(1_700_000_000_000L);
    EngineConfig config =
        EngineConfig.builder().clock(clock).retentionInterval(Duration.ZERO).build();
    FailingKvStore kv = new FailingKvStore(new InMemoryKvStore());
    Engine engine = Engine.open(kv, config);
    long t = clock.millis();
    SampleBatch first = new SampleBatch();
    for (int i = 0; i < 10; i++) {
      first.addPoint(Labels.of("__name__", "m", "i", "a" + i), META, t, i);
    }
    AtomicInteger applied = new AtomicInteger();
    engine.faults =
        new FaultInjection() {
          @Override
          public void beforeApply(int k) {
            if (applied.getAndIncrement() == failAt) {
              throw new InjectedFault();
            }
          }

          @Override
          public void beforeWrite() {}
        };
    assertThatThrownBy(() -> engine.append(first)).isInstanceOf(InjectedFault.class);
    engine.faults = null;
    assertThat(engine.stats().headSeries()).isZero();
    assertThat(engine.stats().buckets()).isZero();

    SampleBatch second = new SampleBatch();
    second.addPoint(Labels.of("__name__", "m", "i", "b"), META, t, 42);
    assertThat(engine.append(second).rejectedPoints()).isZero();
    engine.abandon();
    Engine reopened = Engine.open(kv, config);
    try {
      assertThat(reopened.buckets()).hasSize(1);
      assertThat(reopened.series(0, Long.MAX_VALUE, List.of()))
          .containsExactly(Labels.of("__name__", "m", "i", "b"));
      reopened.flush();
      assertConsistent(kv, "after the failed first append");
    } finally {
      reopened.close();
    }
  }

  private static void addOverLongPoint(
      SampleBatch batch, SplittableRandom rnd, Labels[] series, long now) {
    Labels base = series[rnd.nextInt(series.length)];
    Labels bad =
        switch (rnd.nextInt(3)) {
          case 0 -> base.toBuilder().set("db_statement", LONG_VALUE).build();
          case 1 -> base.toBuilder().set(Labels.METRIC_NAME, LONG_VALUE).build();
          default -> base.toBuilder().set(LONG_VALUE, "v").build();
        };
    if (rnd.nextBoolean()) {
      batch.add(
          base, META, now - rnd.nextLong(0, 60_000), rnd.nextInt(100)); // its point fails whole
    }
    batch.add(bad, META, now - rnd.nextLong(0, 60_000), 1.0);
    batch.endPoint();
  }

  /**
   * 0: none; 1: the KV write fails; 2: before a random sample; 3: before the write; 4: an Error.
   */
  private static void armAppendFault(
      Engine engine, FailingKvStore kv, int fault, SplittableRandom rnd, int size) {
    int at = rnd.nextInt(size + 1);
    switch (fault) {
      case 1 -> kv.failWriteAfter(0);
      case 2, 4 -> {
        AtomicInteger applied = new AtomicInteger();
        engine.faults =
            new FaultInjection() {
              @Override
              public void beforeApply(int k) {
                if (applied.getAndIncrement() != at) {
                  return;
                }
                if (fault == 2) {
                  throw new InjectedFault();
                }
                throw new InjectedError();
              }

              @Override
              public void beforeWrite() {}
            };
      }
      case 3 ->
          engine.faults =
              new FaultInjection() {
                @Override
                public void beforeApply(int k) {}

                @Override
                public void beforeWrite() {
                  throw new InjectedFault();
                }
              };
      default -> {}
    }
  }

  private static void disarm(Engine engine, FailingKvStore kv) {
    engine.faults = null;
    kv.disarm();
  }

  /**
   * Every bucket with records is in the BucketList, and every id in every posting of a sealed
   * bucket has a ForwardIndex record.
   */
  static void assertConsistent(KvStore kv, String where) {
    Set<TimeBucket> listed = new HashSet<>(BucketListValue.decode(kv.get(Keys.bucketList())));
    List<String> problems = new ArrayList<>();
    for (RecordType type :
        new RecordType[] {
          RecordType.SERIES_DICTIONARY,
          RecordType.FORWARD_INDEX,
          RecordType.INVERTED_INDEX,
          RecordType.TIME_SERIES,
          RecordType.HEAD_LOG
        }) {
      byte[] from = Keys.bucketPrefix(type, TimeBucket.containing(0, 1));
      byte[] to =
          Keys.bucketPrefix(type, TimeBucket.containing(TimeBucket.MAX_START_MINUTES * 60_000L, 1));
      try (KvCursor c = kv.scan(from, to)) {
        while (c.next()) {
          TimeBucket b = Keys.timeBucket(c.key());
          if (!listed.contains(b)) {
            problems.add(type + " record of bucket " + b + " which is not in the BucketList");
          }
        }
      }
    }
    for (TimeBucket b : listed) {
      RoaringBitmap forward = new RoaringBitmap();
      try (KvCursor c = kv.scanPrefix(Keys.bucketPrefix(RecordType.FORWARD_INDEX, b))) {
        while (c.next()) {
          forward.add(Keys.seriesId(c.key()));
        }
      }
      try (KvCursor c = kv.scanPrefix(Keys.bucketPrefix(RecordType.INVERTED_INDEX, b))) {
        while (c.next()) {
          RoaringBitmap orphans =
              RoaringBitmap.andNot(InvertedIndexValue.decode(c.value()), forward);
          if (!orphans.isEmpty()) {
            problems.add(
                "a posting of bucket " + b + " names " + orphans + " without ForwardIndex records");
          }
        }
      }
    }
    assertThat(problems).as(where).isEmpty();
  }

  static final class InjectedFault extends RuntimeException {
    InjectedFault() {
      super("injected fault");
    }
  }

  static final class InjectedError extends Error {
    InjectedError() {
      super("injected error");
    }
  }

  /** A store whose Nth write from now fails (before anything of it is applied). */
  static final class FailingKvStore extends ForwardingKvStore {
    private int writesBeforeFailure = -1;

    FailingKvStore(KvStore inner) {
      super(inner);
    }

    /** The write after {@code n} more successful ones fails. */
    synchronized void failWriteAfter(int n) {
      writesBeforeFailure = n;
    }

    synchronized void disarm() {
      writesBeforeFailure = -1;
    }

    @Override
    public void write(WriteBatch batch) {
      synchronized (this) {
        if (writesBeforeFailure == 0) {
          writesBeforeFailure = -1;
          throw new KvStoreException("injected write failure");
        }
        if (writesBeforeFailure > 0) {
          writesBeforeFailure--;
        }
      }
      super.write(batch);
    }
  }
}
