package dev.tidemark.promql.parser;

import java.time.Duration;

/**
 * A subquery: {@code rate(foo[1m])[30m:1m] @ 100 offset 5m}.
 *
 * @param expr the inner expression, an instant vector
 * @param range the range, positive
 * @param step the resolution, positive; {@link Duration#ZERO} when omitted ({@code [30m:]}),
 *     meaning the engine's default evaluation interval
 * @param offset the {@code offset} as written, {@link Duration#ZERO} when there is none
 * @param at the {@code @} modifier, or null
 * @param positionRange from the inner expression's start to the end of the last modifier
 */
public record SubqueryExpr(
    Expr expr,
    Duration range,
    Duration step,
    Duration offset,
    AtModifier at,
    PositionRange positionRange)
    implements Expr {

  @Override
  public ValueType type() {
    return ValueType.MATRIX;
  }

  /** Whether the step was written. */
  public boolean hasStep() {
    return !step.isZero();
  }

  @Override
  public String toString() {
    return Printer.print(this);
  }
}
