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
 * <p>A gauge or counter stream (most of them) keeps only its one series; what only a histogram or
 * summary needs is in its {@link Composite}, and a {@code le} or {@code quantile} memory exists
 * only once such a series was emitted. The engine keeps the {@link Labels} instances handed to it
 * (and hangs its series reference on them), so a stream's series costs one label set in all.
 *
 * <p>Immutable fields are safe to read without a lock; the mutable ones (in {@link Composite}) are
 * guarded by the entry ({@code synchronized (entry)}).
 */
final class SeriesEntry {
  /**
   * The stream's key in the series cache, shared by every holder of this stream (the in-place
   * path's {@code WireStream}, delta state): set once, before the entry is published in the cache.
   * Null for a cumulative gauge or counter stream that only the in-place path's wire cache holds
   * ({@link SeriesResolver#lookupForWire}): nothing looks it up by key.
   */
  StreamKey key;

  /** Gauge/counter series; null for a histogram or summary stream and if {@link #invalid}. */
  final Labels series;

  /** Histogram or summary stream: its series and memory; else null. */
  final Composite composite;

  final RejectionReason invalid;

  /** The rejection's detail if {@link #invalid}, else the warning or null. */
  private final String note;

  SeriesEntry(Labels series, Composite composite, String warning) {
    this.series = series;
    this.composite = composite;
    this.invalid = null;
    this.note = warning;
  }

  SeriesEntry(RejectionReason invalid, String detail) {
    this.series = null;
    this.composite = null;
    this.invalid = invalid;
    this.note = detail;
  }

  /** Attribute-collision warning to repeat for every request carrying this stream, or null. */
  String warning() {
    return invalid == null ? note : null;
  }

  String invalidDetail() {
    return invalid != null ? note : null;
  }

  /** The series of a histogram or summary stream beyond its labels: created with the entry. */
  static final class Composite {
    /** Labels without {@code __name__}, from which {@code le} and quantile series are built. */
    final Labels base;

    final String family;
    final Labels sum;
    final Labels count;

    /** The {@code le="+Inf"} series; null for a summary. */
    final Labels inf;

    // ---- guarded by the entry ----
    /** Every bucket series emitted, by raw bits of the bound (classic and exponential); or null. */
    Map<Long, Labels> buckets;

    /** Every quantile series emitted, by raw bits of the quantile; or null. */
    Map<Long, Labels> quantiles;

    boolean sumEmitted;

    /** The native histogram series (the family's name on the base); made on first use. */
    Labels nativeSeries;

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
     * The bucket series of the current layout (scale, ranges, zero threshold), by position:
     * negative from negMax down, then positive from posMin up; null where no bucket is written
     * (bound outside the double range, or inside the zero bucket).
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

    Composite(Labels base, String family, Labels sum, Labels count, Labels inf) {
      this.base = base;
      this.family = family;
      this.sum = sum;
      this.count = count;
      this.inf = inf;
    }

    /** The bucket memory, created on first use; caller holds the entry's lock. */
    Map<Long, Labels> buckets() {
      if (buckets == null) {
        buckets = new LinkedHashMap<>();
      }
      return buckets;
    }

    /** The quantile memory, created on first use; caller holds the entry's lock. */
    Map<Long, Labels> quantiles() {
      if (quantiles == null) {
        quantiles = new LinkedHashMap<>();
      }
      return quantiles;
    }
  }
}
