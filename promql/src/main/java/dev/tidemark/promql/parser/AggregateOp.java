package dev.tidemark.promql.parser;

import java.util.Locale;

/**
 * The aggregation operators, with the type of their parameter (the first argument of {@code topk(5,
 * x)}, {@code count_values("v", x)}, {@code quantile(0.9, x)}). This enum is the aggregation half
 * of the function table; {@link Functions} is the other.
 */
public enum AggregateOp {
  SUM(null, false),
  AVG(null, false),
  COUNT(null, false),
  MIN(null, false),
  MAX(null, false),
  GROUP(null, false),
  STDDEV(null, false),
  STDVAR(null, false),
  TOPK(ValueType.SCALAR, false),
  BOTTOMK(ValueType.SCALAR, false),
  COUNT_VALUES(ValueType.STRING, false),
  QUANTILE(ValueType.SCALAR, false),
  /** Experimental in Prometheus 3 ({@code --enable-feature=promql-experimental-functions}). */
  LIMITK(ValueType.SCALAR, true),
  /** Experimental in Prometheus 3 ({@code --enable-feature=promql-experimental-functions}). */
  LIMIT_RATIO(ValueType.SCALAR, true);

  private final ValueType paramType;
  private final boolean experimental;
  private final String keyword;

  AggregateOp(ValueType paramType, boolean experimental) {
    this.paramType = paramType;
    this.experimental = experimental;
    this.keyword = name().toLowerCase(Locale.ROOT);
  }

  /** The keyword as printed ({@code count_values}); the parser accepts any letter case. */
  public String keyword() {
    return keyword;
  }

  /** Whether the operator takes a parameter before the vector. */
  public boolean hasParam() {
    return paramType != null;
  }

  /** The parameter's type, or null when the operator takes none. */
  public ValueType paramType() {
    return paramType;
  }

  /** Whether the parser accepts it only with experimental functions enabled. */
  public boolean experimental() {
    return experimental;
  }
}
