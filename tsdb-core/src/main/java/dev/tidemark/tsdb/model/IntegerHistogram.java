package dev.tidemark.tsdb.model;

import dev.tidemark.tsdb.model.InvalidHistogramException.Reason;
import java.util.Arrays;
import java.util.Objects;

/**
 * A native histogram with integer counts, Prometheus' {@code histogram.Histogram}: the count and
 * the zero count are unsigned 64-bit integers held in a {@code long} (compare with {@link
 * Long#compareUnsigned}); the buckets of each side are <em>deltas</em>: the first bucket's count,
 * then each bucket's count minus the previous one's (as the OTLP and remote-write wire forms and
 * Prometheus' chunks carry them). Immutable and thread-safe; see {@link NativeHistogram}.
 *
 * <p>Validation is Prometheus' {@code Histogram.Validate}: a bucket count (the running sum of the
 * deltas) below zero, spans needing a different number of buckets than given, a non-zero zero count
 * with custom buckets, and a count that differs from the zero count plus all buckets (or, when the
 * sum is NaN, is smaller: NaN observations count but land in no bucket) are refused with an {@link
 * InvalidHistogramException}. Sums wrap as Go's {@code uint64} do.
 */
public final class IntegerHistogram implements NativeHistogram {
  private static final long[] NONE = {};

  private final HistogramLayout layout;
  private final CounterResetHint hint;
  private final long count;
  private final long zeroCount;
  private final long sumBits;
  private final long[] positiveDeltas;
  private final long[] negativeDeltas;

  private IntegerHistogram(
      HistogramLayout layout,
      CounterResetHint hint,
      long count,
      long zeroCount,
      long sumBits,
      long[] positiveDeltas,
      long[] negativeDeltas) {
    this.layout = Objects.requireNonNull(layout, "layout");
    this.hint = Objects.requireNonNull(hint, "hint");
    this.count = count;
    this.zeroCount = zeroCount;
    this.sumBits = sumBits;
    this.positiveDeltas = positiveDeltas;
    this.negativeDeltas = negativeDeltas;
    check(layout, count, zeroCount, sumBits, positiveDeltas, negativeDeltas);
  }

  /**
   * A validated integer histogram; the arrays are copied.
   *
   * @param positiveDeltas the positive buckets as deltas, one per bucket of the layout
   * @throws InvalidHistogramException if Prometheus would refuse it
   */
  public static IntegerHistogram of(
      HistogramLayout layout,
      CounterResetHint hint,
      long count,
      long zeroCount,
      double sum,
      long[] positiveDeltas,
      long[] negativeDeltas) {
    return new IntegerHistogram(
        layout,
        hint,
        count,
        zeroCount,
        Double.doubleToRawLongBits(sum),
        copy(positiveDeltas),
        copy(negativeDeltas));
  }

  /** As {@link #of}, the sum given as raw bits and the arrays taken, not copied. */
  public static IntegerHistogram ofBits(
      HistogramLayout layout,
      CounterResetHint hint,
      long count,
      long zeroCount,
      long sumBits,
      long[] positiveDeltas,
      long[] negativeDeltas) {
    return new IntegerHistogram(
        layout,
        hint,
        count,
        zeroCount,
        sumBits,
        positiveDeltas.length == 0 ? NONE : positiveDeltas,
        negativeDeltas.length == 0 ? NONE : negativeDeltas);
  }

  private static long[] copy(long[] a) {
    return a == null || a.length == 0 ? NONE : a.clone();
  }

  /**
   * Prometheus' {@code Histogram.Validate} over counts given as arrays (the decoder checks every
   * sample it decodes through this, without building the object).
   *
   * @throws InvalidHistogramException if Prometheus would refuse the histogram
   */
  public static void check(
      HistogramLayout layout,
      long count,
      long zeroCount,
      long sumBits,
      long[] positiveDeltas,
      long[] negativeDeltas) {
    checkLength("positive side", layout.positiveBucketCount(), positiveDeltas.length);
    checkLength("negative side", layout.negativeBucketCount(), negativeDeltas.length);
    if (layout.usesCustomBuckets() && zeroCount != 0) {
      throw new InvalidHistogramException(
          Reason.CUSTOM_BUCKETS_ZERO_COUNT, "custom buckets: must have zero count of 0");
    }
    long total = zeroCount;
    total += bucketTotal("negative side", negativeDeltas);
    total += bucketTotal("positive side", positiveDeltas);
    if (Double.isNaN(Double.longBitsToDouble(sumBits))) {
      if (Long.compareUnsigned(total, count) > 0) {
        throw new InvalidHistogramException(
            Reason.COUNT_NOT_BIG_ENOUGH,
            Long.toUnsignedString(total)
                + " observations found in buckets, but the Count field is "
                + Long.toUnsignedString(count)
                + ": histogram's observation count should be at least the number of"
                + " observations found in the buckets");
      }
    } else if (total != count) {
      throw new InvalidHistogramException(
          Reason.COUNT_MISMATCH,
          Long.toUnsignedString(total)
              + " observations found in buckets, but the Count field is "
              + Long.toUnsignedString(count)
              + ": histogram's observation count should equal the number of observations found"
              + " in the buckets (in absence of NaN)");
    }
  }

  private static void checkLength(String side, int needed, int have) {
    if (needed != have) {
      throw new InvalidHistogramException(
          Reason.SPANS_BUCKETS_MISMATCH,
          side + ": spans need " + needed + " buckets, have " + have + " buckets");
    }
  }

  private static long bucketTotal(String side, long[] deltas) {
    long last = 0;
    long total = 0;
    for (int i = 0; i < deltas.length; i++) {
      long c = last + deltas[i];
      if (c < 0) {
        throw new InvalidHistogramException(
            Reason.NEGATIVE_BUCKET_COUNT,
            side
                + ": bucket number "
                + (i + 1)
                + " has observation count of "
                + c
                + ": histogram has a bucket whose observation count is negative");
      }
      last = c;
      total += c;
    }
    return total;
  }

  @Override
  public HistogramLayout layout() {
    return layout;
  }

  @Override
  public CounterResetHint hint() {
    return hint;
  }

  /** The observation count, unsigned. */
  public long count() {
    return count;
  }

  /** The zero bucket's count, unsigned. */
  public long zeroCount() {
    return zeroCount;
  }

  @Override
  public long sumBits() {
    return sumBits;
  }

  @Override
  public boolean isFloat() {
    return false;
  }

  /** A copy of the positive buckets as deltas. */
  public long[] positiveDeltas() {
    return positiveDeltas.clone();
  }

  /** A copy of the negative buckets as deltas. */
  public long[] negativeDeltas() {
    return negativeDeltas.clone();
  }

  /** Positive bucket {@code i} as stored: a delta to bucket {@code i - 1}. */
  public long positiveDelta(int i) {
    return positiveDeltas[i];
  }

  public long negativeDelta(int i) {
    return negativeDeltas[i];
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof IntegerHistogram h
        && count == h.count
        && zeroCount == h.zeroCount
        && sumBits == h.sumBits
        && hint == h.hint
        && layout.equals(h.layout)
        && Arrays.equals(positiveDeltas, h.positiveDeltas)
        && Arrays.equals(negativeDeltas, h.negativeDeltas);
  }

  @Override
  public int hashCode() {
    int h = layout.hashCode();
    h = 31 * h + hint.hashCode();
    h = 31 * h + Long.hashCode(count);
    h = 31 * h + Long.hashCode(zeroCount);
    h = 31 * h + Long.hashCode(sumBits);
    h = 31 * h + Arrays.hashCode(positiveDeltas);
    return 31 * h + Arrays.hashCode(negativeDeltas);
  }

  @Override
  public String toString() {
    return "IntegerHistogram{"
        + hint
        + ", layout="
        + layout
        + ", count="
        + Long.toUnsignedString(count)
        + ", zeroCount="
        + Long.toUnsignedString(zeroCount)
        + ", sum="
        + String.format("%016x", sumBits)
        + ", positive="
        + Arrays.toString(positiveDeltas)
        + ", negative="
        + Arrays.toString(negativeDeltas)
        + "}";
  }
}
