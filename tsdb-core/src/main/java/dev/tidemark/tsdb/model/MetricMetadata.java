package dev.tidemark.tsdb.model;

import java.util.Objects;

/**
 * What the ForwardIndex stores about a series besides its labels: the OTLP metric type, the unit
 * and the flags byte (bits 0-1 temporality, bit 2 monotonic, bits 3-7 zero). For a delta sum that
 * the translator accumulated, the temporality describes the stored values (cumulative).
 *
 * @param type the OTLP type
 * @param unit the OTLP unit; {@code ""} when absent (stored as an absent OptionalNonEmptyUtf8)
 * @param temporality the temporality of the stored values
 * @param monotonic the OTLP monotonic flag (meaningful for sums only)
 */
public record MetricMetadata(
    MetricType type, String unit, Temporality temporality, boolean monotonic) {

  /** Metadata of a series that arrived without any. */
  public static final MetricMetadata UNKNOWN =
      new MetricMetadata(MetricType.UNKNOWN, "", Temporality.UNSPECIFIED, false);

  private static final int MONOTONIC_BIT = 1 << 2;

  public MetricMetadata {
    Objects.requireNonNull(type, "type");
    Objects.requireNonNull(temporality, "temporality");
    unit = unit == null ? "" : unit;
  }

  /** The persisted flags byte. */
  public int flags() {
    return temporality.id() | (monotonic ? MONOTONIC_BIT : 0);
  }

  /**
   * Metadata from persisted fields.
   *
   * @throws IllegalArgumentException if the type id is unknown or reserved flag bits are set
   */
  public static MetricMetadata fromPersisted(int typeId, String unit, int flags) {
    if ((flags & ~0x07) != 0) {
      throw new IllegalArgumentException(
          "reserved flag bits set: 0x" + Integer.toHexString(flags & 0xFF));
    }
    return new MetricMetadata(
        MetricType.fromId(typeId),
        unit,
        Temporality.fromId(flags & 0x03),
        (flags & MONOTONIC_BIT) != 0);
  }
}
