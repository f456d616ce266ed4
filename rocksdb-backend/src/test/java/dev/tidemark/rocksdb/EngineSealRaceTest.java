package dev.tidemark.rocksdb;

import static org.assertj.core.api.Assertions.assertThat;

import dev.tidemark.tsdb.append.AppendResult;
import dev.tidemark.tsdb.append.SampleBatch;
import dev.tidemark.tsdb.codec.Keys;
import dev.tidemark.tsdb.codec.RecordType;
import dev.tidemark.tsdb.codec.TimeBucket;
import dev.tidemark.tsdb.engine.Engine;
import dev.tidemark.tsdb.engine.EngineConfig;
import dev.tidemark.tsdb.kv.ForwardingKvStore;
import dev.tidemark.tsdb.kv.KvCursor;
import dev.tidemark.tsdb.kv.KvStore;
import dev.tidemark.tsdb.kv.WriteBatch;
import dev.tidemark.tsdb.model.Labels;
import dev.tidemark.tsdb.model.MetricMetadata;
import dev.tidemark.tsdb.query.SampleIterator;
import dev.tidemark.tsdb.query.Series;
import java.lang.reflect.Method;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Reproduction found while writing {@link EngineConcurrencyTest}: an append that writes to an open
 * bucket and then to a bucket being sealed must still be seen entirely or not at all.
 *
 * <p>Before the first fix, {@code Engine.append} applied and wrote the points before the one that
 * hit the sealing bucket, then released the lock to wait for the seal: a select in between saw the
 * first point without the second (a torn append, against "every append is in it entirely or not at
 * all"), and a crash in between left half the batch in the head log. That fix made the append wait
 * for the whole seal before changing anything; since sealing no longer blocks appends (the bucket
 * stays open during its seal), the append completes while the seal is held, whole.
 *
 * <p>The seal is held in place deterministically by a store wrapper that blocks the sealer thread's
 * first write.
 */
class EngineSealRaceTest {

  private static final long T0 = EngineCrashingWriter.T0;
  private static final MetricMetadata META = EngineCrashingWriter.GAUGE_META;

  @TempDir Path tmp;

  @Test
  void appendTouchingABucketBeingSealedIsSeenWholeOrNotAtAll() throws Exception {
    Labels a = Labels.of(Labels.METRIC_NAME, "race", "s", "a");
    Labels b = Labels.of(Labels.METRIC_NAME, "race", "s", "b");
    try (RocksDbKvStore rocks =
        RocksDbKvStore.open(tmp.resolve("db"), EngineCrashingWriter.storeConfig())) {
      SealBlockingStore kv = new SealBlockingStore(rocks);
      Engine engine =
          Engine.open(kv, EngineCrashingWriter.engineConfig(EngineCrashingWriter.NOW, false));
      try {
        // Both series in bucket X-1 = [T0-1h, T0).
        append(
            engine,
            new SampleBatch().addPoint(a, META, T0 - 30_000, 1).addPoint(b, META, T0 - 30_000, 1));
        // b at T0+60s: the newest sample passes X-1's end plus the 1 min window, X-1 is due and the
        // sealer starts on it; its first write blocks.
        kv.blockSealer();
        append(engine, new SampleBatch().addPoint(b, META, T0 + 60_000, 2));
        assertThat(kv.sealerBlocked.await(10, TimeUnit.SECONDS))
            .as("sealer started on X-1")
            .isTrue();

        // One append: b in the open bucket X, then a in X-1, which is being sealed. Since sealing
        // no longer blocks appends, it completes while the seal is still held.
        SampleBatch torn =
            new SampleBatch().addPoint(b, META, T0 + 70_000, 3).addPoint(a, META, T0 - 10_000, 3);
        CompletableFuture<AppendResult> inFlight =
            CompletableFuture.supplyAsync(() -> engine.append(torn));

        // While it runs, no read may see one of its points without the other (one select sees
        // both timestamps: two selects could fall on either side of the append).
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        int reads = 0;
        while (System.nanoTime() < until && !inFlight.isDone()) {
          List<Series> found = engine.select(T0 - 10_000, T0 + 70_000, List.of()).toList();
          boolean seesB = has(found, b, T0 + 70_000);
          boolean seesA = has(found, a, T0 - 10_000);
          assertThat(seesB)
              .as(
                  "read %d during the seal: b@T0+70s visible iff a@T0-10s visible (same append)",
                  reads)
              .isEqualTo(seesA);
          reads++;
        }
        AppendResult r = inFlight.get(10, TimeUnit.SECONDS);
        assertThat(r.rejectedPoints()).as(r.toString()).isZero();
        assertThat(kv.sealerBlocked.getCount()).isZero();
        assertThat(kv.released()).as("the append did not wait for the seal of X-1").isFalse();
        assertThat(has(engine, b, T0 + 70_000)).isTrue();
        assertThat(has(engine, a, T0 - 10_000)).isTrue();

        kv.releaseSealer();
        engine.flush();
        assertThat(count(engine, a, T0 - 10_000)).as("a@T0-10s once after the seal").isEqualTo(1);
        assertThat(count(engine, a, T0 - 30_000)).isEqualTo(1);
      } finally {
        kv.releaseSealer();
        engine.close();
      }
      Engine reopened =
          Engine.open(rocks, EngineCrashingWriter.engineConfig(EngineCrashingWriter.NOW, false));
      try {
        assertThat(count(reopened, a, T0 - 10_000)).isEqualTo(1);
        assertThat(count(reopened, a, T0 - 30_000)).isEqualTo(1);
        assertThat(count(reopened, b, T0 + 70_000)).isEqualTo(1);
      } finally {
        reopened.close();
      }
    }
  }

  /**
   * A crash after a seal whose bucket was appended to during it: the store holds the sealed chunks
   * and the head log of the later sample only (the seal deleted its head log up to its seal point);
   * recovery must bring back every sample exactly once.
   */
  @Test
  void crashAfterASealAppendedToMeanwhileLosesAndDuplicatesNothing() throws Exception {
    Labels a = Labels.of(Labels.METRIC_NAME, "race", "s", "a");
    Labels b = Labels.of(Labels.METRIC_NAME, "race", "s", "b");
    try (RocksDbKvStore rocks =
        RocksDbKvStore.open(tmp.resolve("db"), EngineCrashingWriter.storeConfig())) {
      SealBlockingStore kv = new SealBlockingStore(rocks);
      Engine engine =
          Engine.open(kv, EngineCrashingWriter.engineConfig(EngineCrashingWriter.NOW, false));
      try {
        append(
            engine,
            new SampleBatch().addPoint(a, META, T0 - 30_000, 1).addPoint(b, META, T0 - 30_000, 1));
        kv.blockSealer();
        append(engine, new SampleBatch().addPoint(b, META, T0 + 60_000, 2));
        assertThat(kv.sealerBlocked.await(10, TimeUnit.SECONDS))
            .as("sealer started on X-1")
            .isTrue();
        append(engine, new SampleBatch().addPoint(a, META, T0 - 20_000, 2));
        // The seal of X-1 writes its one batch and ends with X-1 still open (appended to during
        // it); any later seal's writes fail, so the store stays as that seal left it.
        kv.sealerWriteLimit = 1;
        kv.releaseSealer();
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (kv.sealerWrites.get() == 0 && System.nanoTime() < until) {
          Thread.sleep(1);
        }
      } finally {
        abandon(engine);
      }
      TimeBucket x1 = TimeBucket.containing(T0 - 30_000, EngineConfig.BUCKET_SIZE_CODE);
      assertThat(keys(rocks, Keys.bucketPrefix(RecordType.TIME_SERIES, x1)))
          .as("the seal wrote X-1's chunks")
          .isEqualTo(2);
      assertThat(keys(rocks, Keys.bucketPrefix(RecordType.HEAD_LOG, x1)))
          .as("only the head log of a@T0-20s, appended during the seal, is left")
          .isEqualTo(1);
      Engine reopened =
          Engine.open(rocks, EngineCrashingWriter.engineConfig(EngineCrashingWriter.NOW, false));
      try {
        assertThat(count(reopened, a, T0 - 30_000)).isEqualTo(1);
        assertThat(count(reopened, a, T0 - 20_000)).isEqualTo(1);
        assertThat(count(reopened, b, T0 - 30_000)).isEqualTo(1);
        assertThat(count(reopened, b, T0 + 60_000)).isEqualTo(1);
      } finally {
        reopened.close();
      }
    }
  }

  /** {@code Engine.abandon()} (package-private, "for tests of recovery"): stop as a crash would. */
  private static void abandon(Engine engine) throws Exception {
    Method m = Engine.class.getDeclaredMethod("abandon");
    m.setAccessible(true);
    m.invoke(engine);
  }

  private static int keys(KvStore kv, byte[] prefix) {
    int n = 0;
    try (KvCursor c = kv.scanPrefix(prefix)) {
      while (c.next()) {
        n++;
      }
    }
    return n;
  }

  private static int count(Engine engine, Labels l, long t) {
    int n = 0;
    for (Series s : engine.select(t, t, List.of()).toList()) {
      if (s.labels().equals(l)) {
        SampleIterator it = s.iterator();
        while (it.next()) {
          if (it.timestampMillis() == t) {
            n++;
          }
        }
      }
    }
    return n;
  }

  private static void append(Engine engine, SampleBatch batch) {
    assertThat(engine.append(batch).rejectedPoints()).isZero();
  }

  private static boolean has(Engine engine, Labels l, long t) {
    return has(engine.select(t, t, List.of()).toList(), l, t);
  }

  private static boolean has(List<Series> found, Labels l, long t) {
    for (Series s : found) {
      if (s.labels().equals(l)) {
        SampleIterator it = s.iterator();
        while (it.next()) {
          if (it.timestampMillis() == t) {
            return true;
          }
        }
      }
    }
    return false;
  }

  /**
   * Delegates to a real store; once armed, the sealer thread's next write blocks until released.
   */
  private static final class SealBlockingStore extends ForwardingKvStore {
    final CountDownLatch sealerBlocked = new CountDownLatch(1);
    private final CountDownLatch release = new CountDownLatch(1);
    private volatile boolean armed;
    final AtomicInteger writes = new AtomicInteger();
    final AtomicInteger sealerWrites = new AtomicInteger();
    volatile int sealerWriteLimit = Integer.MAX_VALUE;

    SealBlockingStore(KvStore delegate) {
      super(delegate);
    }

    void blockSealer() {
      armed = true;
    }

    void releaseSealer() {
      armed = false;
      release.countDown();
    }

    boolean released() {
      return release.getCount() == 0;
    }

    @Override
    public void write(WriteBatch batch) {
      boolean sealer = Thread.currentThread().getName().equals("tidemark-sealer");
      if (sealer && sealerWrites.get() >= sealerWriteLimit) {
        throw new IllegalStateException("test: the sealer's writes are cut off");
      }
      if (armed && sealer) {
        sealerBlocked.countDown();
        try {
          release.await(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      writes.incrementAndGet();
      delegate.write(batch);
      if (sealer) {
        sealerWrites.incrementAndGet();
      }
    }
  }
}
