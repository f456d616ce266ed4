package dev.tidemark.tsdb.engine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.tidemark.tsdb.append.AppendResult;
import dev.tidemark.tsdb.append.SampleBatch;
import dev.tidemark.tsdb.kv.InMemoryKvStore;
import dev.tidemark.tsdb.model.Labels;
import dev.tidemark.tsdb.model.MetricMetadata;
import dev.tidemark.tsdb.query.LabelMatcher;
import dev.tidemark.tsdb.query.SampleIterator;
import dev.tidemark.tsdb.query.Series;
import dev.tidemark.tsdb.time.ManualClock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentSkipListSet;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Freezing runs on the background thread while appends and reads go on (docs/architecture.md, The
 * head): two writers append to their own series (in order, and now and then a late sample, which
 * makes a captured freeze stale), crossing bucket boundaries so seals run too, while a reader
 * checks that every read holds every sample acknowledged before it started, each exactly once, in
 * time order, with its value. At the end, and after a flush, a close and a reopen, everything
 * acknowledged is read back.
 */
class FreezeConcurrencyTest {

  private static final long T0 = 1_700_000_000_000L / 3_600_000L * 3_600_000L;
  private static final int SERIES_PER_WRITER = 40;
  private static final int STEPS = 600;
  private static final long STEP_MILLIS = 20_000; // 600 steps: 3 h 20 min, four buckets

  private static Labels series(int writer, int i) {
    return Labels.of(Labels.METRIC_NAME, "frozen", "w", "w" + writer, "s", Integer.toString(i));
  }

  /** The value every sample of a series at {@code t} has: readers check it. */
  private static double value(Labels labels, long t) {
    return (labels.hashCode() & 0xFF) + (t / 1000 % 10_000) / 100.0;
  }

  @Test
  @Timeout(120)
  void readsSeeEveryAcknowledgedSampleOnceWhileSeriesFreeze() throws Exception {
    long seed = Long.getLong("tidemark.seed", 7L);
    ManualClock clock = new ManualClock(T0 + STEPS * STEP_MILLIS + 60_000);
    EngineConfig config =
        EngineConfig.builder()
            .clock(clock)
            .outOfOrderWindow(Duration.ofMinutes(10))
            .retentionInterval(Duration.ZERO)
            .compactionInterval(Duration.ZERO)
            .headFreezeSamples(8)
            .build();
    InMemoryKvStore kv = new InMemoryKvStore();
    Engine live = Engine.open(kv, config);
    List<Labels> all = new ArrayList<>();
    List<ConcurrentSkipListSet<Long>> acked = new ArrayList<>();
    for (int w = 0; w < 2; w++) {
      for (int i = 0; i < SERIES_PER_WRITER; i++) {
        all.add(series(w, i));
        acked.add(new ConcurrentSkipListSet<>());
      }
    }
    AtomicBoolean writing = new AtomicBoolean(true);
    ExecutorService pool = Executors.newFixedThreadPool(3);
    try {
      List<Future<?>> writers = new ArrayList<>();
      for (int w = 0; w < 2; w++) {
        int writer = w;
        writers.add(
            pool.submit(
                () -> {
                  SplittableRandom rnd = new SplittableRandom(seed * 31 + writer);
                  for (int step = 0; step < STEPS; step++) {
                    long t = T0 + step * STEP_MILLIS;
                    SampleBatch batch = new SampleBatch();
                    List<long[]> sent = new ArrayList<>();
                    for (int i = 0; i < SERIES_PER_WRITER; i++) {
                      int index = writer * SERIES_PER_WRITER + i;
                      Labels labels = all.get(index);
                      long at = t;
                      if (step > 10 && rnd.nextInt(25) == 0) {
                        // late: between two earlier in-order samples, inside the window
                        at = t - STEP_MILLIS * (1 + rnd.nextInt(10)) - 500 - rnd.nextInt(400);
                      }
                      batch.addPoint(labels, MetricMetadata.UNKNOWN, at, value(labels, at));
                      sent.add(new long[] {index, at});
                    }
                    AppendResult r = live.append(batch);
                    assertThat(r.rejectedPoints()).as("step %d: %s", step, r).isZero();
                    for (long[] s : sent) {
                      acked.get((int) s[0]).add(s[1]);
                    }
                    LockSupport.parkNanos(500_000); // paced: reads and freezes interleave
                  }
                  return null;
                }));
      }
      Future<Integer> reader =
          pool.submit(
              () -> {
                SplittableRandom rnd = new SplittableRandom(seed);
                int readsWhileWriting = 0;
                while (writing.get()) {
                  int index = rnd.nextInt(all.size());
                  assertReadHoldsAcknowledged(live, all.get(index), acked.get(index));
                  readsWhileWriting++;
                }
                return readsWhileWriting;
              });
      for (Future<?> f : writers) {
        f.get(100, TimeUnit.SECONDS);
      }
      writing.set(false);
      assertThat(reader.get(100, TimeUnit.SECONDS)).as("reads while writing").isGreaterThan(100);
    } finally {
      writing.set(false);
      pool.shutdownNow();
    }
    for (int i = 0; i < all.size(); i++) {
      assertThat(read(live, all.get(i))).isEqualTo(new TreeSet<>(acked.get(i)));
    }
    live.flush();
    live.close();
    Engine engine = Engine.open(kv, config);
    try {
      for (int i = 0; i < all.size(); i++) {
        assertThat(read(engine, all.get(i))).isEqualTo(new TreeSet<>(acked.get(i)));
      }
    } finally {
      engine.close();
    }
  }

  private static void assertReadHoldsAcknowledged(
      Engine engine, Labels labels, ConcurrentSkipListSet<Long> acked) {
    TreeSet<Long> before = new TreeSet<>(acked); // each acknowledged before the read started
    TreeSet<Long> got = read(engine, labels);
    assertThat(got).as("%s: acknowledged before the read", labels).containsAll(before);
  }

  /** The series' timestamps, checking order, uniqueness and values on the way. */
  private static TreeSet<Long> read(Engine engine, Labels labels) {
    List<LabelMatcher> matchers = new ArrayList<>();
    for (int i = 0; i < labels.size(); i++) {
      matchers.add(LabelMatcher.equal(labels.name(i), labels.value(i)));
    }
    TreeSet<Long> out = new TreeSet<>();
    for (Series s : engine.select(T0 - 3_600_000, T0 + 6 * 3_600_000, matchers).toList()) {
      assertThat(s.labels()).isEqualTo(labels);
      SampleIterator it = s.iterator();
      long last = Long.MIN_VALUE;
      while (it.next()) {
        long t = it.timestampMillis();
        assertThat(t).as("%s: in time order, once", labels).isGreaterThan(last);
        last = t;
        assertThat(it.value()).as("%s @%d", labels, t).isEqualTo(value(labels, t));
        out.add(t);
      }
    }
    return out;
  }
}
