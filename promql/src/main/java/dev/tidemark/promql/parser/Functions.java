package dev.tidemark.promql.parser;

import static dev.tidemark.promql.parser.ValueType.MATRIX;
import static dev.tidemark.promql.parser.ValueType.SCALAR;
import static dev.tidemark.promql.parser.ValueType.STRING;
import static dev.tidemark.promql.parser.ValueType.VECTOR;

import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * The function table: every function of Prometheus 3 ({@code promql/parser/functions.go} at commit
 * d15adb9ad7e5), with its argument types, variadicity and return type. Type checking is driven by
 * this table alone; the evaluator maps the same names to implementations. The aggregation operators
 * are in {@link AggregateOp}.
 *
 * <p>{@code holt_winters} is not here: Prometheus 3 renamed it {@code double_exponential_smoothing}
 * (experimental). Immutable and thread-safe.
 */
public final class Functions {

  private static final Map<String, Function> TABLE;

  static {
    Map<String, Function> t = new TreeMap<>();
    // Instant vector in, instant vector out.
    for (String name :
        List.of(
            "abs",
            "absent",
            "acos",
            "acosh",
            "asin",
            "asinh",
            "atan",
            "atanh",
            "ceil",
            "cos",
            "cosh",
            "deg",
            "exp",
            "floor",
            "histogram_avg",
            "histogram_count",
            "histogram_sum",
            "histogram_stddev",
            "histogram_stdvar",
            "ln",
            "log10",
            "log2",
            "rad",
            "sgn",
            "sin",
            "sinh",
            "sort",
            "sort_desc",
            "sqrt",
            "tan",
            "tanh",
            "timestamp")) {
      add(t, name, List.of(VECTOR), 0, VECTOR, false);
    }
    // Range vector in, instant vector out.
    for (String name :
        List.of(
            "absent_over_time",
            "avg_over_time",
            "changes",
            "count_over_time",
            "delta",
            "deriv",
            "first_over_time",
            "idelta",
            "increase",
            "irate",
            "last_over_time",
            "max_over_time",
            "min_over_time",
            "present_over_time",
            "rate",
            "resets",
            "stddev_over_time",
            "stdvar_over_time",
            "sum_over_time")) {
      add(t, name, List.of(MATRIX), 0, VECTOR, false);
    }
    for (String name :
        List.of(
            "mad_over_time",
            "ts_of_first_over_time",
            "ts_of_last_over_time",
            "ts_of_max_over_time",
            "ts_of_min_over_time")) {
      add(t, name, List.of(MATRIX), 0, VECTOR, true);
    }
    // Date functions: an optional instant vector (default vector(time())).
    for (String name :
        List.of(
            "day_of_month",
            "day_of_week",
            "day_of_year",
            "days_in_month",
            "hour",
            "minute",
            "month",
            "year")) {
      add(t, name, List.of(VECTOR), 1, VECTOR, false);
    }
    add(t, "clamp", List.of(VECTOR, SCALAR, SCALAR), 0, VECTOR, false);
    add(t, "clamp_max", List.of(VECTOR, SCALAR), 0, VECTOR, false);
    add(t, "clamp_min", List.of(VECTOR, SCALAR), 0, VECTOR, false);
    add(t, "double_exponential_smoothing", List.of(MATRIX, SCALAR, SCALAR), 0, VECTOR, true);
    add(t, "histogram_fraction", List.of(SCALAR, SCALAR, VECTOR), 0, VECTOR, false);
    add(t, "histogram_quantile", List.of(SCALAR, VECTOR), 0, VECTOR, false);
    add(t, "histogram_quantiles", List.of(VECTOR, STRING, SCALAR, SCALAR), 9, VECTOR, true);
    add(t, "info", List.of(VECTOR, VECTOR), 1, VECTOR, true);
    add(t, "label_join", List.of(VECTOR, STRING, STRING, STRING), -1, VECTOR, false);
    add(t, "label_replace", List.of(VECTOR, STRING, STRING, STRING, STRING), 0, VECTOR, false);
    add(t, "pi", List.of(), 0, SCALAR, false);
    add(t, "predict_linear", List.of(MATRIX, SCALAR), 0, VECTOR, false);
    add(t, "quantile_over_time", List.of(SCALAR, MATRIX), 0, VECTOR, false);
    add(t, "round", List.of(VECTOR, SCALAR), 1, VECTOR, false);
    add(t, "scalar", List.of(VECTOR), 0, SCALAR, false);
    add(t, "sort_by_label", List.of(VECTOR, STRING), -1, VECTOR, true);
    add(t, "sort_by_label_desc", List.of(VECTOR, STRING), -1, VECTOR, true);
    add(t, "start_timestamp", List.of(VECTOR), 0, VECTOR, true);
    add(t, "time", List.of(), 0, SCALAR, false);
    add(t, "vector", List.of(SCALAR), 0, VECTOR, false);
    // Query-context functions and duration helpers (experimental).
    for (String name : List.of("start", "end", "step", "range")) {
      add(t, name, List.of(), 0, SCALAR, true);
    }
    add(t, "max_of", List.of(SCALAR, SCALAR), 0, SCALAR, true);
    add(t, "min_of", List.of(SCALAR, SCALAR), 0, SCALAR, true);
    TABLE = Collections.unmodifiableMap(t);
  }

  private Functions() {}

  private static void add(
      Map<String, Function> t,
      String name,
      List<ValueType> args,
      int variadic,
      ValueType ret,
      boolean experimental) {
    if (t.put(name, new Function(name, args, variadic, ret, experimental)) != null) {
      throw new IllegalStateException("function listed twice: " + name);
    }
  }

  /** The function with exactly this name (case-sensitive), if any. */
  public static Optional<Function> lookup(String name) {
    return Optional.ofNullable(TABLE.get(name));
  }

  /** Every function, by name. Unmodifiable. */
  public static Map<String, Function> all() {
    return TABLE;
  }
}
