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

  private static final Pool POOL = new Pool(Pool.DEFAULT_MAX);

  /**
   * The one instance equal to {@code m} that holders of many series keep (the head keeps one per
   * series: a million series of a few hundred metrics then share a few hundred instances, where a
   * receiver makes one per metric and request). At most {@link Pool#DEFAULT_MAX} distinct values
   * are kept (units are free text); beyond that {@code m} itself is returned.
   */
  public static MetricMetadata intern(MetricMetadata m) {
    return POOL.intern(m);
  }

  /** A bounded set of shared instances; thread-safe. */
  static final class Pool {
    static final int DEFAULT_MAX = 4096;

    private final int max;
    private final java.util.concurrent.ConcurrentHashMap<MetricMetadata, MetricMetadata> kept =
        new java.util.concurrent.ConcurrentHashMap<>();

    Pool(int max) {
      this.max = max;
    }

    MetricMetadata intern(MetricMetadata m) {
      MetricMetadata known = kept.get(m);
      if (known != null) {
        return known;
      }
      if (kept.size() >= max) {
        return m;
      }
      known = kept.putIfAbsent(m, m);
      return known != null ? known : m;
    }
  }

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
