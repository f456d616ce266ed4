package dev.tidemark.promql.parser;

import java.time.Duration;

/**
 * A range vector selector: {@code foo{a="b"}[5m] @ 100 offset 1m}. The {@code offset} and {@code @}
 * written after the range belong to the inner {@link #selector()}; they may not be written before
 * the range.
 *
 * @param selector the instant selector, carrying the offset and {@code @}
 * @param range the range, positive
 * @param positionRange from the selector's start to the end of the last modifier
 * @param rangeExpr the range when written as a {@link DurationExpr} ({@code [5m * 2]}), else null;
 *     {@code range} is then zero until the engine resolves it
 */
public record MatrixSelector(
    VectorSelector selector, Duration range, PositionRange positionRange, DurationExpr rangeExpr)
    implements Expr {

  /** A range vector selector whose range is a plain duration. */
  public MatrixSelector(VectorSelector selector, Duration range, PositionRange positionRange) {
    this(selector, range, positionRange, null);
  }

  @Override
  public ValueType type() {
    return ValueType.MATRIX;
  }

  @Override
  public String toString() {
    return Printer.print(this);
  }
}
