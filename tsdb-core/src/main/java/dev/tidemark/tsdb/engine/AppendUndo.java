package dev.tidemark.tsdb.engine;

import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * Undoes what a failed append changed in the head, so that an append that fails before its KV write
 * (the write itself failing, an encoding or any other exception) leaves the head exactly as the
 * store has it. See {@code docs/architecture.md}, "All or nothing".
 *
 * <p>The samples need no journal of their own: every sample an append inserts is also in its
 * bucket's pending head-log bytes (series id, timestamp), in insertion order. Undone newest first,
 * each entry is the newest insert left in its series: a late sample is removed from the side
 * buffer, an in-order one is the last sample of the encoder, which is then cut back (once per
 * series, a re-encode of its chunk). What the head log does not show is journaled here, rarely: the
 * buckets an append touched (whether it created them, and added them to the BucketList, and their
 * timestamp range before) and the series it created (each the highest id of its bucket).
 *
 * <p>Reused across appends; "once per append and bucket" is an epoch stamp on the bucket. The happy
 * path pays an epoch comparison per sample and a list add per created series. Guarded by the
 * engine's write lock.
 */
final class AppendUndo {

  private final List<HeadBucket> buckets = new ArrayList<>();
  private final List<Boolean> createdBuckets = new ArrayList<>();
  private final List<Boolean> listedBuckets = new ArrayList<>();
  private long[] ranges = new long[8];
  private final List<HeadSeries> createdSeries = new ArrayList<>();
  private long epoch;

  /** Starts the journal of a new append. */
  void begin() {
    buckets.clear();
    createdBuckets.clear();
    listedBuckets.clear();
    createdSeries.clear();
    epoch++;
  }

  /**
   * Notes a bucket about to change, once per append.
   *
   * @param created the append created it ({@code listed}: and added it to the BucketList)
   */
  void bucket(HeadBucket hb, boolean created, boolean listed) {
    if (hb.undoEpoch == epoch) {
      return;
    }
    hb.undoEpoch = epoch;
    int i = buckets.size();
    if (2 * i + 2 > ranges.length) {
      ranges = java.util.Arrays.copyOf(ranges, ranges.length * 2);
    }
    ranges[2 * i] = hb.minTimestamp;
    ranges[2 * i + 1] = hb.maxTimestamp;
    buckets.add(hb);
    createdBuckets.add(created);
    listedBuckets.add(listed);
  }

  void seriesCreated(HeadSeries hs) {
    createdSeries.add(hs);
  }

  /** Receives what to undo beyond the samples. */
  interface Visitor {
    /** A series the append created, newest first (its samples are already gone). */
    void seriesCreated(HeadSeries hs);

    /** A bucket the append touched, with its range before; {@code created}: by this append. */
    void bucket(
        HeadBucket hb, boolean created, boolean listed, long minTimestamp, long maxTimestamp);
  }

  /**
   * Undoes the append: first its samples, from each touched bucket's pending head log, then the
   * created series newest first, then the buckets; clears the pending logs and the journal.
   *
   * @return the change in the head's sample bytes (negative or zero)
   */
  /**
   * Undoes the histogram samples of the bucket's pending head log (format 0x03), as the float ones:
   * newest first, late ones removed, in-order ones cut back once per series. Returns the change in
   * bytes.
   */
  private static long undoHistograms(HeadBucket hb) {
    if (hb.pendingHistogramLog.isEmpty()) {
      return 0;
    }
    List<long[]> entries = new ArrayList<>();
    HeadLogHistograms.decode(
        hb.pendingHistogramLog.toByteArray(), (id, t, h) -> entries.add(new long[] {id, t}));
    Map<HeadSeries, int[]> inOrderRemoved = new IdentityHashMap<>();
    long bytes = 0;
    for (int i = entries.size() - 1; i >= 0; i--) {
      HeadSeries hs = hb.byId((int) entries.get(i)[0]);
      long before = hs.sampleBytes();
      if (hs.histograms().removeLate(entries.get(i)[1])) {
        bytes += hs.sampleBytes() - before;
      } else {
        inOrderRemoved.computeIfAbsent(hs, k -> new int[1])[0]++;
      }
    }
    for (Map.Entry<HeadSeries, int[]> e : inOrderRemoved.entrySet()) {
      HeadSeries hs = e.getKey();
      long before = hs.sampleBytes();
      HeadHistograms h = hs.histograms();
      h.truncateInOrder(h.inOrderCount() - e.getValue()[0]);
      bytes += hs.sampleBytes() - before;
    }
    hb.pendingHistogramLog.clear();
    return bytes;
  }

  long undo(Visitor v) {
    long bytes = 0;
    Map<HeadSeries, int[]> inOrderRemoved = new IdentityHashMap<>();
    for (HeadBucket hb : buckets) {
      bytes += undoHistograms(hb);
      if (hb.pendingLog.isEmpty()) {
        continue;
      }
      List<long[]> entries = new ArrayList<>();
      HeadLogBuffer.decode(
          hb.pendingLog.toByteArray(), (id, t, bits) -> entries.add(new long[] {id, t}));
      for (int i = entries.size() - 1; i >= 0; i--) {
        HeadSeries hs = hb.byId((int) entries.get(i)[0]);
        long t = entries.get(i)[1];
        long before = hs.sampleBytes();
        if (hs.removeLate(t)) {
          bytes += hs.sampleBytes() - before;
        } else {
          inOrderRemoved.computeIfAbsent(hs, k -> new int[1])[0]++;
        }
      }
      hb.pendingLog.clear();
    }
    for (Map.Entry<HeadSeries, int[]> e : inOrderRemoved.entrySet()) {
      HeadSeries hs = e.getKey();
      long before = hs.sampleBytes();
      hs.truncateInOrder(hs.inOrderCount() - e.getValue()[0]);
      bytes += hs.sampleBytes() - before;
    }
    for (int i = createdSeries.size() - 1; i >= 0; i--) {
      v.seriesCreated(createdSeries.get(i));
    }
    for (int i = buckets.size() - 1; i >= 0; i--) {
      v.bucket(
          buckets.get(i),
          createdBuckets.get(i),
          listedBuckets.get(i),
          ranges[2 * i],
          ranges[2 * i + 1]);
    }
    begin();
    return bytes;
  }
}
