package dev.tidemark.tsdb.append;

/**
 * Why the engine refused a sample. The receiver reports these, with counts, in OTLP partial
 * success. The codes are stable (they appear in metrics and messages).
 */
public enum RejectReason {
  /** Older than the out-of-order window behind the newest sample of its series. */
  OUT_OF_ORDER("out of order sample"),
  /** Same timestamp as a stored sample, different value bits. */
  DUPLICATE("duplicate sample for timestamp"),
  /** Outside the retention. */
  TOO_OLD("too old sample"),
  /** Further ahead of the clock than the allowed future skew. */
  TOO_FAR_IN_FUTURE("sample too far in the future"),
  /** Before 1970, or labels without {@code __name__}. */
  INVALID("invalid sample"),
  /**
   * The series breaks a limit of the persisted format (a label name, value or the unit longer than
   * 65535 UTF-8 bytes, too many labels, ...; see {@link dev.tidemark.tsdb.codec.SeriesLimits}). The
   * {@link AppendResult#pointDetail point detail} names the field and the limit.
   */
  LIMIT_EXCEEDED("series exceeds a storage limit"),
  /**
   * The series is in none of the head's open buckets, and the head already holds its limit of
   * active series ({@code EngineConfig.maxActiveSeries}); a series already in the head is never
   * refused for it. The {@link AppendResult#pointDetail point detail} names the limit.
   */
  SERIES_LIMIT("series limit reached"),
  /**
   * A float sample for a series that holds native histogram samples in the same hour bucket, or a
   * histogram sample for one that holds float samples there: a series keeps one kind of sample per
   * bucket (Prometheus allows both, chunk by chunk; {@code docs/architecture.md}, Native
   * histograms).
   */
  KIND_CONFLICT("sample kind (float or native histogram) differs from the series' other samples");

  private final String description;

  RejectReason(String description) {
    this.description = description;
  }

  /** A short English description, Prometheus wording where one exists. */
  public String description() {
    return description;
  }
}
