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
 */
public record MatrixSelector(VectorSelector selector, Duration range, PositionRange positionRange)
    implements Expr {

  @Override
  public ValueType type() {
    return ValueType.MATRIX;
  }

  @Override
  public String toString() {
    return Printer.print(this);
  }
}
