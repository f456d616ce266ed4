package dev.tidemark.tsdb.engine;

import static dev.tidemark.tsdb.engine.HeadState.LOG;

import dev.tidemark.tsdb.append.StorageUnavailableException;
import dev.tidemark.tsdb.codec.DecimalEncoder;
import dev.tidemark.tsdb.codec.InvertedIndexValue;
import dev.tidemark.tsdb.codec.Keys;
import dev.tidemark.tsdb.codec.RecordType;
import dev.tidemark.tsdb.codec.TimeBucket;
import dev.tidemark.tsdb.codec.TimeSeriesValue;
import dev.tidemark.tsdb.engine.HeadState.SeriesRef;
import dev.tidemark.tsdb.kv.KeyRanges;
import dev.tidemark.tsdb.kv.KvStore;
import dev.tidemark.tsdb.kv.WriteBatch;
import dev.tidemark.tsdb.model.Labels;
import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * Sealing and the background thread: decides when the oldest open bucket is due, moves it to the
 * sealing set, writes its TimeSeries and InvertedIndex records and drops it from the head;
 * {@link #flush()} seals every open bucket. The one background thread also runs retention and
 * deletes ({@link #runOnBackground}). See {@code docs/architecture.md}, Sealing.
 */
final class Sealer {

  /** A seal writes its records in batches of about this many payload bytes. */
  private static final long SEAL_BATCH_BYTES = 4L << 20;

  private final ScheduledExecutorService background;
  private final AtomicBoolean sealQueued = new AtomicBoolean();
  private final HeadState head;
  private final KvStore kv;
  private final EngineConfig config;
  private final long oooMillis;
  private final ReentrantReadWriteLock lock;
  private final Condition sealEnded;
  private final TreeMap<TimeBucket, HeadBucket> open;
  private final TreeMap<TimeBucket, HeadBucket> sealing;
  private final HashMap<Labels, SeriesRef> refs;

  Sealer(HeadState head) {
    this.head = head;
    this.kv = head.kv;
    this.config = head.config;
    this.oooMillis = head.oooMillis;
    this.lock = head.lock;
    this.sealEnded = head.sealEnded;
    this.open = head.open;
    this.sealing = head.sealing;
    this.refs = head.refs;
    this.background =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "tidemark-sealer");
              t.setDaemon(true);
              return t;
            });
  }

  void scheduleSealIfDue() {
    if (!sealDue() || !sealQueued.compareAndSet(false, true)) {
      return;
    }
    try {
      background.execute(
          () -> {
            sealQueued.set(false);
            sealDueBuckets();
          });
    } catch (java.util.concurrent.RejectedExecutionException e) {
      sealQueued.set(false); // shutting down: close() seals
    }
  }

  private boolean sealDue() {
    lock.readLock().lock();
    try {
      return !head.closed && head.hasHeadMaxT && !open.isEmpty() && isDue(open.firstKey());
    } finally {
      lock.readLock().unlock();
    }
  }

  private boolean isDue(TimeBucket b) {
    return head.hasHeadMaxT && head.headMaxT >= b.endMillis() + oooMillis;
  }

  private void sealDueBuckets() {
    while (true) {
      HeadBucket hb;
      lock.writeLock().lock();
      try {
        if (head.closed || open.isEmpty() || !isDue(open.firstKey())) {
          return;
        }
        hb = startSealLocked(open.firstKey());
      } finally {
        lock.writeLock().unlock();
      }
      seal(hb);
    }
  }

  HeadBucket startSealLocked(TimeBucket b) {
    HeadBucket hb = open.remove(b);
    sealing.put(b, hb);
    hb.state = HeadBucket.State.SEALING;
    return hb;
  }

  /** Writes a sealing bucket's records, then drops it from the head. Runs without the lock. */
  void seal(HeadBucket hb) {
    TimeBucket b = hb.bucket;
    try {
      WriteBatch[] wb = {new WriteBatch()};
      DecimalEncoder scratch = new DecimalEncoder();
      for (HeadSeries hs : hb.series()) {
        if (hs.isEmpty()) {
          continue;
        }
        wb[0].put(Keys.timeSeries(b, hs.id), TimeSeriesValue.encodeSmallest(hs.sealedChunk(), scratch));
        if (wb[0].payloadBytes() > SEAL_BATCH_BYTES) {
          kv.write(wb[0]);
          wb[0] = new WriteBatch();
        }
      }
      hb.forEachPosting(
          (name, value, posting) -> {
            wb[0].put(Keys.invertedIndex(b, name, value), InvertedIndexValue.encode(posting.clone()));
            if (wb[0].payloadBytes() > SEAL_BATCH_BYTES) {
              kv.write(wb[0]);
              wb[0] = new WriteBatch();
            }
          });
      wb[0].put(Keys.invertedIndexAllSeries(b), InvertedIndexValue.encode(hb.all().clone()));
      byte[] logPrefix = Keys.bucketPrefix(RecordType.HEAD_LOG, b);
      wb[0].deleteRange(logPrefix, KeyRanges.prefixEnd(logPrefix));
      kv.write(wb[0]);
      if (config.fsync()) {
        kv.sync();
      }
    } catch (RuntimeException | Error e) {
      LOG.log(Level.ERROR, "sealing bucket " + b + " failed; it stays in the head", e);
      lock.writeLock().lock();
      try {
        sealing.remove(b);
        open.put(b, hb);
        hb.state = HeadBucket.State.OPEN;
        sealEnded.signalAll();
      } finally {
        lock.writeLock().unlock();
      }
      throw e;
    }
    lock.writeLock().lock();
    try {
      sealing.remove(b);
      hb.state = HeadBucket.State.SEALED;
      head.headSeries -= hb.seriesCount();
      for (HeadSeries hs : hb.series()) {
        head.headSampleBytes -= hs.sampleBytes();
      }
      // Forget series whose newest data just left the head; they are looked up again if they return.
      refs.values().removeIf(r -> r.latest == null || r.latest.bucket.state == HeadBucket.State.SEALED);
      sealEnded.signalAll();
    } finally {
      lock.writeLock().unlock();
    }
  }

  /** Seals every open bucket now and waits for it. */
  void flush() {
    runOnBackground(this::sealAllOpen);
  }

  private void sealAllOpen() {
    List<HeadBucket> toSeal = new ArrayList<>();
    lock.writeLock().lock();
    try {
      for (TimeBucket b : new ArrayList<>(open.keySet())) {
        toSeal.add(startSealLocked(b));
      }
    } finally {
      lock.writeLock().unlock();
    }
    // Every bucket started above must end its seal, sealed or back in the open set: a failure of
    // one must not leave the others in the sealing set, where appends would wait for them forever.
    RuntimeException failure = null;
    for (HeadBucket hb : toSeal) {
      try {
        seal(hb);
      } catch (RuntimeException e) {
        if (failure == null) {
          failure = e;
        } else {
          failure.addSuppressed(e);
        }
      }
    }
    if (failure != null) {
      throw failure;
    }
  }

  void runOnBackground(Runnable task) {
    Future<?> f = background.submit(task);
    try {
      f.get();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new StorageUnavailableException("interrupted", e);
    } catch (ExecutionException e) {
      Throwable cause = e.getCause();
      if (cause instanceof RuntimeException re) {
        throw re;
      }
      throw new StorageUnavailableException("background task failed: " + cause.getMessage(), cause);
    }
  }

  /** Runs {@code task} on the background thread every {@code everyMillis}, the first time after one period. */
  void scheduleWithFixedDelay(Runnable task, long everyMillis) {
    background.scheduleWithFixedDelay(task, everyMillis, everyMillis, TimeUnit.MILLISECONDS);
  }

  /** Lets the background thread finish its queued tasks and waits up to a minute for it. */
  void stop() {
    background.shutdown();
    try {
      background.awaitTermination(1, TimeUnit.MINUTES);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** Stops the background thread without waiting, as a crash would. */
  void stopNow() {
    background.shutdownNow();
  }
}
