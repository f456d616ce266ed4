package dev.tidemark.promql.parser;

/**
 * Which of Prometheus 3's feature-flagged parts of the language the parser accepts.
 *
 * <p>Not supported at all (yet), whatever the options: duration expressions ({@code [5m * 2]},
 * {@code offset step()}), the {@code anchored}/{@code smoothed} range modifiers and the binary
 * {@code fill*} modifiers. The parser rejects them with Prometheus' own "not enabled" messages.
 *
 * @param experimentalFunctions accept the functions and aggregations Prometheus marks experimental
 *     ({@link Function#experimental()}, {@link AggregateOp#experimental()}): {@code mad_over_time},
 *     {@code sort_by_label}, {@code double_exponential_smoothing}, {@code limitk}, {@code
 *     limit_ratio}, ...
 */
public record ParserOptions(boolean experimentalFunctions) {

  /**
   * The default: experimental functions on, as Prometheus' PromQL test engine runs them (the
   * conformance scripts assume it: docs/promql-conformance.md).
   */
  public static final ParserOptions DEFAULT = new ParserOptions(true);

  /** Prometheus 3's server defaults: no experimental functions. */
  public static final ParserOptions PROMETHEUS_DEFAULTS = new ParserOptions(false);
}
