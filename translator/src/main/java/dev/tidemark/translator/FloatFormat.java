package dev.tidemark.translator;

import dev.tidemark.tsdb.model.PromText;

/**
 * ECMAScript's {@code Number::toString}, the form OTLP attribute doubles take as label values
 * (contract §2.3), as Prometheus' translator writes them. It is not one of Prometheus' own text
 * forms (those, {@code le} and {@code quantile} among them, are {@link PromText}'s): JavaScript
 * writes no {@code +} before an infinity ({@code Infinity}), no zero-padded exponent ({@code 1e-7})
 * and switches to the exponent form at other bounds (below 1e-6, from 1e21 on). The digits are the
 * same shortest ones, taken from {@link PromText#formatFloat}; only the layout is made here.
 */
public final class FloatFormat {
  private FloatFormat() {}

  /**
   * ECMAScript Number::toString: {@code 3.14}, {@code 1e-7}, {@code 1e+21}, {@code NaN}, {@code
   * Infinity}, {@code 0} for zero of either sign.
   */
  public static String es6(double f) {
    if (Double.isNaN(f)) {
      return "NaN";
    }
    if (Double.isInfinite(f)) {
      return f > 0 ? "Infinity" : "-Infinity";
    }
    if (f == 0) {
      return "0";
    }
    // Go's 'g' with the shortest digits: "d.ddde±xx" or a plain decimal.
    String g = PromText.formatFloat(Math.abs(f));
    int e = g.indexOf('e');
    String mantissa = e < 0 ? g : g.substring(0, e);
    int exp = e < 0 ? 0 : Integer.parseInt(g.substring(e + 1));
    int dot = mantissa.indexOf('.');
    String all = dot < 0 ? mantissa : mantissa.substring(0, dot) + mantissa.substring(dot + 1);
    int point = (dot < 0 ? mantissa.length() : dot) + exp; // digits before the decimal point
    int lead = 0;
    while (lead < all.length() - 1 && all.charAt(lead) == '0') {
      lead++;
    }
    String digits = all.substring(lead);
    point -= lead;
    int end = digits.length();
    while (end > 1 && digits.charAt(end - 1) == '0') {
      end--;
    }
    digits = digits.substring(0, end);
    int k = digits.length();
    int n = point;
    StringBuilder sb = new StringBuilder(k + 8);
    if (f < 0) {
      sb.append('-');
    }
    if (k <= n && n <= 21) {
      sb.append(digits);
      sb.append("0".repeat(n - k));
    } else if (0 < n && n <= 21) {
      sb.append(digits, 0, n).append('.').append(digits, n, k);
    } else if (-6 < n && n <= 0) {
      sb.append("0.").append("0".repeat(-n)).append(digits);
    } else {
      sb.append(digits.charAt(0));
      if (k > 1) {
        sb.append('.').append(digits, 1, k);
      }
      int x = n - 1;
      sb.append('e').append(x < 0 ? '-' : '+').append(Math.abs(x));
    }
    return sb.toString();
  }
}
