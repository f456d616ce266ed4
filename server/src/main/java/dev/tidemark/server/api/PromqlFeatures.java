package dev.tidemark.server.api;

import dev.tidemark.promql.parser.ParserOptions;

/**
 * The experimental PromQL features the query API runs with, each one of Prometheus 3.14's {@code
 * --enable-feature} names; all off by default, as in Prometheus. Duration expressions are not among
 * them: Prometheus 3.14 has them always on ({@code promql-duration-expr} is a no-op), and so does
 * {@link #parserOptions()}.
 *
 * @param experimentalFunctions {@code promql-experimental-functions}: the functions and
 *     aggregations Prometheus marks experimental ({@code mad_over_time}, {@code sort_by_label},
 *     {@code info}, {@code limitk}, ...)
 * @param binopFillModifiers {@code promql-binop-fill-modifiers}: {@code fill(v)}, {@code
 *     fill_left(v)}, {@code fill_right(v)} after a binary operator
 * @param delayedNameRemoval {@code promql-delayed-name-removal}: {@code __name__} is removed from
 *     the result at the end rather than by each function and operator (see {@code
 *     EngineOptions.delayedNameRemoval()})
 * @param extendedRangeSelectors {@code promql-extended-range-selectors}: the {@code anchored} and
 *     {@code smoothed} selector modifiers ({@code rate(x[5m] anchored)}, {@code x smoothed})
 * @param typeAndUnitLabels {@code type-and-unit-labels}, the engine's part: {@code rate} and {@code
 *     increase} judge a counter by {@code __type__} (see {@code EngineOptions.typeAndUnitLabels()})
 */
public record PromqlFeatures(
    boolean experimentalFunctions,
    boolean binopFillModifiers,
    boolean delayedNameRemoval,
    boolean extendedRangeSelectors,
    boolean typeAndUnitLabels) {

  /** Prometheus 3.14's defaults: every experimental feature off. */
  public static final PromqlFeatures DEFAULTS =
      new PromqlFeatures(false, false, false, false, false);

  /** The first four features as given, type-and-unit labels off. */
  public PromqlFeatures(
      boolean experimentalFunctions,
      boolean binopFillModifiers,
      boolean delayedNameRemoval,
      boolean extendedRangeSelectors) {
    this(
        experimentalFunctions,
        binopFillModifiers,
        delayedNameRemoval,
        extendedRangeSelectors,
        false);
  }

  /** The first three features as given, extended range selectors off. */
  public PromqlFeatures(
      boolean experimentalFunctions, boolean binopFillModifiers, boolean delayedNameRemoval) {
    this(experimentalFunctions, binopFillModifiers, delayedNameRemoval, false, false);
  }

  /** The parser's options: these features, and duration expressions as Prometheus 3.14 has them. */
  public ParserOptions parserOptions() {
    return new ParserOptions(
        experimentalFunctions, binopFillModifiers, true, extendedRangeSelectors);
  }
}
