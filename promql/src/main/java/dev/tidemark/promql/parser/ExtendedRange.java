package dev.tidemark.promql.parser;

/**
 * The {@code anchored} or {@code smoothed} modifier of a selector, Prometheus' experimental
 * extended range selectors ({@code --enable-feature=promql-extended-range-selectors}, {@link
 * ParserOptions#extendedRangeSelectors()}).
 *
 * <p>On a range selector ({@code foo[5m] anchored}) it changes which samples the window holds:
 * {@code ANCHORED} adds the newest sample at or before the window's start (looking back at most the
 * lookback delta), {@code SMOOTHED} also the oldest one after its end (looking ahead as far), and
 * interpolates both edges. Only {@code rate}, {@code increase}, {@code delta} and, when anchored,
 * {@code changes} and {@code resets} accept such a selector. On an instant selector {@code
 * SMOOTHED} interpolates between the samples either side of each step; {@code ANCHORED} changes
 * nothing there, as in Prometheus. The evaluator's side is described in docs/architecture.md
 * ("Extended range selectors").
 */
public enum ExtendedRange {
  /** No modifier. */
  NONE(""),
  /** {@code anchored}. */
  ANCHORED("anchored"),
  /** {@code smoothed}. */
  SMOOTHED("smoothed");

  /** The keyword as written, empty for {@link #NONE}. */
  public final String keyword;

  ExtendedRange(String keyword) {
    this.keyword = keyword;
  }
}
