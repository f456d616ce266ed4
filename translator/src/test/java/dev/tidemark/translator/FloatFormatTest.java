package dev.tidemark.translator;

import static org.assertj.core.api.Assertions.assertThat;

import dev.tidemark.tsdb.model.PromText;
import org.junit.jupiter.api.Test;

class FloatFormatTest {

  @Test
  void goPlainMatchesStrconvF() {
    assertThat(PromText.formatPlain(5)).isEqualTo("5");
    assertThat(PromText.formatPlain(0.005)).isEqualTo("0.005");
    assertThat(PromText.formatPlain(1e-9)).isEqualTo("0.000000001");
    assertThat(PromText.formatPlain(1e21)).isEqualTo("1000000000000000000000");
    assertThat(PromText.formatPlain(0.1 + 0.2)).isEqualTo("0.30000000000000004");
    assertThat(PromText.formatPlain(-0.0)).isEqualTo("-0");
    assertThat(PromText.formatPlain(0.0)).isEqualTo("0");
    assertThat(PromText.formatPlain(-2.5)).isEqualTo("-2.5");
    assertThat(PromText.formatPlain(2e23))
        .isEqualTo("200000000000000000000000"); // JDK 17 Double.toString: 2.0000000000000002E23
    assertThat(PromText.formatPlain(Double.POSITIVE_INFINITY)).isEqualTo("+Inf");
    assertThat(PromText.formatPlain(Double.NaN)).isEqualTo("NaN");
  }

  @Test
  void openMetricsForm() {
    assertThat(PromText.formatOpenMetrics(1)).isEqualTo("1.0");
    assertThat(PromText.formatOpenMetrics(0.5)).isEqualTo("0.5");
    assertThat(PromText.formatOpenMetrics(100000)).isEqualTo("100000.0");
    assertThat(PromText.formatOpenMetrics(1e6)).isEqualTo("1e+06");
    assertThat(PromText.formatOpenMetrics(0.0001)).isEqualTo("0.0001");
    assertThat(PromText.formatOpenMetrics(0.00001)).isEqualTo("1e-05");
    assertThat(PromText.formatOpenMetrics(1.5e300)).isEqualTo("1.5e+300");
    assertThat(PromText.formatOpenMetrics(Double.NEGATIVE_INFINITY)).isEqualTo("-Inf");
  }

  @Test
  void es6NumberToString() {
    assertThat(FloatFormat.es6(3.14)).isEqualTo("3.14");
    assertThat(FloatFormat.es6(1e-7)).isEqualTo("1e-7");
    assertThat(FloatFormat.es6(1e-6)).isEqualTo("0.000001");
    assertThat(FloatFormat.es6(1e21)).isEqualTo("1e+21");
    assertThat(FloatFormat.es6(1e20)).isEqualTo("100000000000000000000");
    assertThat(FloatFormat.es6(1.5e-10)).isEqualTo("1.5e-10");
    assertThat(FloatFormat.es6(-42)).isEqualTo("-42");
    assertThat(FloatFormat.es6(Double.NEGATIVE_INFINITY)).isEqualTo("-Infinity");
    assertThat(FloatFormat.es6(Double.NaN)).isEqualTo("NaN");
  }
}
