package dev.tidemark.promql.parser;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The experimental {@code anchored} and {@code smoothed} selector modifiers. */
class ExtendedRangeSelectorsTest {

  private static final ParserOptions ON = ParserOptions.TEST_ENGINE;

  private static Expr parse(String q) {
    return PromqlParser.parseExpr(q, ON);
  }

  @Test
  void setOnRangeAndInstantSelectors() {
    MatrixSelector m = (MatrixSelector) parse("foo{a=\"b\"}[5m] anchored");
    assertThat(m.selector().extendedRange()).isEqualTo(ExtendedRange.ANCHORED);
    assertThat(m.range()).isEqualTo(Duration.ofMinutes(5));
    // The position range stays the operand's, as in Prometheus' grammar.
    assertThat(m.positionRange()).isEqualTo(new PositionRange(0, 14));

    VectorSelector v = (VectorSelector) parse("foo smoothed");
    assertThat(v.extendedRange()).isEqualTo(ExtendedRange.SMOOTHED);
    assertThat(v.positionRange()).isEqualTo(new PositionRange(0, 3));

    // Before or after offset and @; before the range it carries over to the range selector.
    m = (MatrixSelector) parse("foo[5m] smoothed offset 1m @ 100");
    assertThat(m.selector().extendedRange()).isEqualTo(ExtendedRange.SMOOTHED);
    assertThat(m.selector().offset()).isEqualTo(Duration.ofMinutes(1));
    m = (MatrixSelector) parse("foo[5m] offset 1m anchored");
    assertThat(m.selector().extendedRange()).isEqualTo(ExtendedRange.ANCHORED);
    m = (MatrixSelector) parse("foo anchored [5m]");
    assertThat(m.selector().extendedRange()).isEqualTo(ExtendedRange.ANCHORED);

    // Written twice, still set once.
    assertThat(((MatrixSelector) parse("foo[5m] anchored anchored")).selector().extendedRange())
        .isEqualTo(ExtendedRange.ANCHORED);
    assertThat(parse("foo").toString()).isEqualTo("foo");
  }

  @Test
  void bindsToTheOperandRightBeforeIt() {
    BinaryExpr b = (BinaryExpr) parse("a + b smoothed");
    assertThat(((VectorSelector) b.lhs()).extendedRange()).isEqualTo(ExtendedRange.NONE);
    assertThat(((VectorSelector) b.rhs()).extendedRange()).isEqualTo(ExtendedRange.SMOOTHED);
    UnaryExpr u = (UnaryExpr) parse("-foo smoothed");
    assertThat(((VectorSelector) u.expr()).extendedRange()).isEqualTo(ExtendedRange.SMOOTHED);
    Call c = (Call) parse("rate(foo[5m] smoothed)");
    assertThat(((MatrixSelector) c.args().get(0)).selector().extendedRange())
        .isEqualTo(ExtendedRange.SMOOTHED);
  }

  @Test
  void printsAsPrometheus() {
    // printer.go: after @ on an instant selector, before @ on a range selector, before offset.
    String[][] cases = {
      {"a anchored", "a anchored"},
      {"a smoothed", "a smoothed"},
      {"a[5m] anchored", "a[5m] anchored"},
      {"a{b=\"c\"}[5m]   smoothed", "a{b=\"c\"}[5m] smoothed"},
      {"a{b=\"c\"}[5m] anchored offset 1m", "a{b=\"c\"}[5m] anchored offset 1m"},
      {
        "a{b=\"c\"}[5m] offset 1m anchored @ start()", "a{b=\"c\"}[5m] anchored @ start() offset 1m"
      },
      {"a offset 1m smoothed @ 10", "a @ 10.000 smoothed offset 1m"},
      {"a anchored[90s]", "a[1m30s] anchored"},
      {"rate(a[5m] anchored) + a smoothed", "rate(a[5m] anchored) + a smoothed"},
    };
    for (String[] c : cases) {
      Expr e = parse(c[0]);
      assertThat(e.toString()).as(c[0]).isEqualTo(c[1]);
      assertThat(parse(e.toString()).toString()).as("fixed point of %s", c[0]).isEqualTo(c[1]);
    }
  }

  @Test
  void keywordsStillNameMetricsAndLabels() {
    assertThat(((VectorSelector) parse("anchored{job=\"test\"}")).name()).isEqualTo("anchored");
    assertThat(((VectorSelector) parse("smoothed")).name()).isEqualTo("smoothed");
    assertThat(parse("sum by (anchored) (smoothed)").toString())
        .isEqualTo("sum by (anchored) (smoothed)");
    // Off, too: a metric called anchored is no modifier.
    assertThat(PromqlParser.parseExpr("anchored", ParserOptions.DEFAULT).toString())
        .isEqualTo("anchored");
  }

  @Test
  void refusesWhatPrometheusRefuses() {
    String[][] cases = {
      {
        "foo[5m] anchored smoothed",
        "1:1: parse error: anchored and smoothed modifiers cannot be used together"
      },
      {
        "foo smoothed anchored",
        "1:1: parse error: anchored and smoothed modifiers cannot be used together"
      },
      {
        "foo[5m:1m] anchored", "1:1: parse error: anchored modifier is not supported for subqueries"
      },
      {"foo[5m:] smoothed", "1:1: parse error: smoothed modifier is not supported for subqueries"},
      {"rate(foo[5m]) anchored", "1:1: parse error: anchored modifier not implemented"},
      {"x + (foo[5m]) smoothed", "1:5: parse error: smoothed modifier not implemented"},
      {"1 anchored", "1:1: parse error: anchored modifier not implemented"},
      {"1[5m] anchored", "1:2: parse error: ranges only allowed for vector selectors"},
      {"1[5m] smoothed", "1:2: parse error: ranges only allowed for vector selectors"},
    };
    for (String[] c : cases) {
      assertThatThrownBy(() -> parse(c[0])).as(c[0]).hasMessage(c[1]);
    }
  }

  @Test
  void offUnlessEnabled() {
    for (ParserOptions off :
        new ParserOptions[] {ParserOptions.DEFAULT, ParserOptions.PROMETHEUS_DEFAULTS}) {
      assertThatThrownBy(() -> PromqlParser.parseExpr("x + foo[5m] anchored", off))
          .hasMessage("1:5: parse error: anchored modifier is experimental and not enabled");
      assertThatThrownBy(() -> PromqlParser.parseExpr("foo smoothed", off))
          .hasMessage("1:1: parse error: smoothed modifier is experimental and not enabled");
    }
    assertThat(ON.extendedRangeSelectors()).isTrue();
    assertThat(ParserOptions.PROMETHEUS_DEFAULTS.extendedRangeSelectors()).isFalse();
  }
}
