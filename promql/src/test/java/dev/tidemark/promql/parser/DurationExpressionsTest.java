package dev.tidemark.promql.parser;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Duration expressions: how they parse, print and evaluate. */
class DurationExpressionsTest {

  private static Expr parse(String q) {
    return PromqlParser.parseExpr(q, ParserOptions.TEST_ENGINE);
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        "foo[26m+4m] | foo[26m + 4m]",
        "foo[1+(STep()-5)*2] | foo[1 + (step() - 5) * 2]",
        "foo[((max_of(min_of((step()+1),((1h))),1ms)))] | foo[(max_of(min_of((step() + 1), (1h)), 1ms))]",
        "foo[29s+1s:5s+5s] | foo[29s + 1s:5s + 5s]",
        "foo offset (100 + 2) | foo offset (100 + 2)",
        "foo offset -(min_of(step(), 1s))+8000 | foo offset -(min_of(step(), 1s)) + 8000",
        "foo offset -step()*2 | foo offset -step() * 2",
        "foo offset -2 ^ 2 | foo offset -2s ^ 2",
        "foo[5m] offset range() | foo[5m] offset range()",
        "foo[30m] | foo[30m]",
      })
  void printsAsPrometheusAndReparsesToTheSameText(String query, String printed) {
    assertThat(parse(query).toString()).isEqualTo(printed);
    assertThat(parse(printed).toString()).isEqualTo(printed);
  }

  @Test
  void offsetTakesOneTermAndBindsBeforeBinaryOperators() {
    // (foo offset 2) ^ 2, not foo offset (2 ^ 2).
    BinaryExpr b = (BinaryExpr) parse("foo offset 2 ^ 2");
    assertThat(((VectorSelector) b.lhs()).offset()).isEqualTo(Duration.ofSeconds(2));
    VectorSelector vs = (VectorSelector) parse("foo offset (2 ^ 2)");
    assertThat(vs.offsetExpr().seconds(0, 0)).isEqualTo(4);
    assertThat(vs.offset()).isZero();
  }

  @Test
  void evaluatesWithTheQuerysStepAndRange() {
    MatrixSelector m =
        (MatrixSelector) ((Call) parse("count_over_time(foo[step()+1ms])")).args().get(0);
    assertThat(m.rangeExpr().queryDependent()).isTrue();
    assertThat(m.rangeExpr().resolve(10, 0, false)).isEqualTo(Duration.ofMillis(10_001));
    assertThatThrownBy(() -> m.rangeExpr().resolve(-1, 0, false))
        .hasMessageEndingWith("duration must be greater than 0");
    VectorSelector vs = (VectorSelector) parse("foo offset min_of(range(), 8s)");
    assertThat(vs.offsetExpr().resolve(5, 10, true)).isEqualTo(Duration.ofSeconds(8));
    DurationExpr mod = ((MatrixSelector) parse("foo[1h30m % 1h]")).rangeExpr();
    assertThat(mod.resolve(0, 0, false)).isEqualTo(Duration.ofMinutes(30));
  }

  @Test
  void rejectsWhatPrometheusRejects() {
    assertThatThrownBy(() -> parse("foo[1h / 0]")).hasMessage("1:8: parse error: division by zero");
    assertThatThrownBy(() -> parse("foo[1h % 0]")).hasMessage("1:8: parse error: modulo by zero");
    assertThatThrownBy(() -> parse("foo[-5m]"))
        .hasMessage("1:5: parse error: duration must be greater than 0");
    assertThatThrownBy(() -> PromqlParser.parseExpr("foo[5m * 2]", ParserOptions.DEFAULT))
        .hasMessage("1:5: parse error: experimental duration expression is not enabled");
    assertThatThrownBy(() -> PromqlParser.parseExpr("foo offset (1h)", ParserOptions.DEFAULT))
        .hasMessage("1:12: parse error: experimental duration expression is not enabled");
  }
}
