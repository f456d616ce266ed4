package dev.tidemark.translator;

import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Delta → cumulative accumulation (contract §3.7, after the collector's deltatocumulative
 * processor).
 *
 * <p>Per stream: the first point becomes the state (cumulative start = its start, or its time if
 * the start is 0). A later point is dropped if it starts before the state's start ("belongs to an
 * older series") or is not newer than the state's time (out of order); otherwise it is added:
 * numbers add; histograms add bucket-wise, or replace the state when the explicit bounds differ;
 * exponential histograms merge at the lower scale ({@link ExpHistogram#add}). Optionally ({@code
 * deltaResetOnGap}) a point starting after the state's time resets the stream.
 *
 * <p>Streams idle (by receive-time clock) longer than {@code maxStale} are forgotten; at most
 * {@code maxStreams} live at once and points of new streams beyond that are rejected.
 *
 * <p>Thread-safe: each stream is updated under its own lock. Accumulation assumes one writer per
 * stream (all deltas of a stream reach this process). Every change is recorded in a per-request
 * undo log so that a request whose append fails as a whole (storage unavailable; the client will
 * retry) does not count its deltas twice.
 */
final class DeltaAccumulator {

  static final class Stream {
    boolean initialized;
    boolean dead;
    long startNanos;
    long timeNanos;
    long lastSeenMillis;
    double value;
    double[] bounds;
    long[] counts;
    long count;
    boolean hasSum;
    double sum;
    ExpHistogram exp;

    Stream copy() {
      Stream c = new Stream();
      c.initialized = initialized;
      c.startNanos = startNanos;
      c.timeNanos = timeNanos;
      c.lastSeenMillis = lastSeenMillis;
      c.value = value;
      c.bounds = bounds;
      c.counts = counts == null ? null : counts.clone();
      c.count = count;
      c.hasSum = hasSum;
      c.sum = sum;
      c.exp = exp == null ? null : exp.copy();
      return c;
    }

    void restore(Stream b) {
      initialized = b.initialized;
      startNanos = b.startNanos;
      timeNanos = b.timeNanos;
      lastSeenMillis = b.lastSeenMillis;
      value = b.value;
      bounds = b.bounds;
      counts = b.counts;
      count = b.count;
      hasSum = b.hasSum;
      sum = b.sum;
      exp = b.exp;
    }
  }

  /** One change: {@code before == null} means the stream was created by this request. */
  record Undo(StreamKey key, Stream stream, Stream before) {}

  /** Applies a point to a locked, live stream; returns null on success. */
  interface Update {
    RejectionReason apply(Stream s, boolean fresh);
  }

  private final ConcurrentHashMap<StreamKey, Stream> streams = new ConcurrentHashMap<>();
  private final AtomicInteger size = new AtomicInteger();
  private final int maxStreams;
  private final long maxStaleMillis;
  private final boolean resetOnGap;
  private volatile long lastSweepMillis = Long.MIN_VALUE;

  DeltaAccumulator(int maxStreams, long maxStaleMillis, boolean resetOnGap) {
    this.maxStreams = maxStreams;
    this.maxStaleMillis = maxStaleMillis;
    this.resetOnGap = resetOnGap;
  }

  int size() {
    return size.get();
  }

  /**
   * Finds or creates the stream, checks order, records undo and applies {@code update}.
   *
   * @return null if applied, else why the point is rejected (nothing changed)
   */
  RejectionReason accumulate(
      StreamKey key,
      long startNanos,
      long timeNanos,
      long nowMillis,
      List<Undo> undo,
      Update update) {
    for (; ; ) {
      Stream s = streams.get(key);
      if (s == null) {
        if (size.incrementAndGet() > maxStreams) {
          size.decrementAndGet();
          return RejectionReason.DELTA_STREAM_LIMIT;
        }
        Stream created = new Stream();
        s = streams.putIfAbsent(key, created);
        if (s != null) {
          size.decrementAndGet();
        } else {
          s = created;
        }
      }
      synchronized (s) {
        if (s.dead) {
          continue;
        }
        if (!s.initialized) {
          undo.add(new Undo(key, s, null));
          s.initialized = true;
          s.startNanos = startNanos != 0 ? startNanos : timeNanos;
          s.timeNanos = timeNanos;
          s.lastSeenMillis = nowMillis;
          RejectionReason r = update.apply(s, true);
          if (r != null) {
            rollbackOne(key, s, null);
            undo.remove(undo.size() - 1);
          }
          return r;
        }
        if ((startNanos != 0 && startNanos < s.startNanos) || timeNanos <= s.timeNanos) {
          return RejectionReason.DELTA_OUT_OF_ORDER;
        }
        Stream before = s.copy();
        boolean fresh = false;
        if (resetOnGap && startNanos != 0 && startNanos > s.timeNanos) {
          s.startNanos = startNanos;
          fresh = true;
        }
        s.timeNanos = timeNanos;
        s.lastSeenMillis = nowMillis;
        RejectionReason r = update.apply(s, fresh);
        if (r != null) {
          s.restore(before);
          return r;
        }
        undo.add(new Undo(key, s, before));
        return null;
      }
    }
  }

  /**
   * Histogram bounds differ from the state's: the caller resets (start = the point's start or
   * time).
   */
  static boolean sameBounds(double[] a, double[] b, int nb) {
    if (a == null || a.length != nb) {
      return false;
    }
    for (int i = 0; i < nb; i++) {
      if (Double.doubleToRawLongBits(a[i]) != Double.doubleToRawLongBits(b[i])) {
        return false;
      }
    }
    return true;
  }

  static double[] copyBounds(double[] b, int nb) {
    return Arrays.copyOf(b, nb);
  }

  /** NoRecordedValue: forget the stream. */
  void remove(StreamKey key, List<Undo> undo) {
    Stream s = streams.get(key);
    if (s == null) {
      return;
    }
    synchronized (s) {
      if (s.dead) {
        return;
      }
      s.dead = true;
      if (streams.remove(key, s)) {
        size.decrementAndGet();
      }
      undo.add(new Undo(key, s, s.copy()));
    }
  }

  /** Forgets streams idle longer than maxStale; runs at most every maxStale/4. */
  void sweep(long nowMillis) {
    long last = lastSweepMillis;
    if (last != Long.MIN_VALUE && nowMillis - last < Math.max(1, maxStaleMillis / 4)) {
      return;
    }
    lastSweepMillis = nowMillis;
    Iterator<Map.Entry<StreamKey, Stream>> it = streams.entrySet().iterator();
    while (it.hasNext()) {
      Map.Entry<StreamKey, Stream> e = it.next();
      Stream s = e.getValue();
      synchronized (s) {
        if (!s.dead && nowMillis - s.lastSeenMillis > maxStaleMillis) {
          s.dead = true;
          if (streams.remove(e.getKey(), s)) {
            size.decrementAndGet();
          }
        }
      }
    }
  }

  /** Undoes a request's changes, newest first. */
  void rollback(List<Undo> undo) {
    for (int i = undo.size() - 1; i >= 0; i--) {
      Undo u = undo.get(i);
      synchronized (u.stream()) {
        rollbackOne(u.key(), u.stream(), u.before());
      }
    }
    undo.clear();
  }

  private void rollbackOne(StreamKey key, Stream s, Stream before) {
    if (before == null) {
      s.dead = true;
      if (streams.remove(key, s)) {
        size.decrementAndGet();
      }
    } else if (s.dead) {
      // Removed by this request (NoRecordedValue): bring it back.
      s.restore(before);
      s.dead = false;
      Stream fresh = s;
      if (streams.putIfAbsent(key, fresh) == null) {
        size.incrementAndGet();
      }
    } else {
      s.restore(before);
    }
  }
}
