package dev.tidemark.tsdb.model;

import dev.tidemark.tsdb.model.InvalidHistogramException.Reason;
import java.util.Arrays;

/**
 * The bucket layout of a native histogram: what stays the same from one sample of a series to the
 * next as long as no bucket appears or disappears. Prometheus' model ({@code
 * model/histogram/histogram.go}):
 *
 * <ul>
 *   <li>{@code schema}: {@link #MIN_EXPONENTIAL_SCHEMA}..{@link #MAX_EXPONENTIAL_SCHEMA} for
 *       exponential buckets (bucket {@code i} of the positive side is {@code (base^(i-1), base^i]}
 *       with {@code base = 2^(2^-schema)}), or {@link #CUSTOM_BUCKETS_SCHEMA} for custom buckets
 *       whose upper bounds are {@link #customValues()} (plus an implied +Inf).
 *   <li>{@code zeroThreshold}: the width of the zero bucket {@code [-t, t]} (exponential only; 0
 *       for custom buckets). Kept bit-exact.
 *   <li>positive and negative spans: runs of consecutive bucket indices, each {@code (offset,
 *       length)}; the first span's offset is the index of its first bucket, every later offset the
 *       gap after the previous span (never negative). Custom buckets have positive spans only, and
 *       every offset is non-negative.
 * </ul>
 *
 * <p>Spans are held as flat arrays {@code [offset0, length0, offset1, length1, ...]}. Immutable and
 * thread-safe; the constructor refuses what Prometheus' {@code Validate} refuses about the layout
 * ({@link InvalidHistogramException} with its {@link Reason}); the counts are checked by {@link
 * IntegerHistogram} and {@link FloatHistogram}. Equality is bit-exact (the zero threshold and the
 * custom bounds compare by their raw bits).
 */
public final class HistogramLayout {
  /** The smallest exponential schema (each bucket spans a factor of 2^16). */
  public static final int MIN_EXPONENTIAL_SCHEMA = -4;

  /** The largest exponential schema (256 buckets per power of two). */
  public static final int MAX_EXPONENTIAL_SCHEMA = 8;

  /** The schema of custom buckets (Prometheus' NHCB). */
  public static final int CUSTOM_BUCKETS_SCHEMA = -53;

  /**
   * Most spans, buckets or custom bounds on one side: 2^20. Schema 8 spans the whole double range
   * in about 537,000 buckets, so no real histogram reaches it; it bounds what a decoder allocates.
   */
  public static final int MAX_BUCKETS = 1 << 20;

  private static final int[] NO_SPANS = {};
  private static final double[] NO_VALUES = {};

  private final int schema;
  private final double zeroThreshold;
  private final int[] positiveSpans;
  private final int[] negativeSpans;
  private final double[] customValues;
  private final int positiveBucketCount;
  private final int negativeBucketCount;
  private final int hash;

  private HistogramLayout(
      int schema,
      double zeroThreshold,
      int[] positiveSpans,
      int[] negativeSpans,
      double[] customValues) {
    this.schema = schema;
    this.zeroThreshold = zeroThreshold;
    this.positiveSpans = positiveSpans;
    this.negativeSpans = negativeSpans;
    this.customValues = customValues;
    boolean custom = schema == CUSTOM_BUCKETS_SCHEMA;
    if (!custom && (schema < MIN_EXPONENTIAL_SCHEMA || schema > MAX_EXPONENTIAL_SCHEMA)) {
      throw new InvalidHistogramException(
          Reason.INVALID_SCHEMA,
          "histogram has an invalid schema, which must be between -4 and 8 for exponential"
              + " buckets, or -53 for custom buckets, got schema "
              + schema);
    }
    this.positiveBucketCount = checkSpans("positive side", positiveSpans, custom);
    this.negativeBucketCount = checkSpans("negative side", negativeSpans, custom);
    if (custom) {
      checkCustomBounds();
      if (Double.doubleToRawLongBits(zeroThreshold) != 0 && zeroThreshold != 0) {
        throw new InvalidHistogramException(
            Reason.CUSTOM_BUCKETS_ZERO_THRESHOLD,
            "custom buckets: must have zero threshold of 0, was " + zeroThreshold);
      }
      if (negativeSpans.length > 0) {
        throw new InvalidHistogramException(
            Reason.CUSTOM_BUCKETS_NEGATIVE_BUCKETS, "custom buckets: must not have negative spans");
      }
    } else if (customValues.length > 0) {
      throw new InvalidHistogramException(
          Reason.EXPONENTIAL_WITH_CUSTOM_BOUNDS,
          "histogram with exponential schema must not have custom bounds (schema "
              + schema
              + ", "
              + customValues.length
              + " bounds)");
    }
    int h = schema;
    h = 31 * h + Long.hashCode(Double.doubleToRawLongBits(zeroThreshold));
    h = 31 * h + Arrays.hashCode(positiveSpans);
    h = 31 * h + Arrays.hashCode(negativeSpans);
    for (double v : customValues) {
      h = 31 * h + Long.hashCode(Double.doubleToRawLongBits(v));
    }
    this.hash = h;
  }

  /**
   * An exponential layout (schema −4..8).
   *
   * @param positiveSpans {@code [offset, length, ...]}, copied; empty or null for none
   * @param negativeSpans the same for the negative side
   * @throws InvalidHistogramException if Prometheus would refuse the layout
   */
  public static HistogramLayout exponential(
      int schema, double zeroThreshold, int[] positiveSpans, int[] negativeSpans) {
    if (schema == CUSTOM_BUCKETS_SCHEMA) {
      throw new InvalidHistogramException(
          Reason.INVALID_SCHEMA,
          "schema -53 is custom buckets, not exponential: use HistogramLayout.custom");
    }
    return new HistogramLayout(
        schema, zeroThreshold, copy(positiveSpans), copy(negativeSpans), NO_VALUES);
  }

  /**
   * A custom-buckets layout (schema {@link #CUSTOM_BUCKETS_SCHEMA}, zero threshold 0, positive
   * spans only).
   *
   * @param customValues the finite upper bounds, strictly increasing, copied (+Inf is implied)
   * @throws InvalidHistogramException if Prometheus would refuse the layout
   */
  public static HistogramLayout custom(int[] positiveSpans, double[] customValues) {
    return new HistogramLayout(
        CUSTOM_BUCKETS_SCHEMA,
        0.0,
        copy(positiveSpans),
        NO_SPANS,
        customValues == null || customValues.length == 0 ? NO_VALUES : customValues.clone());
  }

  /**
   * Any layout, as a decoder reads it: the arrays are taken, not copied (the caller gives them up).
   *
   * @throws InvalidHistogramException if Prometheus would refuse the layout
   */
  public static HistogramLayout of(
      int schema,
      double zeroThreshold,
      int[] positiveSpans,
      int[] negativeSpans,
      double[] customValues) {
    return new HistogramLayout(
        schema,
        zeroThreshold,
        positiveSpans.length == 0 ? NO_SPANS : positiveSpans,
        negativeSpans.length == 0 ? NO_SPANS : negativeSpans,
        customValues.length == 0 ? NO_VALUES : customValues);
  }

  private static int[] copy(int[] spans) {
    return spans == null || spans.length == 0 ? NO_SPANS : spans.clone();
  }

  /** Checks one side's spans; returns the number of buckets they need. */
  private static int checkSpans(String side, int[] spans, boolean custom) {
    if ((spans.length & 1) != 0) {
      throw new IllegalArgumentException(
          side + ": spans are (offset, length) pairs, got " + spans.length + " ints");
    }
    if (spans.length / 2 > MAX_BUCKETS) {
      throw new InvalidHistogramException(
          Reason.TOO_MANY_BUCKETS,
          side + ": " + spans.length / 2 + " spans, more than the limit of " + MAX_BUCKETS);
    }
    long buckets = 0;
    for (int n = 0; n < spans.length; n += 2) {
      int offset = spans[n];
      int length = spans[n + 1];
      if (offset < 0 && (n > 0 || custom)) {
        throw new InvalidHistogramException(
            Reason.SPAN_NEGATIVE_OFFSET,
            (custom ? "custom buckets: " : side + ": ")
                + "span number "
                + (n / 2 + 1)
                + " with offset "
                + offset
                + ": histogram has a span whose offset is negative");
      }
      if (length < 0) {
        throw new InvalidHistogramException(
            Reason.SPAN_NEGATIVE_LENGTH,
            side + ": span number " + (n / 2 + 1) + " has negative length " + length);
      }
      buckets += length;
    }
    if (buckets > MAX_BUCKETS) {
      throw new InvalidHistogramException(
          Reason.TOO_MANY_BUCKETS,
          side + ": spans need " + buckets + " buckets, more than the limit of " + MAX_BUCKETS);
    }
    return (int) buckets;
  }

  private void checkCustomBounds() {
    if (customValues.length > MAX_BUCKETS) {
      throw new InvalidHistogramException(
          Reason.TOO_MANY_BUCKETS,
          "custom buckets: " + customValues.length + " bounds, more than " + MAX_BUCKETS);
    }
    double prev = Double.NEGATIVE_INFINITY;
    for (int i = 0; i < customValues.length; i++) {
      double curr = customValues[i];
      if (Double.isNaN(curr)) {
        throw new InvalidHistogramException(
            Reason.CUSTOM_BOUNDS_NAN, "custom buckets: histogram custom bounds must not be NaN");
      }
      if (i > 0 && curr <= prev) {
        throw new InvalidHistogramException(
            Reason.CUSTOM_BOUNDS_NOT_INCREASING,
            "custom buckets: previous bound is "
                + prev
                + " and current is "
                + curr
                + ": histogram custom bounds must be in strictly increasing order");
      }
      prev = curr;
    }
    if (prev == Double.POSITIVE_INFINITY) {
      throw new InvalidHistogramException(
          Reason.CUSTOM_BOUNDS_INFINITE,
          "custom buckets: last +Inf bound must not be explicitly defined");
    }
    long reach = 0;
    for (int n = 0; n < positiveSpans.length; n += 2) {
      reach += (long) positiveSpans[n] + positiveSpans[n + 1];
    }
    if (customValues.length + 1L < reach) {
      throw new InvalidHistogramException(
          Reason.CUSTOM_BOUNDS_TOO_FEW,
          "custom buckets: only "
              + customValues.length
              + " custom bounds defined which is insufficient to cover total span length of "
              + reach);
    }
  }

  public int schema() {
    return schema;
  }

  /** Whether the schema is {@link #CUSTOM_BUCKETS_SCHEMA}. */
  public boolean usesCustomBuckets() {
    return schema == CUSTOM_BUCKETS_SCHEMA;
  }

  public double zeroThreshold() {
    return zeroThreshold;
  }

  /** A copy of the positive spans, {@code [offset, length, ...]}. */
  public int[] positiveSpans() {
    return positiveSpans.clone();
  }

  /** A copy of the negative spans, {@code [offset, length, ...]}. */
  public int[] negativeSpans() {
    return negativeSpans.clone();
  }

  /** Number of positive spans. */
  public int positiveSpanCount() {
    return positiveSpans.length / 2;
  }

  /** Number of negative spans. */
  public int negativeSpanCount() {
    return negativeSpans.length / 2;
  }

  /** Offset of positive span {@code i}; {@link #positiveSpanLength} its length. */
  public int positiveSpanOffset(int i) {
    return positiveSpans[2 * i];
  }

  public int positiveSpanLength(int i) {
    return positiveSpans[2 * i + 1];
  }

  public int negativeSpanOffset(int i) {
    return negativeSpans[2 * i];
  }

  public int negativeSpanLength(int i) {
    return negativeSpans[2 * i + 1];
  }

  /** Buckets the positive spans hold (the sum of their lengths). */
  public int positiveBucketCount() {
    return positiveBucketCount;
  }

  /** Buckets the negative spans hold. */
  public int negativeBucketCount() {
    return negativeBucketCount;
  }

  /** A copy of the custom bounds; empty for an exponential schema. */
  public double[] customValues() {
    return customValues.clone();
  }

  public int customValueCount() {
    return customValues.length;
  }

  public double customValue(int i) {
    return customValues[i];
  }

  @Override
  public boolean equals(Object o) {
    if (this == o) {
      return true;
    }
    if (!(o instanceof HistogramLayout other) || hash != other.hash) {
      return false;
    }
    if (schema != other.schema
        || Double.doubleToRawLongBits(zeroThreshold)
            != Double.doubleToRawLongBits(other.zeroThreshold)
        || !Arrays.equals(positiveSpans, other.positiveSpans)
        || !Arrays.equals(negativeSpans, other.negativeSpans)
        || customValues.length != other.customValues.length) {
      return false;
    }
    for (int i = 0; i < customValues.length; i++) {
      if (Double.doubleToRawLongBits(customValues[i])
          != Double.doubleToRawLongBits(other.customValues[i])) {
        return false;
      }
    }
    return true;
  }

  /** Whether the custom bounds of both layouts are the same bits. */
  public boolean sameCustomValues(HistogramLayout other) {
    if (customValues.length != other.customValues.length) {
      return false;
    }
    for (int i = 0; i < customValues.length; i++) {
      if (Double.doubleToRawLongBits(customValues[i])
          != Double.doubleToRawLongBits(other.customValues[i])) {
        return false;
      }
    }
    return true;
  }

  @Override
  public int hashCode() {
    return hash;
  }

  @Override
  public String toString() {
    return "{schema="
        + schema
        + ", zeroThreshold="
        + zeroThreshold
        + ", positiveSpans="
        + Arrays.toString(positiveSpans)
        + ", negativeSpans="
        + Arrays.toString(negativeSpans)
        + (customValues.length > 0 ? ", customValues=" + Arrays.toString(customValues) : "")
        + "}";
  }
}
