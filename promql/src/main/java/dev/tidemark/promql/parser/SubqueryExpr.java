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
 * @param rangeExpr the range written as a {@link DurationExpr}, else null ({@code range} is then
 *     zero until the engine resolves it); likewise {@code stepExpr} and {@code offsetExpr}
 */
public record SubqueryExpr(
    Expr expr,
    Duration range,
    Duration step,
    Duration offset,
    AtModifier at,
    PositionRange positionRange,
    DurationExpr rangeExpr,
    DurationExpr stepExpr,
    DurationExpr offsetExpr)
    implements Expr {

  /** A subquery whose durations are plain durations. */
  public SubqueryExpr(
      Expr expr,
      Duration range,
      Duration step,
      Duration offset,
      AtModifier at,
      PositionRange positionRange) {
    this(expr, range, step, offset, at, positionRange, null, null, null);
  }

  /** The same subquery over another inner expression. */
  public SubqueryExpr withExpr(Expr newExpr) {
    return new SubqueryExpr(
        newExpr, range, step, offset, at, positionRange, rangeExpr, stepExpr, offsetExpr);
  }

  /** The same subquery with another {@code @}. */
  public SubqueryExpr withAt(AtModifier newAt) {
    return new SubqueryExpr(
        expr, range, step, offset, newAt, positionRange, rangeExpr, stepExpr, offsetExpr);
  }

  @Override
  public ValueType type() {
    return ValueType.MATRIX;
  }

  /** Whether the step was written. */
  public boolean hasStep() {
    return !step.isZero() || stepExpr != null;
  }

  /** Whether an offset was written, as a duration or as an expression. */
  public boolean hasOffset() {
    return !offset.isZero() || offsetExpr != null;
  }

  @Override
  public String toString() {
    return Printer.print(this);
  }
}
