package dev.tidemark.tsdb.query;

import dev.tidemark.tsdb.model.Labels;
import dev.tidemark.tsdb.model.MetricMetadata;

/**
 * One series of a select: its labels, the metadata of its newest bucket and a fresh iterator over
 * its samples inside the selected range. {@link #iterator()} may be called more than once; each
 * call starts from the beginning.
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
}
