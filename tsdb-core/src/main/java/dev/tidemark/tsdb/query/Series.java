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
}
