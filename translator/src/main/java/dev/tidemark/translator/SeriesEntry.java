package dev.tidemark.translator;

import dev.tidemark.tsdb.model.Labels;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What the translator remembers per stream (cached by {@link StreamKey}, bounded): the label sets
 * of every series derived from it, and the per-stream memory the contract asks for: every {@code
 * le}/{@code quantile} series ever emitted (so a NoRecordedValue point marks all of them stale,
 * also bounds the point no longer lists) and the stable bucket range of an exponential histogram.
 * An entry evicted from the cache loses that memory (documented in {@link Translator}).
 *
 * <p>Immutable fields are safe to read without a lock; the mutable ones are guarded by {@code
 * this}.
 */
final class SeriesEntry {
  /** Labels without {@code __name__}; null if {@link #invalid}. */
  final Labels base;

  final RejectionReason invalid;
  final String invalidDetail;

  /** Attribute-collision warning to repeat for every request carrying this stream, or null. */
  final String warning;

  final String family;

  /** Gauge/counter series, or summary/histogram family series for quantiles. */
  Labels series;

  Labels sum;
  Labels count;
  Labels inf;

  // ---- guarded by this ----
  /** Every bucket series emitted, by raw bits of the bound (classic and exponential). */
  final Map<Long, Labels> buckets = new LinkedHashMap<>();

  /** Every quantile series emitted, by raw bits of the quantile. */
  final Map<Long, Labels> quantiles = new LinkedHashMap<>();

  boolean sumEmitted;

  /** Classic fast path: the last bounds and their series. */
  double[] lastBounds;

  Labels[] lastBucketSeries;
  double[] lastQuantiles;
  Labels[] lastQuantileSeries;

  /** Exponential: the stream's scale and the index ranges seen at that scale. */
  boolean expInit;

  int expScale;
  long posMin = Long.MAX_VALUE;
  long posMax = Long.MIN_VALUE;
  long negMin = Long.MAX_VALUE;
  long negMax = Long.MIN_VALUE;

  /**
   * The bucket series of the current layout (scale, ranges, zero threshold), by position: negative
   * from negMax down, then positive from posMin up; null where no bucket is written (bound outside
   * the double range, or inside the zero bucket).
   */
  Labels[] layoutNeg;

  Labels[] layoutPos;
  Labels layoutZero;
  int layoutScale;
  long layoutNegMin;
  long layoutNegMax;
  long layoutPosMin;
  long layoutPosMax;
  long layoutZeroBits = -1;

  SeriesEntry(Labels base, String family, String warning) {
    this.base = base;
    this.family = family;
    this.warning = warning;
    this.invalid = null;
    this.invalidDetail = null;
  }

  SeriesEntry(RejectionReason invalid, String detail) {
    this.base = null;
    this.family = null;
    this.warning = null;
    this.invalid = invalid;
    this.invalidDetail = detail;
  }
}
