package dev.tidemark.tsdb.model;

/**
 * The OTLP type a series came from, as stored in the ForwardIndex ({@code docs/format.md}).
 * Histogram {@code _bucket}/{@code _sum}/{@code _count} series carry {@link #HISTOGRAM}. The ids
 * are persisted: never renumber, never reuse a retired id.
 */
public enum MetricType {
  /** Data without metadata. */
  UNKNOWN(0),
  GAUGE(1),
  SUM(2),
  HISTOGRAM(3),
  EXPONENTIAL_HISTOGRAM(4),
  SUMMARY(5);

  private static final MetricType[] BY_ID = {
    UNKNOWN, GAUGE, SUM, HISTOGRAM, EXPONENTIAL_HISTOGRAM, SUMMARY
  };

  private final int id;

  MetricType(int id) {
    this.id = id;
  }

  /** The persisted id. */
  public int id() {
    return id;
  }

  /**
   * The type with this persisted id.
   *
   * @throws IllegalArgumentException for an unknown id
   */
  public static MetricType fromId(int id) {
    if (id < 0 || id >= BY_ID.length) {
      throw new IllegalArgumentException("unknown metric type id " + id);
    }
    return BY_ID[id];
  }
}
