package dev.tidemark.server.api;

import com.fasterxml.jackson.core.io.NumberOutput;

/**
 * Go's number texts where the API's answers and messages depend on them: values as Prometheus'
 * {@code jsonutil.MarshalValue} writes them, timestamps as {@code MarshalTimestamp}, and the
 * quoting of {@code %q}. Stateless.
 */
final class GoStrconv {
  private GoStrconv() {}

  /**
   * A sample value as Prometheus writes it: {@code strconv.FormatFloat(v, 'f', -1, 64)}, or the
   * {@code 'e'} form when {@code |v| < 1e-6} or {@code |v| >= 1e21} ({@code "1e-07"}, {@code
   * "1.5e+21"}); {@code "NaN"}, {@code "+Inf"}, {@code "-Inf"}. The digits are the shortest that
   * read back to the same double (Schubfach, through Jackson's {@link NumberOutput}).
   */
  static String formatValue(double v) {
    return format(v, true);
  }

  /** {@code strconv.FormatFloat(v, 'f', -1, 64)}: shortest digits, never an exponent. */
  static String formatF(double v) {
    return format(v, false);
  }

  private static String format(double v, boolean exponentForms) {
    if (Double.isNaN(v)) {
      return "NaN";
    }
    if (Double.isInfinite(v)) {
      return v > 0 ? "+Inf" : "-Inf";
    }
    if (v == 0) {
      return (Double.doubleToRawLongBits(v) < 0) ? "-0" : "0";
    }
    if (v == Math.rint(v) && Math.abs(v) < 1e15) {
      return Long.toString((long) v);
    }
    // Java's form: digits with one '.', optional "E<exp>" ("1.2345E-7", "123.45").
    String j = NumberOutput.toString(v, true);
    double a = Math.abs(v);
    if (a >= 1e-3 && a < 1e7) {
      // Java writes this range without an exponent and, as Go's 'f', with the shortest digits
      // (and no ".0": integers were answered above): nearly every sample value ends here
      return j;
    }
    return layout(v, j, exponentForms);
  }

  /**
   * Go's layout of {@code j}, Java's shortest digits of the finite, non-zero {@code v} (the general
   * case of {@link #format}).
   */
  static String layout(double v, String j, boolean exponentForms) {
    boolean negative = j.charAt(0) == '-';
    int from = negative ? 1 : 0;
    int e = j.indexOf('E');
    String mantissa = e < 0 ? j.substring(from) : j.substring(from, e);
    int exp = e < 0 ? 0 : Integer.parseInt(j.substring(e + 1));
    int dot = mantissa.indexOf('.');
    String digits = mantissa.substring(0, dot) + mantissa.substring(dot + 1);
    int pointPos = dot + exp; // decimal point after this many digits of 'digits'
    // strip leading zeros (moving the point) and trailing zeros
    int lead = 0;
    while (lead < digits.length() - 1 && digits.charAt(lead) == '0') {
      lead++;
    }
    digits = digits.substring(lead);
    pointPos -= lead;
    int end = digits.length();
    while (end > 1 && digits.charAt(end - 1) == '0') {
      end--;
    }
    digits = digits.substring(0, end);
    StringBuilder b = new StringBuilder(24);
    if (negative) {
      b.append('-');
    }
    double abs = Math.abs(v);
    if (exponentForms && (abs < 1e-6 || abs >= 1e21)) {
      b.append(digits.charAt(0));
      if (digits.length() > 1) {
        b.append('.').append(digits, 1, digits.length());
      }
      int x = pointPos - 1;
      b.append('e').append(x < 0 ? '-' : '+');
      int ax = Math.abs(x);
      if (ax < 10) {
        b.append('0');
      }
      b.append(ax);
      return b.toString();
    }
    if (pointPos <= 0) {
      b.append("0.");
      for (int i = pointPos; i < 0; i++) {
        b.append('0');
      }
      b.append(digits);
    } else if (pointPos >= digits.length()) {
      b.append(digits);
      for (int i = digits.length(); i < pointPos; i++) {
        b.append('0');
      }
    } else {
      b.append(digits, 0, pointPos).append('.').append(digits, pointPos, digits.length());
    }
    return b.toString();
  }

  /**
   * A millisecond timestamp as Prometheus writes it, seconds with up to three fraction digits kept
   * as written ({@code 1435781451.781}, {@code 1.500}, {@code 1}): appended to {@code b}.
   */
  static void appendTimestamp(StringBuilder b, long millis) {
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

  /** Go's {@code %q} of a string, for messages: double quotes, backslash escapes. */
  static String quote(String s) {
    StringBuilder b = new StringBuilder(s.length() + 2).append('"');
    for (int i = 0; i < s.length(); ) {
      int cp = s.codePointAt(i);
      i += Character.charCount(cp);
      switch (cp) {
        case '"' -> b.append("\\\"");
        case '\\' -> b.append("\\\\");
        case '\n' -> b.append("\\n");
        case '\t' -> b.append("\\t");
        case '\r' -> b.append("\\r");
        default -> {
          if (cp < 0x20 || cp == 0x7f) {
            b.append(String.format("\\x%02x", cp));
          } else {
            b.appendCodePoint(cp);
          }
        }
      }
    }
    return b.append('"').toString();
  }
}
