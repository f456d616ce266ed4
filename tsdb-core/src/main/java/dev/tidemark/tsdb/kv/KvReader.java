package dev.tidemark.tsdb.kv;

/**
 * Read access to an ordered byte-key space. Keys compare as unsigned bytes ({@link
 * java.util.Arrays#compareUnsigned(byte[], byte[])}).
 */
public interface KvReader {

  /** The value stored under {@code key}, or null. The returned array belongs to the caller. */
  byte[] get(byte[] key);

  /**
   * An ascending cursor over keys in {@code [fromInclusive, toExclusive)}; a null bound is
   * unbounded. The caller must close it.
   */
  KvCursor scan(byte[] fromInclusive, byte[] toExclusive);

  /** An ascending cursor over every key that starts with {@code prefix}. */
  default KvCursor scanPrefix(byte[] prefix) {
    return scan(prefix, KeyRanges.prefixEnd(prefix));
  }
}
