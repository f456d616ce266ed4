package dev.tidemark.promql.parser;

/**
 * The {@code @} modifier of a selector or subquery: a fixed time ({@code @ 1609746000}), or the
 * start or end of the query range ({@code @ start()}, {@code @ end()}).
 *
 * @param kind which of the three forms
 * @param timestampMillis for {@link Kind#TIMESTAMP}: the time in epoch milliseconds (seconds ×
 *     1000, rounded); 0 for the other kinds
 */
public record AtModifier(Kind kind, long timestampMillis) {

  /** The three forms of {@code @}. */
  public enum Kind {
    TIMESTAMP,
    START,
    END
  }

  public static AtModifier timestamp(long timestampMillis) {
    return new AtModifier(Kind.TIMESTAMP, timestampMillis);
  }

  public static final AtModifier START = new AtModifier(Kind.START, 0);
  public static final AtModifier END = new AtModifier(Kind.END, 0);
}
