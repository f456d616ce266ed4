package dev.tidemark.tsdb.query;

import dev.tidemark.tsdb.model.Labels;
import java.util.List;

/**
 * Read access to stored series: the one way PromQL, the HTTP API and the admin API read (the engine
 * implements it; see {@code docs/architecture.md}, "Read path"). Modelled on Prometheus' {@code
 * storage.Querier}.
 *
 * <p>Times are inclusive Unix milliseconds. Matchers are ANDed; an empty list matches every series.
 * Every call answers from one consistent snapshot: an append is in it entirely or not at all. No
 * call holds a lock of the store after it returns, so a caller may take as long as it likes over
 * the answer. Thread-safe.
 */
public interface Querier {

  /**
   * The series matching every matcher that have a sample in {@code [minT, maxT]}, sorted by labels.
   * The set is lazy in samples: it holds each series' compressed chunks, and each {@link
   * Series#iterator()} decodes in place, yielding only samples inside the range.
   *
   * @throws IllegalArgumentException if {@code minT > maxT}
   */
  SeriesSet select(long minT, long maxT, List<LabelMatcher> matchers);

  /**
   * The label sets of the matching series stored in buckets that overlap {@code [minT, maxT]},
   * sorted; like Prometheus' series API this works at bucket granularity and reads no samples.
   */
  List<Labels> series(long minT, long maxT, List<LabelMatcher> matchers);

  /**
   * Label names of the matching series (all series without matchers) overlapping the range, sorted.
   */
  List<String> labelNames(long minT, long maxT, List<LabelMatcher> matchers);

  /** Values of label {@code name} among the matching series overlapping the range, sorted. */
  List<String> labelValues(String name, long minT, long maxT, List<LabelMatcher> matchers);
}
