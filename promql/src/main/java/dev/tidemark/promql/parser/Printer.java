package dev.tidemark.promql.parser;

import dev.tidemark.tsdb.model.Labels;
import dev.tidemark.tsdb.model.PromText;
import dev.tidemark.tsdb.query.LabelMatcher;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * The canonical PromQL text of an expression, as Prometheus' {@code printer.go} {@code String()}:
 *
 * <ul>
 *   <li>binary operators with one space either side, modifiers after the operator ({@code a > bool
 *       on (x) group_left (y) b}); no parentheses are added, only {@link ParenExpr}s print them;
 *   <li>aggregations with the grouping first: {@code sum by (job) (x)}, {@code topk(3, x)};
 *   <li>selectors with the name outside the braces and the other matchers sorted by their text:
 *       {@code foo{a="b",c=~"d"}}; {@code @} before {@code offset}; {@code anchored}/{@code
 *       smoothed} before {@code offset}, after {@code @} on an instant selector ({@code a @ 1.000
 *       smoothed}) but before it on a range selector ({@code a[5m] smoothed @ 1.000}), as {@code
 *       printer.go} places them;
 *   <li>durations in canonical units ({@code 90m} prints {@code 1h30m}, {@code [90]} prints {@code
 *       [1m30s]}); numbers in the shortest form, never with an exponent ({@code 1e3} prints {@code
 *       1000}); {@code @} times with three decimals;
 *   <li>strings and matcher values double-quoted with Go escapes; label names quoted when they are
 *       not plain ({@code "a.b"}).
 * </ul>
 *
 * <p>Parsing the output gives a tree that prints the same text.
 */
final class Printer {

  private Printer() {}

  static String print(Expr e) {
    StringBuilder b = new StringBuilder();
    write(b, e);
    return b.toString();
  }

  private static void writeExtendedRange(StringBuilder b, ExtendedRange m) {
    if (m != ExtendedRange.NONE) {
      b.append(' ').append(m.keyword);
    }
  }

  private static void write(StringBuilder b, Expr e) {
    if (e instanceof NumberLiteral n) {
      writeNumber(b, n);
    } else if (e instanceof StringLiteral s) {
      b.append(PromText.quote(s.value()));
    } else if (e instanceof VectorSelector vs) {
      writeSelector(b, vs);
      writeAt(b, vs.at());
      writeExtendedRange(b, vs.extendedRange());
      writeOffset(b, vs.offset(), vs.offsetExpr());
    } else if (e instanceof MatrixSelector m) {
      writeSelector(b, m.selector());
      b.append('[');
      writeDuration(b, m.range(), m.rangeExpr());
      b.append(']');
      writeExtendedRange(b, m.selector().extendedRange()); // before @ here, after it above
      writeAt(b, m.selector().at());
      writeOffset(b, m.selector().offset(), m.selector().offsetExpr());
    } else if (e instanceof SubqueryExpr s) {
      write(b, s.expr());
      b.append('[');
      writeDuration(b, s.range(), s.rangeExpr());
      b.append(':');
      if (s.hasStep()) {
        writeDuration(b, s.step(), s.stepExpr());
      }
      b.append(']');
      writeAt(b, s.at());
      writeOffset(b, s.offset(), s.offsetExpr());
    } else if (e instanceof Call c) {
      b.append(c.function().name()).append('(');
      writeList(b, c.args());
      b.append(')');
    } else if (e instanceof AggregateExpr a) {
      b.append(a.op().keyword());
      if (a.without()) {
        b.append(" without (");
        writeLabels(b, a.grouping());
        b.append(") ");
      } else if (!a.grouping().isEmpty()) {
        b.append(" by (");
        writeLabels(b, a.grouping());
        b.append(") ");
      }
      b.append('(');
      if (a.param() != null) {
        write(b, a.param());
        b.append(", ");
      }
      write(b, a.expr());
      b.append(')');
    } else if (e instanceof BinaryExpr be) {
      write(b, be.lhs());
      b.append(' ').append(be.op().symbol());
      if (be.returnBool()) {
        b.append(" bool");
      }
      writeMatching(b, be.matching());
      b.append(' ');
      write(b, be.rhs());
    } else if (e instanceof UnaryExpr u) {
      b.append(u.negate() ? '-' : '+');
      write(b, u.expr());
    } else if (e instanceof ParenExpr p) {
      b.append('(');
      write(b, p.expr());
      b.append(')');
    } else {
      throw new IllegalArgumentException("unknown node " + e.getClass());
    }
  }

  private static void writeNumber(StringBuilder b, NumberLiteral n) {
    if (n.duration()) {
      double v = n.value();
      if (v < 0) {
        b.append('-').append(PromText.formatDurationMillis((long) (-v * 1e9) / 1_000_000));
      } else {
        b.append(PromText.formatDurationMillis((long) (v * 1e9) / 1_000_000));
      }
    } else {
      b.append(PromText.formatPlain(n.value()));
    }
  }

  private static void writeList(StringBuilder b, List<Expr> exprs) {
    for (int i = 0; i < exprs.size(); i++) {
      if (i > 0) {
        b.append(", ");
      }
      write(b, exprs.get(i));
    }
  }

  /** {@code name{matchers}} without modifiers; the name matcher is implied by the name. */
  private static void writeSelector(StringBuilder b, VectorSelector vs) {
    List<String> parts = new ArrayList<>();
    for (LabelMatcher m : vs.matchers()) {
      if (m.name().equals(Labels.METRIC_NAME)
          && m.op() == LabelMatcher.Op.EQUAL
          && m.value().equals(vs.name())
          && !m.value().isEmpty()) {
        continue;
      }
      parts.add(matcherString(m));
    }
    b.append(vs.name());
    if (!parts.isEmpty()) {
      Collections.sort(parts); // Go's sort.Strings: byte order, the same as UTF-16 order here
      b.append('{').append(String.join(",", parts)).append('}');
    }
  }

  /** Prometheus' {@code labels.Matcher.String()}. */
  static String matcherString(LabelMatcher m) {
    String name = PromText.isLegacyLabelName(m.name()) ? m.name() : PromText.quote(m.name());
    return name + m.op().symbol() + PromText.quote(m.value());
  }

  private static void writeLabels(StringBuilder b, List<String> labels) {
    for (int i = 0; i < labels.size(); i++) {
      if (i > 0) {
        b.append(", ");
      }
      String l = labels.get(i);
      b.append(PromText.isLegacyLabelName(l) ? l : PromText.quote(l));
    }
  }

  private static void writeMatching(StringBuilder b, VectorMatching vm) {
    if (vm == null) {
      return;
    }
    boolean grouped =
        vm.card() == VectorMatching.Cardinality.MANY_TO_ONE
            || vm.card() == VectorMatching.Cardinality.ONE_TO_MANY;
    if (!vm.matchingLabels().isEmpty() || vm.on() || grouped) {
      b.append(vm.on() ? " on (" : " ignoring (");
      writeLabels(b, vm.matchingLabels());
      b.append(')');
    }
    if (grouped) {
      b.append(
          vm.card() == VectorMatching.Cardinality.MANY_TO_ONE ? " group_left (" : " group_right (");
      writeLabels(b, vm.include());
      b.append(')');
    }
    // Go's %v of the values; one fill when both sides have the same.
    if (vm.fillLeft() != null
        && vm.fillRight() != null
        && vm.fillLeft().doubleValue() == vm.fillRight().doubleValue()) {
      b.append(" fill (").append(PromText.formatFloat(vm.fillLeft())).append(')');
    } else {
      if (vm.fillLeft() != null) {
        b.append(" fill_left (").append(PromText.formatFloat(vm.fillLeft())).append(')');
      }
      if (vm.fillRight() != null) {
        b.append(" fill_right (").append(PromText.formatFloat(vm.fillRight())).append(')');
      }
    }
  }

  private static void writeAt(StringBuilder b, AtModifier at) {
    if (at == null) {
      return;
    }
    switch (at.kind()) {
      case START -> b.append(" @ start()");
      case END -> b.append(" @ end()");
      case TIMESTAMP -> b.append(" @ ").append(PromText.formatSecondsFixed3(at.timestampMillis()));
    }
  }

  private static void writeDuration(StringBuilder b, Duration d, DurationExpr expr) {
    if (expr != null) {
      expr.write(b);
    } else {
      b.append(PromText.formatDuration(d));
    }
  }

  private static void writeOffset(StringBuilder b, Duration offset, DurationExpr expr) {
    if (expr != null) {
      b.append(" offset ");
      expr.write(b);
      return;
    }
    long nanos = offset.toNanos();
    if (nanos > 0) {
      b.append(" offset ").append(PromText.formatDuration(offset));
    } else if (nanos < 0) {
      b.append(" offset -").append(PromText.formatDuration(offset.negated()));
    }
  }
}
