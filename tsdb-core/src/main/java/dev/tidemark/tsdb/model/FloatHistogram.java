package dev.tidemark.tsdb.model;

import dev.tidemark.tsdb.model.InvalidHistogramException.Reason;
import java.util.Objects;

/**
 * A native histogram with float counts, Prometheus' {@code histogram.FloatHistogram}: count, zero
 * count and every bucket are absolute {@code double}s (no deltas), what rates and other PromQL
 * results produce and what OTLP delta-to-cumulative work may give. Every double is kept bit-exact.
 * Immutable and thread-safe; see {@link NativeHistogram}.
 *
 * <p>Validation is Prometheus' {@code FloatHistogram.Validate}: spans needing a different number of
 * buckets than given, a negative bucket, zero count (or, with custom buckets, a non-zero one) or
 * count are refused with an {@link InvalidHistogramException}. As in Prometheus the count is not
 * compared with the buckets, and NaN counts pass (NaN is not below zero).
 */
public final class FloatHistogram implements NativeHistogram {
  private static final long[] NONE = {};

  private final HistogramLayout layout;
  private final CounterResetHint hint;
  private final long countBits;
  private final long zeroCountBits;
  private final long sumBits;
  private final long[] positiveBits;
  private final long[] negativeBits;

  private FloatHistogram(
      HistogramLayout layout,
      CounterResetHint hint,
      long countBits,
      long zeroCountBits,
      long sumBits,
      long[] positiveBits,
      long[] negativeBits) {
    this.layout = Objects.requireNonNull(layout, "layout");
    this.hint = Objects.requireNonNull(hint, "hint");
    this.countBits = countBits;
    this.zeroCountBits = zeroCountBits;
    this.sumBits = sumBits;
    this.positiveBits = positiveBits;
    this.negativeBits = negativeBits;
    check(layout, countBits, zeroCountBits, positiveBits, negativeBits);
  }

  /**
   * A validated float histogram; the arrays are copied.
   *
   * @param positive the absolute count of each positive bucket of the layout
   * @throws InvalidHistogramException if Prometheus would refuse it
   */
  public static FloatHistogram of(
      HistogramLayout layout,
      CounterResetHint hint,
      double count,
      double zeroCount,
      double sum,
      double[] positive,
      double[] negative) {
    return new FloatHistogram(
        layout,
        hint,
        Double.doubleToRawLongBits(count),
        Double.doubleToRawLongBits(zeroCount),
        Double.doubleToRawLongBits(sum),
        bits(positive),
        bits(negative));
  }

  /** As {@link #of}, every double given as raw bits and the arrays taken, not copied. */
  public static FloatHistogram ofBits(
      HistogramLayout layout,
      CounterResetHint hint,
      long countBits,
      long zeroCountBits,
      long sumBits,
      long[] positiveBits,
      long[] negativeBits) {
    return new FloatHistogram(
        layout,
        hint,
        countBits,
        zeroCountBits,
        sumBits,
        positiveBits.length == 0 ? NONE : positiveBits,
        negativeBits.length == 0 ? NONE : negativeBits);
  }

  private static long[] bits(double[] a) {
    if (a == null || a.length == 0) {
      return NONE;
    }
    long[] b = new long[a.length];
    for (int i = 0; i < a.length; i++) {
      b[i] = Double.doubleToRawLongBits(a[i]);
    }
    return b;
  }

  /**
   * Prometheus' {@code FloatHistogram.Validate} over counts given as raw bits (the decoder checks
   * every sample through this).
   *
   * @throws InvalidHistogramException if Prometheus would refuse the histogram
   */
  public static void check(
      HistogramLayout layout,
      long countBits,
      long zeroCountBits,
      long[] positiveBits,
      long[] negativeBits) {
    if (layout.positiveBucketCount() != positiveBits.length) {
      throw mismatch("positive side", layout.positiveBucketCount(), positiveBits.length);
    }
    if (layout.negativeBucketCount() != negativeBits.length) {
      throw mismatch("negative side", layout.negativeBucketCount(), negativeBits.length);
    }
    double zeroCount = Double.longBitsToDouble(zeroCountBits);
    if (layout.usesCustomBuckets()) {
      if (zeroCount != 0) {
        throw new InvalidHistogramException(
            Reason.CUSTOM_BUCKETS_ZERO_COUNT, "custom buckets: must have zero count of 0");
      }
    } else {
      checkBuckets("negative side", negativeBits);
      if (zeroCount < 0) {
        throw new InvalidHistogramException(
            Reason.NEGATIVE_BUCKET_COUNT,
            "zero bucket has observation count of "
                + zeroCount
                + ": histogram has a bucket whose observation count is negative");
      }
    }
    double count = Double.longBitsToDouble(countBits);
    if (count < 0) {
      throw new InvalidHistogramException(
          Reason.NEGATIVE_COUNT,
          "observation count is " + count + ": histogram's observation count is negative");
    }
    checkBuckets("positive side", positiveBits);
  }

  private static InvalidHistogramException mismatch(String side, int needed, int have) {
    return new InvalidHistogramException(
        Reason.SPANS_BUCKETS_MISMATCH,
        side + ": spans need " + needed + " buckets, have " + have + " buckets");
  }

  private static void checkBuckets(String side, long[] bits) {
    for (int i = 0; i < bits.length; i++) {
      double c = Double.longBitsToDouble(bits[i]);
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
    }
  }

  @Override
  public HistogramLayout layout() {
    return layout;
  }

  @Override
  public CounterResetHint hint() {
    return hint;
  }

  public double count() {
    return Double.longBitsToDouble(countBits);
  }

  public long countBits() {
    return countBits;
  }

  public double zeroCount() {
    return Double.longBitsToDouble(zeroCountBits);
  }

  public long zeroCountBits() {
    return zeroCountBits;
  }

  @Override
  public long sumBits() {
    return sumBits;
  }

  @Override
  public boolean isFloat() {
    return true;
  }

  /** Raw bits of positive bucket {@code i}'s absolute count. */
  public long positiveBits(int i) {
    return positiveBits[i];
  }

  public long negativeBits(int i) {
    return negativeBits[i];
  }

  /** A copy of the positive buckets' absolute counts. */
  public double[] positiveCounts() {
    return doubles(positiveBits);
  }

  /** A copy of the negative buckets' absolute counts. */
  public double[] negativeCounts() {
    return doubles(negativeBits);
  }

  private static double[] doubles(long[] bits) {
    double[] d = new double[bits.length];
    for (int i = 0; i < bits.length; i++) {
      d[i] = Double.longBitsToDouble(bits[i]);
    }
    return d;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof FloatHistogram h
        && countBits == h.countBits
        && zeroCountBits == h.zeroCountBits
        && sumBits == h.sumBits
        && hint == h.hint
        && layout.equals(h.layout)
        && java.util.Arrays.equals(positiveBits, h.positiveBits)
        && java.util.Arrays.equals(negativeBits, h.negativeBits);
  }

  @Override
  public int hashCode() {
    int h = layout.hashCode();
    h = 31 * h + hint.hashCode();
    h = 31 * h + Long.hashCode(countBits);
    h = 31 * h + Long.hashCode(zeroCountBits);
    h = 31 * h + Long.hashCode(sumBits);
    h = 31 * h + java.util.Arrays.hashCode(positiveBits);
    return 31 * h + java.util.Arrays.hashCode(negativeBits);
  }

  @Override
  public String toString() {
    return "FloatHistogram{"
        + hint
        + ", layout="
        + layout
        + ", count="
        + count()
        + ", zeroCount="
        + zeroCount()
        + ", sum="
        + String.format("%016x", sumBits)
        + ", positive="
        + java.util.Arrays.toString(positiveCounts())
        + ", negative="
        + java.util.Arrays.toString(negativeCounts())
        + "}";
  }
}
