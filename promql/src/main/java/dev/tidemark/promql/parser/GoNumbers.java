package dev.tidemark.promql.parser;

import dev.tidemark.tsdb.model.PromText;

/**
 * Numbers and durations as Prometheus reads them: {@code strconv.ParseInt(s, 0, 64)} then {@code
 * strconv.ParseFloat} for number literals, {@code model.ParseDuration} for durations. They are
 * printed by {@link dev.tidemark.tsdb.model.PromText}.
 */
final class GoNumbers {

  private static final long SECOND_NANOS = 1_000_000_000L;
  private static final long MILLI_NANOS = 1_000_000L;

  /** Units of {@code model.ParseDuration}, biggest first; a duration uses them in this order. */
  private static final String[] UNITS = {"y", "w", "d", "h", "m", "s", "ms"};

  private static final long[] UNIT_NANOS = {
    365L * 24 * 3600 * SECOND_NANOS,
    7L * 24 * 3600 * SECOND_NANOS,
    24L * 3600 * SECOND_NANOS,
    3600L * SECOND_NANOS,
    60L * SECOND_NANOS,
    SECOND_NANOS,
    MILLI_NANOS
  };

  private GoNumbers() {}

  /** A number or duration Prometheus would refuse; the message is Prometheus' (or Go's) text. */
  static final class NumberFormatError extends Exception {
    private static final long serialVersionUID = 1L;

    NumberFormatError(String message) {
      super(message);
    }
  }

  /**
   * The value of a NUMBER token: an integer in Go syntax (decimal, {@code 0x} hex, leading-0 octal,
   * {@code _} separators) if it is one that fits 64 bits, else a Go float, else {@code Inf}/{@code
   * NaN}.
   *
   * @throws NumberFormatError with the text {@code strconv.ParseFloat: parsing "...": ...}
   */
  static double parseNumber(String s) throws NumberFormatError {
    Long asInt = parseGoInt(s);
    if (asInt != null) {
      return asInt;
    }
    return parseGoFloat(s);
  }

  private static Long parseGoInt(String s) {
    String digits;
    int radix;
    if (s.length() >= 2 && s.charAt(0) == '0' && (s.charAt(1) == 'x' || s.charAt(1) == 'X')) {
      radix = 16;
      digits = s.substring(2);
    } else if (s.length() >= 2 && s.charAt(0) == '0') {
      radix = 8;
      digits = s.substring(1);
    } else {
      radix = 10;
      digits = s;
    }
    if (s.indexOf('_') >= 0) {
      if (!underscoreOk(s)) {
        return null;
      }
      digits = digits.replace("_", "");
    }
    if (digits.isEmpty()) {
      return null;
    }
    for (int i = 0; i < digits.length(); i++) {
      if (GoStrings.digitVal(digits.charAt(i)) >= radix) {
        return null;
      }
    }
    try {
      return Long.parseLong(digits, radix);
    } catch (NumberFormatException e) {
      return null; // out of range: Prometheus falls back to ParseFloat
    }
  }

  private static double parseGoFloat(String s) throws NumberFormatError {
    String lower = s.toLowerCase(java.util.Locale.ROOT);
    switch (lower) {
      case "inf", "+inf", "infinity", "+infinity":
        return Double.POSITIVE_INFINITY;
      case "-inf", "-infinity":
        return Double.NEGATIVE_INFINITY;
      case "nan":
        return Double.NaN;
      default:
        break;
    }
    String syntax = "strconv.ParseFloat: parsing " + PromText.quote(s) + ": invalid syntax";
    if (!lower.matches("[0-9_]*(\\.[0-9_]*)?(e[+-]?[0-9_]+)?")
        || !lower.matches(".*[0-9].*")
        || lower.startsWith("e")
        || lower.startsWith(".e")) {
      throw new NumberFormatError(syntax);
    }
    if (s.indexOf('_') >= 0) {
      if (!underscoreOk(s)) {
        throw new NumberFormatError(syntax);
      }
      lower = lower.replace("_", "");
    }
    double v = Double.parseDouble(lower);
    if (Double.isInfinite(v)) {
      throw new NumberFormatError(
          "strconv.ParseFloat: parsing " + PromText.quote(s) + ": value out of range");
    }
    return v;
  }

  /** Go's {@code underscoreOK}: underscores only between digits (a base prefix counts). */
  private static boolean underscoreOk(String s) {
    char saw = '^';
    int i = 0;
    boolean hex = false;
    if (s.length() >= 2 && s.charAt(0) == '0' && "bBoOxX".indexOf(s.charAt(1)) >= 0) {
      i = 2;
      saw = '0';
      hex = s.charAt(1) == 'x' || s.charAt(1) == 'X';
    }
    for (; i < s.length(); i++) {
      char c = s.charAt(i);
      if ((c >= '0' && c <= '9') || (hex && GoStrings.digitVal(c) < 16)) {
        saw = '0';
        continue;
      }
      if (c == '_') {
        if (saw != '0') {
          return false;
        }
        saw = '_';
        continue;
      }
      if (saw == '_') {
        return false;
      }
      saw = '!';
    }
    return saw != '_';
  }

  /**
   * {@code model.ParseDuration}: {@code 1h30m}, units {@code y w d h m s ms} each at most once,
   * biggest first; {@code 0} alone is allowed.
   *
   * @return the duration in nanoseconds, never negative
   * @throws NumberFormatError with Prometheus' message ({@code not a valid duration string:
   *     "5m1h"}, {@code unknown unit "hs" in duration "5y1hs"}, {@code duration out of range})
   */
  static long parseDuration(String s) throws NumberFormatError {
    if (s.equals("0")) {
      return 0;
    }
    if (s.isEmpty()) {
      throw new NumberFormatError("empty duration string");
    }
    String invalid = "not a valid duration string: " + PromText.quote(s);
    long total = 0;
    int lastUnit = -1;
    int i = 0;
    while (i < s.length()) {
      if (!isDigit(s.charAt(i))) {
        throw new NumberFormatError(invalid);
      }
      int j = i;
      while (j < s.length() && isDigit(s.charAt(j))) {
        j++;
      }
      long v;
      try {
        v = Long.parseUnsignedLong(s.substring(i, j));
      } catch (NumberFormatException e) {
        throw new NumberFormatError(invalid);
      }
      int k = j;
      while (k < s.length() && !isDigit(s.charAt(k))) {
        k++;
      }
      if (k == j) {
        throw new NumberFormatError(invalid);
      }
      String unit = s.substring(j, k);
      int u = unitIndex(unit);
      if (u < 0) {
        throw new NumberFormatError(
            "unknown unit " + PromText.quote(unit) + " in duration " + PromText.quote(s));
      }
      if (u <= lastUnit) {
        throw new NumberFormatError(invalid);
      }
      lastUnit = u;
      long mult = UNIT_NANOS[u];
      if (Long.compareUnsigned(v, Long.divideUnsigned(1L << 63, mult)) > 0) {
        throw new NumberFormatError("duration out of range");
      }
      total += v * mult;
      if (total < 0) {
        throw new NumberFormatError("duration out of range");
      }
      i = k;
    }
    return total;
  }

  private static int unitIndex(String unit) {
    for (int u = 0; u < UNITS.length; u++) {
      if (UNITS[u].equals(unit)) {
        return u;
      }
    }
    return -1;
  }

  private static boolean isDigit(char c) {
    return c >= '0' && c <= '9';
  }

  /** Go's {@code time.Duration.Seconds()}. */
  static double seconds(long nanos) {
    long sec = nanos / SECOND_NANOS;
    long nsec = nanos % SECOND_NANOS;
    return sec + nsec / 1e9;
  }
}
