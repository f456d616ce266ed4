package dev.tidemark.tsdb.model;

/**
 * One native histogram sample value, Prometheus' model: a {@link HistogramLayout} (schema, zero
 * threshold, spans, custom bounds), a {@link CounterResetHint}, the observation count and sum, the
 * zero bucket's count and one count per bucket of the layout. Two kinds, as in Prometheus: {@link
 * IntegerHistogram} (unsigned 64-bit counts, buckets as deltas between neighbouring buckets) and
 * {@link FloatHistogram} (absolute float counts). Immutable, validated at construction, equal when
 * bit-exact equal (the sum compares by its raw bits, so the staleness marker {@code
 * 0x7ff0000000000002} and every NaN payload are kept and told apart).
 */
public sealed interface NativeHistogram permits IntegerHistogram, FloatHistogram {

  /** The sum of a histogram that marks its series stale (Prometheus' {@code value.StaleNaN}). */
  long STALE_SUM_BITS = 0x7ff0000000000002L;

  HistogramLayout layout();

  CounterResetHint hint();

  /** The sum of observations as raw IEEE-754 bits. */
  long sumBits();

  /** The sum of observations. */
  default double sum() {
    return Double.longBitsToDouble(sumBits());
  }

  /** Whether the counts are floats ({@link FloatHistogram}). */
  boolean isFloat();

  /** Whether the sum is the staleness marker. */
  default boolean isStale() {
    return sumBits() == STALE_SUM_BITS;
  }
}
