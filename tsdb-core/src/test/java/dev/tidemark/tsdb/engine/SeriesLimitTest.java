package dev.tidemark.tsdb.engine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.tidemark.tsdb.append.AppendResult;
import dev.tidemark.tsdb.append.RejectReason;
import dev.tidemark.tsdb.append.SampleBatch;
import dev.tidemark.tsdb.kv.InMemoryKvStore;
import dev.tidemark.tsdb.model.Labels;
import dev.tidemark.tsdb.model.MetricMetadata;
import dev.tidemark.tsdb.model.MetricType;
import dev.tidemark.tsdb.model.Temporality;
import dev.tidemark.tsdb.query.LabelMatcher;
import dev.tidemark.tsdb.query.Series;
import dev.tidemark.tsdb.time.ManualClock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@link EngineConfig#maxActiveSeries()}: new series beyond the limit are refused one by one with
 * {@link RejectReason#SERIES_LIMIT}, series already in the head never, and room comes back when a
 * bucket leaves the head. See docs/architecture.md, Write path and durability.
 */
class SeriesLimitTest {
  static final long T0 = EngineTest.T0;
  static final long MIN = 60_000L;
  static final long HOUR = 3_600_000L;
  static final MetricMetadata GAUGE =
      new MetricMetadata(MetricType.GAUGE, "", Temporality.UNSPECIFIED, false);

  final ManualClock clock = new ManualClock(T0 + 30 * MIN);
  final InMemoryKvStore kv = new InMemoryKvStore();
  Engine engine;

  @AfterEach
  void close() {
    engine.close();
  }

  private Engine open(long maxActiveSeries) {
    engine =
        Engine.open(
            kv,
            EngineConfig.builder()
                .clock(clock)
                .retentionInterval(Duration.ZERO)
                .compactionInterval(Duration.ZERO)
                .maxActiveSeries(maxActiveSeries)
                .build());
    return engine;
  }

  static Labels known(int i) {
    return Labels.of("__name__", "known", "i", Integer.toString(i));
  }

  static Labels fresh(int i) {
    return Labels.of("__name__", "fresh", "i", Integer.toString(i));
  }

  private int stored(String name) {
    List<Series> s =
        engine
            .select(0, Long.MAX_VALUE / 2, List.of(LabelMatcher.equal("__name__", name)))
            .toList();
    return s.size();
  }

  @Test
  void newSeriesBeyondTheLimitAreRefusedOneByOneAndKnownSeriesNever() {
    long seed = System.nanoTime();
    SplittableRandom random = new SplittableRandom(seed);
    String detail = Appends.seriesLimitDetail(50);
    open(50);

    SampleBatch fill = new SampleBatch();
    for (int i = 0; i < 50; i++) {
      fill.addPoint(known(i), GAUGE, T0 + 20 * MIN, i);
    }
    assertThat(engine.append(fill).rejectedPoints()).isZero();
    assertThat(engine.activeSeries()).isEqualTo(50);

    int freshIds = 0;
    for (int round = 1; round <= 20; round++) {
      SampleBatch b = new SampleBatch();
      List<Boolean> isKnown = new ArrayList<>();
      for (int p = 0; p < 30; p++) {
        boolean k = random.nextInt(3) > 0;
        isKnown.add(k);
        if (k) {
          b.addPoint(known(random.nextInt(50)), GAUGE, T0 + 20 * MIN + round * 1000L, round);
        } else {
          b.addPoint(fresh(freshIds++), GAUGE, T0 + 20 * MIN + round * 1000L, round);
        }
      }
      AppendResult r = engine.append(b);
      for (int p = 0; p < 30; p++) {
        if (isKnown.get(p)) {
          assertThat(r.pointReason(p))
              .as("seed %d round %d point %d: known", seed, round, p)
              .isNull();
        } else {
          assertThat(r.pointReason(p))
              .as("seed %d round %d point %d: new", seed, round, p)
              .isEqualTo(RejectReason.SERIES_LIMIT);
          assertThat(r.pointDetail(p)).isEqualTo(detail);
        }
      }
      assertThat(engine.activeSeries()).as("seed %d", seed).isEqualTo(50);
    }
    assertThat(freshIds).as("seed %d: some new series were tried", seed).isPositive();
    assertThat(stored("fresh")).as("no refused series was created").isZero();
    assertThat(stored("known")).isEqualTo(50);
    assertThat(detail)
        .isEqualTo(
            "the head holds 50 active series, the --max-active-series limit: new series are"
                + " refused until some stop, series already in the head are still accepted");
  }

  @Test
  void aSeriesInAnOpenBucketIsNeverRefusedEvenNewToTheNextHourAndRoomReturnsWhenABucketLeaves() {
    open(50);
    SampleBatch fill = new SampleBatch();
    for (int i = 0; i < 50; i++) {
      fill.addPoint(known(i), GAUGE, T0 + 20 * MIN, i);
    }
    assertThat(engine.append(fill).rejectedPoints()).isZero();

    // The next hour: every series is new to its bucket, but known to the head (the first bucket
    // is still open, within the out-of-order window): accepted, and counted once.
    clock.set(T0 + HOUR + 5 * MIN);
    SampleBatch next = new SampleBatch();
    for (int i = 0; i < 25; i++) {
      next.addPoint(known(i), GAUGE, T0 + HOUR + MIN, i);
    }
    next.addPoint(fresh(0), GAUGE, T0 + HOUR + MIN, 0);
    AppendResult r = engine.append(next);
    assertThat(r.rejectedPoints()).isEqualTo(1);
    assertThat(r.pointReason(25)).isEqualTo(RejectReason.SERIES_LIMIT);
    assertThat(engine.stats().openBuckets()).isEqualTo(2);
    assertThat(engine.stats().headSeries()).as("per bucket").isEqualTo(75);
    assertThat(engine.activeSeries()).as("distinct").isEqualTo(50);

    // known(25..49) stop. Once the first hour is over by the clock and idle, it is sealed: they
    // leave the head, and 25 new series fit.
    clock.set(T0 + 2 * HOUR);
    for (int i = 0; i < 3 * Sealer.IDLE_CHECKS && engine.stats().openBuckets() > 1; i++) {
      engine.sealIdleBuckets();
    }
    assertThat(engine.stats().openBuckets()).isEqualTo(1);
    assertThat(engine.activeSeries()).isEqualTo(25);

    SampleBatch after = new SampleBatch();
    for (int i = 0; i < 30; i++) {
      after.addPoint(fresh(i), GAUGE, T0 + HOUR + 2 * MIN, i);
    }
    after.addPoint(known(3), GAUGE, T0 + HOUR + 2 * MIN, 3);
    after.addPoint(known(40), GAUGE, T0 + HOUR + 2 * MIN, 40); // stopped: new to the head again
    r = engine.append(after);
    for (int p = 0; p < 25; p++) {
      assertThat(r.pointReason(p)).as("point %d", p).isNull();
    }
    for (int p = 25; p < 30; p++) {
      assertThat(r.pointReason(p)).as("point %d", p).isEqualTo(RejectReason.SERIES_LIMIT);
    }
    assertThat(r.pointReason(30)).as("known(3) is in the head").isNull();
    assertThat(r.pointReason(31)).as("known(40) left it").isEqualTo(RejectReason.SERIES_LIMIT);
    assertThat(engine.activeSeries()).isEqualTo(50);
  }

  @Test
  void aPointOfSeveralNewSeriesFitsWholeOrIsRefusedWhole() {
    open(3);
    assertThat(engine.append(new SampleBatch().addPoint(known(0), GAUGE, T0, 0)).rejectedPoints())
        .isZero();
    assertThat(engine.append(new SampleBatch().addPoint(known(1), GAUGE, T0, 1)).rejectedPoints())
        .isZero();
    // One place left: a point of two new series (a histogram's _sum and _count) does not fit.
    SampleBatch two = new SampleBatch();
    two.add(fresh(0), GAUGE, T0, 0);
    two.add(fresh(1), GAUGE, T0, 1);
    two.endPoint();
    AppendResult r = engine.append(two);
    assertThat(r.pointReason(0)).isEqualTo(RejectReason.SERIES_LIMIT);
    assertThat(engine.activeSeries()).isEqualTo(2);
    assertThat(stored("fresh")).isZero();

    SampleBatch one = new SampleBatch();
    one.add(fresh(0), GAUGE, T0, 0);
    one.add(known(0), GAUGE, T0 + 1000, 0);
    one.endPoint();
    assertThat(engine.append(one).rejectedPoints()).isZero();
    assertThat(engine.activeSeries()).isEqualTo(3);
  }

  @Test
  void recoveryAndAReopenedBucketCountTheirSeriesOnce() {
    open(100);
    SampleBatch b = new SampleBatch();
    for (int i = 0; i < 10; i++) {
      b.addPoint(known(i), GAUGE, T0 + 50 * MIN, i); // first hour
    }
    for (int i = 5; i < 15; i++) {
      b.addPoint(known(i), GAUGE, T0 + HOUR + MIN, i); // next hour: 5..9 in both
    }
    clock.set(T0 + HOUR + 5 * MIN);
    assertThat(engine.append(b).rejectedPoints()).isZero();
    assertThat(engine.activeSeries()).isEqualTo(15);

    engine.abandon(); // a crash: the head comes back from the head log
    open(100);
    assertThat(engine.stats().openBuckets()).isEqualTo(2);
    assertThat(engine.activeSeries()).isEqualTo(15);

    // The first hour sealed (idle, over by the clock), then reopened by a late sample of known(0).
    clock.set(T0 + 2 * HOUR);
    for (int i = 0; i < 3 * Sealer.IDLE_CHECKS && engine.stats().openBuckets() > 1; i++) {
      engine.sealIdleBuckets();
    }
    assertThat(engine.activeSeries()).as("known(5..14)").isEqualTo(10);
    assertThat(
            engine
                .append(new SampleBatch().addPoint(known(0), GAUGE, T0 + 55 * MIN, 0))
                .rejectedPoints())
        .isZero();
    assertThat(engine.stats().openBuckets()).isEqualTo(2);
    assertThat(engine.activeSeries()).as("the reopened hour's series are back").isEqualTo(15);
  }

  /**
   * The counter against a scan of the open buckets under random appends (late ones reopening sealed
   * hours), idle seals, flushes, failed appends and crashes.
   */
  @Test
  void theCountIsTheDistinctSeriesOfTheOpenBucketsWhateverHappens() {
    long seed = Long.getLong("tidemark.seed", System.nanoTime());
    SplittableRandom random = new SplittableRandom(seed);
    long limit = 40;
    open(limit);
    for (int step = 0; step < 400; step++) {
      int op = random.nextInt(20);
      if (op < 14) {
        SampleBatch b = new SampleBatch();
        int points = 1 + random.nextInt(20);
        for (int p = 0; p < points; p++) {
          long t = clock.millis() - random.nextLong(2 * HOUR);
          b.addPoint(known(random.nextInt(60)), GAUGE, t, step);
        }
        if (op == 13) {
          engine.faults =
              new FaultInjection() {
                @Override
                public void beforeApply(int k) {}

                @Override
                public void beforeWrite() {
                  throw new IllegalStateException("injected");
                }
              };
        }
        try {
          engine.append(b);
        } catch (IllegalStateException injected) {
          // rolled back
        } finally {
          engine.faults = null;
        }
      } else if (op < 17) {
        clock.set(clock.millis() + random.nextLong(20 * MIN));
      } else if (op == 17) {
        engine.sealIdleBuckets();
      } else if (op == 18 && random.nextInt(4) == 0) {
        engine.flush();
      } else if (op == 19 && random.nextInt(4) == 0) {
        engine.abandon(); // a crash: the head comes back from the head log
        open(limit);
      }
      assertThat(engine.activeSeriesDrift())
          .as("seed %d step %d op %d: count minus scan", seed, step, op)
          .isZero();
    }
  }

  @Test
  void unlimitedByDefaultAndTheCountFollowsRollbacks() {
    open(EngineConfig.DEFAULT_MAX_ACTIVE_SERIES);
    SampleBatch b = new SampleBatch();
    for (int i = 0; i < 200; i++) {
      b.addPoint(fresh(i), GAUGE, T0 + MIN, i);
    }
    assertThat(engine.append(b).rejectedPoints()).isZero();
    assertThat(engine.activeSeries()).isEqualTo(200);

    // A failed append creates nothing, and counts nothing.
    engine.faults =
        new FaultInjection() {
          @Override
          public void beforeApply(int k) {}

          @Override
          public void beforeWrite() {
            throw new IllegalStateException("injected");
          }
        };
    SampleBatch more = new SampleBatch();
    for (int i = 200; i < 210; i++) {
      more.addPoint(fresh(i), GAUGE, T0 + MIN, i);
    }
    try {
      engine.append(more);
    } catch (IllegalStateException expected) {
      // the injected failure
    }
    engine.faults = null;
    assertThat(engine.activeSeries()).isEqualTo(200);
    engine.flush();
    assertThat(engine.activeSeries()).isZero();
  }
}
