package dev.tidemark.promql.parser;

import java.util.List;

/**
 * An aggregation: {@code sum by (job) (rate(x[5m]))}, {@code topk(3, x)}, {@code count without
 * (instance) (up)}. The grouping may be written before or after the arguments; it prints before
 * them.
 *
 * @param op the operator
 * @param param the parameter for operators that take one ({@link AggregateOp#hasParam()}), else
 *     null
 * @param expr the aggregated instant vector
 * @param grouping the labels of {@code by (...)} or {@code without (...)}, unmodifiable; empty when
 *     none were written
 * @param without true for {@code without}, false for {@code by} or no grouping
 * @param positionRange from the operator to the last closing parenthesis
 */
public record AggregateExpr(
    AggregateOp op,
    Expr param,
    Expr expr,
    List<String> grouping,
    boolean without,
    PositionRange positionRange)
    implements Expr {

  public AggregateExpr {
    grouping = List.copyOf(grouping);
  }

  @Override
  public ValueType type() {
    return ValueType.VECTOR;
  }

  @Override
  public String toString() {
    return Printer.print(this);
  }
}
