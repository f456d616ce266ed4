package dev.tidemark.translator;

import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * The in-place path's streams ({@link InPlace}): a dense array of streams in the order they were
 * first seen, and a lossy, lock-free, set-associative index from the 128-bit hash of a stream's
 * wire identity to its position in that array. No map node, key object or eviction record per
 * entry.
 *
 * <p><b>Why positions.</b> At a million streams a lookup's cost is memory latency, not
 * instructions: one random access into a table of many megabytes and one into each entry it looks
 * at cost more than all the rest of a point's translation (docs/benchmarks.md, session 11). Two
 * things remove most of them. The index holds each entry's key bits beside its position, so a set
 * is scanned in one or two cache lines and only the matching stream is read. And senders repeat
 * their streams in the same order at every export, so the stream after the one just found is
 * usually the one at the next position ({@link #at}): the caller tries it first and skips the index
 * altogether. The streams then come in the order the array holds them, and so does the garbage
 * collector's copy of them, which keeps a request's streams and what they refer to close together.
 *
 * <p><b>Bounds.</b> Positions are handed out in order; the array starts small and doubles up to the
 * configured size (rounded up to a power of two), and from then on positions wrap around: a new
 * stream takes the place of the oldest, which is only a miss for that stream if it comes again (the
 * caller resolves it again, {@link SeriesResolver#lookupForWire}, and puts it back: a histogram or
 * summary stream from the series cache, a gauge or counter stream, which this cache alone holds,
 * from its attributes). The index has {@value #SLOTS_PER_ENTRY} slots per array entry in sets of
 * {@value #WAYS}; a full set replaces one of its slots (picked by the key's bits), and a slot whose
 * position has since been taken by another stream simply fails the full-key check.
 *
 * <p>Thread-safe: slots and positions are read and written atomically, and every hit is checked
 * against the full key held by the (immutable) stream, so a race can only lose an entry, never
 * answer another key's stream. An entry put while the arrays grow may be missing from the index.
 */
final class WireStreamCache {

  static final int WAYS = 16;
  static final int SLOTS_PER_ENTRY = 2;
  private static final int MIN_ENTRIES = 512;
  private static final int POSITION_BITS = 28;
  private static final long POSITION_MASK = (1L << POSITION_BITS) - 1;

  /** A power of two, at most 2^{@value #POSITION_BITS} - 1 positions. */
  private final int maxEntries;

  private volatile Arrays arrays;
  private final AtomicLong next = new AtomicLong();

  private static final class Arrays {
    /** Streams by position. */
    final AtomicReferenceArray<InPlace.WireStream> streams;

    /**
     * Sets of {@value #WAYS} slots; a slot is 0 (free) or the key's high bits above {@value
     * #POSITION_BITS} and the position + 1 below.
     */
    final AtomicLongArray index;

    Arrays(int entries) {
      streams = new AtomicReferenceArray<>(entries);
      index = new AtomicLongArray(entries * SLOTS_PER_ENTRY);
    }
  }

  /**
   * @param maxEntries the number of streams it must hold (the series cache's size)
   */
  WireStreamCache(int maxEntries) {
    long want = Math.max(MIN_ENTRIES, maxEntries);
    this.maxEntries = (int) Math.min(1L << (POSITION_BITS - 1), Long.highestOneBit(want - 1) << 1);
    this.arrays = new Arrays(Math.min(MIN_ENTRIES, this.maxEntries));
  }

  /** The stream at {@code position}, or null; any int is a valid argument. */
  InPlace.WireStream at(int position) {
    AtomicReferenceArray<InPlace.WireStream> s = arrays.streams;
    return position >= 0 && position < s.length() ? s.get(position) : null;
  }

  /** The entry with this key, or null. */
  InPlace.WireStream get(long keyHi, long keyLo) {
    Arrays a = arrays;
    AtomicLongArray index = a.index;
    int base = setOf(keyLo, index.length());
    long tag = keyLo & ~POSITION_MASK;
    for (int i = 0; i < WAYS; i++) {
      long slot = index.get(base + i);
      if (slot == 0) {
        return null; // slots fill from the front and are never freed
      }
      if ((slot & ~POSITION_MASK) == tag) {
        InPlace.WireStream ws = a.streams.get((int) (slot & POSITION_MASK) - 1);
        if (ws != null && ws.keyLo == keyLo && ws.keyHi == keyHi) {
          return ws;
        }
      }
    }
    return null;
  }

  /**
   * Puts a new entry (its key in {@code ws.keyHi}, {@code ws.keyLo}) at the next position, which it
   * records in {@code ws.position}.
   */
  void put(InPlace.WireStream ws) {
    long n = next.getAndIncrement();
    Arrays a = arrays;
    while (n >= a.streams.length() && a.streams.length() < maxEntries) {
      a = grow(a, n);
    }
    int position = (int) (n & (maxEntries - 1));
    ws.position = position;
    a.streams.set(position, ws);
    place(a.index, ws.keyLo, position);
  }

  /** Positions the arrays have room for now (for tests and the memory figures). */
  int capacity() {
    return arrays.streams.length();
  }

  private static void place(AtomicLongArray index, long keyLo, int position) {
    int base = setOf(keyLo, index.length());
    long slot = (keyLo & ~POSITION_MASK) | (position + 1L);
    for (int i = 0; i < WAYS; i++) {
      if (index.get(base + i) == 0 && index.compareAndSet(base + i, 0, slot)) {
        return;
      }
    }
    index.set(base + ((int) (keyLo >>> 40) & (WAYS - 1)), slot); // a victim picked by the key
  }

  private synchronized Arrays grow(Arrays old, long needed) {
    Arrays cur = arrays;
    if (cur != old) {
      return cur;
    }
    int length = old.streams.length();
    while (length <= needed && length < maxEntries) {
      length *= 2;
    }
    Arrays bigger = new Arrays(length);
    for (int p = 0; p < old.streams.length(); p++) {
      InPlace.WireStream ws = old.streams.get(p);
      if (ws != null) {
        bigger.streams.set(p, ws);
        place(bigger.index, ws.keyLo, p);
      }
    }
    arrays = bigger;
    return bigger;
  }

  /** The first slot of the key's set: sets are {@value #WAYS} slots apart. */
  private static int setOf(long keyLo, int length) {
    return (int) keyLo & (length - 1) & -WAYS;
  }
}
