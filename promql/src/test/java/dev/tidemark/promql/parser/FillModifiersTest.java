package dev.tidemark.promql.parser;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** The experimental {@code fill}, {@code fill_left} and {@code fill_right} binop modifiers. */
class FillModifiersTest {

  private static Expr parse(String q) {
    return PromqlParser.parseExpr(q, ParserOptions.TEST_ENGINE);
  }

  @Test
  void parsesAndPrintsAsPrometheus() {
    BinaryExpr b = (BinaryExpr) parse("a + fill(0) b");
    assertThat(b.matching().fillLeft()).isEqualTo(0.0);
    assertThat(b.matching().fillRight()).isEqualTo(0.0);
    assertThat(b.toString()).isEqualTo("a + fill (0) b");

    b = (BinaryExpr) parse("a + on(x) group_left(y) fill_right(-1.5) b");
    assertThat(b.matching().fillLeft()).isNull();
    assertThat(b.matching().fillRight()).isEqualTo(-1.5);
    assertThat(b.toString()).isEqualTo("a + on (x) group_left (y) fill_right (-1.5) b");

    b = (BinaryExpr) parse("a > bool fill_right(7) fill_left(5) b");
    assertThat(b.matching().fillLeft()).isEqualTo(5.0);
    assertThat(b.matching().fillRight()).isEqualTo(7.0);
    assertThat(b.toString()).isEqualTo("a > bool fill_left (5) fill_right (7) b");

    assertThat(parse("a + fill(Inf) b").toString()).isEqualTo("a + fill (+Inf) b");
    assertThat(parse("a + fill(1m) b").toString()).isEqualTo("a + fill (60) b");
    assertThat(parse("a + fill(1000000) b").toString()).isEqualTo("a + fill (1e+06) b");
    // Keywords only before "(": elsewhere they are metric names.
    assertThat(parse("fill + fill_left").toString()).isEqualTo("fill + fill_left");
  }

  @Test
  void rejectsFillWhereThereIsNothingToFill() {
    assertThatThrownBy(() -> parse("a + fill(0) 1"))
        .hasMessage(
            "1:1: parse error: filling in missing series only allowed between instant vectors");
    assertThatThrownBy(() -> parse("a and fill(0) b"))
        .hasMessage("1:1: parse error: filling in missing series not allowed for set operators");
    assertThatThrownBy(() -> parse("a + fill(x) b"))
        .hasMessageContaining("unexpected identifier \"x\" in fill modifier");
  }

  @Test
  void offUnlessEnabled() {
    assertThatThrownBy(() -> PromqlParser.parseExpr("a + fill(0) b", ParserOptions.DEFAULT))
        .hasMessage("1:5: parse error: binop fill modifiers are experimental and not enabled");
    assertThatThrownBy(
            () -> PromqlParser.parseExpr("a + fill(0) b", ParserOptions.PROMETHEUS_DEFAULTS))
        .hasMessageContaining("not enabled");
  }
}
