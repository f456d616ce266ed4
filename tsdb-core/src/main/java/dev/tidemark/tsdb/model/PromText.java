package dev.tidemark.tsdb.model;

import java.math.BigDecimal;
import java.math.MathContext;
import java.math.RoundingMode;
import java.time.Duration;
import java.util.List;
import java.util.function.DoubleFunction;

/**
 * Prometheus' text forms, in one place: how Prometheus (and the Go library under it) writes a
 * float, a duration, a timestamp, a quoted string and a label set. Every module that shows one of
 * these to a user calls this class; the expected outputs are pinned in {@code PromTextTest}, taken
 * from Go's {@code strconv} and Prometheus' sources, never from Java's.
 *
 * <p>Floats. Go writes the shortest decimal that reads back as the same double (the closest one
 * among equally short candidates) and lays it out by a format letter; {@code +Inf}, {@code -Inf},
 * {@code NaN}; {@code -0} keeps its sign. The forms here:
 *
 * <ul>
 *   <li>{@link #formatFloat}: {@code strconv.FormatFloat(f, 'g', -1, 64)}, also {@code %g} and
 *       {@code %v}: exponent form when the decimal exponent is below -4 or at least 6 ({@code
 *       1e+06}, {@code 1e-05}, {@code 123456}, {@code 0.0001}).
 *   <li>{@link #formatPlain}: {@code 'f', -1}, never an exponent ({@code count_values}' label,
 *       number literals in printed PromQL, the OTLP translator's {@code le}).
 *   <li>{@link #formatSampleValue}: {@code jsonutil.MarshalFloat}, the HTTP API's sample values:
 *       {@code 'f'}, or {@code 'e'} when {@code |f| < 1e-6} or {@code |f| >= 1e21}.
 *   <li>{@link #formatOpenMetrics}: {@code labels.FormatOpenMetricsFloat}, {@code 'g'} with {@code
 *       .0} appended to a plain integer ({@code 1.0}, {@code 1e+06}); {@code le} and {@code
 *       quantile} label values.
 *   <li>{@link #formatExposition}: the Go client's {@code writeFloat} in the text exposition format
 *       0.0.4 ({@code 'g'}, zero of either sign as {@code 0}).
 * </ul>
 *
 * <p>Java's {@link Double#toString} before JDK 19 is not always shortest ({@code 1e23} comes out as
 * {@code 9.999999999999999E22}). Its digits are used only when they number 15 or fewer for a normal
 * double: two different decimals of at most 15 significant digits never read as the same normal
 * double (15 is {@code DBL_DIG}), so such digits are the shortest and the only candidate of their
 * length. Otherwise the exact binary value is rounded to 15, 16 and 17 digits (all lengths for a
 * subnormal; at a power of two with its neighbours too), and the first that reads back wins: about
 * a microsecond, ten times the JDK's own digits, so a writer of many values passes faster digits to
 * {@link #formatSampleValue(double, String)}. From JDK 19 on the JDK's digits are used as they are.
 *
 * <p>Strings. A Java string stands for Go's bytes as the PromQL parser carries them: valid UTF-16
 * is UTF-8 text; a lone surrogate U+DC80..U+DCFF is the single byte 0x80..0xFF that was not valid
 * UTF-8 (PEP 383's "surrogateescape"), quoted as {@code \xNN} as Go quotes such a byte; any other
 * lone surrogate, which has no UTF-8 form, counts as U+FFFD, the rune Go's decoders put in its
 * place.
 *
 * <p>Stateless and thread-safe.
 */
public final class PromText {

  private static final char[] HEX = "0123456789abcdef".toCharArray();

  private static final long[] DURATION_UNIT_MILLIS = {
    365L * 24 * 3600 * 1000,
    7L * 24 * 3600 * 1000,
    24L * 3600 * 1000,
    3600L * 1000,
    60_000L,
    1000L,
    1L
  };
  private static final String[] DURATION_UNITS = {"y", "w", "d", "h", "m", "s", "ms"};

  private PromText() {}

  // ---- floats ----

  /** {@code strconv.FormatFloat(f, 'g', -1, 64)}, Go's {@code %g} and {@code %v} of a float64. */
  public static String formatFloat(double f) {
    String special = special(f);
    if (special != null) {
      return special;
    }
    Digits d = digits(f);
    int exp = d.point - 1;
    StringBuilder b = new StringBuilder(24);
    if (exp < -4 || exp >= 6) {
      return appendE(b, f, d).toString();
    }
    return appendF(b, f, d).toString();
  }

  /** {@code strconv.FormatFloat(f, 'f', -1, 64)}: shortest digits, never an exponent. */
  public static String formatPlain(double f) {
    String special = special(f);
    if (special != null) {
      return special;
    }
    return appendF(new StringBuilder(24), f, digits(f)).toString();
  }

  /**
   * A sample value as Prometheus' HTTP API writes it ({@code jsonutil.MarshalFloat}): {@code 'f',
   * -1}, or {@code 'e', -1} when {@code |f| < 1e-6} or {@code |f| >= 1e21} ({@code 1e-07}, {@code
   * 1.5e+21}); zero as {@code 0} or {@code -0}.
   */
  public static String formatSampleValue(double f) {
    String special = special(f);
    if (special != null) {
      return special;
    }
    double a = Math.abs(f);
    if (a == Math.rint(a) && a < 1e15) {
      return Long.toString((long) f); // every integer below 2^53 is its own shortest form
    }
    return sampleValue(f, digits(f));
  }

  /**
   * {@link #formatSampleValue} for a writer of many values, given the shortest digits of {@code f}
   * from elsewhere in Java's notation ({@code "1.2345E-7"}, {@code "-123.45"}): they must be the
   * shortest that read back, the closest among equally short ones, as {@link Double#toString}
   * writes them from JDK 19 on and Jackson's {@code NumberOutput.toString(f, true)} (Schubfach)
   * does on any JDK. {@code shortest} is ignored for NaN, infinities, zeros and subnormals (where
   * Java's rule of one or two digits differs from Go's shortest: {@code 4.9E-324}, Go's {@code
   * 5e-324}).
   */
  public static String formatSampleValue(double f, String shortest) {
    return formatSampleValue(f, x -> shortest);
  }

  /**
   * {@link #formatSampleValue(double, String)} asking {@code shortestDigits} for the digits only
   * where they are needed: not for integers below 1e15, zeros, non-finite values or subnormals.
   * Between 1e-3 and 1e7 Java's notation of a non-integer is Go's {@code 'f'} (plain digits, no
   * exponent), so the digits are the answer as they are, with no layout: nearly every sample value
   * an answer of the HTTP API writes takes one of these two ways.
   */
  public static String formatSampleValue(double f, DoubleFunction<String> shortestDigits) {
    String special = special(f);
    if (special != null) {
      return special;
    }
    double a = Math.abs(f);
    if (a == Math.rint(a) && a < 1e15) {
      return Long.toString((long) f); // every integer below 2^53 is its own shortest form
    }
    if (a < Double.MIN_NORMAL) {
      return sampleValue(f, digits(f)); // see SHORTEST_TO_STRING: Java's rule differs here
    }
    String shortest = shortestDigits.apply(f);
    if (a >= 1e-3 && a < 1e7) {
      return shortest;
    }
    int from = shortest.charAt(0) == '-' ? 1 : 0;
    return sampleValue(f, parseJava(from == 0 ? shortest : shortest.substring(from)));
  }

  private static String sampleValue(double f, Digits d) {
    double a = Math.abs(f);
    StringBuilder b = new StringBuilder(24);
    return (a < 1e-6 || a >= 1e21 ? appendE(b, f, d) : appendF(b, f, d)).toString();
  }

  /**
   * Prometheus' {@code labels.FormatOpenMetricsFloat}, the form of {@code le} and {@code quantile}
   * label values: {@link #formatFloat}, with {@code .0} appended when the text has neither a {@code
   * .} nor an {@code e} ({@code 1.0}, {@code 0.5}, {@code 1e+06}); zero of either sign is {@code
   * 0.0}.
   */
  public static String formatOpenMetrics(double f) {
    if (f == 0) {
      return "0.0"; // Go's f == 0 is true for -0 as well
    }
    String s = formatFloat(f);
    if (Double.isNaN(f) || Double.isInfinite(f) || s.indexOf('.') >= 0 || s.indexOf('e') >= 0) {
      return s;
    }
    return s + ".0";
  }

  /**
   * A float as the Go client writes it in the text exposition format 0.0.4 ({@code expfmt}'s {@code
   * writeFloat}): {@link #formatFloat}, zero of either sign as {@code 0}.
   */
  public static String formatExposition(double f) {
    return f == 0 ? "0" : formatFloat(f);
  }

  /**
   * {@code strconv.FormatFloat(f, 'f', decimals, 64)}, Go's {@code %.Nf} ({@code %f} is six): the
   * exact binary value rounded to {@code decimals} places, a tie to even ({@code 0.125} to two
   * places is {@code 0.12}); {@code -0.000000} keeps its sign; {@code +Inf}, {@code -Inf}, {@code
   * NaN}.
   */
  public static String formatFixed(double f, int decimals) {
    if (Double.isNaN(f)) {
      return "NaN";
    }
    if (Double.isInfinite(f)) {
      return f > 0 ? "+Inf" : "-Inf";
    }
    String s = new BigDecimal(f).setScale(decimals, RoundingMode.HALF_EVEN).toPlainString();
    return Double.doubleToRawLongBits(f) < 0 && s.charAt(0) != '-' ? "-" + s : s;
  }

  private static String special(double f) {
    if (Double.isNaN(f)) {
      return "NaN";
    }
    if (Double.isInfinite(f)) {
      return f > 0 ? "+Inf" : "-Inf";
    }
    if (f == 0) {
      return Double.doubleToRawLongBits(f) == 0 ? "0" : "-0";
    }
    return null;
  }

  /**
   * The shortest decimal of a finite, non-zero double: {@code 0.digits × 10^point} (Go's {@code
   * decimalSlice}: {@code digits} without leading or trailing zeros).
   */
  private record Digits(String digits, int point) {}

  /**
   * Whether {@link Double#toString} is shortest and closest (JDK 19's JDK-4511638 fix). Not quite
   * Go's rule even then: where one digit would do, Java picks the closest of one or two digits, so
   * the smallest subnormals differ ({@code 4.9E-324} where Go writes {@code 5e-324}); it is used
   * for normal doubles only, where a one-digit decimal that reads back is always the closest.
   */
  private static final boolean SHORTEST_TO_STRING = Runtime.version().feature() >= 19;

  private static Digits digits(double f) {
    double a = Math.abs(f);
    if (SHORTEST_TO_STRING && a >= Double.MIN_NORMAL) {
      return parseJava(Double.toString(a));
    }
    if (a >= Double.MIN_NORMAL) {
      Digits java = parseJava(Double.toString(a));
      if (java.digits.length() <= 15) {
        return java;
      }
    }
    BigDecimal exact = new BigDecimal(a);
    // Elsewhere the doubles that read as a is an interval centred on a, so when any p-digit decimal
    // reads back the nearest one does. At a power of two the gap below is half the gap above: the
    // nearest may miss while its neighbour on the wider side reads back (Go would print that one).
    boolean powerOfTwo = (Double.doubleToRawLongBits(a) & 0x000f_ffff_ffff_ffffL) == 0;
    for (int p = a >= Double.MIN_NORMAL ? 15 : 1; p <= 17; p++) {
      BigDecimal r = exact.round(new MathContext(p, RoundingMode.HALF_EVEN));
      BigDecimal hit = readsBack(r, a);
      if (hit == null && powerOfTwo) {
        BigDecimal unit = BigDecimal.ONE.scaleByPowerOfTen(r.precision() - r.scale() - p);
        hit = readsBack(r.add(unit), a);
        if (hit == null) {
          hit = readsBack(r.subtract(unit), a);
        }
      }
      if (hit != null) {
        BigDecimal s = hit.stripTrailingZeros();
        String digits = s.unscaledValue().toString();
        return new Digits(digits, digits.length() - s.scale());
      }
    }
    throw new AssertionError("17 digits always read back: " + f);
  }

  private static BigDecimal readsBack(BigDecimal candidate, double a) {
    return candidate.signum() > 0 && candidate.doubleValue() == a ? candidate : null;
  }

  /** Java's {@code "1.2345E-7"} or {@code "123.45"} (positive) as digits and point. */
  private static Digits parseJava(String j) {
    int e = j.indexOf('E');
    int exp = e < 0 ? 0 : Integer.parseInt(j.substring(e + 1));
    String mantissa = e < 0 ? j : j.substring(0, e);
    int dot = mantissa.indexOf('.');
    String all = mantissa.substring(0, dot) + mantissa.substring(dot + 1);
    int point = dot + exp;
    int from = 0;
    while (from < all.length() - 1 && all.charAt(from) == '0') {
      from++;
    }
    int to = all.length();
    while (to > from + 1 && all.charAt(to - 1) == '0') {
      to--;
    }
    return new Digits(all.substring(from, to), point - from);
  }

  /** Go's {@code fmtE} with the shortest digits: {@code -d.ddde±dd}. */
  private static StringBuilder appendE(StringBuilder b, double f, Digits d) {
    if (f < 0) {
      b.append('-');
    }
    String s = d.digits;
    b.append(s.charAt(0));
    if (s.length() > 1) {
      b.append('.').append(s, 1, s.length());
    }
    int exp = d.point - 1;
    b.append('e').append(exp < 0 ? '-' : '+');
    int ax = Math.abs(exp);
    if (ax < 10) {
      b.append('0');
    }
    return b.append(ax);
  }

  /** Go's {@code fmtF} with the shortest digits: {@code -ddd.ddd}, zeros where digits end. */
  private static StringBuilder appendF(StringBuilder b, double f, Digits d) {
    if (f < 0) {
      b.append('-');
    }
    String s = d.digits;
    int n = s.length();
    int point = d.point;
    if (point > 0) {
      b.append(s, 0, Math.min(point, n));
      for (int i = n; i < point; i++) {
        b.append('0');
      }
    } else {
      b.append('0');
    }
    if (n > point) {
      b.append('.');
      for (int i = point; i < 0; i++) {
        b.append('0');
      }
      b.append(s, Math.max(point, 0), n);
    }
    return b;
  }

  // ---- durations and timestamps ----

  /**
   * Prometheus' {@code model.Duration.String()}: {@code 1h30m}, {@code 90d} (years and weeks only
   * when they divide it: {@code 2w}, {@code 1y}, but {@code 13d}), {@code 1s500ms}; truncated to
   * milliseconds; {@code 0s} for less than a millisecond; a leading {@code -} when negative.
   */
  public static String formatDuration(Duration d) {
    return formatDurationMillis(d.toMillis());
  }

  /** {@link #formatDuration} of a number of milliseconds. */
  public static String formatDurationMillis(long millis) {
    if (millis == 0) {
      return "0s";
    }
    StringBuilder r = new StringBuilder();
    long ms = millis;
    if (ms < 0) {
      r.append('-');
      ms = -ms;
    }
    for (int u = 0; u < DURATION_UNITS.length; u++) {
      long mult = DURATION_UNIT_MILLIS[u];
      if (u < 2 && ms % mult != 0) {
        continue; // as Prometheus: 90d, not 12w6d
      }
      long v = ms / mult;
      if (v > 0) {
        r.append(v).append(DURATION_UNITS[u]);
        ms -= v * mult;
      }
    }
    return r.toString();
  }

  /**
   * A millisecond timestamp as seconds, as Prometheus' HTTP API writes it ({@code
   * jsonutil.MarshalTimestamp}): the three fraction digits kept as they are, none when it is whole
   * ({@code 1435781451.781}, {@code 1.500}, {@code 1}, {@code -0.001}). Appended to {@code b}.
   */
  public static void appendTimestamp(StringBuilder b, long millis) {
    long t = millis;
    if (t < 0) {
      b.append('-');
      t = -t;
    }
    b.append(t / 1000);
    long fraction = t % 1000;
    if (fraction != 0) {
      b.append('.');
      if (fraction < 100) {
        b.append('0');
      }
      if (fraction < 10) {
        b.append('0');
      }
      b.append(fraction);
    }
  }

  /**
   * Go's {@code fmt.Sprintf("%.3f", float64(millis)/1000)}, computed exactly ({@code 1.500}, {@code
   * 0.000}, {@code -0.001}): the time of PromQL's {@code @} modifier as its printer writes it.
   */
  public static String formatSecondsFixed3(long millis) {
    String sign = millis < 0 ? "-" : "";
    long abs = Math.abs(millis);
    long frac = abs % 1000;
    return sign + (abs / 1000) + "." + (frac < 10 ? "00" : frac < 100 ? "0" : "") + frac;
  }

  // ---- strings ----

  /**
   * Go's {@code strconv.Quote} (and {@code %q} of a string): double quotes; {@code \a \b \f \n \r
   * \t \v}, {@code \"} and {@code \\}; other control characters and non-printable runes as {@code
   * \x..}, <code>&#92;u....</code> or {@code \U........}; printable runes as they are; a byte that
   * was not valid UTF-8 as {@code \x..} (see the class comment for how a Java string carries one).
   */
  public static String quote(String s) {
    return appendQuoted(new StringBuilder(s.length() + 2), s, '"').toString();
  }

  /** {@link #quote} appended to {@code b}. */
  public static StringBuilder appendQuoted(StringBuilder b, String s) {
    return appendQuoted(b, s, '"');
  }

  /** Go's {@code strconv.QuoteRune} (and {@code %q} of a rune): {@code 'x'}, {@code '\n'}. */
  public static String quoteRune(int cp) {
    if (cp < 0 || cp > Character.MAX_CODE_POINT || (cp >= 0xD800 && cp < 0xE000)) {
      cp = 0xFFFD; // Go: an invalid rune is quoted as utf8.RuneError
    }
    return appendQuoted(new StringBuilder(8), new String(Character.toChars(cp)), '\'').toString();
  }

  private static StringBuilder appendQuoted(StringBuilder b, String s, char q) {
    b.append(q);
    for (int i = 0; i < s.length(); ) {
      int cp = s.codePointAt(i);
      i += Character.charCount(cp);
      if (cp >= 0xDC80 && cp <= 0xDCFF) {
        b.append("\\x").append(HEX[(cp >> 4) & 0xf]).append(HEX[cp & 0xf]);
        continue;
      }
      if (cp >= 0xD800 && cp < 0xE000) {
        cp = 0xFFFD;
      }
      if (cp == q || cp == '\\') {
        b.append('\\').append((char) cp);
        continue;
      }
      if (isPrint(cp)) {
        b.appendCodePoint(cp);
        continue;
      }
      switch (cp) {
        case 0x07 -> b.append("\\a");
        case '\b' -> b.append("\\b");
        case '\f' -> b.append("\\f");
        case '\n' -> b.append("\\n");
        case '\r' -> b.append("\\r");
        case '\t' -> b.append("\\t");
        case 0x0B -> b.append("\\v");
        default -> {
          if (cp < ' ' || cp == 0x7f) {
            b.append("\\x");
            appendHex(b, cp, 2);
          } else if (cp < 0x10000) {
            b.append("\\u");
            appendHex(b, cp, 4);
          } else {
            b.append("\\U");
            appendHex(b, cp, 8);
          }
        }
      }
    }
    return b.append(q);
  }

  private static void appendHex(StringBuilder b, int v, int digits) {
    for (int shift = (digits - 1) * 4; shift >= 0; shift -= 4) {
      b.append(HEX[(v >>> shift) & 0xf]);
    }
  }

  /**
   * Go's {@code unicode.IsPrint}: letters, marks, numbers, punctuation, symbols and the ASCII space
   * (by Java's Unicode tables).
   */
  public static boolean isPrint(int cp) {
    if (cp == ' ') {
      return true;
    }
    return switch (Character.getType(cp)) {
      case Character.UPPERCASE_LETTER,
          Character.LOWERCASE_LETTER,
          Character.TITLECASE_LETTER,
          Character.MODIFIER_LETTER,
          Character.OTHER_LETTER,
          Character.NON_SPACING_MARK,
          Character.ENCLOSING_MARK,
          Character.COMBINING_SPACING_MARK,
          Character.DECIMAL_DIGIT_NUMBER,
          Character.LETTER_NUMBER,
          Character.OTHER_NUMBER,
          Character.CONNECTOR_PUNCTUATION,
          Character.DASH_PUNCTUATION,
          Character.START_PUNCTUATION,
          Character.END_PUNCTUATION,
          Character.INITIAL_QUOTE_PUNCTUATION,
          Character.FINAL_QUOTE_PUNCTUATION,
          Character.OTHER_PUNCTUATION,
          Character.MATH_SYMBOL,
          Character.CURRENCY_SYMBOL,
          Character.MODIFIER_SYMBOL,
          Character.OTHER_SYMBOL ->
          true;
      default -> false;
    };
  }

  // ---- label sets ----

  /**
   * Whether {@code name} is a label name of the legacy character set ({@code
   * [a-zA-Z_][a-zA-Z0-9_]*}), which Prometheus prints without quotes.
   */
  public static boolean isLegacyLabelName(String name) {
    if (name.isEmpty()) {
      return false;
    }
    for (int i = 0; i < name.length(); i++) {
      char c = name.charAt(i);
      boolean ok =
          c == '_'
              || (c >= 'a' && c <= 'z')
              || (c >= 'A' && c <= 'Z')
              || (i > 0 && c >= '0' && c <= '9');
      if (!ok) {
        return false;
      }
    }
    return true;
  }

  /**
   * Prometheus' {@code labels.Labels.String()}: every label in braces, {@code __name__} included,
   * {@code ", "} between them, values quoted as {@link #quote}, names quoted only when they are not
   * {@linkplain #isLegacyLabelName legacy}: {@code {__name__="up", job="a"}}, {@code {}}.
   */
  public static String formatLabels(Labels labels) {
    StringBuilder b = new StringBuilder(16 * labels.size() + 2).append('{');
    for (int i = 0; i < labels.size(); i++) {
      appendPair(b, i, labels.name(i), labels.value(i));
    }
    return b.append('}').toString();
  }

  /**
   * A series as Prometheus' {@code model.Metric.String()} writes it, except that the braces stay
   * after a name alone: the metric name, then the other labels as {@link #formatLabels}: {@code
   * up{job="a", le="0.5"}}, {@code up{}}, {@code {job="a"}} without a name.
   */
  public static String formatSeries(Labels labels) {
    StringBuilder b = new StringBuilder(16 * labels.size() + 2);
    String name = labels.metricName();
    if (name != null) {
      b.append(name);
    }
    b.append('{');
    int k = 0;
    for (int i = 0; i < labels.size(); i++) {
      if (!labels.name(i).equals(Labels.METRIC_NAME)) {
        appendPair(b, k++, labels.name(i), labels.value(i));
      }
    }
    return b.append('}').toString();
  }

  /** {@link #formatLabels} of names and values given in turn ({@code name0, value0, ...}). */
  public static String formatLabels(List<String> namesAndValues) {
    StringBuilder b = new StringBuilder(8 * namesAndValues.size() + 2).append('{');
    for (int i = 0; i < namesAndValues.size(); i += 2) {
      appendPair(b, i, namesAndValues.get(i), namesAndValues.get(i + 1));
    }
    return b.append('}').toString();
  }

  private static void appendPair(StringBuilder b, int i, String name, String value) {
    if (i > 0) {
      b.append(", ");
    }
    if (isLegacyLabelName(name)) {
      b.append(name);
    } else {
      appendQuoted(b, name, '"');
    }
    b.append('=');
    appendQuoted(b, value, '"');
  }
}
