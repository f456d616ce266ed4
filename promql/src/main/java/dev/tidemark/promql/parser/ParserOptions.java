package dev.tidemark.promql.parser;

/**
 * Which of Prometheus 3's feature-flagged parts of the language the parser accepts.
 *
 * <p>Not supported at all (yet), whatever the options: duration expressions ({@code [5m * 2]},
 * {@code offset step()}) and the {@code anchored}/{@code smoothed} range modifiers. The parser
 * rejects them, and the binary {@code fill*} modifiers when they are off, with Prometheus' own "not
 * enabled" messages.
 *
 * @param experimentalFunctions accept the functions and aggregations Prometheus marks experimental
 *     ({@link Function#experimental()}, {@link AggregateOp#experimental()}): {@code mad_over_time},
 *     {@code sort_by_label}, {@code double_exponential_smoothing}, {@code limitk}, {@code
 *     limit_ratio}, ...
 * @param binopFillModifiers accept {@code fill(v)}, {@code fill_left(v)} and {@code fill_right(v)}
 *     after a binary operator's matching modifiers (Prometheus' {@code EnableBinopFillModifiers},
 *     experimental)
 */
public record ParserOptions(boolean experimentalFunctions, boolean binopFillModifiers) {

  /** Experimental functions as given, {@code fill*} modifiers off. */
  public ParserOptions(boolean experimentalFunctions) {
    this(experimentalFunctions, false);
  }

  /**
   * The default: experimental functions on, as Prometheus' PromQL test engine runs them, {@code
   * fill*} modifiers off.
   */
  public static final ParserOptions DEFAULT = new ParserOptions(true);

  /**
   * Every feature this parser supports that Prometheus' PromQL test engine turns on (its {@code
   * TestParserOpts}): experimental functions and {@code fill*} modifiers. The conformance scripts
   * assume it (docs/promql-conformance.md).
   */
  public static final ParserOptions TEST_ENGINE = new ParserOptions(true, true);

  /** Prometheus 3's server defaults: no experimental functions, no {@code fill*} modifiers. */
  public static final ParserOptions PROMETHEUS_DEFAULTS = new ParserOptions(false);
}
