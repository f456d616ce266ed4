package dev.tidemark.promql.engine;

/**
 * Go's {@code strconv.ParseFloat} where Prometheus reads a float from text ({@code le} label
 * values); the texts it writes are {@link dev.tidemark.tsdb.model.PromText}'s.
 */
final class GoFloats {
  private GoFloats() {}

  /** Go's {@code strconv.ParseFloat(s, 64)} for the common forms; throws NumberFormatException. */
  static double parse(String s) {
    String t = s.trim();
    String l = t.toLowerCase(java.util.Locale.ROOT);
    switch (l) {
      case "inf", "+inf", "infinity", "+infinity":
        return Double.POSITIVE_INFINITY;
      case "-inf", "-infinity":
        return Double.NEGATIVE_INFINITY;
      case "nan":
        return Double.NaN;
      default:
        break;
    }
    if (t.isEmpty()
        || !t.equals(s)
        || l.endsWith("d")
        || l.endsWith("f")
        || l.contains("infinity")) {
      throw new NumberFormatException(s);
    }
    if (l.startsWith("0x") || l.startsWith("-0x") || l.startsWith("+0x")) {
      if (!l.contains("p")) {
        return Long.decode(t);
      }
    }
    return Double.parseDouble(t);
  }
}
