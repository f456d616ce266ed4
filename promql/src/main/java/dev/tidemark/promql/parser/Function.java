package dev.tidemark.promql.parser;

import java.util.List;

/**
 * A PromQL function's signature, as an entry of Prometheus' {@code parser.Functions} table.
 *
 * @param name the name, case-sensitive ({@code rate}, never {@code RATE})
 * @param argTypes the type of each argument; with {@code variadic != 0} the last one is the type of
 *     every optional argument. Unmodifiable
 * @param variadic 0: exactly {@code argTypes.size()} arguments; n &gt; 0: from {@code
 *     argTypes.size() - 1} to {@code argTypes.size() - 1 + n}; -1: at least {@code argTypes.size()
 *     - 1}, no upper bound
 * @param returnType the type of the call's value
 * @param experimental whether Prometheus 3 accepts it only with {@code
 *     --enable-feature=promql-experimental-functions} ({@link
 *     ParserOptions#experimentalFunctions()})
 */
public record Function(
    String name,
    List<ValueType> argTypes,
    int variadic,
    ValueType returnType,
    boolean experimental) {

  public Function {
    argTypes = List.copyOf(argTypes);
  }

  /** The fewest arguments a call may have. */
  public int minArgs() {
    return variadic == 0 ? argTypes.size() : argTypes.size() - 1;
  }

  /** The most arguments a call may have, or {@link Integer#MAX_VALUE} when unbounded. */
  public int maxArgs() {
    if (variadic == 0) {
      return argTypes.size();
    }
    return variadic < 0 ? Integer.MAX_VALUE : argTypes.size() - 1 + variadic;
  }

  /** The expected type of argument {@code i} (0-based); optional arguments repeat the last type. */
  public ValueType argType(int i) {
    return argTypes.get(Math.min(i, argTypes.size() - 1));
  }
}
