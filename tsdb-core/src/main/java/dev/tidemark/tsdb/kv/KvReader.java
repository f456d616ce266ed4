package dev.tidemark.tsdb.kv;

import java.util.ArrayList;
import java.util.List;

/**
 * Read access to an ordered byte-key space. Keys compare as unsigned bytes ({@link
 * java.util.Arrays#compareUnsigned(byte[], byte[])}).
 */
public interface KvReader {

  /** The value stored under {@code key}, or null. The returned array belongs to the caller. */
  byte[] get(byte[] key);

  /**
   * The values stored under {@code keys}, in their order (null where none): as many {@link #get}
   * calls, which a store may batch into one lookup (keys in ascending order read best).
   */
  default List<byte[]> multiGet(List<byte[]> keys) {
    List<byte[]> out = new ArrayList<>(keys.size());
    for (byte[] k : keys) {
      out.add(get(k));
    }
    return out;
  }

  /**
   * An ascending cursor over keys in {@code [fromInclusive, toExclusive)}; a null bound is
   * unbounded. The caller must close it.
   */
  KvCursor scan(byte[] fromInclusive, byte[] toExclusive);

  /** An ascending cursor over every key that starts with {@code prefix}. */
  default KvCursor scanPrefix(byte[] prefix) {
    return scan(prefix, KeyRanges.prefixEnd(prefix));
  }

  /**
   * The same data through reads that leave the store's caches as they are: for data read once and
   * then replaced, such as the frozen head parts a seal merges and deletes. A store without caches
   * returns this reader. A one-shot reader lives no longer than this one.
   */
  default KvReader oneShot() {
    return this;
  }
}
