package dev.tidemark.server.admin;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.tidemark.tsdb.query.LabelMatcher;
import java.util.List;
import org.junit.jupiter.api.Test;

class SelectorParserTest {

  @Test
  void metricNameAloneAndWithMatchers() {
    assertThat(SelectorParser.parse("up")).containsExactly(LabelMatcher.equal("__name__", "up"));
    assertThat(SelectorParser.parse(" http_requests:rate5m { job = \"a\" , code!=\"200\", } "))
        .containsExactly(
            LabelMatcher.equal("__name__", "http_requests:rate5m"),
            LabelMatcher.equal("job", "a"),
            LabelMatcher.notEqual("code", "200"));
  }

  @Test
  void theFourOperators() {
    assertThat(SelectorParser.parse("{a=\"1\",b!=\"2\",c=~\"x.*\",__name__!~\"go_.*\"}"))
        .containsExactly(
            LabelMatcher.equal("a", "1"),
            LabelMatcher.notEqual("b", "2"),
            LabelMatcher.regex("c", "x.*"),
            LabelMatcher.notRegex("__name__", "go_.*"));
    assertThat(SelectorParser.parse("{}")).isEmpty();
  }

  @Test
  void goStringEscapesAndQuotes() {
    assertThat(value("{a=\"q\\\"b\\\\s\\n\\t\"}")).isEqualTo("q\"b\\s\n\t");
    assertThat(value("{a='it\\'s \"x\"'}")).isEqualTo("it's \"x\"");
    assertThat(value("{a=`raw\\n\"`}")).isEqualTo("raw\\n\"");
    assertThat(value("{a=\"\\u00e9\\U0001F600\\x41\\101\"}")).isEqualTo("é😀AA");
    assertThat(value("{a=\"\\xc3\\xa9\"}")).as("\\x escapes are UTF-8 bytes, as in Go").isEqualTo("é");
    assertThat(value("{a=\"\\a\\b\\f\\r\\v\"}")).isEqualTo("\u0007\b\f\r\u000b");
    assertThat(value("{a=\"é 😀\"}")).isEqualTo("é 😀");
  }

  @Test
  void quotedNamesAsPrometheus3() {
    assertThat(SelectorParser.parse("{\"my.metric\", \"service.name\"=\"x\"}"))
        .containsExactly(LabelMatcher.equal("__name__", "my.metric"), LabelMatcher.equal("service.name", "x"));
  }

  @Test
  void errorsNameThePositionAndTheProblem() {
    assertError("", "expected a metric name or '{'");
    assertError("up{", "expected '}'");
    assertError("up{job}", "position 7: expected one of =, !=, =~, !~");
    assertError("up{job=a}", "expected a quoted value after job=");
    assertError("up{job=\"a\"", "expected ',' or '}'");
    assertError("up{job=\"a}", "unterminated string");
    assertError("up{job=\"a\" b=\"c\"}", "expected ',' or '}'");
    assertError("up{1a=\"x\"}", "expected a label name");
    assertError("up{a=\"\\q\"}", "unknown escape \\q");
    assertError("up{a=\"\\x4\"}", "2 hex digits");
    assertError("up{a=\"\\uD800\"}", "not a valid Unicode code point");
    assertError("up{a='\\\"'}", "unknown escape");
    assertError("up} ", "unexpected '}'");
    assertError("up{a=~\"(\"}", "invalid regex in matcher a=~\"(\"");
  }

  private static String value(String selector) {
    List<LabelMatcher> m = SelectorParser.parse(selector);
    assertThat(m).hasSize(1);
    return m.get(0).value();
  }

  private static void assertError(String selector, String message) {
    assertThatThrownBy(() -> SelectorParser.parse(selector))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("invalid selector")
        .hasMessageContaining(message);
  }
}
