package dev.tidemark.promql.parser;

/**
 * A binary operation: {@code a + b}, {@code a > bool 1}, {@code a * on (job) group_left (team) b}.
 *
 * @param op the operator
 * @param lhs the left operand, a scalar or an instant vector
 * @param rhs the right operand, a scalar or an instant vector
 * @param matching how the operands are matched when both are instant vectors; null when either is a
 *     scalar (after type checking)
 * @param returnBool whether {@code bool} was given (comparisons only): return 0/1 instead of
 *     filtering
 */
public record BinaryExpr(
    BinaryOp op, Expr lhs, Expr rhs, VectorMatching matching, boolean returnBool) implements Expr {

  @Override
  public PositionRange positionRange() {
    return PositionRange.merge(lhs.positionRange(), rhs.positionRange());
  }

  /** Scalar when both operands are scalars, else instant vector. */
  @Override
  public ValueType type() {
    return lhs.type() == ValueType.SCALAR && rhs.type() == ValueType.SCALAR
        ? ValueType.SCALAR
        : ValueType.VECTOR;
  }

  @Override
  public String toString() {
    return Printer.print(this);
  }
}
