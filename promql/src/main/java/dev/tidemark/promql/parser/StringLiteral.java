package dev.tidemark.promql.parser;

/**
 * A string literal, already unquoted. Escapes {@code \xNN} and {@code \NNN} give bytes, as in Go;
 * bytes that do not form valid UTF-8 are kept as the lone surrogates U+DC80..U+DCFF (PEP 383's
 * "surrogateescape"), so such a value is still told apart from valid text and prints back as {@code
 * \xNN}.
 *
 * @param value the unquoted value
 * @param positionRange where it is in the query, quotes included
 */
public record StringLiteral(String value, PositionRange positionRange) implements Expr {

  @Override
  public ValueType type() {
    return ValueType.STRING;
  }

  @Override
  public String toString() {
    return Printer.print(this);
  }
}
