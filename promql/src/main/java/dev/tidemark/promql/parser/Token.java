package dev.tidemark.promql.parser;

import dev.tidemark.tsdb.model.PromText;

/**
 * One lexed token: its type, where it starts (char index) and its text as written (for {@link
 * TokenType#ERROR}: the error message).
 */
record Token(TokenType type, int pos, String val) {

  int end() {
    return type == TokenType.ERROR || type == TokenType.EOF ? pos : pos + val.length();
  }

  PositionRange range() {
    return new PositionRange(pos, end());
  }

  /** Prometheus' {@code Item.String()}. */
  @Override
  public String toString() {
    if (type == TokenType.EOF) {
      return "EOF";
    }
    if (type == TokenType.ERROR) {
      return val;
    }
    if (type == TokenType.IDENTIFIER || type == TokenType.METRIC_IDENTIFIER) {
      return PromText.quote(val);
    }
    switch (type.kind) {
      case KEYWORD:
        return "<" + val + ">";
      case OPERATOR:
        return "<op:" + val + ">";
      case AGGREGATOR:
        return "<aggr:" + val + ">";
      default:
        break;
    }
    if (val.codePointCount(0, val.length()) > 10) {
      return PromText.quote(val.substring(0, val.offsetByCodePoints(0, 10))) + "...";
    }
    return PromText.quote(val);
  }

  /** Prometheus' {@code Item.desc()}: how "unexpected ..." names the token. */
  String desc() {
    if (type.text != null) {
      return toString();
    }
    return switch (type) {
      case EOF -> "end of input";
      case ERROR -> "error " + this;
      case IDENTIFIER -> "identifier " + this;
      case METRIC_IDENTIFIER -> "metric identifier " + this;
      case STRING -> "string " + this;
      case NUMBER -> "number " + this;
      case DURATION -> "duration " + this;
      default -> this.toString();
    };
  }
}
