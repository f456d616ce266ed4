package dev.tidemark.promql.parser;

/**
 * An expression in parentheses; kept in the tree so the printed form keeps them.
 *
 * @param expr the inner expression
 * @param positionRange from the opening to the closing parenthesis
 */
public record ParenExpr(Expr expr, PositionRange positionRange) implements Expr {

  @Override
  public ValueType type() {
    return expr.type();
  }

  @Override
  public String toString() {
    return Printer.print(this);
  }
}
