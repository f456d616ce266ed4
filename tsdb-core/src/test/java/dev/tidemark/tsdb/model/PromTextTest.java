package dev.tidemark.tsdb.model;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.SplittableRandom;
import java.util.function.Function;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * {@link PromText} against the texts Go and Prometheus write. Each expected string follows from the
 * Go or Prometheus source named beside its group (read, not run: no Go toolchain here), never from
 * our Java output: {@code strconv/ftoa.go} ({@code formatDigits}: {@code 'g'} with the shortest
 * digits switches to {@code %e} when the exponent is below -4 or at least 6; {@code fmtE} writes at
 * least two exponent digits; {@code fmtF} pads with zeros), {@code strconv/quote.go} ({@code
 * appendEscapedRune}), Prometheus' {@code util/jsonutil/marshal.go} ({@code MarshalFloat}, {@code
 * MarshalTimestamp}), {@code model/labels/float.go} ({@code FormatOpenMetricsFloat}), {@code
 * model/labels/labels_common.go} ({@code Labels.String}), prometheus/common's {@code model/time.go}
 * ({@code Duration.String}) and {@code expfmt/text_create.go} ({@code writeFloat}).
 */
class PromTextTest {

  static Arguments row(String form, double v, String expected) {
    return Arguments.of(form, v, expected);
  }

  static Stream<Arguments> floats() {
    String tiny = "0." + "0".repeat(323) + "5"; // 'f' of the smallest subnormal, 5e-324
    return Stream.of(
        // strconv.FormatFloat(f, 'g', -1, 64): also Go's %g and %v
        row("g", 0.0, "0"),
        row("g", -0.0, "-0"),
        row("g", 1, "1"),
        row("g", -1, "-1"),
        row("g", 0.1, "0.1"),
        row("g", 0.1 + 0.2, "0.30000000000000004"),
        row("g", 100000, "100000"),
        row("g", 123456, "123456"),
        row("g", 999999.5, "999999.5"),
        row("g", 1e6, "1e+06"),
        row("g", 1234567, "1.234567e+06"),
        row("g", 608863452348.1149, "6.088634523481149e+11"),
        row("g", 0.0001, "0.0001"),
        row("g", 0.00001, "1e-05"),
        row("g", 1.5e-7, "1.5e-07"),
        row("g", 1e21, "1e+21"),
        row("g", 1e23, "1e+23"), // JDK 17's Double.toString: 9.999999999999999E22
        row("g", 2e23, "2e+23"), // JDK 17: 1.9999999999999998E23
        row("g", 2.82879384806159e17, "2.82879384806159e+17"), // JDK 17: 18 digits
        row("g", -1.25e300, "-1.25e+300"),
        row("g", Double.MAX_VALUE, "1.7976931348623157e+308"),
        row("g", Double.MIN_NORMAL, "2.2250738585072014e-308"),
        row("g", Double.MIN_VALUE, "5e-324"), // JDK: 4.9E-324
        row("g", 1e-310, "1e-310"),
        row("g", -2.5e-320, "-2.5e-320"),
        row("g", 9007199254740993.0, "9.007199254740992e+15"),
        row("g", Double.NaN, "NaN"),
        row("g", Double.POSITIVE_INFINITY, "+Inf"),
        row("g", Double.NEGATIVE_INFINITY, "-Inf"),
        // strconv.FormatFloat(f, 'f', -1, 64): count_values' label, printed number literals
        row("f", 0.0, "0"),
        row("f", -0.0, "-0"),
        row("f", 5, "5"),
        row("f", -2.5, "-2.5"),
        row("f", 0.005, "0.005"),
        row("f", 1e-9, "0.000000001"),
        row("f", 0.1 + 0.2, "0.30000000000000004"),
        row("f", 1e21, "1000000000000000000000"),
        row("f", 1e23, "100000000000000000000000"),
        row("f", 2e23, "200000000000000000000000"),
        row("f", 1.5e300, "15" + "0".repeat(299)),
        row("f", Double.MIN_VALUE, tiny),
        row("f", Double.POSITIVE_INFINITY, "+Inf"),
        row("f", Double.NaN, "NaN"),
        // jsonutil.MarshalFloat: 'f', or 'e' below 1e-6 and from 1e21 on
        row("json", 0.0, "0"),
        row("json", -0.0, "-0"),
        row("json", 42, "42"),
        row("json", -2.5, "-2.5"),
        row("json", 0.001, "0.001"),
        row("json", 1e-6, "0.000001"),
        row("json", 1e-7, "1e-07"),
        row("json", 1.5e-7, "1.5e-07"),
        row("json", 1234567.5, "1234567.5"),
        row("json", 12345678.25, "12345678.25"),
        row("json", 1e20, "100000000000000000000"),
        row("json", 1.5e20, "150000000000000000000"),
        row("json", 1e21, "1e+21"),
        row("json", 1e23, "1e+23"),
        row("json", -1.25e300, "-1.25e+300"),
        row("json", Double.MIN_VALUE, "5e-324"),
        row("json", Double.NaN, "NaN"),
        row("json", Double.NEGATIVE_INFINITY, "-Inf"),
        // labels.FormatOpenMetricsFloat: le and quantile
        row("openmetrics", 1, "1.0"),
        row("openmetrics", 0.0, "0.0"),
        row("openmetrics", -0.0, "0.0"),
        row("openmetrics", -1, "-1.0"),
        row("openmetrics", 0.5, "0.5"),
        row("openmetrics", 0.0005, "0.0005"),
        row("openmetrics", 100000, "100000.0"),
        row("openmetrics", 1e6, "1e+06"),
        row("openmetrics", 0.00001, "1e-05"),
        row("openmetrics", 1.5e300, "1.5e+300"),
        row("openmetrics", Double.POSITIVE_INFINITY, "+Inf"),
        row("openmetrics", Double.NaN, "NaN"),
        // expfmt writeFloat (text format 0.0.4): le and sample values of the Go client
        row("exposition", 0.0005, "0.0005"),
        row("exposition", 1, "1"),
        row("exposition", -0.0, "0"),
        row("exposition", 2.5, "2.5"),
        row("exposition", 1e-5, "1e-05"),
        row("exposition", Double.POSITIVE_INFINITY, "+Inf"));
  }

  static final java.util.Map<String, Function<Double, String>> FORMS =
      java.util.Map.of(
          "g", PromText::formatFloat,
          "f", PromText::formatPlain,
          "json", PromText::formatSampleValue,
          "openmetrics", PromText::formatOpenMetrics,
          "exposition", PromText::formatExposition);

  @ParameterizedTest(name = "{0} {1} -> {2}")
  @MethodSource("floats")
  void floatsAsGoWritesThem(String form, double v, String expected) {
    assertThat(FORMS.get(form).apply(v)).isEqualTo(expected);
  }

  /** The API's form with digits given in Java's notation; Go's rule wins for subnormals. */
  @Test
  void sampleValueWithGivenDigits() {
    assertThat(PromText.formatSampleValue(1.5e-7, "1.5E-7")).isEqualTo("1.5e-07");
    assertThat(PromText.formatSampleValue(-2.5, "-2.5")).isEqualTo("-2.5");
    assertThat(PromText.formatSampleValue(42, "42.0")).isEqualTo("42");
    assertThat(PromText.formatSampleValue(1e23, "1.0E23")).isEqualTo("1e+23");
    assertThat(PromText.formatSampleValue(123456.789, "123456.789")).isEqualTo("123456.789");
    assertThat(PromText.formatSampleValue(Double.MIN_VALUE, "4.9E-324")).isEqualTo("5e-324");
    assertThat(PromText.formatSampleValue(Double.NaN, "NaN")).isEqualTo("NaN");
    assertThat(PromText.formatSampleValue(-0.0, "-0.0")).isEqualTo("-0");
  }

  @Test
  void fixedDecimalsAsPercentDotNf() {
    // strconv.FormatFloat(f, 'f', n, 64): the exact binary value rounded, a tie to even
    assertThat(PromText.formatFixed(0.5, 6)).isEqualTo("0.500000");
    assertThat(PromText.formatFixed(1.0 / 3, 6)).isEqualTo("0.333333");
    assertThat(PromText.formatFixed(2.0 / 3, 6)).isEqualTo("0.666667");
    assertThat(PromText.formatFixed(5e-7, 6)).isEqualTo("0.000000"); // 4.99999999999999977e-07
    assertThat(PromText.formatFixed(0.125, 2)).isEqualTo("0.12");
    assertThat(PromText.formatFixed(0.375, 2)).isEqualTo("0.38");
    assertThat(PromText.formatFixed(-0.0, 6)).isEqualTo("-0.000000");
    assertThat(PromText.formatFixed(-1e-9, 6)).isEqualTo("-0.000000");
    assertThat(PromText.formatFixed(1e21, 6)).isEqualTo("1000000000000000000000.000000");
    assertThat(PromText.formatFixed(1.5, 0)).isEqualTo("2");
    assertThat(PromText.formatFixed(2.5, 0)).isEqualTo("2");
    assertThat(PromText.formatFixed(Double.POSITIVE_INFINITY, 6)).isEqualTo("+Inf");
    assertThat(PromText.formatFixed(Double.NaN, 6)).isEqualTo("NaN");
  }

  static Stream<Arguments> durations() {
    return Stream.of(
        Arguments.of(Duration.ZERO, "0s"),
        Arguments.of(Duration.ofNanos(999_999), "0s"),
        Arguments.of(Duration.ofMillis(1), "1ms"),
        Arguments.of(Duration.ofMillis(1500), "1s500ms"),
        Arguments.of(Duration.ofMinutes(90), "1h30m"),
        Arguments.of(Duration.ofMinutes(5).negated(), "-5m"),
        Arguments.of(Duration.ofDays(15), "15d"),
        Arguments.of(Duration.ofDays(14), "2w"),
        Arguments.of(Duration.ofDays(90), "90d"), // not 12w6d
        Arguments.of(Duration.ofDays(7).plusHours(1), "7d1h"),
        Arguments.of(Duration.ofDays(365), "1y"),
        Arguments.of(Duration.ofDays(366), "366d"),
        Arguments.of(Duration.ofDays(730), "2y"),
        Arguments.of(Duration.ofHours(25).plusSeconds(1).plusMillis(2), "1d1h1s2ms"));
  }

  @ParameterizedTest(name = "{0} -> {1}")
  @MethodSource("durations")
  void durationsAsPrometheusModelDurationString(Duration d, String expected) {
    assertThat(PromText.formatDuration(d)).isEqualTo(expected);
    assertThat(PromText.formatDurationMillis(d.toMillis())).isEqualTo(expected);
  }

  @Test
  void timestampsAsMarshalTimestampAndAsPercentDot3f() {
    long[] millis = {1435781451781L, 1500, 1000, 1001, 1010, 0, -1, -1500};
    String[] api = {"1435781451.781", "1.500", "1", "1.001", "1.010", "0", "-0.001", "-1.500"};
    String[] fixed = {
      "1435781451.781", "1.500", "1.000", "1.001", "1.010", "0.000", "-0.001", "-1.500"
    };
    for (int i = 0; i < millis.length; i++) {
      StringBuilder b = new StringBuilder();
      PromText.appendTimestamp(b, millis[i]);
      assertThat(b.toString()).as("MarshalTimestamp(%d)", millis[i]).isEqualTo(api[i]);
      assertThat(PromText.formatSecondsFixed3(millis[i])).as("%%.3f").isEqualTo(fixed[i]);
    }
  }

  static Stream<Arguments> quoted() {
    return Stream.of(
        Arguments.of("abc", "\"abc\""),
        Arguments.of("", "\"\""),
        Arguments.of("a\"b\\c", "\"a\\\"b\\\\c\""),
        Arguments.of("'", "\"'\""),
        Arguments.of("\n\t\r\u0007\b\f\u000b", "\"\\n\\t\\r\\a\\b\\f\\v\""),
        Arguments.of("\u0000\u001f\u007f", "\"\\x00\\x1f\\x7f\""),
        Arguments.of("é日本\uD83D\uDE00", "\"é日本\uD83D\uDE00\""),
        Arguments.of("\u00a0", "\"\\u00a0\""), // no-break space: not printable for Go
        Arguments.of("\u0085", "\"\\u0085\""), // a C1 control
        Arguments.of("\u200b", "\"\\u200b\""), // format character
        Arguments.of("\ue000", "\"\\ue000\""), // private use
        Arguments.of("\uDBFF\uDFFF", "\"\\U0010ffff\""), // a non-character beyond the BMP
        Arguments.of("\uFFFD", "\"\uFFFD\""),
        // bytes that were not UTF-8, carried as U+DC80..U+DCFF (the PromQL parser's "\xff")
        Arguments.of("\udcff", "\"\\xff\""),
        Arguments.of("a\udc80b", "\"a\\x80b\""),
        // a lone surrogate without a UTF-8 form: U+FFFD, as Go's decoders would have made it
        Arguments.of("\ud800x", "\"\uFFFDx\""));
  }

  @ParameterizedTest(name = "{1}")
  @MethodSource("quoted")
  void quoteAsStrconvQuote(String s, String expected) {
    assertThat(PromText.quote(s)).isEqualTo(expected);
    assertThat(PromText.appendQuoted(new StringBuilder("x"), s).toString())
        .isEqualTo("x" + expected);
  }

  @Test
  void quoteRuneAsStrconvQuoteRune() {
    assertThat(PromText.quoteRune('a')).isEqualTo("'a'");
    assertThat(PromText.quoteRune('\'')).isEqualTo("'\\''");
    assertThat(PromText.quoteRune('"')).isEqualTo("'\"'");
    assertThat(PromText.quoteRune('\n')).isEqualTo("'\\n'");
    assertThat(PromText.quoteRune(0x7f)).isEqualTo("'\\x7f'");
    assertThat(PromText.quoteRune(0x1F600)).isEqualTo("'\uD83D\uDE00'");
    assertThat(PromText.quoteRune(0xD800)).isEqualTo("'\uFFFD'");
    assertThat(PromText.quoteRune(-1)).isEqualTo("'\uFFFD'");
  }

  @Test
  void labelSetsAsLabelsString() {
    assertThat(PromText.formatLabels(Labels.empty())).isEqualTo("{}");
    assertThat(PromText.formatLabels(Labels.of("__name__", "up", "job", "a\"b")))
        .isEqualTo("{__name__=\"up\", job=\"a\\\"b\"}");
    assertThat(PromText.formatLabels(Labels.of("foo.bar", "x", "_1", "\n")))
        .isEqualTo("{_1=\"\\n\", \"foo.bar\"=\"x\"}");
    assertThat(PromText.formatLabels(List.of("b", "1", "a", "2"))).isEqualTo("{b=\"1\", a=\"2\"}");
    assertThat(PromText.formatSeries(Labels.of("__name__", "up", "job", "a\tb")))
        .isEqualTo("up{job=\"a\\tb\"}");
    assertThat(PromText.formatSeries(Labels.of("__name__", "up"))).isEqualTo("up{}");
    assertThat(PromText.formatSeries(Labels.of("job", "a"))).isEqualTo("{job=\"a\"}");
    assertThat(PromText.isLegacyLabelName("_a9")).isTrue();
    assertThat(PromText.isLegacyLabelName("9a")).isFalse();
    assertThat(PromText.isLegacyLabelName("")).isFalse();
  }

  /** Whatever the value, each form reads back as the same double (seeded; seed in the message). */
  @Test
  void everyFormReadsBack() {
    long seed = 20261128L;
    SplittableRandom r = new SplittableRandom(seed);
    for (int i = 0; i < 20_000; i++) {
      double v = Double.longBitsToDouble(r.nextLong());
      if (!Double.isFinite(v)) {
        continue;
      }
      for (String form : List.of("g", "f", "json")) {
        String s = FORMS.get(form).apply(v);
        assertThat(Double.doubleToRawLongBits(Double.parseDouble(s)))
            .as("seed %d, %s of %s", seed, form, s)
            .isEqualTo(Double.doubleToRawLongBits(v));
      }
    }
  }
}
