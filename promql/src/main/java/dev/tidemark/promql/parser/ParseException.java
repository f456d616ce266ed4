package dev.tidemark.promql.parser;

import java.nio.charset.StandardCharsets;

/**
 * A query that does not parse or does not type check. {@link #getMessage()} is Prometheus' form,
 * {@code 1:14: parse error: unexpected right parenthesis ')'}: line and column of the error's start
 * (both 1-based; the column counts UTF-8 bytes, as Prometheus does), then the reason in Prometheus'
 * wording where Prometheus has one.
 *
 * <p>Only the first error is reported, as Prometheus' {@code ParseErrors.Error()} does.
 */
public final class ParseException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  private final transient PositionRange positionRange;
  private final int line;
  private final int column;
  private final String reason;

  ParseException(String query, PositionRange positionRange, String reason) {
    super(format(query, positionRange, reason));
    this.positionRange = positionRange;
    int[] lc = lineColumn(query, positionRange.start());
    this.line = lc[0];
    this.column = lc[1];
    this.reason = reason;
  }

  /** Where the error is, in chars of the query. */
  public PositionRange positionRange() {
    return positionRange;
  }

  /** 1-based line of the error's start; 0 when the query is empty. */
  public int line() {
    return line;
  }

  /** 1-based column of the error's start, in UTF-8 bytes; 0 when the query is empty. */
  public int column() {
    return column;
  }

  /** The reason alone, without position: {@code unexpected right parenthesis ')'}. */
  public String reason() {
    return reason;
  }

  private static String format(String query, PositionRange range, String reason) {
    String where;
    if (query.isEmpty()) {
      where = "unknown position";
    } else if (range.start() < 0 || range.start() > query.length()) {
      where = "invalid position";
    } else {
      int[] lc = lineColumn(query, range.start());
      where = lc[0] + ":" + lc[1];
    }
    return where + ": parse error: " + reason;
  }

  /** Prometheus' {@code StartPosInput}: the column is the byte offset after the last newline. */
  private static int[] lineColumn(String query, int pos) {
    if (query.isEmpty() || pos < 0 || pos > query.length()) {
      return new int[] {0, 0};
    }
    int line = 1;
    int lineStart = 0;
    for (int i = 0; i < pos; i++) {
      if (query.charAt(i) == '\n') {
        line++;
        lineStart = i + 1;
      }
    }
    int bytes = query.substring(lineStart, pos).getBytes(StandardCharsets.UTF_8).length;
    return new int[] {line, bytes + 1};
  }
}
