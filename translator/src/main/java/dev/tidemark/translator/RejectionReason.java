package dev.tidemark.translator;

import dev.tidemark.tsdb.append.RejectReason;

/**
 * Why an OTLP data point was not written: the engine's {@link RejectReason}s plus the translator's
 * own. The names are stable (they appear in partial-success messages and metrics).
 */
public enum RejectionReason {
  OUT_OF_ORDER(RejectReason.OUT_OF_ORDER.description()),
  DUPLICATE(RejectReason.DUPLICATE.description()),
  TOO_OLD(RejectReason.TOO_OLD.description()),
  TOO_FAR_IN_FUTURE(RejectReason.TOO_FAR_IN_FUTURE.description()),
  INVALID(RejectReason.INVALID.description()),
  /**
   * A series of the point breaks a limit of the persisted format (a name or value longer than 65535
   * UTF-8 bytes, too many labels, ...); the detail names the field and the limit.
   */
  LIMIT_EXCEEDED(RejectReason.LIMIT_EXCEEDED.description()),
  /**
   * A series of the point is new to the head, which holds its limit of active series ({@code
   * --max-active-series}); the detail names the limit. Series already in the head are still
   * accepted.
   */
  SERIES_LIMIT(RejectReason.SERIES_LIMIT.description()),
  /**
   * A series of the point holds samples of the other kind (float or native histogram) in the same
   * hour bucket.
   */
  KIND_CONFLICT(RejectReason.KIND_CONFLICT.description()),
  /** The metric name is empty or only underscores after translation (§1.2 step 8). */
  INVALID_METRIC_NAME("invalid metric name"),
  /** An attribute key translates to an empty or all-underscore label name (§2.2). */
  INVALID_LABEL_NAME("invalid label name"),
  /** The metric's Prometheus TYPE differs from an earlier metric of the same name (§6). */
  TYPE_CONFLICT("metric type conflicts with an earlier metric of the same name"),
  /**
   * A name or value with a lone surrogate, which has no UTF-8 form (OTLP/JSON {@code "\ud800"}
   * escapes).
   */
  INVALID_UTF8("label name or value is not valid UTF-8"),
  /**
   * A number data point with neither {@code as_int} nor {@code as_double} ({@code metrics.proto}:
   * invalid).
   */
  MISSING_VALUE("number data point without a value"),
  /** {@code time_unix_nano} is 0 (§4.2). */
  ZERO_TIMESTAMP("data point without timestamp (time_unix_nano is 0)"),
  /** {@code time_unix_nano} does not fit a signed 64-bit nanosecond count. */
  INVALID_TIMESTAMP("timestamp out of range"),
  /** A sum or histogram with UNSPECIFIED or unknown aggregation temporality (§3.2). */
  INVALID_TEMPORALITY("invalid aggregation temporality"),
  /** A malformed histogram point (bucket counts vs bounds, unsorted or infinite bounds, counts). */
  INVALID_HISTOGRAM("invalid histogram data point"),
  /** Exponential histograms are configured to be dropped, or the scale is below -4. */
  UNSUPPORTED_EXPONENTIAL_HISTOGRAM("exponential histogram not supported"),
  /** Delta temporality and delta mode REJECT. */
  UNSUPPORTED_DELTA("delta temporality not accepted"),
  /** A delta point not newer than its stream's accumulated state (§3.7). */
  DELTA_OUT_OF_ORDER("out of order delta point"),
  /** A new delta stream beyond {@code maxStreams} (§3.7). */
  DELTA_STREAM_LIMIT("too many delta streams");

  private final String description;

  RejectionReason(String description) {
    this.description = description;
  }

  /** Short English description. */
  public String description() {
    return description;
  }

  /** The translator reason for an engine reason. */
  public static RejectionReason of(RejectReason engine) {
    return switch (engine) {
      case OUT_OF_ORDER -> OUT_OF_ORDER;
      case DUPLICATE -> DUPLICATE;
      case TOO_OLD -> TOO_OLD;
      case TOO_FAR_IN_FUTURE -> TOO_FAR_IN_FUTURE;
      case INVALID -> INVALID;
      case LIMIT_EXCEEDED -> LIMIT_EXCEEDED;
      case SERIES_LIMIT -> SERIES_LIMIT;
      case KIND_CONFLICT -> KIND_CONFLICT;
    };
  }
}
