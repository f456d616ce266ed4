package dev.tidemark.promql.parser;

/**
 * A number: {@code 1}, {@code 1.5e3}, {@code 0x1f}, {@code Inf}, {@code NaN}, or a duration used as
 * a number of seconds ({@code 5m} is 300). A leading {@code -} or {@code +} is folded into the
 * literal by the parser, as Prometheus does.
 *
 * @param value the value; for a duration, its seconds
 * @param duration whether it was written as a duration (then printed as one)
 * @param positionRange where it is in the query, sign included
 */
public record NumberLiteral(double value, boolean duration, PositionRange positionRange)
    implements Expr {

  @Override
  public ValueType type() {
    return ValueType.SCALAR;
  }

  @Override
  public String toString() {
    return Printer.print(this);
  }
}
