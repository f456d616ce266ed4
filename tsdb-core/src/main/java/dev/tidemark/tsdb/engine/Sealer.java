package dev.tidemark.tsdb.engine;

import static dev.tidemark.tsdb.engine.HeadState.LOG;

import dev.tidemark.tsdb.append.StorageUnavailableException;
import dev.tidemark.tsdb.codec.DecimalEncoder;
import dev.tidemark.tsdb.codec.InvertedIndexValue;
import dev.tidemark.tsdb.codec.Keys;
import dev.tidemark.tsdb.codec.RecordType;
import dev.tidemark.tsdb.codec.TimeBucket;
import dev.tidemark.tsdb.kv.KeyRanges;
import dev.tidemark.tsdb.kv.KvReader;
import dev.tidemark.tsdb.kv.KvStore;
import dev.tidemark.tsdb.kv.WriteBatch;
import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import org.roaringbitmap.RoaringBitmap;

/**
 * Sealing and the background thread: decides when the oldest open bucket is due, moves it to the
 * sealing set, writes its TimeSeries and InvertedIndex records and drops it from the head; {@link
 * #flush()} seals every open bucket. The one background thread also runs retention and deletes
 * ({@link #runOnBackground}). See {@code docs/architecture.md}, Sealing.
 */
final class Sealer {

  /** A seal writes its records in batches of about this many payload bytes. */
  private static final long SEAL_BATCH_BYTES = 4L << 20;

  /** A seal copies the head under the read lock in slices of at most this many bytes... */
  private static final long SEAL_SLICE_BYTES = 1L << 20;

  /** ... or this many series. */
  private static final int SEAL_SLICE_SERIES = 1_000;

  private final ScheduledExecutorService background;
  private final AtomicBoolean sealQueued = new AtomicBoolean();
  private final HeadState head;
  private final KvStore kv;
  private final EngineConfig config;
  private final long oooMillis;
  private final ReentrantReadWriteLock lock;
  private final TreeMap<TimeBucket, HeadBucket> open;
  private final TreeMap<TimeBucket, HeadBucket> sealing;

  Sealer(HeadState head) {
    this.head = head;
    this.kv = head.kv;
    this.config = head.config;
    this.oooMillis = head.oooMillis;
    this.lock = head.lock;
    this.open = head.open;
    this.sealing = head.sealing;
    this.background =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "tidemark-sealer");
              t.setDaemon(true);
              return t;
            });
  }

  void scheduleSealIfDue() {
    if (sealDue()) {
      scheduleSeal();
    }
  }

  /**
   * Schedules a seal of the due buckets unless one is queued; for a caller that decided {@link
   * #sealDueLocked} under the lock it held (an append: taking the read lock again after its write
   * lock would queue it behind the next append's whole hold).
   */
  void scheduleSeal() {
    if (!sealQueued.compareAndSet(false, true)) {
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
      return sealDueLocked();
    } finally {
      lock.readLock().unlock();
    }
  }

  /** Whether the oldest open bucket is due for its seal. Under the lock (either). */
  boolean sealDueLocked() {
    return !head.closed && head.hasHeadMaxT && !open.isEmpty() && isDue(open.firstKey());
  }

  private boolean isDue(TimeBucket b) {
    return head.hasHeadMaxT && head.headMaxT >= b.endMillis() + oooMillis;
  }

  /**
   * Seals the open buckets that are due, oldest first. A bucket appended to during its seal stays
   * open; the next append that finds it due schedules it again.
   */
  private void sealDueBuckets() {
    List<TimeBucket> due = new ArrayList<>();
    lock.readLock().lock();
    try {
      if (head.closed) {
        return;
      }
      for (TimeBucket b : open.keySet()) {
        if (!isDue(b)) {
          break;
        }
        due.add(b);
      }
    } finally {
      lock.readLock().unlock();
    }
    sealEach(due);
  }

  /** How often the engine runs {@link #sealIdleBuckets}. */
  static final long IDLE_CHECK_MILLIS = 60_000;

  /**
   * Checks in a row that must find a bucket without appends before it is sealed by the clock: five
   * minutes. A sealed bucket that takes a sample again is read back into the head whole, under the
   * write lock, so a sender that merely paused must not have its bucket sealed under it.
   */
  static final int IDLE_CHECKS = 5;

  /**
   * Seals the open buckets that the wall clock says are due (their end plus the out-of-order window
   * has passed) and that took no append over the last {@link #IDLE_CHECKS} checks. Otherwise only
   * appends make a bucket due ({@link #isDue}: the newest accepted sample), so a head that stops
   * accepting newer samples would keep its buckets for ever: a sender gone quiet leaves its last
   * hour in memory, and a head over its budget refuses every append, so nothing newer is accepted
   * and it would refuse until a restart (which replays the same head). A late sample reopens a
   * sealed bucket, as always. Background thread; returns how many buckets it sealed.
   */
  int sealIdleBuckets() {
    long now = config.clock().millis();
    List<TimeBucket> idle = new ArrayList<>();
    lock.readLock().lock();
    try {
      if (head.closed) {
        return 0;
      }
      for (HeadBucket hb : open.values()) {
        long seq = hb.lastLogSeq; // the idle fields: only this thread reads or writes them
        hb.idleChecks = seq == hb.idleCheckSeq ? hb.idleChecks + 1 : 0;
        hb.idleCheckSeq = seq;
        if (hb.idleChecks >= IDLE_CHECKS && now >= hb.bucket.endMillis() + oooMillis) {
          idle.add(hb.bucket);
        }
      }
    } finally {
      lock.readLock().unlock();
    }
    return sealEach(idle);
  }

  /** {@link #sealIdleBuckets}, logging a failure (the next check retries). */
  void sealIdleBucketsQuietly() {
    try {
      int n = sealIdleBuckets();
      if (n > 0) {
        LOG.log(Level.INFO, "sealed {0} idle bucket(s) past their end by the clock", n);
      }
    } catch (RuntimeException e) {
      LOG.log(Level.WARNING, "sealing idle buckets failed; will retry", e);
    }
  }

  private int sealEach(List<TimeBucket> buckets) {
    int sealed = 0;
    for (TimeBucket b : buckets) {
      HeadBucket hb;
      lock.writeLock().lock();
      try {
        if (head.closed || !open.containsKey(b)) {
          continue;
        }
        hb = startSealLocked(b);
      } finally {
        lock.writeLock().unlock();
      }
      if (seal(hb)) {
        sealed++;
      }
    }
    return sealed;
  }

  /**
   * Starts the seal of an open bucket: marks it sealing and notes its seal point, the newest
   * head-log sequence number so far. The bucket stays open. Under the write lock.
   */
  HeadBucket startSealLocked(TimeBucket b) {
    HeadBucket hb = open.get(b);
    sealing.put(b, hb);
    hb.sealPoint = head.logSeq;
    return hb;
  }

  /**
   * Writes a sealing bucket's records and deletes its head log up to the seal point; then drops the
   * bucket from the head, unless an append wrote to it since the seal point (then it stays open,
   * whole, and is sealed again later). Returns whether the bucket left the head.
   *
   * <p>Runs without the lock: the bucket stays open and appendable throughout, and the seal copies
   * what it writes under the read lock, a slice at a time ({@link #SEAL_SLICE_BYTES}, {@link
   * #SEAL_SLICE_SERIES}), so an append waits at most for one slice. See {@code
   * docs/architecture.md}, Sealing, for why this keeps the head log, reads and appends whole.
   */
  boolean seal(HeadBucket hb) {
    long started = System.nanoTime();
    TimeBucket b = hb.bucket;
    long sealPoint = hb.sealPoint;
    int[] written = {0};
    try {
      WriteBatch[] wb = {new WriteBatch()};
      DecimalEncoder scratch = new DecimalEncoder();
      KvReader oneShot = kv.oneShot();
      List<HeadSeries> series;
      lock.readLock().lock();
      try {
        series = new ArrayList<>(hb.seriesCount());
        for (HeadSeries hs : hb.series()) {
          series.add(hs);
        }
      } finally {
        lock.readLock().unlock();
      }
      // Series created after this copy came with head-log records past the seal point: the
      // bucket then stays open, so they need no TimeSeries record from this seal.
      HeadSeries.Parts[] captured = new HeadSeries.Parts[SEAL_SLICE_SERIES];
      int next = 0;
      while (next < series.size()) {
        int n = 0;
        long bytes = 0;
        lock.readLock().lock();
        try {
          while (next < series.size() && n < SEAL_SLICE_SERIES && bytes < SEAL_SLICE_BYTES) {
            HeadSeries hs = series.get(next++);
            if (hs.isEmpty()) {
              continue;
            }
            captured[n] = hs.copyParts();
            bytes += captured[n].copiedBytes();
            n++;
          }
        } finally {
          lock.readLock().unlock();
        }
        for (int i = 0; i < n; i++) {
          HeadSeries.Parts f = captured[i];
          captured[i] = null;
          if (f.hasStored()) {
            // frozen parts in HeadChunk records; only this thread writes them. Read once and
            // deleted by this seal: around the store's block cache.
            f.loadStored(oneShot);
          }
          f.encode(scratch);
          wb[0].put(Keys.timeSeries(b, f.series.id), f.encoded());
          written[0]++;
          if (wb[0].payloadBytes() > SEAL_BATCH_BYTES) {
            kv.write(wb[0]);
            wb[0] = new WriteBatch();
          }
        }
      }
      List<String> names = new ArrayList<>();
      List<String> values = new ArrayList<>();
      List<RoaringBitmap> postings = new ArrayList<>();
      RoaringBitmap all;
      lock.readLock().lock();
      try {
        hb.forEachPosting(
            (name, value, posting) -> {
              names.add(name);
              values.add(value);
              postings.add(posting.clone());
            });
        all = hb.all().clone();
      } finally {
        lock.readLock().unlock();
      }
      for (int i = 0; i < postings.size(); i++) {
        wb[0].put(
            Keys.invertedIndex(b, names.get(i), values.get(i)),
            InvertedIndexValue.encode(postings.get(i)));
        if (wb[0].payloadBytes() > SEAL_BATCH_BYTES) {
          kv.write(wb[0]);
          wb[0] = new WriteBatch();
        }
      }
      wb[0].put(Keys.invertedIndexAllSeries(b), InvertedIndexValue.encode(all));
      // Only up to the seal point: later records are of samples appended during the seal.
      wb[0].deleteRange(
          Keys.bucketPrefix(RecordType.HEAD_LOG, b), Recovery.headLogKey(b, sealPoint + 1));
      kv.write(wb[0]);
      if (config.fsync()) {
        kv.sync();
      }
    } catch (RuntimeException | Error e) {
      LOG.log(Level.ERROR, "sealing bucket " + b + " failed; it stays in the head", e);
      lock.writeLock().lock();
      try {
        sealing.remove(b);
      } finally {
        lock.writeLock().unlock();
      }
      throw e;
    }
    lock.writeLock().lock();
    try {
      sealing.remove(b);
      if (hb.lastLogSeq > sealPoint) {
        long nanos = System.nanoTime() - started;
        head.tell(e -> e.sealed(b, written[0], nanos, false));
        return false; // appended to during the seal: its newer head log keeps it open
      }
      if (hb.partsWritten) {
        // The frozen parts are in the chunks just written; they go as the bucket leaves the head,
        // not in the last batch, which cannot know whether the bucket stays open (then its series
        // still name their parts). A failed delete keeps the bucket open, whole, and throws.
        byte[] prefix = Keys.bucketPrefix(RecordType.HEAD_CHUNK, b);
        try {
          kv.write(new WriteBatch().deleteRange(prefix, KeyRanges.prefixEnd(prefix)));
        } catch (RuntimeException e) {
          // As any failed seal: the bucket stays open, whole, and the failure reaches the caller.
          LOG.log(
              Level.ERROR,
              "deleting the frozen parts of bucket " + b + " failed; it stays in the head",
              e);
          throw e;
        }
      }
      open.remove(b);
      head.labelCache.invalidate(b); // its stored records were just (re)written
      hb.state = HeadBucket.State.SEALED;
      head.headSeries -= hb.seriesCount();
      head.bucketLeftLocked(hb);
      for (HeadSeries hs : hb.series()) {
        head.headSampleBytes -= hs.sampleBytes();
      }
      // Forget series whose newest data just left the head; they are looked up again if they
      // return.
      head.forgetRefs(r -> r.latest == null || r.latest.bucket.state == HeadBucket.State.SEALED);
      long nanos = System.nanoTime() - started;
      head.tell(e -> e.sealed(b, written[0], nanos, true));
      return true;
    } finally {
      lock.writeLock().unlock();
    }
  }

  /** Seals every open bucket now and waits for it. */
  void flush() {
    runOnBackground(this::sealAllOpen);
  }

  private void sealAllOpen() {
    List<TimeBucket> toSeal;
    lock.readLock().lock();
    try {
      toSeal = new ArrayList<>(open.keySet());
    } finally {
      lock.readLock().unlock();
    }
    // A failure of one seal must not keep the others from being sealed.
    RuntimeException failure = null;
    for (TimeBucket b : toSeal) {
      try {
        HeadBucket hb;
        lock.writeLock().lock();
        try {
          if (!open.containsKey(b)) {
            continue;
          }
          hb = startSealLocked(b);
        } finally {
          lock.writeLock().unlock();
        }
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

  /** Queues {@code task} on the background thread without waiting; dropped when shutting down. */
  void submit(Runnable task) {
    try {
      background.execute(task);
    } catch (java.util.concurrent.RejectedExecutionException e) {
      // shutting down
    }
  }

  /**
   * Runs {@code task} on the background thread every {@code everyMillis}, the first time after one
   * period.
   */
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

  /**
   * Occupies the background thread until {@code release} is counted down (or the thread is
   * interrupted by {@link #stopNow}), so that seals scheduled meanwhile wait. For tests that look
   * at the head between an append and the seal it schedules.
   */
  void holdForTests(java.util.concurrent.CountDownLatch release) {
    background.execute(
        () -> {
          try {
            release.await();
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        });
  }
}
