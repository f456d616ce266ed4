package dev.tidemark.rocksdb;

import static org.assertj.core.api.Assertions.assertThat;

import dev.tidemark.tsdb.append.AppendResult;
import dev.tidemark.tsdb.append.SampleBatch;
import dev.tidemark.tsdb.engine.Engine;
import dev.tidemark.tsdb.engine.EngineConfig;
import dev.tidemark.tsdb.model.Labels;
import dev.tidemark.tsdb.model.MetricMetadata;
import dev.tidemark.tsdb.query.LabelMatcher;
import dev.tidemark.tsdb.query.SampleIterator;
import dev.tidemark.tsdb.query.Series;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.LongAdder;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * One engine on RocksDB under concurrent writers, readers and flushes.
 *
 * <p>{@value #WRITERS} writers each own {@value #N} series ({@code writer="w<k>"}, {@code
 * s="0".."N-1"}). Append {@code i} of writer {@code w} is one batch of {@code N} points writing the
 * same value {@code v(w, i)} to all its series at {@code t(i) = T0 + i * 20 s}; every third append
 * also writes, after those, a late group at {@code t(i) - 12.5 s} (inside the 1 min out-of-order
 * window, sometimes in the previous bucket, which may be sealed or being sealed) with the same
 * value. Writers run at their own pace, so a fast writer makes buckets due while a slow one still
 * writes to them (reopening). Another thread calls {@code flush()} now and then.
 *
 * <p>{@value #READERS} readers select (everything, or a random window; all writers or some) and
 * check each answer against what the writers have acknowledged: for each writer, the answer must
 * hold exactly the appends {@code 0..M} in the window, each entirely (all N series, one value),
 * where {@code M} is at least the last append acknowledged before the select began and at most one
 * more than the last acknowledged after it: no torn append (the late group and the in-order group
 * of one append come together), no gap, no duplicate, timestamps strictly increasing. They also
 * check {@code labelValues}: per bucket a writer has all its series or none.
 *
 * <p>At the end every acknowledged sample is there exactly once, also after a clean reopen.
 */
class EngineConcurrencyTest {

  static final int WRITERS = 4;
  static final int N = 24;
  static final int READERS = 2;
  static final long STEP = 20_000;
  static final long LATE_BEHIND = 12_500;
  static final int LATE_EVERY = 3;
  static final int MAX_LEAD = 40;
  static final long T0 = EngineCrashingWriter.T0;

  /** Far ahead of any data time the writers reach (they never hit the future limit). */
  static final long NOW = T0 + 200 * 24 * 3_600_000L;

  /** At least this long, and until readers checked enough answers and buckets were sealed... */
  static final Duration RUN = Duration.ofSeconds(8);

  /**
   * ...but at most this long (a loaded machine makes less progress; correctness is still checked).
   */
  static final Duration MAX_RUN = Duration.ofSeconds(14);

  static final int ENOUGH_SELECTS = 25;
  static final int ENOUGH_BUCKETS = 4;
  static final MetricMetadata META = EngineCrashingWriter.GAUGE_META;

  @TempDir Path tmp;

  private final Labels[][] series = new Labels[WRITERS][N];

  /** The last append each writer got a return for, -1 before the first. */
  private final AtomicLongArray acked = new AtomicLongArray(WRITERS);

  private final ConcurrentLinkedQueue<Throwable> failures = new ConcurrentLinkedQueue<>();
  private final AtomicBoolean stop = new AtomicBoolean();
  private final LongAdder selects = new LongAdder();
  private final LongAdder selectNanos = new LongAdder();
  private final java.util.concurrent.atomic.AtomicLong maxSelectNanos =
      new java.util.concurrent.atomic.AtomicLong();
  private final LongAdder samplesRead = new LongAdder();
  private final LongAdder labelQueries = new LongAdder();
  private final LongAdder flushes = new LongAdder();

  static long t(long i) {
    return T0 + i * STEP;
  }

  static boolean hasLate(long i) {
    return i > 0 && i % LATE_EVERY == 0;
  }

  static long late(long i) {
    return t(i) - LATE_BEHIND;
  }

  static double value(int w, long i) {
    return w * 1e9 + i;
  }

  static EngineConfig config(boolean fsync) {
    return EngineConfig.builder()
        .clock(Clock.fixed(Instant.ofEpochMilli(NOW), ZoneOffset.UTC))
        .outOfOrderWindow(Duration.ofMinutes(1))
        .retention(Duration.ofDays(365))
        .retentionInterval(Duration.ZERO)
        .fsync(fsync)
        .build();
  }

  @ParameterizedTest(name = "fsync={0}")
  @Timeout(value = 3, unit = TimeUnit.MINUTES)
  @ValueSource(booleans = {false, true})
  void readersNeverSeeTornAppendsAndNoSampleIsLost(boolean fsync) throws Exception {
    long seed = Long.getLong("tidemark.concurrency.seed", System.nanoTime());
    System.out.println("EngineConcurrencyTest fsync=" + fsync + " seed " + seed);
    for (int w = 0; w < WRITERS; w++) {
      acked.set(w, -1);
      for (int s = 0; s < N; s++) {
        series[w][s] =
            Labels.builder()
                .add(Labels.METRIC_NAME, "conc_metric")
                .add("writer", "w" + w)
                .add("s", Integer.toString(s))
                .add("zone", s % 2 == 0 ? "even" : "odd")
                .build();
      }
    }
    Path dir = tmp.resolve("db");
    long started = System.nanoTime();
    try (RocksDbKvStore store = RocksDbKvStore.open(dir, EngineCrashingWriter.storeConfig())) {
      Engine engine = Engine.open(store, config(fsync));
      try {
        List<Thread> threads = new ArrayList<>();
        for (int w = 0; w < WRITERS; w++) {
          int writer = w;
          threads.add(thread("writer-" + w, () -> write(engine, writer)));
        }
        SplittableRandom root = new SplittableRandom(seed);
        for (int r = 0; r < READERS; r++) {
          SplittableRandom rnd = root.split();
          threads.add(thread("reader-" + r, () -> read(engine, rnd)));
        }
        SplittableRandom flushRnd = root.split();
        threads.add(thread("flusher", () -> flushNowAndThen(engine, flushRnd)));
        threads.forEach(Thread::start);
        long t0 = System.nanoTime();
        while (failures.isEmpty()) {
          long elapsed = System.nanoTime() - t0;
          boolean enough =
              selects.sum() >= ENOUGH_SELECTS && engine.buckets().size() >= ENOUGH_BUCKETS;
          if (elapsed >= MAX_RUN.toNanos() || (elapsed >= RUN.toNanos() && enough)) {
            break;
          }
          Thread.sleep(50);
        }
        stop.set(true);
        for (Thread th : threads) {
          th.join(TimeUnit.SECONDS.toMillis(60));
          assertThat(th.isAlive()).as(th.getName() + " finished").isFalse();
        }
        rethrowFailures();
        long appends = 0;
        for (int w = 0; w < WRITERS; w++) {
          appends += acked.get(w) + 1;
        }
        System.out.printf(
            "fsync=%s: %d appends (%s per writer), %d selects (mean %.1f ms, max %d ms) reading %d samples,"
                + " %d label queries, %d flushes, %d buckets, %.1f s%n",
            fsync,
            appends,
            acked,
            selects.sum(),
            selectNanos.sum() / 1e6 / Math.max(1, selects.sum()),
            maxSelectNanos.get() / 1_000_000,
            samplesRead.sum(),
            labelQueries.sum(),
            flushes.sum(),
            engine.buckets().size(),
            (System.nanoTime() - started) / 1e9);
        assertThat(selects.sum()).as("selects checked").isPositive();
        assertThat(engine.buckets().size())
            .as("buckets: sealing happened during the run")
            .isGreaterThanOrEqualTo(2);
        verifyAll(engine, "at the end");
      } finally {
        engine.close();
      }
    }
    try (RocksDbKvStore store = RocksDbKvStore.open(dir, EngineCrashingWriter.storeConfig())) {
      Engine engine = Engine.open(store, config(fsync));
      try {
        verifyAll(engine, "after a clean reopen");
      } finally {
        engine.close();
      }
    }
  }

  private Thread thread(String name, Runnable body) {
    Thread t =
        new Thread(
            () -> {
              try {
                body.run();
              } catch (Throwable e) {
                failures.add(new AssertionError(name + ": " + e.getMessage(), e));
                stop.set(true);
              }
            },
            name);
    t.setDaemon(true);
    return t;
  }

  private void rethrowFailures() {
    Throwable first = failures.peek();
    if (first != null) {
      failures.stream().skip(1).forEach(first::addSuppressed);
      if (first instanceof AssertionError a) {
        throw a;
      }
      throw new AssertionError(first);
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Writers, flusher

  private void write(Engine engine, int w) {
    SampleBatch batch = new SampleBatch(2 * N);
    for (long i = 0; !stop.get(); i++) {
      batch.clear();
      double v = value(w, i);
      for (int s = 0; s < N; s++) {
        batch.addPoint(series[w][s], META, t(i), v);
      }
      if (hasLate(i)) {
        for (int s = 0; s < N; s++) {
          batch.addPoint(series[w][s], META, late(i), v);
        }
      }
      AppendResult r = engine.append(batch);
      assertThat(r.rejectedPoints()).as("writer %d append %d: %s", w, i, r).isZero();
      acked.set(w, i);
      // Writers drift apart, but by at most MAX_LEAD appends (more than the out-of-order window
      // in data time, so a slow writer still writes to buckets a fast one made due).
      while (!stop.get() && i > slowest() + MAX_LEAD) {
        java.util.concurrent.locks.LockSupport.parkNanos(200_000);
      }
    }
  }

  private long slowest() {
    long m = Long.MAX_VALUE;
    for (int w = 0; w < WRITERS; w++) {
      m = Math.min(m, acked.get(w));
    }
    return m;
  }

  private void flushNowAndThen(Engine engine, SplittableRandom rnd) {
    while (!stop.get()) {
      sleep(500 + rnd.nextInt(1500));
      if (!stop.get()) {
        engine.flush();
        flushes.increment();
      }
    }
  }

  private static void sleep(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Readers

  private void read(Engine engine, SplittableRandom rnd) {
    while (!stop.get()) {
      long[] before = new long[WRITERS];
      for (int w = 0; w < WRITERS; w++) {
        before[w] = acked.get(w);
      }
      long newest = t(Math.max(0, max(before)) + 1);
      long minT;
      long maxT;
      if (rnd.nextInt(3) == 0) {
        minT = 0;
        maxT = Long.MAX_VALUE;
      } else {
        minT = T0 + rnd.nextLong(Math.max(1, newest - T0 + 1));
        maxT = minT + rnd.nextLong(2 * 3_600_000L);
      }
      List<Integer> writers = new ArrayList<>();
      List<LabelMatcher> matchers = new ArrayList<>();
      switch (rnd.nextInt(4)) {
        case 0 -> {
          int w = rnd.nextInt(WRITERS);
          writers.add(w);
          matchers.add(LabelMatcher.equal("writer", "w" + w));
        }
        case 1 -> {
          writers.add(1);
          writers.add(3);
          matchers.add(LabelMatcher.regex("writer", "w1|w3"));
          matchers.add(LabelMatcher.equal(Labels.METRIC_NAME, "conc_metric"));
        }
        case 2 -> {
          for (int w = 0; w < WRITERS; w++) {
            if (w != 2) {
              writers.add(w);
            }
          }
          matchers.add(LabelMatcher.notEqual("writer", "w2"));
        }
        default -> {
          for (int w = 0; w < WRITERS; w++) {
            writers.add(w);
          }
        }
      }
      long s0 = System.nanoTime();
      List<Series> got = engine.select(minT, maxT, matchers).toList();
      long took = System.nanoTime() - s0;
      selectNanos.add(took);
      maxSelectNanos.accumulateAndGet(took, Math::max);
      long[] after = new long[WRITERS];
      for (int w = 0; w < WRITERS; w++) {
        after[w] = acked.get(w);
      }
      String where =
          "select "
              + matchers
              + " ["
              + minT
              + ", "
              + maxT
              + "] acked before "
              + java.util.Arrays.toString(before)
              + " after "
              + java.util.Arrays.toString(after);
      checkSelect(got, minT, maxT, writers, before, after, where);
      selects.increment();

      // Label values at bucket granularity: a writer has all its series in a bucket, or none.
      int w = rnd.nextInt(WRITERS);
      List<String> values =
          engine.labelValues("s", minT, maxT, List.of(LabelMatcher.equal("writer", "w" + w)));
      assertThat(values.size())
          .as("labelValues(s) of writer %d in [%d, %d]: %s", w, minT, maxT, values)
          .isIn(0, N);
      List<String> names = engine.labelValues("writer", minT, maxT, List.of());
      assertThat(names).as("labelValues(writer)").isSubsetOf("w0", "w1", "w2", "w3");
      labelQueries.add(2);
    }
  }

  private static long max(long[] a) {
    long m = Long.MIN_VALUE;
    for (long x : a) {
      m = Math.max(m, x);
    }
    return m;
  }

  /** The timestamps writer w's series must hold in [minT, maxT] if appends 0..m are visible. */
  private static List<Long> expectedTimes(long m, long minT, long maxT) {
    List<Long> out = new ArrayList<>();
    // In-order t(i) and late(i) interleave; collect and sort (small windows keep this cheap).
    long from = Math.max(0, (minT - T0) / STEP - 1);
    for (long i = from; i <= m; i++) {
      long ti = t(i);
      if (ti >= minT && ti <= maxT) {
        out.add(ti);
      }
      if (hasLate(i) && late(i) >= minT && late(i) <= maxT) {
        out.add(late(i));
      }
      if (ti - LATE_BEHIND > maxT) {
        break;
      }
    }
    Collections.sort(out);
    return out;
  }

  private void checkSelect(
      List<Series> got,
      long minT,
      long maxT,
      List<Integer> writers,
      long[] before,
      long[] after,
      String where) {
    // writer → series index → (timestamps, values)
    Map<Integer, Map<Integer, long[][]>> byWriter = new HashMap<>();
    long read = 0;
    for (Series s : got) {
      Labels l = s.labels();
      assertThat(l.metricName()).as(where).isEqualTo("conc_metric");
      int w = Integer.parseInt(l.get("writer").substring(1));
      int idx = Integer.parseInt(l.get("s"));
      assertThat(writers).as(where + " matched writer of " + l).contains(w);
      List<long[]> samples = new ArrayList<>();
      SampleIterator it = s.iterator();
      long prev = Long.MIN_VALUE;
      while (it.next()) {
        long ts = it.timestampMillis();
        if (ts <= prev || ts < minT || ts > maxT) { // plain checks: this runs per sample
          throw new AssertionError(
              where
                  + " "
                  + l
                  + ": timestamp "
                  + ts
                  + " after "
                  + prev
                  + " (must increase strictly and lie in the range)");
        }
        prev = ts;
        samples.add(new long[] {ts, it.valueBits()});
      }
      read += samples.size();
      assertThat(samples).as(where + " " + l + " selected but empty").isNotEmpty();
      long[][] arr = samples.toArray(new long[0][]);
      assertThat(byWriter.computeIfAbsent(w, k -> new HashMap<>()).put(idx, arr))
          .as(where + " duplicate series " + l)
          .isNull();
    }
    samplesRead.add(read);
    for (int w : writers) {
      Map<Integer, long[][]> mine = byWriter.getOrDefault(w, Map.of());
      // The newest visible append, from the value (in-order and late carry v(w, i)).
      long maxSeen = -1;
      for (long[][] samples : mine.values()) {
        for (long[] tv : samples) {
          long i = (long) (Double.longBitsToDouble(tv[1]) - w * 1e9);
          if (tv[0] != t(i) && !(hasLate(i) && tv[0] == late(i))) {
            throw new AssertionError(
                where
                    + " writer "
                    + w
                    + ": value "
                    + Double.longBitsToDouble(tv[1])
                    + " of append "
                    + i
                    + " at timestamp "
                    + tv[0]
                    + ", want "
                    + t(i)
                    + (hasLate(i) ? " or " + late(i) : "")
                    + " (values at a timestamp differ)");
          }
          maxSeen = Math.max(maxSeen, i);
        }
      }
      long m = Math.max(maxSeen, before[w]);
      assertThat(maxSeen)
          .as(where + " writer %d: newest visible append at most one past the last acknowledged", w)
          .isLessThanOrEqualTo(after[w] + 1);
      List<Long> want = expectedTimes(m, minT, maxT);
      if (want.isEmpty()) {
        assertThat(mine).as(where + " writer %d: nothing in range", w).isEmpty();
        continue;
      }
      assertThat(mine.keySet())
          .as(where + " writer %d: every series of every append (torn append?)", w)
          .hasSize(N);
      for (Map.Entry<Integer, long[][]> e : mine.entrySet()) {
        long[][] samples = e.getValue();
        List<Long> times = new ArrayList<>(samples.length);
        for (long[] tv : samples) {
          times.add(tv[0]);
        }
        if (!times.equals(want)) {
          List<Long> missing = new ArrayList<>(want);
          missing.removeAll(times);
          List<Long> extra = new ArrayList<>(times);
          extra.removeAll(want);
          throw new AssertionError(
              where
                  + " writer "
                  + w
                  + " series s="
                  + e.getKey()
                  + ": appends 0.."
                  + m
                  + " must be visible entirely;"
                  + " missing timestamps "
                  + head(missing)
                  + " (as append indexes "
                  + indexes(missing)
                  + "), unexpected "
                  + head(extra)
                  + "; "
                  + times.size()
                  + " samples, want "
                  + want.size());
        }
      }
    }
  }

  private static String head(List<Long> l) {
    return l.size() <= 8 ? l.toString() : l.subList(0, 8) + "... (" + l.size() + ")";
  }

  private static String indexes(List<Long> ts) {
    List<String> out = new ArrayList<>();
    for (long t : ts.subList(0, Math.min(8, ts.size()))) {
      long off = t - T0;
      out.add(
          off % STEP == 0 ? Long.toString(off / STEP) : "late of " + ((off + LATE_BEHIND) / STEP));
    }
    return out.toString();
  }

  // ---------------------------------------------------------------------------------------------
  // Final check

  private void verifyAll(Engine engine, String where) {
    List<Series> got = engine.select(0, Long.MAX_VALUE, List.of()).toList();
    assertThat(got).as(where + " series").hasSize(WRITERS * N);
    long total = 0;
    for (Series s : got) {
      int w = Integer.parseInt(s.labels().get("writer").substring(1));
      long m = acked.get(w);
      // Expected, in timestamp order: t(i) and late(i) = t(i) - 12.5 s, which sorts right before
      // t(i).
      int k = 0;
      SampleIterator it = s.iterator();
      for (long i = 0; i <= m; i++) {
        long vb = Double.doubleToRawLongBits(value(w, i));
        if (hasLate(i)) {
          expectSample(it, late(i), vb, s.labels(), where, k++);
        }
        expectSample(it, t(i), vb, s.labels(), where, k++);
      }
      if (it.next()) {
        throw new AssertionError(
            where
                + " "
                + s.labels()
                + ": unexpected sample after the last acknowledged append: "
                + it.timestampMillis()
                + " (append "
                + (it.timestampMillis() - T0) / (double) STEP
                + ")");
      }
      total += k;
    }
    long appends = 0;
    for (int w = 0; w < WRITERS; w++) {
      for (long i = 0; i <= acked.get(w); i++) {
        appends += hasLate(i) ? 2 : 1;
      }
    }
    assertThat(total)
        .as(where + " total samples: every acknowledged one exactly once")
        .isEqualTo(appends * N);
  }

  private static void expectSample(
      SampleIterator it, long t, long bits, Labels l, String where, int k) {
    if (!it.next()) {
      throw new AssertionError(
          where
              + " "
              + l
              + ": sample "
              + k
              + " at "
              + t
              + " (append "
              + (t - T0) / (double) STEP
              + ") is missing: the series ends early");
    }
    if (it.timestampMillis() != t || it.valueBits() != bits) {
      throw new AssertionError(
          where
              + " "
              + l
              + ": sample "
              + k
              + " is "
              + it.timestampMillis()
              + "="
              + Double.longBitsToDouble(it.valueBits())
              + ", want "
              + t
              + "="
              + Double.longBitsToDouble(bits)
              + " (lost, duplicated or reordered sample)");
    }
  }
}
