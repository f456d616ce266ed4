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
   * <p>Finding the series (matching label values, reading postings and forward index records)
   * checks {@code ctx} as it goes and holds no engine lock while it matches label values, so a
   * costly matcher delays no append; decoding samples is the caller's, who checks its own deadline.
   *
   * @throws IllegalArgumentException if {@code minT > maxT}
   * @throws QueryAbortedException if {@code ctx} says stop
   */
  SeriesSet select(long minT, long maxT, List<LabelMatcher> matchers, QueryContext ctx);

  /**
   * The label sets of the matching series stored in buckets that overlap {@code [minT, maxT]},
   * sorted; like Prometheus' series API this works at bucket granularity and reads no samples.
   *
   * <p>With {@code limit > 0}, at most {@code limit} series, sorted among themselves, and the read
   * stops as soon as it has them (Prometheus' {@code SelectHints.Limit}): which of the matching
   * series they are is not specified when more match. Ask for one more than you show to know
   * whether the answer was cut.
   *
   * @throws QueryAbortedException if {@code ctx} says stop
   */
  List<Labels> series(
      long minT, long maxT, List<LabelMatcher> matchers, int limit, QueryContext ctx);

  /**
   * Label names of the matching series (all series without matchers) overlapping the range, sorted;
   * with {@code limit > 0} at most that many (as {@link #series(long, long, List, int,
   * QueryContext)}).
   *
   * @throws QueryAbortedException if {@code ctx} says stop
   */
  List<String> labelNames(
      long minT, long maxT, List<LabelMatcher> matchers, int limit, QueryContext ctx);

  /**
   * Values of label {@code name} among the matching series overlapping the range, sorted; with
   * {@code limit > 0} at most that many (as {@link #series(long, long, List, int, QueryContext)}).
   *
   * @throws QueryAbortedException if {@code ctx} says stop
   */
  List<String> labelValues(
      String name, long minT, long maxT, List<LabelMatcher> matchers, int limit, QueryContext ctx);

  /** {@link #select(long, long, List, QueryContext)} without deadline. */
  default SeriesSet select(long minT, long maxT, List<LabelMatcher> matchers) {
    return select(minT, maxT, matchers, QueryContext.NONE);
  }

  /** Every matching series ({@link #series(long, long, List, int, QueryContext)}), no deadline. */
  default List<Labels> series(long minT, long maxT, List<LabelMatcher> matchers) {
    return series(minT, maxT, matchers, 0, QueryContext.NONE);
  }

  /** Every label name ({@link #labelNames(long, long, List, int, QueryContext)}), no deadline. */
  default List<String> labelNames(long minT, long maxT, List<LabelMatcher> matchers) {
    return labelNames(minT, maxT, matchers, 0, QueryContext.NONE);
  }

  /**
   * Every value of the label ({@link #labelValues(String, long, long, List, int, QueryContext)}),
   * no deadline.
   */
  default List<String> labelValues(String name, long minT, long maxT, List<LabelMatcher> matchers) {
    return labelValues(name, minT, maxT, matchers, 0, QueryContext.NONE);
  }
}
