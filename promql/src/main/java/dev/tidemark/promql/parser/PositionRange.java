package dev.tidemark.promql.parser;

/**
 * Where a node or an error sits in the query text: {@code start} inclusive, {@code end} exclusive,
 * both zero-based indexes of UTF-16 chars into the query string (for ASCII queries these are
 * Prometheus' byte offsets). Error messages convert {@code start} to Prometheus' {@code
 * line:column} form, which counts UTF-8 bytes (see {@link ParseException}).
 */
public record PositionRange(int start, int end) {

  /** The range covering both, in input order. */
  static PositionRange merge(PositionRange first, PositionRange last) {
    return new PositionRange(first.start, last.end);
  }
}
