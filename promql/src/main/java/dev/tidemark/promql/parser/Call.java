package dev.tidemark.promql.parser;

import java.util.List;

/**
 * A function call: {@code rate(foo[5m])}, {@code label_replace(up, "a", "$1", "b", "(.*)")}.
 *
 * @param function the function, from {@link Functions}
 * @param args the arguments in order, unmodifiable; their types match {@link Function#argType(int)}
 *     after type checking
 * @param positionRange from the name to the closing parenthesis
 */
public record Call(Function function, List<Expr> args, PositionRange positionRange)
    implements Expr {

  public Call {
    args = List.copyOf(args);
  }

  @Override
  public ValueType type() {
    return function.returnType();
  }

  @Override
  public String toString() {
    return Printer.print(this);
  }
}
