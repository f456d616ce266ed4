package dev.tidemark.tsdb.engine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.tidemark.tsdb.append.SampleBatch;
import dev.tidemark.tsdb.codec.TimeBucket;
import dev.tidemark.tsdb.kv.InMemoryKvStore;
import dev.tidemark.tsdb.model.Labels;
import dev.tidemark.tsdb.model.MetricMetadata;
import dev.tidemark.tsdb.model.MetricType;
import dev.tidemark.tsdb.model.Temporality;
import dev.tidemark.tsdb.query.LabelMatcher;
import dev.tidemark.tsdb.query.QueryContext;
import dev.tidemark.tsdb.query.SampleIterator;
import dev.tidemark.tsdb.query.Series;
import dev.tidemark.tsdb.time.ManualClock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A select with a scanning matcher reads the head in two lock holds, matching label values between
 * them without the lock. A stored bucket may be reopened by a late sample, appended to and sealed
 * again in between, and be stored in both holds: the select must still show every append before one
 * it shows. Found by {@code EngineConcurrencyTest} on a loaded machine (a reader saw an open
 * bucket's newest appends and an older stored copy of the bucket before it); here the interleaving
 * is forced, on one thread, from the query's cancellation check, which runs between the holds.
 */
class ReadSnapshotTest {
  static final long T0 = EngineTest.T0;
  static final long MIN = 60_000L;
  static final long HOUR = 60 * MIN;
  static final MetricMetadata GAUGE =
      new MetricMetadata(MetricType.GAUGE, "", Temporality.UNSPECIFIED, false);
  static final Labels X = Labels.of("__name__", "m", "s", "x");

  /** Gives the open hour the value x of s before the select, so that x is matched there. */
  static final Labels Y = Labels.of("__name__", "m", "s", "x", "other", "y");

  final ManualClock clock = new ManualClock(T0 + 3 * HOUR);
  Engine engine;

  @BeforeEach
  void open() {
    engine =
        Engine.open(
            new InMemoryKvStore(),
            EngineConfig.builder()
                .clock(clock)
                .outOfOrderWindow(Duration.ofMinutes(1))
                .retentionInterval(Duration.ZERO)
                .build());
  }

  @AfterEach
  void close() {
    engine.close();
  }

  private void append(Labels l, long t, double v) {
    SampleBatch b = new SampleBatch();
    b.addPoint(l, GAUGE, t, v);
    assertThat(engine.append(b).rejectedPoints()).isZero();
  }

  /** Waits for the background seal of the first hour's bucket (it is due). */
  private void awaitSealed(TimeBucket first) throws InterruptedException {
    long deadline = System.nanoTime() + 30_000_000_000L;
    while (engine.bucketInfo().stream().anyMatch(i -> i.bucket().equals(first) && i.open())) {
      assertThat(System.nanoTime() < deadline).as("bucket %s sealed", first).isTrue();
      Thread.sleep(5);
    }
  }

  @Test
  void aStoredBucketRewrittenBetweenTheTwoHoldsIsReadAsOfTheSecond() throws Exception {
    append(X, T0 + 30 * MIN, 1);
    append(Y, T0 + 30 * MIN, 1);
    append(Y, T0 + HOUR + 5 * MIN, 2); // the first hour is due: sealed in the background
    TimeBucket first =
        engine.bucketInfo().stream()
            .map(Engine.BucketInfo::bucket)
            .filter(b -> b.startMillis() == T0)
            .findFirst()
            .orElseThrow();
    awaitSealed(first);

    AtomicInteger checks = new AtomicInteger();
    AtomicInteger hooked = new AtomicInteger();
    QueryContext between =
        QueryContext.of(
            Long.MAX_VALUE,
            () -> {
              // 1st check: before the first hold; 2nd: matching the open bucket's values between
              // the holds.
              if (checks.incrementAndGet() == 2) {
                hooked.incrementAndGet();
                append(X, T0 + 31 * MIN, 3); // reopens the sealed first hour
                append(X, T0 + HOUR + 6 * MIN, 4); // the open hour, after it
                try {
                  awaitSealed(first); // due again: sealed again, so stored in both holds
                } catch (InterruptedException e) {
                  throw new IllegalStateException(e);
                }
              }
              return false;
            });
    List<Series> got =
        engine.select(0, Long.MAX_VALUE, List.of(LabelMatcher.regex("s", ".+")), between).toList();

    assertThat(hooked).as("the appends ran between the two holds").hasValue(1);
    Series x = got.stream().filter(s -> s.labels().equals(X)).findFirst().orElseThrow();
    List<Long> times = new ArrayList<>();
    for (SampleIterator it = x.iterator(); it.next(); ) {
      times.add(it.timestampMillis() - T0);
    }
    assertThat(times)
        .as("x: the open hour's append is shown, so the append before it must be too")
        .containsExactly(30 * MIN, 31 * MIN, HOUR + 6 * MIN);
    assertThat(got).hasSize(2);
  }
}
