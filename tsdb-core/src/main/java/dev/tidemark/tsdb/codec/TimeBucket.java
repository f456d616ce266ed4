package dev.tidemark.tsdb.codec;

/**
 * A time bucket: the window of time one set of bucket-scoped records covers ({@code
 * docs/format.md}, "Conventions").
 *
 * <p>The size code {@code n} (1..15) means {@code 2^(n-1)} hours: 1 = 1 h, 2 = 2 h, 3 = 4 h, …, 15
 * = 16384 h. It is the low nibble of the record tag and the first byte of a BucketList element. The
 * start is the {@code u32} number of minutes since the Unix epoch, held in an {@code int} and
 * treated as unsigned, so buckets reach up to minute {@code 2^32 - 1} (early in the year 10136). A
 * bucket of {@code h} hours starts where {@code minutes % (h * 60) == 0}.
 *
 * <p>Ordering ({@link #compareTo}) is by start (unsigned), then size code: the order of the
 * BucketList value and of the {@code time_bucket} field in keys.
 *
 * <p>Immutable and thread-safe.
 *
 * @param sizeCode the bucket-size code, 1..15
 * @param startMinutes minutes since the epoch of the bucket's start, an unsigned 32-bit value
 */
public record TimeBucket(int sizeCode, int startMinutes) implements Comparable<TimeBucket> {

  /** The size code ingestion uses: one-hour buckets. */
  public static final int ONE_HOUR = 1;

  /** The smallest size code (1 hour). */
  public static final int MIN_SIZE_CODE = 1;

  /** The largest size code (16384 hours), the most a 4-bit nibble holds. */
  public static final int MAX_SIZE_CODE = 15;

  /** The largest start, as an unsigned number of minutes: {@code 2^32 - 1}. */
  public static final long MAX_START_MINUTES = 0xFFFF_FFFFL;

  private static final long MILLIS_PER_MINUTE = 60_000L;

  /**
   * Validates the size code and the alignment of the start.
   *
   * @throws IllegalArgumentException if the size code is outside 1..15 or the start is not a
   *     multiple of the bucket's length in minutes
   */
  public TimeBucket {
    checkSizeCode(sizeCode);
    long start = Integer.toUnsignedLong(startMinutes);
    long minutes = minutesOf(sizeCode);
    if (start % minutes != 0) {
      throw new IllegalArgumentException(
          "startMinutes "
              + start
              + " is not aligned to a bucket of size code "
              + sizeCode
              + " ("
              + minutes
              + " minutes)");
    }
  }

  /**
   * The bucket of the given size that contains the timestamp.
   *
   * @param timestampMillis milliseconds since the Unix epoch, 0 up to the last millisecond of
   *     minute {@code 2^32 - 1}
   * @throws IllegalArgumentException for a negative timestamp, one beyond the u32-minutes range, or
   *     a size code outside 1..15
   */
  public static TimeBucket containing(long timestampMillis, int sizeCode) {
    checkSizeCode(sizeCode);
    if (timestampMillis < 0) {
      throw new IllegalArgumentException(
          "timestampMillis must not be negative (before 1970), was " + timestampMillis);
    }
    long minute = timestampMillis / MILLIS_PER_MINUTE;
    if (minute > MAX_START_MINUTES) {
      throw new IllegalArgumentException(
          "timestampMillis "
              + timestampMillis
              + " is beyond the last representable minute (2^32 - 1 minutes after the epoch)");
    }
    long start = minute - minute % minutesOf(sizeCode);
    return new TimeBucket(sizeCode, (int) start);
  }

  /** The start as an unsigned number of minutes since the epoch. */
  public long startMinutesUnsigned() {
    return Integer.toUnsignedLong(startMinutes);
  }

  /** The bucket length in hours: {@code 2^(sizeCode-1)}. */
  public int sizeHours() {
    return 1 << (sizeCode - 1);
  }

  /** The bucket length in minutes. */
  public long durationMinutes() {
    return minutesOf(sizeCode);
  }

  /** The bucket length in milliseconds. */
  public long durationMillis() {
    return minutesOf(sizeCode) * MILLIS_PER_MINUTE;
  }

  /** The first millisecond of the bucket (inclusive). */
  public long startMillis() {
    return startMinutesUnsigned() * MILLIS_PER_MINUTE;
  }

  /** The first millisecond after the bucket (exclusive end). */
  public long endMillis() {
    return startMillis() + durationMillis();
  }

  /** Whether {@code timestampMillis} lies in {@code [startMillis(), endMillis())}. */
  public boolean contains(long timestampMillis) {
    return timestampMillis >= startMillis() && timestampMillis < endMillis();
  }

  /**
   * The bucket of the same size that follows this one.
   *
   * @throws IllegalStateException if its start would not fit in 32 bits
   */
  public TimeBucket next() {
    long nextStart = startMinutesUnsigned() + minutesOf(sizeCode);
    if (nextStart > MAX_START_MINUTES) {
      throw new IllegalStateException(
          "no bucket after " + this + ": start would exceed 2^32 - 1 minutes");
    }
    return new TimeBucket(sizeCode, (int) nextStart);
  }

  /** By start (unsigned), then size code. */
  @Override
  public int compareTo(TimeBucket o) {
    int c = Integer.compareUnsigned(startMinutes, o.startMinutes);
    return c != 0 ? c : Integer.compare(sizeCode, o.sizeCode);
  }

  @Override
  public String toString() {
    return "TimeBucket[sizeCode="
        + sizeCode
        + " ("
        + sizeHours()
        + " h), startMinutes="
        + startMinutesUnsigned()
        + "]";
  }

  private static long minutesOf(int sizeCode) {
    return 60L << (sizeCode - 1);
  }

  private static void checkSizeCode(int sizeCode) {
    if (sizeCode < MIN_SIZE_CODE || sizeCode > MAX_SIZE_CODE) {
      throw new IllegalArgumentException("sizeCode must be in 1..15, was " + sizeCode);
    }
  }
}
