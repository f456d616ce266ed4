package dev.tidemark.rocksdb;

import static org.assertj.core.api.Assertions.assertThat;

import dev.tidemark.tsdb.append.AppendResult;
import dev.tidemark.tsdb.append.SampleBatch;
import dev.tidemark.tsdb.engine.Engine;
import dev.tidemark.tsdb.kv.KvCursor;
import dev.tidemark.tsdb.kv.KvSnapshot;
import dev.tidemark.tsdb.kv.ForwardingKvStore;
import dev.tidemark.tsdb.kv.KvStore;
import dev.tidemark.tsdb.kv.WriteBatch;
import dev.tidemark.tsdb.model.Labels;
import dev.tidemark.tsdb.model.MetricMetadata;
import dev.tidemark.tsdb.query.SampleIterator;
import dev.tidemark.tsdb.query.Series;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Reproduction found while writing {@link EngineConcurrencyTest}: an append that writes to an
 * open bucket and then to a bucket being sealed must still be seen entirely or not at all.
 *
 * <p>Before the fix, {@code Engine.append} applied and wrote the points before the one that hit
 * the sealing bucket, then released the lock to wait for the seal: a select in between saw the
 * first point without the second (a torn append, against "every append is in it entirely or not
 * at all"), and a crash in between left half the batch in the head log.
 *
 * <p>The seal is held in place deterministically by a store wrapper that blocks the sealer
 * thread's first write.
 */
class EngineSealRaceTest {

  private static final long T0 = EngineCrashingWriter.T0;
  private static final MetricMetadata META = EngineCrashingWriter.GAUGE_META;

  @TempDir Path tmp;

  @Test
  void appendTouchingABucketBeingSealedIsSeenWholeOrNotAtAll() throws Exception {
    Labels a = Labels.of(Labels.METRIC_NAME, "race", "s", "a");
    Labels b = Labels.of(Labels.METRIC_NAME, "race", "s", "b");
    try (RocksDbKvStore rocks = RocksDbKvStore.open(tmp.resolve("db"), EngineCrashingWriter.storeConfig())) {
      SealBlockingStore kv = new SealBlockingStore(rocks);
      Engine engine = Engine.open(kv, EngineCrashingWriter.engineConfig(EngineCrashingWriter.NOW, false));
      try {
        // Both series in bucket X-1 = [T0-1h, T0).
        append(engine, new SampleBatch().addPoint(a, META, T0 - 30_000, 1).addPoint(b, META, T0 - 30_000, 1));
        // b at T0+60s: the newest sample passes X-1's end plus the 1 min window, X-1 is due and the
        // sealer starts on it; its first write blocks.
        kv.blockSealer();
        append(engine, new SampleBatch().addPoint(b, META, T0 + 60_000, 2));
        assertThat(kv.sealerBlocked.await(10, TimeUnit.SECONDS)).as("sealer started on X-1").isTrue();

        int writesBefore = kv.writes.get();
        // One append: b in the open bucket X, then a in X-1, which is being sealed.
        SampleBatch torn = new SampleBatch().addPoint(b, META, T0 + 70_000, 3).addPoint(a, META, T0 - 10_000, 3);
        CompletableFuture<AppendResult> inFlight = CompletableFuture.supplyAsync(() -> engine.append(torn));

        // While it waits for the seal, no read may see one of its points without the other.
        long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(500);
        int reads = 0;
        while (System.nanoTime() < until && !inFlight.isDone()) {
          boolean seesB = has(engine, b, T0 + 70_000);
          boolean seesA = has(engine, a, T0 - 10_000);
          assertThat(seesB).as("read %d during the seal: b@T0+70s visible iff a@T0-10s visible (same append)", reads)
              .isEqualTo(seesA);
          assertThat(kv.writes.get())
              .as("nothing of the waiting append is written yet (a crash now must lose all of it, not half)")
              .isEqualTo(writesBefore);
          reads++;
        }
        assertThat(inFlight).as("the append waits for the seal of X-1").isNotDone();

        kv.releaseSealer();
        AppendResult r = inFlight.get(10, TimeUnit.SECONDS);
        assertThat(r.rejectedPoints()).as(r.toString()).isZero();
        assertThat(has(engine, b, T0 + 70_000)).isTrue();
        assertThat(has(engine, a, T0 - 10_000)).isTrue();
        assertThat(kv.writes.get()).isPositive();
      } finally {
        kv.releaseSealer();
        engine.close();
      }
    }
  }

  private static void append(Engine engine, SampleBatch batch) {
    assertThat(engine.append(batch).rejectedPoints()).isZero();
  }

  private static boolean has(Engine engine, Labels l, long t) {
    for (Series s : engine.select(t, t, List.of()).toList()) {
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

  /** Delegates to a real store; once armed, the sealer thread's next write blocks until released. */
  private static final class SealBlockingStore extends ForwardingKvStore {
    final CountDownLatch sealerBlocked = new CountDownLatch(1);
    private final CountDownLatch release = new CountDownLatch(1);
    private volatile boolean armed;
    final AtomicInteger writes = new AtomicInteger();

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

    @Override
    public void write(WriteBatch batch) {
      if (armed && Thread.currentThread().getName().equals("tidemark-sealer")) {
        sealerBlocked.countDown();
        try {
          release.await(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      writes.incrementAndGet();
      delegate.write(batch);
    }
  }
}
