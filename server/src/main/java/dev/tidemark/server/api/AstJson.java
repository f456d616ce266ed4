package dev.tidemark.server.api;

import com.fasterxml.jackson.core.JsonGenerator;
import dev.tidemark.promql.parser.AggregateExpr;
import dev.tidemark.promql.parser.AtModifier;
import dev.tidemark.promql.parser.BinaryExpr;
import dev.tidemark.promql.parser.Call;
import dev.tidemark.promql.parser.Expr;
import dev.tidemark.promql.parser.MatrixSelector;
import dev.tidemark.promql.parser.NumberLiteral;
import dev.tidemark.promql.parser.ParenExpr;
import dev.tidemark.promql.parser.StringLiteral;
import dev.tidemark.promql.parser.SubqueryExpr;
import dev.tidemark.promql.parser.UnaryExpr;
import dev.tidemark.promql.parser.ValueType;
import dev.tidemark.promql.parser.VectorMatching;
import dev.tidemark.promql.parser.VectorSelector;
import dev.tidemark.tsdb.model.PromText;
import dev.tidemark.tsdb.query.LabelMatcher;
import java.io.IOException;
import java.util.List;

/**
 * The syntax tree of {@code /api/v1/parse_query}, in the JSON shape of Prometheus' {@code
 * translateAST} (its UI's tree view reads it). Duration expressions and the {@code anchored}/{@code
 * smoothed} modifiers are not in Tidemark's language: their fields are always null or false.
 */
final class AstJson {
  private AstJson() {}

  static void write(JsonGenerator g, Expr e) throws IOException {
    if (e == null) {
      g.writeNull();
      return;
    }
    g.writeStartObject();
    if (e instanceof AggregateExpr a) {
      g.writeStringField("type", "aggregation");
      g.writeStringField("op", a.op().keyword());
      g.writeFieldName("expr");
      write(g, a.expr());
      g.writeFieldName("param");
      write(g, a.param());
      g.writeFieldName("grouping");
      strings(g, a.grouping());
      g.writeBooleanField("without", a.without());
    } else if (e instanceof BinaryExpr b) {
      g.writeStringField("type", "binaryExpr");
      g.writeStringField("op", b.op().symbol());
      g.writeFieldName("lhs");
      write(g, b.lhs());
      g.writeFieldName("rhs");
      write(g, b.rhs());
      g.writeFieldName("matching");
      VectorMatching m = b.matching();
      if (m == null) {
        g.writeNull();
      } else {
        g.writeStartObject();
        g.writeStringField("card", m.card().toString());
        g.writeFieldName("labels");
        strings(g, m.matchingLabels());
        g.writeBooleanField("on", m.on());
        g.writeFieldName("include");
        strings(g, m.include());
        g.writeObjectFieldStart("fillValues");
        g.writeNullField("lhs");
        g.writeNullField("rhs");
        g.writeEndObject();
        g.writeEndObject();
      }
      g.writeBooleanField("bool", b.returnBool());
    } else if (e instanceof Call c) {
      g.writeStringField("type", "call");
      g.writeObjectFieldStart("func");
      g.writeStringField("name", c.function().name());
      g.writeArrayFieldStart("argTypes");
      for (ValueType t : c.function().argTypes()) {
        g.writeString(t.promName());
      }
      g.writeEndArray();
      g.writeNumberField("variadic", c.function().variadic());
      g.writeStringField("returnType", c.function().returnType().promName());
      g.writeEndObject();
      g.writeArrayFieldStart("args");
      for (Expr arg : c.args()) {
        write(g, arg);
      }
      g.writeEndArray();
    } else if (e instanceof MatrixSelector ms) {
      VectorSelector vs = ms.selector();
      g.writeStringField("type", "matrixSelector");
      g.writeStringField("name", vs.name() == null ? "" : vs.name());
      g.writeNumberField("range", ms.range().toMillis());
      g.writeNullField("rangeExpr");
      selectorFields(g, vs);
    } else if (e instanceof SubqueryExpr s) {
      g.writeStringField("type", "subquery");
      g.writeFieldName("expr");
      write(g, s.expr());
      g.writeNumberField("range", s.range().toMillis());
      g.writeNullField("rangeExpr");
      g.writeNumberField("offset", s.offset().toMillis());
      g.writeNullField("offsetExpr");
      g.writeNumberField("step", s.step() == null ? 0 : s.step().toMillis());
      g.writeNullField("stepExpr");
      at(g, s.at());
    } else if (e instanceof NumberLiteral n) {
      g.writeStringField("type", "numberLiteral");
      g.writeStringField("val", PromText.formatPlain(n.value()));
    } else if (e instanceof ParenExpr p) {
      g.writeStringField("type", "parenExpr");
      g.writeFieldName("expr");
      write(g, p.expr());
    } else if (e instanceof StringLiteral s) {
      g.writeStringField("type", "stringLiteral");
      g.writeStringField("val", s.value());
    } else if (e instanceof UnaryExpr u) {
      g.writeStringField("type", "unaryExpr");
      g.writeStringField("op", u.negate() ? "-" : "+");
      g.writeFieldName("expr");
      write(g, u.expr());
    } else {
      VectorSelector vs = (VectorSelector) e;
      g.writeStringField("type", "vectorSelector");
      g.writeStringField("name", vs.name() == null ? "" : vs.name());
      selectorFields(g, vs);
    }
    g.writeEndObject();
  }

  private static void selectorFields(JsonGenerator g, VectorSelector vs) throws IOException {
    g.writeNumberField("offset", vs.offset().toMillis());
    g.writeNullField("offsetExpr");
    g.writeArrayFieldStart("matchers");
    for (LabelMatcher m : vs.matchers()) {
      g.writeStartObject();
      g.writeStringField("name", m.name());
      g.writeStringField("value", m.value());
      g.writeStringField("type", m.op().symbol());
      g.writeEndObject();
    }
    g.writeEndArray();
    at(g, vs.at());
    g.writeBooleanField("anchored", false);
    g.writeBooleanField("smoothed", false);
  }

  private static void at(JsonGenerator g, AtModifier at) throws IOException {
    if (at == null) {
      g.writeNullField("timestamp");
      g.writeNullField("startOrEnd");
      return;
    }
    switch (at.kind()) {
      case START -> {
        g.writeNullField("timestamp");
        g.writeStringField("startOrEnd", "start");
      }
      case END -> {
        g.writeNullField("timestamp");
        g.writeStringField("startOrEnd", "end");
      }
      default -> {
        g.writeNumberField("timestamp", at.timestampMillis());
        g.writeNullField("startOrEnd");
      }
    }
  }

  private static void strings(JsonGenerator g, List<String> list) throws IOException {
    g.writeStartArray();
    for (String s : list) {
      g.writeString(s);
    }
    g.writeEndArray();
  }
}
