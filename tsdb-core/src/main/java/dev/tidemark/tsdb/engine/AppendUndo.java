package dev.tidemark.tsdb.engine;

import java.util.Arrays;

/**
 * The undo journal of the append in progress: what it changed in the head, so that an append that
 * fails before its KV write (the write itself failing, an encoding or any other exception) leaves
 * the head exactly as the store has it. See {@code docs/architecture.md}, "All or nothing".
 *
 * <p>Entries, undone newest first:
 *
 * <ul>
 *   <li>{@link #bucket} once per bucket and append: whether the append created the bucket (and
 *       added it to the BucketList), and its timestamp range before the append;
 *   <li>{@link #seriesCreated}: a series new to its bucket (it has the bucket's highest id);
 *   <li>{@link #seriesTouched} once per series and append: its in-order sample count before;
 *   <li>{@link #late}: one late sample inserted into a series' side buffer.
 * </ul>
 *
 * <p>Reused across appends, so the journal allocates only while it grows: the arrays hold object
 * references and longs, and "once per append" is an epoch stamp on the bucket or series, not a
 * set. Guarded by the engine's write lock.
 */
final class AppendUndo {

  static final byte BUCKET_OPENED = 1;
  static final byte BUCKET_CREATED = 2;
  static final byte BUCKET_CREATED_LISTED = 3;
  static final byte SERIES_CREATED = 4;
  static final byte SERIES_TOUCHED = 5;
  static final byte LATE = 6;

  private byte[] kinds = new byte[256];
  private Object[] targets = new Object[256];
  private long[] a = new long[256];
  private long[] b = new long[256];
  private int size;
  private long epoch;

  /** Starts the journal of a new append. */
  void begin() {
    Arrays.fill(targets, 0, size, null);
    size = 0;
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
    byte kind = !created ? BUCKET_OPENED : listed ? BUCKET_CREATED_LISTED : BUCKET_CREATED;
    add(kind, hb, hb.minTimestamp, hb.maxTimestamp);
  }

  void seriesCreated(HeadSeries hs) {
    add(SERIES_CREATED, hs, 0, 0);
  }

  /** Notes a series about to receive a sample, once per append. */
  void seriesTouched(HeadSeries hs) {
    if (hs.undoEpoch == epoch) {
      return;
    }
    hs.undoEpoch = epoch;
    add(SERIES_TOUCHED, hs, hs.inOrderCount(), 0);
  }

  void late(HeadSeries hs, long t) {
    add(LATE, hs, t, 0);
  }

  private void add(byte kind, Object target, long x, long y) {
    if (size == kinds.length) {
      int n = size * 2;
      kinds = Arrays.copyOf(kinds, n);
      targets = Arrays.copyOf(targets, n);
      a = Arrays.copyOf(a, n);
      b = Arrays.copyOf(b, n);
    }
    kinds[size] = kind;
    targets[size] = target;
    a[size] = x;
    b[size] = y;
    size++;
  }

  /** Receives the entries, newest first. */
  interface Visitor {
    /** A bucket: {@code kind} is one of the BUCKET_* constants; its range before the append. */
    void bucket(HeadBucket hb, byte kind, long minTimestamp, long maxTimestamp);

    void seriesCreated(HeadSeries hs);

    void seriesTouched(HeadSeries hs, int inOrderCount);

    void late(HeadSeries hs, long t);
  }

  /** Hands every entry to {@code v}, newest first, then empties the journal. */
  void undo(Visitor v) {
    for (int i = size - 1; i >= 0; i--) {
      Object t = targets[i];
      switch (kinds[i]) {
        case BUCKET_OPENED, BUCKET_CREATED, BUCKET_CREATED_LISTED ->
            v.bucket((HeadBucket) t, kinds[i], a[i], b[i]);
        case SERIES_CREATED -> v.seriesCreated((HeadSeries) t);
        case SERIES_TOUCHED -> v.seriesTouched((HeadSeries) t, (int) a[i]);
        case LATE -> v.late((HeadSeries) t, a[i]);
        default -> throw new IllegalStateException("unknown undo entry " + kinds[i]);
      }
    }
    begin();
  }
}
