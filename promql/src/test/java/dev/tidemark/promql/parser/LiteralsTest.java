package dev.tidemark.promql.parser;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Every literal form: numbers, durations (as numbers, ranges, offsets, {@code @}), strings. */
class LiteralsTest {

  private static NumberLiteral number(String q) {
    return (NumberLiteral) PromqlParser.parseExpr(q);
  }

  @ParameterizedTest(name = "{0} = {1}, prints {2}")
  @CsvSource(
      delimiter = '|',
      value = {
        "1 | 1 | 1",
        "1.5 | 1.5 | 1.5",
        ".5 | 0.5 | 0.5",
        "5. | 5 | 5",
        "1e3 | 1000 | 1000",
        "1E3 | 1000 | 1000",
        "12.34e6 | 12340000 | 12340000",
        "12.34e+6 | 12340000 | 12340000",
        "12.34e-6 | 0.00001234 | 0.00001234",
        "1e-7 | 0.0000001 | 0.0000001",
        "1e21 | 1e21 | 1000000000000000000000",
        "0x1f | 31 | 31",
        "0X1F | 31 | 31",
        "0xff | 255 | 255",
        "0x_ff | 255 | 255",
        "0x1e5 | 485 | 485",
        // A leading 0 makes an integer octal, as Go's ParseInt(s, 0, 64); 08 is a float.
        "010 | 8 | 8",
        "08 | 8 | 8",
        "08.5 | 8.5 | 8.5",
        "1_000 | 1000 | 1000",
        "1_000.5 | 1000.5 | 1000.5",
        // Shortest digits, then zeros: strconv.FormatFloat(v, 'f', -1, 64).
        "9223372036854775807 | 9223372036854775807 | 9223372036854776000",
        "18446744073709551616 | 18446744073709551616 | 18446744073709552000",
        "-1 | -1 | -1",
        "+1 | 1 | 1",
        "-0 | -0.0 | -0",
        "Inf | Infinity | +Inf",
        "inf | Infinity | +Inf",
        "INF | Infinity | +Inf",
        "+Inf | Infinity | +Inf",
        "-Inf | -Infinity | -Inf",
        "-inF | -Infinity | -Inf",
        "NaN | NaN | NaN",
        "nan | NaN | NaN",
        "nAn | NaN | NaN",
      })
  void numbers(String query, double value, String printed) {
    NumberLiteral n = number(query);
    assertThat(
            Double.doubleToRawLongBits(n.value()) == Double.doubleToRawLongBits(value)
                || (Double.isNaN(value) && Double.isNaN(n.value())))
        .as("%s parsed as %s", query, n.value())
        .isTrue();
    assertThat(n.duration()).isFalse();
    assertThat(n.toString()).isEqualTo(printed);
    assertThat(n.type()).isEqualTo(ValueType.SCALAR);
  }

  @ParameterizedTest(name = "{0} = {1}s, prints {2}")
  @CsvSource(
      delimiter = '|',
      value = {
        "1s | 1 | 1s",
        "1m | 60 | 1m",
        "90m | 5400 | 1h30m",
        "1h30m | 5400 | 1h30m",
        "500ms | 0.5 | 500ms",
        "1s500ms | 1.5 | 1s500ms",
        "1d | 86400 | 1d",
        "7d | 604800 | 1w",
        "8d | 691200 | 8d",
        "2w | 1209600 | 2w",
        "365d | 31536000 | 1y",
        "1y | 31536000 | 1y",
        "1y2w3d4h5m6s7ms | 33019506.007 | 382d4h5m6s7ms",
        "-5m | -300 | -5m",
        "0s | 0 | 0s",
      })
  void durationsAsNumbers(String query, double seconds, String printed) {
    NumberLiteral n = number(query);
    assertThat(n.value()).isEqualTo(seconds);
    assertThat(n.duration()).isTrue();
    assertThat(n.toString()).isEqualTo(printed);
  }

  @ParameterizedTest(name = "{0} prints {2}")
  @CsvSource(
      delimiter = '|',
      value = {
        "foo[5m] | 300000 | foo[5m]",
        "foo[1h30m] | 5400000 | foo[1h30m]",
        "foo[90m] | 5400000 | foo[1h30m]",
        "foo[90] | 90000 | foo[1m30s]",
        "foo[1.5] | 1500 | foo[1s500ms]",
        "foo[+5m] | 300000 | foo[5m]",
        "foo[ 5m ] | 300000 | foo[5m]",
        "foo[14d] | 1209600000 | foo[2w]",
        "foo[15d] | 1296000000 | foo[15d]",
        "foo[1y] | 31536000000 | foo[1y]",
        "foo[100ms] | 100 | foo[100ms]",
      })
  void ranges(String query, long millis, String printed) {
    MatrixSelector m = (MatrixSelector) PromqlParser.parseExpr(query);
    assertThat(m.range()).isEqualTo(Duration.ofMillis(millis));
    assertThat(m.toString()).isEqualTo(printed);
  }

  @Test
  void subqueryRangeAndStep() {
    SubqueryExpr s = (SubqueryExpr) PromqlParser.parseExpr("rate(foo[1m])[30m:1m]");
    assertThat(s.range()).isEqualTo(Duration.ofMinutes(30));
    assertThat(s.step()).isEqualTo(Duration.ofMinutes(1));
    assertThat(s.hasStep()).isTrue();
    SubqueryExpr noStep = (SubqueryExpr) PromqlParser.parseExpr("foo[90:]");
    assertThat(noStep.step()).isEqualTo(Duration.ZERO);
    assertThat(noStep.hasStep()).isFalse();
    assertThat(noStep.toString()).isEqualTo("foo[1m30s:]");
  }

  @ParameterizedTest(name = "{0} prints {2}")
  @CsvSource(
      delimiter = '|',
      value = {
        "foo offset 5m | 300000 | foo offset 5m",
        "foo offset -5m | -300000 | foo offset -5m",
        "foo offset +5m | 300000 | foo offset 5m",
        "foo offset 90 | 90000 | foo offset 1m30s",
        "foo offset -1.5 | -1500 | foo offset -1s500ms",
        "foo OFFSET 1h30m | 5400000 | foo offset 1h30m",
        "foo offset 0s | 0 | foo",
      })
  void offsets(String query, long millis, String printed) {
    VectorSelector vs = (VectorSelector) PromqlParser.parseExpr(query);
    assertThat(vs.offset()).isEqualTo(Duration.ofMillis(millis));
    assertThat(vs.toString()).isEqualTo(printed);
  }

  @ParameterizedTest(name = "{0} prints {2}")
  @CsvSource(
      delimiter = '|',
      value = {
        "foo @ 100 | 100000 | foo @ 100.000",
        "foo @ 1.5 | 1500 | foo @ 1.500",
        "foo @ 1.0005 | 1001 | foo @ 1.001",
        "foo @ -100 | -100000 | foo @ -100.000",
        "foo @ +100 | 100000 | foo @ 100.000",
        "foo @ 1m | 60000 | foo @ 60.000",
        "foo @ 0x10 | 16000 | foo @ 16.000",
        "foo @ 1609746000 | 1609746000000 | foo @ 1609746000.000",
      })
  void atTimestamps(String query, long millis, String printed) {
    VectorSelector vs = (VectorSelector) PromqlParser.parseExpr(query);
    assertThat(vs.at()).isEqualTo(AtModifier.timestamp(millis));
    assertThat(vs.toString()).isEqualTo(printed);
  }

  @Test
  void atStartAndEnd() {
    assertThat(((VectorSelector) PromqlParser.parseExpr("foo @ start()")).at())
        .isEqualTo(AtModifier.START);
    assertThat(((VectorSelector) PromqlParser.parseExpr("foo @ END ( )")).at())
        .isEqualTo(AtModifier.END);
    assertThat(PromqlParser.parseExpr("foo[5m] offset 1m @ end()").toString())
        .isEqualTo("foo[5m] @ end() offset 1m");
  }

  private static String string(String query) {
    return ((StringLiteral) PromqlParser.parseExpr(query)).value();
  }

  @Test
  void stringEscapes() {
    assertThat(string("\"\\a\"")).isEqualTo("\u0007");
    assertThat(string("\"\\b\"")).isEqualTo("\b");
    assertThat(string("\"\\f\"")).isEqualTo("\f");
    assertThat(string("\"\\n\"")).isEqualTo("\n");
    assertThat(string("\"\\r\"")).isEqualTo("\r");
    assertThat(string("\"\\t\"")).isEqualTo("\t");
    assertThat(string("\"\\v\"")).isEqualTo("\u000b");
    assertThat(string("\"\\\\\"")).isEqualTo("\\");
    assertThat(string("\"\\\"\"")).isEqualTo("\"");
    assertThat(string("'\\''")).isEqualTo("'");
    assertThat(string("'a\"b'")).isEqualTo("a\"b");
    assertThat(string("\"a'b\"")).isEqualTo("a'b");
    assertThat(string("\"\\x41\\x62\"")).isEqualTo("Ab");
    assertThat(string("\"\\101\\142\"")).isEqualTo("Ab");
    assertThat(string("\"\\u00e9\"")).isEqualTo("é");
    assertThat(string("\"\\U0001F600\"")).isEqualTo("\uD83D\uDE00");
    assertThat(string("\"é😀\"")).isEqualTo("é\uD83D\uDE00");
    // \x and octal escapes are bytes: two of them make one UTF-8 character.
    assertThat(string("\"\\xc3\\xa9\"")).isEqualTo("é");
    assertThat(string("\"\\303\\251\"")).isEqualTo("é");
    // A byte that is not UTF-8 travels as a lone surrogate and prints back as \xNN.
    assertThat(string("\"\\xff\"")).isEqualTo("\uDCFF");
    assertThat(PromqlParser.parseExpr("\"a\\xffb\"").toString()).isEqualTo("\"a\\xffb\"");
    // Raw strings: no escapes, may span lines.
    assertThat(string("`a\\nb`")).isEqualTo("a\\nb");
    assertThat(string("`a\nb`")).isEqualTo("a\nb");
    assertThat(string("`'\"`")).isEqualTo("'\"");
    assertThat(string("\"\"")).isEmpty();
  }

  @ParameterizedTest(name = "{0} prints {1}")
  @CsvSource(
      delimiter = '|',
      quoteCharacter = '~',
      value = {
        "'single' | \"single\"",
        "`raw\\n` | \"raw\\\\n\"",
        "\"tab\\there\" | \"tab\\there\"",
        "\"\\a\\b\\f\\n\\r\\t\\v\" | \"\\a\\b\\f\\n\\r\\t\\v\"",
        "\"\\x00\\x7f\" | \"\\x00\\x7f\"",
        "\"\\u00a0\\u200b\" | \"\\u00a0\\u200b\"",
        "\"é\" | \"é\"",
        "'q\"q' | \"q\\\"q\"",
      })
  void stringsPrintAsGoQuotes(String query, String printed) {
    assertThat(PromqlParser.parseExpr(query).toString()).isEqualTo(printed);
  }
}
