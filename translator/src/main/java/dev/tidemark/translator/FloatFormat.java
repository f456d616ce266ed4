package dev.tidemark.translator;

import java.math.BigDecimal;
import java.math.MathContext;
import java.math.RoundingMode;

/**
 * The float-to-text conversions the contract requires, independent of the JDK's {@link
 * Double#toString} (which is not always shortest before JDK 19).
 *
 * <p>All of them start from the shortest decimal that parses back to the same double (the closest
 * one among equally short candidates), found by rounding the exact binary value to 1, 2, … 17
 * significant digits. That costs microseconds; callers cache the strings per series.
 */
public final class FloatFormat {
  private FloatFormat() {}

  /**
   * Go {@code strconv.FormatFloat(f, 'f', -1, 64)}: shortest digits, plain notation, no forced
   * {@code .0} ({@code 5}, {@code 0.005}, {@code 1000000000000000000000}, {@code -0}, {@code
   * +Inf}). The {@code le} and {@code quantile} format Prometheus' OTLP endpoint uses (contract
   * §3.3).
   */
  public static String goPlain(double f) {
    if (Double.isNaN(f)) {
      return "NaN";
    }
    if (Double.isInfinite(f)) {
      return f > 0 ? "+Inf" : "-Inf";
    }
    if (f == 0) {
      return Double.doubleToRawLongBits(f) < 0 ? "-0" : "0";
    }
    return shortest(f).toPlainString();
  }

  /**
   * Prometheus {@code FormatOpenMetricsFloat}: Go {@code 'g'} shortest, then {@code .0} appended
   * unless the text has a dot or an exponent ({@code 1.0}, {@code 0.5}, {@code 1e+06}).
   */
  public static String openMetrics(double f) {
    if (Double.isNaN(f)) {
      return "NaN";
    }
    if (Double.isInfinite(f)) {
      return f > 0 ? "+Inf" : "-Inf";
    }
    String s;
    if (f == 0) {
      s = Double.doubleToRawLongBits(f) < 0 ? "-0" : "0";
    } else {
      BigDecimal d = shortest(f);
      String digits = d.unscaledValue().abs().toString();
      int exp = digits.length() - d.scale() - 1; // scientific exponent
      if (exp < -4 || exp >= 6) {
        StringBuilder sb = new StringBuilder();
        if (f < 0) {
          sb.append('-');
        }
        sb.append(digits.charAt(0));
        if (digits.length() > 1) {
          sb.append('.').append(digits, 1, digits.length());
        }
        sb.append('e').append(exp < 0 ? '-' : '+');
        int a = Math.abs(exp);
        if (a < 10) {
          sb.append('0');
        }
        s = sb.append(a).toString();
      } else {
        s = d.toPlainString();
      }
    }
    if (s.indexOf('e') >= 0 || s.indexOf('.') >= 0) {
      return s;
    }
    return s + ".0";
  }

  /**
   * ECMAScript Number::toString, the form OTLP attribute doubles take as label values (contract
   * §2.3): {@code 3.14}, {@code 1e-7}, {@code 1e+21}, {@code NaN}, {@code Infinity}.
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
    BigDecimal d = shortest(f);
    String digits = d.unscaledValue().abs().toString();
    int k = digits.length();
    int n = k - d.scale();
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
      int e = n - 1;
      sb.append('e').append(e < 0 ? '-' : '+').append(Math.abs(e));
    }
    return sb.toString();
  }

  /**
   * The shortest decimal that round-trips to {@code f} (finite, non-zero), trailing zeros stripped.
   */
  static BigDecimal shortest(double f) {
    BigDecimal exact = new BigDecimal(f);
    for (int p = 1; p < 17; p++) {
      BigDecimal r = exact.round(new MathContext(p, RoundingMode.HALF_EVEN));
      if (r.doubleValue() == f) {
        return r.stripTrailingZeros();
      }
    }
    return exact.round(new MathContext(17, RoundingMode.HALF_EVEN)).stripTrailingZeros();
  }
}
