package dev.tidemark.translator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The 84 metric-name and 16 label-name cases of prometheus/otlptranslator (test resource {@code
 * otlptranslator-cases.json}), run as the file's {@code metric_namer_semantics} and {@code
 * label_semantics} describe.
 */
class ConformanceCasesTest {

  private static JsonNode root() throws IOException {
    try (InputStream in =
        ConformanceCasesTest.class.getResourceAsStream("/otlptranslator-cases.json")) {
      return new ObjectMapper().readTree(in);
    }
  }

  static Stream<Arguments> metricCases() throws IOException {
    List<Arguments> out = new ArrayList<>();
    for (JsonNode c : root().get("metric_namer_cases")) {
      out.add(Arguments.of(c.get("name").asText(), c));
    }
    return out.stream();
  }

  static Stream<Arguments> labelCases() throws IOException {
    List<Arguments> out = new ArrayList<>();
    for (JsonNode c : root().get("label_cases")) {
      out.add(Arguments.of(c.get("label").asText(), c));
    }
    return out.stream();
  }

  @Test
  void fileHasAllCases() throws IOException {
    JsonNode r = root();
    assertThat(r.get("metric_namer_cases").size()).isEqualTo(84);
    assertThat(r.get("label_cases").size()).isEqualTo(16);
    assertThat(r.get("license").asText()).isEqualTo("Apache-2.0");
  }

  @ParameterizedTest(name = "[{index}] '{0}'")
  @MethodSource("metricCases")
  void metricName(String name, JsonNode c) throws Exception {
    JsonNode namer = c.get("namer");
    boolean utf8 = namer.get("utf8_allowed").asBoolean();
    boolean suffixes = namer.get("with_metric_suffixes").asBoolean();
    TranslationStrategy strategy = TranslationStrategy.of(!utf8, suffixes);
    if (namer.has("strategy")) {
      // The Go table names the strategy in some cases; it must agree with the two flags.
      assertThat(strategy.name().replace("_", "").toLowerCase())
          .isEqualTo(namer.get("strategy").asText().replace("UTF8", "Utf8").toLowerCase());
    }
    MetricNamer mn = new MetricNamer(namer.get("namespace").asText(), strategy);
    JsonNode m = c.get("metric");
    MetricNamer.Kind kind = kind(m.get("type").asText());
    String wantError = c.get("want_error").asText();
    if (!wantError.isEmpty()) {
      assertThatThrownBy(() -> mn.build(m.get("name").asText(), m.get("unit").asText(), kind))
          .isInstanceOf(InvalidNameException.class)
          .hasMessage(wantError);
    } else {
      assertThat(mn.build(m.get("name").asText(), m.get("unit").asText(), kind))
          .isEqualTo(c.get("want_metric_name").asText());
    }
    if (suffixes) {
      assertThat(MetricNamer.unitName(m.get("unit").asText(), utf8))
          .isEqualTo(c.get("want_unit_name").asText());
    }
  }

  private static MetricNamer.Kind kind(String t) {
    return switch (t) {
      case "gauge" -> MetricNamer.Kind.GAUGE;
      case "monotonic_counter" -> MetricNamer.Kind.MONOTONIC_COUNTER;
      case "non_monotonic_counter" -> MetricNamer.Kind.NON_MONOTONIC_COUNTER;
      case "histogram" -> MetricNamer.Kind.HISTOGRAM;
      case "exponential_histogram" -> MetricNamer.Kind.EXPONENTIAL_HISTOGRAM;
      case "summary" -> MetricNamer.Kind.SUMMARY;
      case "unknown" -> MetricNamer.Kind.UNKNOWN;
      default -> throw new IllegalArgumentException(t);
    };
  }

  @ParameterizedTest(name = "[{index}] '{0}'")
  @MethodSource("labelCases")
  void labelName(String label, JsonNode c) throws Exception {
    String sanitized = text(c, "sanitized");
    String multi = text(c, "sanitizedMultipleUnderscores");
    String underscore = text(c, "sanitizedUnderscoreLabelSanitization");
    String both = text(c, "sanitizedMultipleUnderscoresAndUnderscoreLabelSanitization");
    String err = text(c, "wantSanitizationError");
    String multiErr = text(c, "wantSanitizationMultipleUnderscoresError");
    String utf8Err = text(c, "wantUTF8Error");

    // (1) default {}
    LabelNamer plain = new LabelNamer(false, false, false);
    if (err != null) {
      expectError(() -> plain.build(label), err);
    } else {
      assertThat(plain.build(label)).isEqualTo(sanitized);
      // (2) UnderscoreLabelSanitization
      assertThat(new LabelNamer(false, true, false).build(label))
          .isEqualTo(first(underscore, sanitized));
    }
    // (3) PreserveMultipleUnderscores
    LabelNamer preserve = new LabelNamer(false, false, true);
    if (multiErr != null || err != null) {
      expectError(() -> preserve.build(label), multiErr != null ? multiErr : err);
    } else {
      assertThat(preserve.build(label)).isEqualTo(first(multi, sanitized));
      // (4) both flags: the Prometheus server defaults, ours
      assertThat(new LabelNamer(false, true, true).build(label))
          .isEqualTo(first(both, underscore, multi, sanitized));
    }
    // (5) UTF8Allowed
    LabelNamer utf8 = new LabelNamer(true, false, false);
    if (utf8Err != null) {
      expectError(() -> utf8.build(label), utf8Err);
    } else {
      assertThat(utf8.build(label)).isEqualTo(label);
    }
  }

  private static void expectError(ThrowingCallable call, String message) {
    assertThatThrownBy(call).isInstanceOf(InvalidNameException.class).hasMessage(message);
  }

  private static String text(JsonNode c, String f) {
    JsonNode n = c.get(f);
    return n == null || n.isNull() ? null : n.asText();
  }

  private static String first(String... s) {
    for (String x : s) {
      if (x != null) {
        return x;
      }
    }
    return null;
  }
}
