package dev.tidemark.tsdb.model;

/**
 * A native histogram that Prometheus would refuse: thrown by the constructors of {@link
 * HistogramLayout}, {@link IntegerHistogram} and {@link FloatHistogram}. {@link #reason()} is the
 * stable cause a receiver reports per data point (OTLP partial success); the message names the
 * values, in the words of Prometheus' {@code model/histogram} errors where one exists.
 */
public final class InvalidHistogramException extends IllegalArgumentException {
  private static final long serialVersionUID = 1L;

  /** Why a histogram is invalid; one constant per Prometheus validation error, plus our limits. */
  public enum Reason {
    /** Schema outside −4..8 and not −53 (custom buckets). */
    INVALID_SCHEMA,
    /** A span after the first (exponential) or any span (custom buckets) has a negative offset. */
    SPAN_NEGATIVE_OFFSET,
    /** A span has a negative length (Prometheus' lengths are unsigned). */
    SPAN_NEGATIVE_LENGTH,
    /** The spans' lengths add up to a different number than the buckets given. */
    SPANS_BUCKETS_MISMATCH,
    /** A bucket's (absolute) count is negative. */
    NEGATIVE_BUCKET_COUNT,
    /** The observation count of a float histogram is negative. */
    NEGATIVE_COUNT,
    /** The count differs from the buckets' total (sum not NaN). */
    COUNT_MISMATCH,
    /** The count is below the buckets' total (sum NaN). */
    COUNT_NOT_BIG_ENOUGH,
    /** A custom bound is NaN. */
    CUSTOM_BOUNDS_NAN,
    /** Custom bounds are not strictly increasing. */
    CUSTOM_BOUNDS_NOT_INCREASING,
    /** The last custom bound is +Inf (it is implied and must not be given). */
    CUSTOM_BOUNDS_INFINITE,
    /** Fewer custom bounds than the spans reach. */
    CUSTOM_BOUNDS_TOO_FEW,
    /** A custom-buckets histogram has a non-zero zero count. */
    CUSTOM_BUCKETS_ZERO_COUNT,
    /** A custom-buckets histogram has a non-zero zero threshold. */
    CUSTOM_BUCKETS_ZERO_THRESHOLD,
    /** A custom-buckets histogram has negative spans or buckets. */
    CUSTOM_BUCKETS_NEGATIVE_BUCKETS,
    /** An exponential histogram has custom bounds. */
    EXPONENTIAL_WITH_CUSTOM_BOUNDS,
    /**
     * More spans, buckets or custom bounds on one side than {@link HistogramLayout#MAX_BUCKETS}
     * (Tidemark's bound, not Prometheus').
     */
    TOO_MANY_BUCKETS
  }

  private final Reason reason;

  public InvalidHistogramException(Reason reason, String message) {
    super(message);
    this.reason = reason;
  }

  public Reason reason() {
    return reason;
  }
}
