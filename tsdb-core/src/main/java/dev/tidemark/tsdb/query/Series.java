package dev.tidemark.tsdb.query;

import dev.tidemark.tsdb.model.Labels;
import dev.tidemark.tsdb.model.MetricMetadata;

/**
 * One series of a select: its labels, the metadata of its newest bucket and a fresh iterator over
 * its samples inside the selected range. {@link #iterator()} may be called more than once; each
 * call starts from the beginning.
 *
 * <p>Two kinds of sample (issue #25): {@link #iterator()} walks the float samples only, {@link
 * #histogramIterator()} the native histogram samples only. A reader that knows no histograms reads
 * floats as before and never meets a histogram; {@link #hasHistograms()} tells it, without
 * decoding, whether it would miss some.
 */
public interface Series {
  Labels labels();

  MetricMetadata metadata();

  SampleIterator iterator();

  /**
   * {@link #iterator()}, reusing {@code reuse} (an iterator an earlier call of this method or of
   * {@link #iterator()} returned, on any series of the same querier, which the caller no longer
   * uses) where the implementation can, so that walking many series allocates no decoder per series
   * (Prometheus' {@code Series.Iterator(chunkenc.Iterator)}). {@code reuse} may be null.
   */
  default SampleIterator iterator(SampleIterator reuse) {
    return iterator();
  }

  /**
   * Whether the series may have native histogram samples in the selected range (it has them in a
   * bucket the range touches): if false, {@link #histogramIterator()} has none. Decodes nothing.
   */
  default boolean hasHistograms() {
    return false;
  }

  /** A fresh iterator over the native histogram samples inside the selected range. */
  default HistogramIterator histogramIterator() {
    return HistogramIterator.EMPTY;
  }
}
