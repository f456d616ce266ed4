package dev.tidemark.rocksdb;

import static org.assertj.core.api.Assertions.assertThat;

import dev.tidemark.tsdb.append.AppendResult;
import dev.tidemark.tsdb.append.SampleBatch;
import dev.tidemark.tsdb.engine.Engine;
import dev.tidemark.tsdb.kv.ForwardingKvStore;
import dev.tidemark.tsdb.kv.KvStore;
import dev.tidemark.tsdb.kv.WriteBatch;
import dev.tidemark.tsdb.model.Labels;
import dev.tidemark.tsdb.model.MetricMetadata;
import dev.tidemark.tsdb.query.SampleIterator;
import dev.tidemark.tsdb.query.Series;
import java.lang.reflect.Method;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A seal never blocks appends (docs/architecture.md, Sealing): while bucket X-1 = [T0-1h, T0) is
 * being sealed, and the sealer's writes are slowed to {@value #SEAL_WRITE_DELAY_MILLIS} ms each, a
 * seeded workload appends to X-1 (late samples of its series, inside the out-of-order window) and
 * to X. No append may take more than {@value #MAX_APPEND_MILLIS} ms (before, an append that touched
 * X-1 waited for the whole seal). Afterwards, and after a crash and restart, every acknowledged
 * sample is read exactly once.
 */
class EngineSealLatencyTest {

  private static final long T0 = EngineCrashingWriter.T0;
  private static final MetricMetadata META = EngineCrashingWriter.GAUGE_META;
  private static final long SEED = 0x5EA1L;
  private static final int SERIES = 2_000;
  private static final long SEAL_WRITE_DELAY_MILLIS = 1_500;
  private static final long MAX_APPEND_MILLIS = 100;

  @TempDir Path tmp;

  @Test
  @Timeout(120)
  void aSealUnderConcurrentAppendsDelaysNoAppendBeyondTheBound() throws Exception {
    SplittableRandom rnd = new SplittableRandom(SEED);
    Labels[] labels = new Labels[SERIES];
    for (int i = 0; i < SERIES; i++) {
      labels[i] =
          Labels.of(
              Labels.METRIC_NAME, "latency", "s", Integer.toString(i), "group", "g" + (i % 17));
    }
    Map<Labels, Map<Long, Long>> model = new HashMap<>();
    try (RocksDbKvStore rocks =
        RocksDbKvStore.open(tmp.resolve("db"), EngineCrashingWriter.storeConfig())) {
      SlowSealStore kv = new SlowSealStore(rocks);
      Engine engine =
          Engine.open(kv, EngineCrashingWriter.engineConfig(EngineCrashingWriter.NOW, false));
      // X-1 gets 30 samples per series, every 2 min up to T0 - 2 min; the last at T0 - 2 min + 1 s.
      for (int k = 0; k < 30; k++) {
        SampleBatch batch = new SampleBatch();
        long t = T0 - 3_600_000 + k * 120_000L + (k == 29 ? 1_000 : 0);
        for (int i = 0; i < SERIES; i++) {
          double v = rnd.nextInt(1_000) / 100.0;
          batch.addPoint(labels[i], META, t, v);
          model
              .computeIfAbsent(labels[i], x -> new HashMap<>())
              .put(t, Double.doubleToRawLongBits(v));
        }
        assertThat(engine.append(batch).rejectedPoints()).isZero();
      }
      // Half the series move on to X; the others lag, so they may still write late samples into
      // X-1 while it is sealed: within 1 min of their newest sample, T0 - 119 s.
      SampleBatch moveOn = new SampleBatch();
      for (int i = 0; i < SERIES; i += 2) {
        moveOn.addPoint(labels[i], META, T0 + 60_000, 1.0);
        model.get(labels[i]).put(T0 + 60_000, Double.doubleToRawLongBits(1.0));
      }
      kv.slowSealer.set(true);
      // Passes X-1's end plus the window: the sealer starts on X-1.
      assertThat(engine.append(moveOn).rejectedPoints()).isZero();
      assertThat(kv.sealerWriting.await(30, TimeUnit.SECONDS))
          .as("the sealer is writing X-1")
          .isTrue();

      long maxNanos = 0;
      int duringSeal = 0;
      int lateDuringSeal = 0;
      // Per series the next timestamp: lagging (odd) series write into X-1, 1 ms apart (late for
      // the engine, inside the window); the others into X.
      long[] next = new long[SERIES];
      for (int i = 0; i < SERIES; i++) {
        next[i] = i % 2 == 1 ? T0 - 118_999 : T0 + 61_000;
      }
      long deadline =
          System.nanoTime() + TimeUnit.SECONDS.toNanos(20); // fails, not hangs, if appends stall
      while ((!kv.sealerDone.get() || duringSeal < 50) && System.nanoTime() < deadline) {
        SampleBatch batch = new SampleBatch();
        int points = 1 + rnd.nextInt(8);
        boolean lateBatch = rnd.nextBoolean();
        for (int p = 0; p < points; p++) {
          int i = 2 * rnd.nextInt(SERIES / 2) + (lateBatch ? 1 : 0);
          long t = next[i]++;
          double v = rnd.nextInt(1_000) / 100.0;
          batch.addPoint(labels[i], META, t, v);
          model.get(labels[i]).put(t, Double.doubleToRawLongBits(v));
        }
        boolean sealing = !kv.sealerDone.get();
        long started = System.nanoTime();
        AppendResult r = engine.append(batch);
        long took = System.nanoTime() - started;
        assertThat(r.rejectedPoints()).as(r.toString()).isZero();
        if (sealing) {
          maxNanos = Math.max(maxNanos, took);
          duringSeal++;
          if (lateBatch) {
            lateDuringSeal++;
          }
        }
        // Paced, as a steady ingest is: the bound is about waiting for a seal, not about GC
        // pauses or store flushes that an unpaced flood of appends brings on a shared machine.
        LockSupport.parkNanos(200_000);
        if (next[1] > T0 - 1_000) {
          break; // the room in X-1 is used up (not reached: the seal ends long before)
        }
      }
      System.out.printf(
          "seal under appends: slowest of %d appends during the seal %.1f ms (%d into the sealing bucket)%n",
          duringSeal, maxNanos / 1e6, lateDuringSeal);
      assertThat(kv.sealerDone.get()).as("the seal ended while the workload ran").isTrue();
      assertThat(lateDuringSeal).as("appends to the bucket being sealed").isGreaterThan(10);
      assertThat(TimeUnit.NANOSECONDS.toMillis(maxNanos))
          .as(
              "slowest of %d appends during a seal of %d ms or more (seed %d)",
              duringSeal, SEAL_WRITE_DELAY_MILLIS, SEED)
          .isLessThan(MAX_APPEND_MILLIS);
      kv.slowSealer.set(false);

      assertExactlyOnce(engine, model);
      abandon(engine); // a crash: X-1 may be open again (appended to during its seal)
      Engine reopened =
          Engine.open(rocks, EngineCrashingWriter.engineConfig(EngineCrashingWriter.NOW, false));
      try {
        assertExactlyOnce(reopened, model);
        reopened.flush();
        assertExactlyOnce(reopened, model);
      } finally {
        reopened.close();
      }
    }
  }

  private static void assertExactlyOnce(Engine engine, Map<Labels, Map<Long, Long>> model) {
    List<Series> found = engine.select(T0 - 3_600_000, T0 + 3_600_000, List.of()).toList();
    assertThat(found).hasSize(model.size());
    for (Series s : found) {
      Map<Long, Long> want = model.get(s.labels());
      assertThat(want).as(s.labels().toString()).isNotNull();
      Map<Long, Long> got = new HashMap<>();
      SampleIterator it = s.iterator();
      while (it.next()) {
        assertThat(got.put(it.timestampMillis(), it.valueBits()))
            .as("%s @%d read once", s.labels(), it.timestampMillis())
            .isNull();
      }
      if (!got.equals(want)) {
        Map<Long, Long> missing = new java.util.TreeMap<>(want);
        missing.entrySet().removeAll(got.entrySet());
        Map<Long, Long> extra = new java.util.TreeMap<>(got);
        extra.entrySet().removeAll(want.entrySet());
        throw new AssertionError(
            s.labels()
                + ": "
                + want.size()
                + " samples acknowledged, "
                + got.size()
                + " read; missing "
                + missing
                + ", not acknowledged "
                + extra);
      }
    }
  }

  /** {@code Engine.abandon()} (package-private, "for tests of recovery"): stop as a crash would. */
  private static void abandon(Engine engine) throws Exception {
    Method m = Engine.class.getDeclaredMethod("abandon");
    m.setAccessible(true);
    m.invoke(engine);
  }

  /** Delegates to a real store; while armed, each write of the sealer thread first sleeps. */
  private static final class SlowSealStore extends ForwardingKvStore {
    final AtomicBoolean slowSealer = new AtomicBoolean();
    final CountDownLatch sealerWriting = new CountDownLatch(1);

    /** Set once the first slowed seal write returned (the seal ends right after its last write). */
    final AtomicBoolean sealerDone = new AtomicBoolean();

    SlowSealStore(KvStore delegate) {
      super(delegate);
    }

    @Override
    public void write(WriteBatch batch) {
      boolean slow = slowSealer.get() && Thread.currentThread().getName().equals("tidemark-sealer");
      if (slow) {
        sealerWriting.countDown();
        try {
          Thread.sleep(SEAL_WRITE_DELAY_MILLIS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      delegate.write(batch);
      if (slow) {
        sealerDone.set(true);
      }
    }
  }
}
