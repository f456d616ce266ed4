package dev.tidemark.tsdb.model;

/**
 * The Prometheus TYPE of a metric family (contract §1.6). The translator makes the first four and
 * {@code unknown}; {@code gaugehistogram}, {@code info} and {@code stateset} come only from remote
 * write metadata.
 *
 * <p>{@link #id()} is persisted (the Metadata record, {@code docs/format.md}): the numbers of
 * Prometheus' remote-write {@code MetricMetadata.MetricType} enum, never renumbered or reused.
 */
public enum PromType {
  COUNTER("counter", 1),
  GAUGE("gauge", 2),
  HISTOGRAM("histogram", 3),
  SUMMARY("summary", 5),
  UNKNOWN("unknown", 0),
  GAUGEHISTOGRAM("gaugehistogram", 4),
  INFO("info", 6),
  STATESET("stateset", 7);

  private static final PromType[] BY_ID = new PromType[8];

  static {
    for (PromType t : values()) {
      BY_ID[t.id] = t;
    }
  }

  private final String text;
  private final int id;

  PromType(String text, int id) {
    this.text = text;
    this.id = id;
  }

  /** The persisted id (remote write's enum number). */
  public int id() {
    return id;
  }

  /** The type with this id, or null for an id no type has. */
  public static PromType fromId(int id) {
    return id >= 0 && id < BY_ID.length ? BY_ID[id] : null;
  }

  /** The exposition-format word ({@code counter}, ...). */
  public String text() {
    return text;
  }
}
