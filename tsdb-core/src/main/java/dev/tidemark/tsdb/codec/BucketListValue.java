package dev.tidemark.tsdb.codec;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;

/**
 * The BucketList value ({@code docs/format.md}): {@code FixedElementArray<(bucket_size_code: u8,
 * time_bucket: u32 LE)>}, five bytes per bucket, sorted by time_bucket (unsigned) then size code,
 * without duplicates. The element count is the value length divided by 5.
 *
 * <p>Stateless and thread-safe.
 */
public final class BucketListValue {

  /** Bytes per element: size code (1) + time_bucket (4). */
  public static final int ELEMENT_SIZE = 5;

  private static final String WHAT = "BucketList value";

  private BucketListValue() {}

  /** Encodes the buckets, sorted by {@link TimeBucket#compareTo} and with duplicates removed. */
  public static byte[] encode(Collection<TimeBucket> buckets) {
    TimeBucket[] sorted = buckets.toArray(new TimeBucket[0]);
    Arrays.sort(sorted);
    int n = 0;
    for (int i = 0; i < sorted.length; i++) {
      if (n == 0 || !sorted[i].equals(sorted[n - 1])) {
        sorted[n++] = sorted[i];
      }
    }
    ValueWriter w = new ValueWriter(n * ELEMENT_SIZE);
    for (int i = 0; i < n; i++) {
      w.putU8(sorted[i].sizeCode()).putU32(sorted[i].startMinutes());
    }
    return w.finish();
  }

  /**
   * Decodes the buckets, in stored (ascending) order.
   *
   * @throws CorruptRecordException if the length is not a multiple of 5, a size code or start is
   *     invalid, or the elements are not strictly ascending
   */
  public static List<TimeBucket> decode(byte[] value) {
    if (value.length % ELEMENT_SIZE != 0) {
      throw new CorruptRecordException(
          WHAT
              + ": length "
              + value.length
              + " is not a multiple of the element size "
              + ELEMENT_SIZE);
    }
    ValueReader r = new ValueReader(value, WHAT);
    List<TimeBucket> out = new ArrayList<>(value.length / ELEMENT_SIZE);
    TimeBucket prev = null;
    while (r.hasRemaining()) {
      int at = r.position();
      int code = r.u8();
      int start = r.u32();
      TimeBucket b;
      try {
        b = new TimeBucket(code, start);
      } catch (IllegalArgumentException e) {
        throw new CorruptRecordException(
            WHAT + ": invalid bucket at offset " + at + ": " + e.getMessage(), e);
      }
      if (prev != null && prev.compareTo(b) >= 0) {
        throw new CorruptRecordException(
            WHAT + ": bucket at offset " + at + " (" + b + ") does not sort after " + prev);
      }
      out.add(b);
      prev = b;
    }
    return out;
  }
}
