package dev.tidemark.tsdb.model;

/**
 * What a native histogram sample says about counter resets, Prometheus' {@code CounterResetHint}:
 * unknown (a reader decides by comparing with the previous sample), a reset, certainly no reset, or
 * a gauge histogram (resets do not apply). The ids are persisted in the histogram chunk ({@code
 * docs/format.md}, TimeSeries encoding {@code 0x03}) and are Prometheus' numbers: never renumber.
 */
public enum CounterResetHint {
  UNKNOWN(0),
  COUNTER_RESET(1),
  NOT_COUNTER_RESET(2),
  GAUGE(3);

  private static final CounterResetHint[] BY_ID = {
    UNKNOWN, COUNTER_RESET, NOT_COUNTER_RESET, GAUGE
  };

  private final int id;

  CounterResetHint(int id) {
    this.id = id;
  }

  /** The persisted id, 0..3. */
  public int id() {
    return id;
  }

  /**
   * The hint with this persisted id.
   *
   * @throws IllegalArgumentException for an id outside 0..3
   */
  public static CounterResetHint fromId(int id) {
    if (id < 0 || id >= BY_ID.length) {
      throw new IllegalArgumentException("unknown counter reset hint id " + id);
    }
    return BY_ID[id];
  }
}
