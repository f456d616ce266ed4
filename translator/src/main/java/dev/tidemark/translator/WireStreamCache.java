package dev.tidemark.translator;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * The in-place path's streams by the 128-bit hash of their wire identity ({@link InPlace}): a
 * lossy, lock-free, set-associative table of references, one slot array and no per-entry map node,
 * key object or eviction record. Caffeine's three objects per entry (about 100 bytes) were the
 * largest per-series cost of the translator at a million streams (docs/architecture.md, "Memory at
 * a million active series").
 *
 * <p>A key's set is {@value #WAYS} consecutive slots; a lookup compares the entries there. A new
 * entry takes a free slot of its set, else replaces one of its entries (picked by the key's bits).
 * The table starts small and doubles while more than a quarter of its slots are taken, up to four
 * slots per entry of the configured size; at that load a set of {@value #WAYS} slots overflows for
 * about one stream in two thousand. A replaced or lost entry is only a miss: the caller resolves
 * the stream through the series cache ({@link SeriesResolver}) and puts it back.
 *
 * <p>Thread-safe: slots are read and written atomically; an entry put while the table grows may be
 * lost (a later miss puts it again).
 */
final class WireStreamCache {

  static final int WAYS = 8;
  private static final int MIN_SLOTS = 1024;

  private final int maxSlots;
  private volatile AtomicReferenceArray<InPlace.WireStream> slots;
  private final AtomicInteger taken = new AtomicInteger();

  /**
   * @param maxEntries the number of streams it must hold without loss (the series cache's size)
   */
  WireStreamCache(int maxEntries) {
    long want = Math.max(MIN_SLOTS, 4L * maxEntries);
    this.maxSlots = (int) Math.min(1 << 30, Long.highestOneBit(want - 1) << 1);
    this.slots = new AtomicReferenceArray<>(Math.min(MIN_SLOTS, maxSlots));
  }

  /** The entry with this key, or null. */
  InPlace.WireStream get(long keyHi, long keyLo) {
    AtomicReferenceArray<InPlace.WireStream> s = slots;
    int base = setOf(keyLo, s.length());
    for (int i = 0; i < WAYS; i++) {
      InPlace.WireStream ws = s.get(base + i);
      if (ws != null && ws.keyLo == keyLo && ws.keyHi == keyHi) {
        return ws;
      }
    }
    return null;
  }

  /**
   * Puts an entry (its key in {@code ws.keyHi}, {@code ws.keyLo}), replacing one if its set is
   * full.
   */
  void put(InPlace.WireStream ws) {
    AtomicReferenceArray<InPlace.WireStream> s = slots;
    if (place(s, ws) && taken.incrementAndGet() > s.length() / 4 && s.length() < maxSlots) {
      grow(s);
    }
  }

  /** Slots in use now (for tests and the memory figures). */
  int capacity() {
    return slots.length();
  }

  /** Places {@code ws}; true if it took a free slot. */
  private static boolean place(AtomicReferenceArray<InPlace.WireStream> s, InPlace.WireStream ws) {
    int base = setOf(ws.keyLo, s.length());
    for (int i = 0; i < WAYS; i++) {
      InPlace.WireStream cur = s.get(base + i);
      if (cur == null) {
        if (s.compareAndSet(base + i, null, ws)) {
          return true;
        }
      } else if (cur.keyLo == ws.keyLo && cur.keyHi == ws.keyHi) {
        return false; // put by another thread meanwhile
      }
    }
    s.set(base + ((int) (ws.keyHi >>> 32) & (WAYS - 1)), ws); // a victim picked by the key
    return false;
  }

  private synchronized void grow(AtomicReferenceArray<InPlace.WireStream> old) {
    if (slots != old) {
      return;
    }
    AtomicReferenceArray<InPlace.WireStream> bigger = new AtomicReferenceArray<>(old.length() * 2);
    int n = 0;
    for (int i = 0; i < old.length(); i++) {
      InPlace.WireStream ws = old.get(i);
      if (ws != null && place(bigger, ws)) {
        n++;
      }
    }
    taken.set(n);
    slots = bigger;
  }

  /** The first slot of the key's set: sets are {@value #WAYS} slots apart. */
  private static int setOf(long keyLo, int length) {
    return (int) (keyLo >>> 3) & (length - 1) & -WAYS;
  }
}
