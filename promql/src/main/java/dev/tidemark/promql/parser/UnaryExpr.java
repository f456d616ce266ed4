package dev.tidemark.promql.parser;

/**
 * A unary {@code -} or {@code +} on anything but a number literal (the parser folds {@code -1} into
 * a {@link NumberLiteral}): {@code -foo}, {@code -(1 + 2)}, {@code -2 ^ 2}.
 *
 * @param negate true for {@code -}, false for {@code +}
 * @param expr the operand, a scalar or an instant vector
 * @param start where the operator is in the query
 */
public record UnaryExpr(boolean negate, Expr expr, int start) implements Expr {

  @Override
  public PositionRange positionRange() {
    return new PositionRange(start, expr.positionRange().end());
  }

  @Override
  public ValueType type() {
    return expr.type();
  }

  @Override
  public String toString() {
    return Printer.print(this);
  }
}
