package dev.tidemark.tsdb.query;

import dev.tidemark.tsdb.model.NativeHistogram;

/**
 * Walks the native histogram samples of one series in timestamp order ({@link
 * Series#histogramIterator()}), beside the float samples of {@link SampleIterator}: a select hands
 * out both kinds, each through its own cursor, and the two never hold a sample at the same
 * timestamp (a series holds one kind of sample per bucket; {@code docs/architecture.md}, Native
 * histograms). Not thread-safe. {@link #histogram()} allocates the sample's value (histograms are
 * immutable objects); the cursor itself allocates nothing per sample.
 */
public interface HistogramIterator {

  /** Moves to the next sample; false at the end. */
  boolean next();

  /**
   * Moves to the first sample at or after {@code timestampMillis}, or stays on the current one if
   * it is already there (never moves backwards); false if there is none.
   */
  boolean seek(long timestampMillis);

  long timestampMillis();

  /**
   * The current sample, validated (a stale marker has the sum {@link
   * NativeHistogram#STALE_SUM_BITS}).
   */
  NativeHistogram histogram();

  /** An iterator with no samples. */
  HistogramIterator EMPTY =
      new HistogramIterator() {
        @Override
        public boolean next() {
          return false;
        }

        @Override
        public boolean seek(long timestampMillis) {
          return false;
        }

        @Override
        public long timestampMillis() {
          throw new IllegalStateException("no sample");
        }

        @Override
        public NativeHistogram histogram() {
          throw new IllegalStateException("no sample");
        }
      };
}
