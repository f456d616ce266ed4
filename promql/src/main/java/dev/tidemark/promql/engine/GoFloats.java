package dev.tidemark.promql.engine;

import java.math.BigDecimal;

/** Go's float formatting where Prometheus' texts depend on it. */
final class GoFormat {
  private GoFormat() {}

  /**
   * {@code strconv.FormatFloat(f, 'f', -1, 64)}: shortest, no exponent; {@code +Inf}, {@code NaN}.
   */
  static String f(double v) {
    if (Double.isNaN(v)) {
      return "NaN";
    }
    if (Double.isInfinite(v)) {
      return v > 0 ? "+Inf" : "-Inf";
    }
    if (v == 0) {
      return (1 / v < 0) ? "-0" : "0";
    }
    return new BigDecimal(Double.toString(v)).stripTrailingZeros().toPlainString();
  }

  /** {@code %g}: shortest representation, exponent form for large/small magnitudes. */
  static String g(double v) {
    if (Double.isNaN(v)) {
      return "NaN";
    }
    if (Double.isInfinite(v)) {
      return v > 0 ? "+Inf" : "-Inf";
    }
    if (v == 0) {
      return (1 / v < 0) ? "-0" : "0";
    }
    BigDecimal bd = new BigDecimal(Double.toString(v)).stripTrailingZeros();
    int exp = bd.precision() - bd.scale() - 1;
    if (exp < -4 || exp >= 21) {
      String digits = bd.unscaledValue().abs().toString();
      StringBuilder sb = new StringBuilder();
      if (v < 0) {
        sb.append('-');
      }
      sb.append(digits.charAt(0));
      if (digits.length() > 1) {
        sb.append('.').append(digits, 1, digits.length());
      }
      sb.append('e').append(exp < 0 ? '-' : '+');
      int ae = Math.abs(exp);
      if (ae < 10) {
        sb.append('0');
      }
      sb.append(ae);
      return sb.toString();
    }
    return bd.toPlainString();
  }

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
