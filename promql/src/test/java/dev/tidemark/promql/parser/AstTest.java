package dev.tidemark.promql.parser;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.tidemark.tsdb.query.LabelMatcher;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The trees the parser builds: node fields, positions, normalization, canonical printing. */
class AstTest {

  private static Expr parse(String q) {
    return PromqlParser.parseExpr(q);
  }

  @Test
  void vectorSelectorCarriesTheImpliedNameMatcherLast() {
    VectorSelector vs = (VectorSelector) parse("foo{a=\"b\", c!=\"d\", e=~\"f.*\", g!~'h'}");
    assertThat(vs.name()).isEqualTo("foo");
    assertThat(vs.matchers())
        .containsExactly(
            LabelMatcher.equal("a", "b"),
            LabelMatcher.notEqual("c", "d"),
            LabelMatcher.regex("e", "f.*"),
            LabelMatcher.notRegex("g", "h"),
            LabelMatcher.equal("__name__", "foo"));
    assertThat(vs.offset()).isEqualTo(Duration.ZERO);
    assertThat(vs.at()).isNull();
    assertThat(vs.positionRange()).isEqualTo(new PositionRange(0, 36));
    assertThat(vs.toString()).isEqualTo("foo{a=\"b\",c!=\"d\",e=~\"f.*\",g!~\"h\"}");
  }

  @Test
  void quotedUtf8NamesInsideBraces() {
    VectorSelector vs = (VectorSelector) parse("{\"my.metric\", \"a.b\"=\"c\"}");
    assertThat(vs.name()).isEmpty();
    assertThat(vs.matchers())
        .containsExactly(
            LabelMatcher.equal("__name__", "my.metric"), LabelMatcher.equal("a.b", "c"));
    assertThat(vs.toString()).isEqualTo("{\"a.b\"=\"c\",__name__=\"my.metric\"}");
    assertThat(parse("sum by (\"a.b\", c) (x)").toString()).isEqualTo("sum by (\"a.b\", c) (x)");
  }

  @Test
  void keywordsAreLabelNamesInsideBracesAndMetricNamesAsOperands() {
    assertThat(parse("foo{on=\"a\", by=\"b\", offset=\"c\"}").toString())
        .isEqualTo("foo{by=\"b\",offset=\"c\",on=\"a\"}");
    assertThat(((VectorSelector) parse("sum")).name()).isEqualTo("sum");
    assertThat(((VectorSelector) parse("by{a=\"b\"}")).name()).isEqualTo("by");
    assertThat(parse("and and and").toString()).isEqualTo("and and and");
    assertThat(parse("fill + fill").toString()).isEqualTo("fill + fill");
    assertThat(parse("sum by (on, bool, group_left) (x)").toString())
        .isEqualTo("sum by (on, bool, group_left) (x)");
  }

  @Test
  void rangeSubqueryOffsetAt() {
    MatrixSelector m = (MatrixSelector) parse("foo{a=\"b\"}[5m] @ 100 offset -1m");
    assertThat(m.range()).isEqualTo(Duration.ofMinutes(5));
    assertThat(m.selector().offset()).isEqualTo(Duration.ofMinutes(-1));
    assertThat(m.selector().at()).isEqualTo(AtModifier.timestamp(100_000));
    assertThat(m.positionRange()).isEqualTo(new PositionRange(0, 31));
    assertThat(m.type()).isEqualTo(ValueType.MATRIX);

    SubqueryExpr s = (SubqueryExpr) parse("rate(foo[1m])[30m:1m] @ end() offset 5m");
    assertThat(s.expr()).isInstanceOf(Call.class);
    assertThat(s.range()).isEqualTo(Duration.ofMinutes(30));
    assertThat(s.step()).isEqualTo(Duration.ofMinutes(1));
    assertThat(s.offset()).isEqualTo(Duration.ofMinutes(5));
    assertThat(s.at()).isEqualTo(AtModifier.END);
    assertThat(s.positionRange()).isEqualTo(new PositionRange(0, 39));
    assertThat(s.toString()).isEqualTo("rate(foo[1m])[30m:1m] @ end() offset 5m");
  }

  @Test
  void aggregations() {
    AggregateExpr a = (AggregateExpr) parse("sum(rate(foo[5m])) by (job, instance)");
    assertThat(a.op()).isEqualTo(AggregateOp.SUM);
    assertThat(a.param()).isNull();
    assertThat(a.grouping()).containsExactly("job", "instance");
    assertThat(a.without()).isFalse();
    assertThat(a.positionRange()).isEqualTo(new PositionRange(0, 37));
    assertThat(a.toString()).isEqualTo("sum by (job, instance) (rate(foo[5m]))");

    AggregateExpr t = (AggregateExpr) parse("TOPK without (a) (3, foo)");
    assertThat(t.op()).isEqualTo(AggregateOp.TOPK);
    assertThat(t.param()).isEqualTo(new NumberLiteral(3, false, new PositionRange(18, 19)));
    assertThat(t.without()).isTrue();
    assertThat(t.toString()).isEqualTo("topk without (a) (3, foo)");

    assertThat(parse("count_values(\"v\", foo)").toString()).isEqualTo("count_values(\"v\", foo)");
    assertThat(parse("quantile(0.9, foo)").toString()).isEqualTo("quantile(0.9, foo)");
    assertThat(parse("sum by () (foo)").toString()).isEqualTo("sum(foo)");
    assertThat(parse("sum without () (foo)").toString()).isEqualTo("sum without () (foo)");
    assertThat(parse("sum by (a,) (foo)").toString()).isEqualTo("sum by (a) (foo)");
  }

  @Test
  void vectorMatchingIsNormalizedLikeCheckAst() {
    BinaryExpr b = (BinaryExpr) parse("a * on(b) group_left(c) d");
    assertThat(b.matching())
        .isEqualTo(
            new VectorMatching(
                VectorMatching.Cardinality.MANY_TO_ONE, List.of("b"), true, List.of("c")));
    assertThat(b.toString()).isEqualTo("a * on (b) group_left (c) d");

    BinaryExpr r = (BinaryExpr) parse("a / ignoring(x) group_right b");
    assertThat(r.matching().card()).isEqualTo(VectorMatching.Cardinality.ONE_TO_MANY);
    assertThat(r.matching().on()).isFalse();
    assertThat(r.matching().include()).isEmpty();
    assertThat(r.toString()).isEqualTo("a / ignoring (x) group_right () b");

    BinaryExpr set = (BinaryExpr) parse("a and on(x) b");
    assertThat(set.matching().card()).isEqualTo(VectorMatching.Cardinality.MANY_TO_MANY);
    assertThat(((BinaryExpr) parse("a or b")).matching().card())
        .isEqualTo(VectorMatching.Cardinality.MANY_TO_MANY);

    BinaryExpr scalar = (BinaryExpr) parse("a + on() 1");
    assertThat(scalar.matching()).isNull();
    assertThat(scalar.toString()).isEqualTo("a + 1");
    assertThat(scalar.type()).isEqualTo(ValueType.VECTOR);
    assertThat(parse("1 + 2").type()).isEqualTo(ValueType.SCALAR);

    BinaryExpr cmp = (BinaryExpr) parse("a > bool b");
    assertThat(cmp.returnBool()).isTrue();
    assertThat(cmp.op()).isEqualTo(BinaryOp.GTR);
    assertThat(cmp.positionRange()).isEqualTo(new PositionRange(0, 10));
  }

  @Test
  void unaryAndParen() {
    UnaryExpr u = (UnaryExpr) parse("-foo");
    assertThat(u.negate()).isTrue();
    assertThat(u.positionRange()).isEqualTo(new PositionRange(0, 4));
    assertThat(parse("-1")).isEqualTo(new NumberLiteral(-1, false, new PositionRange(0, 2)));
    ParenExpr p = (ParenExpr) parse("(foo)");
    assertThat(p.type()).isEqualTo(ValueType.VECTOR);
    assertThat(p.positionRange()).isEqualTo(new PositionRange(0, 5));
  }

  @Test
  void callsKnowTheirFunction() {
    Call c = (Call) parse("label_replace(up, \"a\", \"$1\", \"b\", \"(.*)\")");
    assertThat(c.function()).isEqualTo(Functions.lookup("label_replace").orElseThrow());
    assertThat(c.args()).hasSize(5);
    assertThat(c.type()).isEqualTo(ValueType.VECTOR);
    assertThat(((Call) parse("time()")).type()).isEqualTo(ValueType.SCALAR);
    assertThat(parse("hour()").toString()).isEqualTo("hour()");
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      quoteCharacter = '~',
      value = {
        "sum by(job)(rate(foo{a=\"b\"}[5m])) | sum by (job) (rate(foo{a=\"b\"}[5m]))",
        "SUM(x) BY (job) | sum by (job) (x)",
        "foo OFFSET 5m @ 10 | foo @ 10.000 offset 5m",
        "foo{b=\"1\",a=\"2\"} | foo{a=\"2\",b=\"1\"}",
        "{__name__=\"foo\"} | {__name__=\"foo\"}",
        "foo{} | foo",
        "a>=bool b | a >= bool b",
        "a </ 1 | a </ 1",
        "max_over_time(foo[1h:5m] offset 1h) | max_over_time(foo[1h:5m] offset 1h)",
        "1 + -(2) | 1 + -(2)",
        "-1m | -1m",
      })
  void canonicalText(String query, String printed) {
    String once = parse(query).toString();
    assertThat(once).isEqualTo(printed);
    assertThat(parse(once).toString()).isEqualTo(once);
  }

  @Test
  void commentsAndAlternations() {
    assertThat(parse("foo # a comment\n + bar").toString()).isEqualTo("foo + bar");
    assertThat(parse("{__name__=~\"foo|bar\"}").toString()).isEqualTo("{__name__=~\"foo|bar\"}");
  }

  @Test
  void parseMetricSelector() {
    assertThat(PromqlParser.parseMetricSelector("foo{a=\"b\"}"))
        .containsExactly(LabelMatcher.equal("a", "b"), LabelMatcher.equal("__name__", "foo"));
    assertThat(PromqlParser.parseMetricSelector("sum"))
        .containsExactly(LabelMatcher.equal("__name__", "sum"));
    assertThat(PromqlParser.parseMetricSelector("{\"my.metric\",job=~\"a|b\"}"))
        .containsExactly(
            LabelMatcher.equal("__name__", "my.metric"), LabelMatcher.regex("job", "a|b"));
    // Not type checked, as Prometheus: callers decide whether {} may select everything.
    assertThat(PromqlParser.parseMetricSelector("{}")).isEmpty();
    assertThatThrownBy(() -> PromqlParser.parseMetricSelector("foo offset 5m"))
        .isInstanceOf(ParseException.class)
        .hasMessage("1:5: parse error: unexpected <offset>");
    assertThatThrownBy(() -> PromqlParser.parseMetricSelector("foo[5m]"))
        .hasMessage("1:4: parse error: unexpected \"[\"");
    assertThatThrownBy(() -> PromqlParser.parseMetricSelector("rate(foo)"))
        .hasMessage("1:5: parse error: unexpected \"(\"");
    assertThatThrownBy(() -> PromqlParser.parseMetricSelector(""))
        .hasMessage("unknown position: parse error: unexpected end of input");
  }
}
