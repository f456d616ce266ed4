package dev.tidemark.server.api;

import static org.assertj.core.api.Assertions.assertThat;

import dev.tidemark.tsdb.model.PromText;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * {@link ApiJson#value}: Prometheus' value texts (PromText's form with Schubfach's digits), and
 * those digits against PromText's own on the JDK that runs the test.
 */
class ApiJsonValueTest {

  @Test
  void valuesAsPrometheusWritesThem() {
    // strconv.FormatFloat(v, 'f', -1, 64), or 'e' below 1e-6 and from 1e21 (jsonutil.MarshalValue)
    assertThat(ApiJson.value(1e-7)).isEqualTo("1e-07");
    assertThat(ApiJson.value(1.5e-7)).isEqualTo("1.5e-07");
    assertThat(ApiJson.value(1e-6)).isEqualTo("0.000001");
    assertThat(ApiJson.value(0.001)).isEqualTo("0.001");
    assertThat(ApiJson.value(0.1)).isEqualTo("0.1");
    assertThat(ApiJson.value(-2.5)).isEqualTo("-2.5");
    assertThat(ApiJson.value(1234567.5)).isEqualTo("1234567.5");
    assertThat(ApiJson.value(12345678.25)).isEqualTo("12345678.25");
    assertThat(ApiJson.value(1e20)).isEqualTo("100000000000000000000");
    assertThat(ApiJson.value(1.5e20)).isEqualTo("150000000000000000000");
    assertThat(ApiJson.value(1e21)).isEqualTo("1e+21");
    assertThat(ApiJson.value(-1.25e300)).isEqualTo("-1.25e+300");
    assertThat(ApiJson.value(42)).isEqualTo("42");
    assertThat(ApiJson.value(-0.0)).isEqualTo("-0");
    assertThat(ApiJson.value(Double.NaN)).isEqualTo("NaN");
    assertThat(ApiJson.value(Double.NEGATIVE_INFINITY)).isEqualTo("-Inf");
    assertThat(ApiJson.value(Double.MIN_VALUE)).isEqualTo("5e-324"); // Schubfach: 4.9E-324
  }

  /** Seeded: Schubfach's digits give the text PromText makes from its own. */
  @Test
  void schubfachDigitsAgreeWithPromTextsOwn() {
    long seed = Long.getLong("tidemark.seed", 20261124L);
    SplittableRandom rnd = new SplittableRandom(seed);
    for (int i = 0; i < 200_000; i++) {
      double v =
          switch (rnd.nextInt(4)) {
            case 0 -> Double.longBitsToDouble(rnd.nextLong());
            case 1 -> rnd.nextDouble(-1e7, 1e7);
            case 2 -> Math.round(rnd.nextDouble(-1e9, 1e9)) / Math.pow(10, rnd.nextInt(0, 12));
            default -> rnd.nextDouble() * Math.pow(10, rnd.nextInt(-5, 9));
          };
      if (!Double.isFinite(v) || v == 0 || (v == Math.rint(v) && Math.abs(v) < 1e15)) {
        continue;
      }
      String general = PromText.formatSampleValue(v);
      assertThat(ApiJson.value(v)).as("seed %d value %s", seed, v).isEqualTo(general);
      assertThat(Double.parseDouble(ApiJson.value(v))).isEqualTo(v);
    }
  }
}
