package dev.tidemark.promql.engine;

/**
 * XXH64 with seed 0, the hash of Prometheus' {@code labels.Hash()} (xxhash over {@code name 0xFF
 * value 0xFF ...}, which is {@code Labels.canonicalBytes()}). limit_ratio picks series by it.
 */
final class XxHash64 {
  private static final long P1 = 0x9E3779B185EBCA87L;
  private static final long P2 = 0xC2B2AE3D27D4EB4FL;
  private static final long P3 = 0x165667B19E3779F9L;
  private static final long P4 = 0x85EBCA77C2B2AE63L;
  private static final long P5 = 0x27D4EB2F165667C5L;

  private XxHash64() {}

  static long hash(byte[] b) {
    int len = b.length;
    int i = 0;
    long h;
    if (len >= 32) {
      long v1 = P1 + P2;
      long v2 = P2;
      long v3 = 0;
      long v4 = -P1;
      while (i <= len - 32) {
        v1 = round(v1, getLong(b, i));
        v2 = round(v2, getLong(b, i + 8));
        v3 = round(v3, getLong(b, i + 16));
        v4 = round(v4, getLong(b, i + 24));
        i += 32;
      }
      h = Long.rotateLeft(v1, 1) + Long.rotateLeft(v2, 7) + Long.rotateLeft(v3, 12) + Long.rotateLeft(v4, 18);
      h = merge(h, v1);
      h = merge(h, v2);
      h = merge(h, v3);
      h = merge(h, v4);
    } else {
      h = P5;
    }
    h += len;
    while (i + 8 <= len) {
      h ^= round(0, getLong(b, i));
      h = Long.rotateLeft(h, 27) * P1 + P4;
      i += 8;
    }
    if (i + 4 <= len) {
      h ^= (getInt(b, i) & 0xFFFFFFFFL) * P1;
      h = Long.rotateLeft(h, 23) * P2 + P3;
      i += 4;
    }
    while (i < len) {
      h ^= (b[i] & 0xFFL) * P5;
      h = Long.rotateLeft(h, 11) * P1;
      i++;
    }
    h ^= h >>> 33;
    h *= P2;
    h ^= h >>> 29;
    h *= P3;
    h ^= h >>> 32;
    return h;
  }

  private static long round(long acc, long input) {
    acc += input * P2;
    acc = Long.rotateLeft(acc, 31);
    return acc * P1;
  }

  private static long merge(long acc, long val) {
    acc ^= round(0, val);
    return acc * P1 + P4;
  }

  private static long getLong(byte[] b, int i) {
    return (b[i] & 0xFFL)
        | (b[i + 1] & 0xFFL) << 8
        | (b[i + 2] & 0xFFL) << 16
        | (b[i + 3] & 0xFFL) << 24
        | (b[i + 4] & 0xFFL) << 32
        | (b[i + 5] & 0xFFL) << 40
        | (b[i + 6] & 0xFFL) << 48
        | (b[i + 7] & 0xFFL) << 56;
  }

  private static int getInt(byte[] b, int i) {
    return (b[i] & 0xFF) | (b[i + 1] & 0xFF) << 8 | (b[i + 2] & 0xFF) << 16 | (b[i + 3] & 0xFF) << 24;
  }

  /** The hash as Go's {@code float64(uint64)}. */
  static double unsignedToDouble(long h) {
    if (h >= 0) {
      return (double) h;
    }
    return ((double) ((h >>> 1) | (h & 1))) * 2.0;
  }
}
