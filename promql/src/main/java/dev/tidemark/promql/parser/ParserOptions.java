package dev.tidemark.promql.parser;

/**
 * Which of Prometheus 3's feature-flagged parts of the language the parser accepts.
 *
 * <p>The parser rejects the experimental syntax that is off with Prometheus' own "not enabled"
 * messages.
 *
 * @param experimentalFunctions accept the functions and aggregations Prometheus marks experimental
 *     ({@link Function#experimental()}, {@link AggregateOp#experimental()}): {@code mad_over_time},
 *     {@code sort_by_label}, {@code double_exponential_smoothing}, {@code limitk}, {@code
 *     limit_ratio}, ...
 * @param binopFillModifiers accept {@code fill(v)}, {@code fill_left(v)} and {@code fill_right(v)}
 *     after a binary operator's matching modifiers (Prometheus' {@code EnableBinopFillModifiers},
 *     experimental)
 * @param durationExpressions accept arithmetic, {@code step()}, {@code range()}, {@code min_of} and
 *     {@code max_of} where a duration is written ({@code foo[5m * 2]}, {@code offset -step()}),
 *     Prometheus' {@code ExperimentalDurationExpr}; see {@link DurationExpr}
 * @param extendedRangeSelectors accept the {@code anchored} and {@code smoothed} selector modifiers
 *     ({@code foo[5m] anchored}), Prometheus' {@code EnableExtendedRangeSelectors}; see {@link
 *     ExtendedRange}
 */
public record ParserOptions(
    boolean experimentalFunctions,
    boolean binopFillModifiers,
    boolean durationExpressions,
    boolean extendedRangeSelectors) {

  /** Experimental functions as given, every experimental syntax off. */
  public ParserOptions(boolean experimentalFunctions) {
    this(experimentalFunctions, false, false, false);
  }

  /** The features as given, extended range selectors off. */
  public ParserOptions(
      boolean experimentalFunctions, boolean binopFillModifiers, boolean durationExpressions) {
    this(experimentalFunctions, binopFillModifiers, durationExpressions, false);
  }

  /**
   * The default: experimental functions on, as Prometheus' PromQL test engine runs them, {@code
   * fill*} modifiers, duration expressions and extended range selectors off.
   */
  public static final ParserOptions DEFAULT = new ParserOptions(true);

  /**
   * Every feature this parser supports that Prometheus' PromQL test engine turns on (its {@code
   * TestParserOpts}): experimental functions, {@code fill*} modifiers, duration expressions and
   * extended range selectors. The conformance scripts assume it (docs/promql-conformance.md).
   */
  public static final ParserOptions TEST_ENGINE = new ParserOptions(true, true, true, true);

  /**
   * Prometheus 3.14's server defaults: no experimental functions, no {@code fill*} modifiers, no
   * extended range selectors, and duration expressions, which it has always on ({@code
   * --enable-feature=promql-duration-expr} is a no-op there).
   */
  public static final ParserOptions PROMETHEUS_DEFAULTS =
      new ParserOptions(false, false, true, false);
}
