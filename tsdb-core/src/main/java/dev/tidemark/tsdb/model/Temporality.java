package dev.tidemark.tsdb.model;

/**
 * OTLP aggregation temporality, as stored in bits 0-1 of the ForwardIndex flags. Ids are persisted.
 */
public enum Temporality {
  UNSPECIFIED(0),
  CUMULATIVE(1),
  DELTA(2);

  private final int id;

  Temporality(int id) {
    this.id = id;
  }

  /** The persisted id. */
  public int id() {
    return id;
  }

  /**
   * The temporality with this persisted id.
   *
   * @throws IllegalArgumentException for an unknown id (3)
   */
  public static Temporality fromId(int id) {
    return switch (id) {
      case 0 -> UNSPECIFIED;
      case 1 -> CUMULATIVE;
      case 2 -> DELTA;
      default -> throw new IllegalArgumentException("unknown temporality id " + id);
    };
  }
}
