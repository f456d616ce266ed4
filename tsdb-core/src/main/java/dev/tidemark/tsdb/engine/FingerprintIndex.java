package dev.tidemark.tsdb.engine;

import it.unimi.dsi.fastutil.longs.Long2IntOpenHashMap;
import java.util.Arrays;
import java.util.HashMap;
import java.util.function.IntToLongFunction;

/**
 * A head bucket's series ids by fingerprint: how the bucket finds a series by its labels, and the
 * collision-safe SeriesDictionary value (every id of the bucket whose labels hash to the same 128
 * bits). The high 64 bits map to the first id with them in two primitive arrays (about 20 bytes per
 * series, where a map entry, a key object and an id array per series cost about 90;
 * docs/architecture.md, "Memory at a million active series"). The low 64 bits are not kept: the
 * caller looks them up by id.
 *
 * <p>Guarded by the engine lock, as its {@link HeadBucket}.
 */
final class FingerprintIndex {

  private static final int NO_ID = -1;
  private static final int[] NO_MORE = new int[0];

  private final Long2IntOpenHashMap firstByHigh = new Long2IntOpenHashMap();

  /**
   * The further ids, in the order added, of series whose high 64 bits equal an earlier series':
   * empty unless two series of the bucket share them (odds about n²/2⁶⁵ for n series).
   */
  private final HashMap<Long, int[]> moreByHigh = new HashMap<>();

  FingerprintIndex() {
    firstByHigh.defaultReturnValue(NO_ID);
  }

  /**
   * Adds series {@code id}; returns the ids now sharing its whole fingerprint, in ascending order
   * and then {@code id} (normally just {@code id}).
   *
   * @param lowOf the low 64 bits of the fingerprint of an id already added
   */
  int[] add(long high, long low, int id, IntToLongFunction lowOf) {
    int first = firstByHigh.putIfAbsent(high, id);
    if (first == NO_ID) {
      return new int[] {id};
    }
    int[] more = moreByHigh.getOrDefault(high, new int[0]);
    moreByHigh.put(high, append(more, id));
    int[] same = new int[0];
    for (int other : append(more, first)) {
      if (lowOf.applyAsLong(other) == low) {
        same = append(same, other);
      }
    }
    Arrays.sort(same);
    return append(same, id);
  }

  /** The first id added whose high 64 bits are {@code high}, or -1. */
  int first(long high) {
    return firstByHigh.get(high);
  }

  /** The ids after {@link #first} with the same high 64 bits, in the order added (usually none). */
  int[] more(long high) {
    int[] more = moreByHigh.get(high);
    return more == null ? NO_MORE : more;
  }

  /** Removes the series added last (an append's rollback), whose high 64 bits are {@code high}. */
  void removeLast(long high) {
    int[] more = moreByHigh.remove(high);
    if (more == null) {
      firstByHigh.remove(high);
    } else if (more.length > 1) {
      moreByHigh.put(high, Arrays.copyOf(more, more.length - 1));
    }
  }

  private static int[] append(int[] ids, int id) {
    int[] out = Arrays.copyOf(ids, ids.length + 1);
    out[ids.length] = id;
    return out;
  }
}
