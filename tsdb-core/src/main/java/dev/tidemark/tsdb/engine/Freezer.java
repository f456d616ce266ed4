package dev.tidemark.tsdb.engine;

import static dev.tidemark.tsdb.engine.HeadState.LOG;

import dev.tidemark.tsdb.codec.DecimalEncoder;
import dev.tidemark.tsdb.codec.Keys;
import dev.tidemark.tsdb.kv.WriteBatch;
import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * Freezes head series off the append path ({@code docs/architecture.md}, The head). An append that
 * leaves a series {@linkplain HeadSeries#due due} asks for a pass; the pass runs on the background
 * thread (so never beside a seal, a retention or a delete) and walks the open buckets a slice at a
 * time: it copies the due series of a slice under the read lock, merges and encodes them with no
 * lock held, and under the write lock writes them to the store as HeadChunk records (one batch per
 * slice, docs/format.md) and swaps them in: the series keep only a summary of their frozen parts
 * (issue #22, item 5). An append waits at most for one slice's copy or its write and swap.
 */
final class Freezer {

  /** A slice copies at most this many series... */
  private static final int SLICE_SERIES = 512;

  /** ... or this many bytes, after looking at no more than this many series. */
  private static final long SLICE_BYTES = 256L << 10;

  private static final int SLICE_SCAN = 8_192;

  private final AtomicBoolean queued = new AtomicBoolean();
  private final DecimalEncoder scratch = new DecimalEncoder();
  private final HeadState head;
  private final Sealer sealer;
  private final ReentrantReadWriteLock lock;
  private final int freezeSamples;

  /** HeadChunk records written so far (tests and stats); its thread writes it. */
  volatile long partsWritten;

  Freezer(HeadState head, Sealer sealer) {
    this.head = head;
    this.sealer = sealer;
    this.lock = head.lock;
    this.freezeSamples = head.config.headFreezeSamples();
  }

  /** Queues a pass on the background thread, unless one is queued already. */
  void requestPass() {
    if (freezeSamples > 0 && queued.compareAndSet(false, true)) {
      sealer.submit(
          () -> {
            queued.set(false);
            try {
              freezeDue();
            } catch (RuntimeException e) {
              // Nothing is lost: the series stay unfrozen (larger) until a later pass or their
              // seal.
              LOG.log(Level.WARNING, "freezing head series failed; they stay unfrozen", e);
            }
          });
    }
  }

  /** Freezes every due series of the open buckets. On the background thread. */
  void freezeDue() {
    List<HeadBucket> buckets;
    lock.readLock().lock();
    try {
      if (head.closed) {
        return;
      }
      buckets = new ArrayList<>(head.open.values());
    } finally {
      lock.readLock().unlock();
    }
    List<HeadSeries.Parts> slice = new ArrayList<>(SLICE_SERIES);
    for (HeadBucket hb : buckets) {
      int next = 0;
      while (true) {
        slice.clear();
        lock.readLock().lock();
        try {
          if (head.closed || hb.state != HeadBucket.State.OPEN || next >= hb.nextId()) {
            break;
          }
          long bytes = 0;
          for (int end = Math.min(hb.nextId(), next + SLICE_SCAN);
              next < end && slice.size() < SLICE_SERIES && bytes < SLICE_BYTES;
              next++) {
            HeadSeries hs = hb.byId(next);
            if (hs != null && hs.due(freezeSamples)) {
              HeadSeries.Parts f = hs.copyParts();
              slice.add(f);
              bytes += f.copiedBytes();
            }
          }
        } finally {
          lock.readLock().unlock();
        }
        if (slice.isEmpty()) {
          continue;
        }
        for (HeadSeries.Parts f : slice) {
          f.encodeForHead(scratch, true);
        }
        lock.writeLock().lock();
        try {
          if (head.closed || hb.state != HeadBucket.State.OPEN) {
            break;
          }
          // The parts still valid go to the store in one batch, and only once it is written do
          // the series drop what they hold: a reader sees the samples either in the series or in
          // a part its snapshot shows, never both or neither. A failed write changes nothing
          // (the pass ends; a part number written in vain is rewritten by the next freeze).
          WriteBatch wb = new WriteBatch();
          int valid = 0;
          for (int i = 0; i < slice.size(); i++) {
            HeadSeries.Parts f = slice.get(i);
            // A series an undo removed since the copy is no longer the bucket's.
            if (hb.byId(f.series.id) == f.series && f.series.freezeStillValid(f)) {
              wb.put(Keys.headChunk(hb.bucket, f.series.id, f.oldParts), f.encoded());
              slice.set(valid++, f);
            }
          }
          if (valid == 0) {
            continue;
          }
          hb.partsWritten = true;
          head.kv.write(wb);
          partsWritten += valid;
          for (int i = 0; i < valid; i++) {
            HeadSeries.Parts f = slice.get(i);
            head.headSampleBytes += f.series.completeFreeze(f);
          }
        } finally {
          lock.writeLock().unlock();
        }
      }
    }
  }
}
