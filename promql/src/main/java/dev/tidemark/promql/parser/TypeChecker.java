package dev.tidemark.promql.parser;

import dev.tidemark.tsdb.model.Labels;
import dev.tidemark.tsdb.model.PromText;
import dev.tidemark.tsdb.query.LabelMatcher;
import java.util.ArrayList;
import java.util.List;

/**
 * Type checking of a parsed expression, as Prometheus' {@code checkAST} (parse.go): operand and
 * argument types against {@link Functions} and {@link AggregateOp}, the rules of {@code bool},
 * vector matching and set operators, and selectors that would select everything.
 *
 * <p>Like {@code checkAST} it also normalizes the tree, returning a rewritten copy: set operators
 * get many-to-many matching, and a binary expression with a scalar operand loses its vector
 * matching ({@link BinaryExpr#matching()} is null).
 *
 * <p>Children are checked before their parent, left to right; the first error throws.
 */
final class TypeChecker {

  private final String input;

  TypeChecker(String input) {
    this.input = input;
  }

  Expr check(Expr e) {
    return check(e, false);
  }

  private Expr check(Expr node, boolean bypassEmptyMatcherCheck) {
    if (node instanceof AggregateExpr a) {
      Expr expr = expectType(a.expr(), ValueType.VECTOR, "aggregation expression");
      Expr param = a.param();
      if (a.op().hasParam()) {
        param = expectType(param, a.op().paramType(), "aggregation parameter");
      }
      return new AggregateExpr(a.op(), param, expr, a.grouping(), a.without(), a.positionRange());
    }
    if (node instanceof BinaryExpr b) {
      return checkBinary(b);
    }
    if (node instanceof Call c) {
      return checkCall(c);
    }
    if (node instanceof ParenExpr p) {
      return new ParenExpr(check(p.expr()), p.positionRange());
    }
    if (node instanceof UnaryExpr u) {
      Expr inner = check(u.expr());
      ValueType t = inner.type();
      if (t != ValueType.SCALAR && t != ValueType.VECTOR) {
        throw error(
            u.positionRange(),
            "unary expression only allowed on expressions of type scalar or instant vector, got "
                + PromText.quote(t.documentedName()));
      }
      return new UnaryExpr(u.negate(), inner, u.start());
    }
    if (node instanceof SubqueryExpr s) {
      Expr inner = check(s.expr());
      if (inner.type() != ValueType.VECTOR) {
        throw error(
            s.positionRange(),
            "subquery is only allowed on instant vector, got "
                + inner.type().promName()
                + " instead");
      }
      return s.withExpr(inner);
    }
    if (node instanceof MatrixSelector m) {
      check(m.selector());
      return m;
    }
    if (node instanceof VectorSelector vs) {
      checkSelector(vs, bypassEmptyMatcherCheck);
      return vs;
    }
    return node; // NumberLiteral, StringLiteral
  }

  private Expr expectType(Expr e, ValueType want, String context) {
    Expr checked = check(e);
    if (checked.type() != want) {
      throw error(
          e.positionRange(),
          "expected type "
              + want.documentedName()
              + " in "
              + context
              + ", got "
              + checked.type().documentedName());
    }
    return checked;
  }

  private Expr checkBinary(BinaryExpr n) {
    Expr lhs = check(n.lhs());
    Expr rhs = check(n.rhs());
    ValueType lt = lhs.type();
    ValueType rt = rhs.type();
    BinaryOp op = n.op();
    if (n.returnBool() && !op.isComparison()) {
      throw error(opRange(n), "bool modifier can only be used on comparison operators");
    }
    if (op.isComparison() && !n.returnBool() && lt == ValueType.SCALAR && rt == ValueType.SCALAR) {
      throw error(opRange(n), "comparisons between scalars must use BOOL modifier");
    }
    VectorMatching vm = n.matching();
    if (op.isSetOperator() && vm.card() == VectorMatching.Cardinality.ONE_TO_ONE) {
      vm = vm.withCard(VectorMatching.Cardinality.MANY_TO_MANY);
    }
    if (vm.on()) {
      for (String l1 : vm.matchingLabels()) {
        if (vm.include().contains(l1)) {
          throw error(
              opRange(n),
              "label " + PromText.quote(l1) + " must not occur in ON and GROUP clause at once");
        }
      }
    }
    if (lt != ValueType.SCALAR && lt != ValueType.VECTOR) {
      throw error(
          lhs.positionRange(),
          "binary expression must contain only scalar and instant vector types");
    }
    if (rt != ValueType.SCALAR && rt != ValueType.VECTOR) {
      throw error(
          rhs.positionRange(),
          "binary expression must contain only scalar and instant vector types");
    }
    if (lt != ValueType.VECTOR || rt != ValueType.VECTOR) {
      if (!vm.matchingLabels().isEmpty()) {
        throw error(n.positionRange(), "vector matching only allowed between instant vectors");
      }
      if (vm.hasFill()) {
        throw error(
            n.positionRange(), "filling in missing series only allowed between instant vectors");
      }
      vm = null;
    } else if (op.isSetOperator()) {
      if (vm.card() == VectorMatching.Cardinality.ONE_TO_MANY
          || vm.card() == VectorMatching.Cardinality.MANY_TO_ONE) {
        throw error(
            n.positionRange(),
            "no grouping allowed for " + PromText.quote(op.symbol()) + " operation");
      }
      if (vm.card() != VectorMatching.Cardinality.MANY_TO_MANY) {
        throw error(n.positionRange(), "set operations must always be many-to-many");
      }
      if (vm.hasFill()) {
        throw error(n.positionRange(), "filling in missing series not allowed for set operators");
      }
    }
    if ((lt == ValueType.SCALAR || rt == ValueType.SCALAR) && op.isSetOperator()) {
      throw error(
          n.positionRange(),
          "set operator "
              + PromText.quote(op.symbol())
              + " not allowed in binary scalar expression");
    }
    return new BinaryExpr(op, lhs, rhs, vm, n.returnBool());
  }

  /** The operator's range: from after the left operand to before the right one, spaces trimmed. */
  private PositionRange opRange(BinaryExpr n) {
    int start = n.lhs().positionRange().end();
    while (start < input.length() && Lexer.isSpace(input.charAt(start))) {
      start++;
    }
    int end = n.rhs().positionRange().start() - 1;
    while (end > start && Lexer.isSpace(input.charAt(end))) {
      end--;
    }
    return new PositionRange(start, end);
  }

  private Expr checkCall(Call c) {
    Function f = c.function();
    int n = c.args().size();
    String name = PromText.quote(f.name());
    if (f.variadic() == 0) {
      if (n != f.argTypes().size()) {
        throw error(
            c.positionRange(),
            "expected " + f.argTypes().size() + " argument(s) in call to " + name + ", got " + n);
      }
    } else {
      if (n < f.minArgs()) {
        throw error(
            c.positionRange(),
            "expected at least " + f.minArgs() + " argument(s) in call to " + name + ", got " + n);
      }
      if (n > f.maxArgs()) {
        throw error(
            c.positionRange(),
            "expected at most " + f.maxArgs() + " argument(s) in call to " + name + ", got " + n);
      }
    }
    boolean info = f.name().equals("info") && n > 1;
    if (info) {
      Expr labels = c.args().get(1);
      if (labels.type() != ValueType.VECTOR) {
        throw error(
            c.positionRange(),
            "expected type instant vector in call to function "
                + name
                + ", got "
                + labels.type().documentedName());
      }
      if (labels instanceof VectorSelector vs) {
        if (!vs.name().isEmpty()) {
          throw error(
              labels.positionRange(), "expected label selectors only, got vector selector instead");
        }
      } else {
        throw error(labels.positionRange(), "expected label selectors only");
      }
    }
    List<Expr> args = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      Expr arg = c.args().get(i);
      Expr checked = check(arg, info && i == 1);
      ValueType want = f.argType(i);
      if (checked.type() != want) {
        throw error(
            arg.positionRange(),
            "expected type "
                + want.documentedName()
                + " in call to function "
                + name
                + ", got "
                + checked.type().documentedName());
      }
      args.add(checked);
    }
    return new Call(f, args, c.positionRange());
  }

  private void checkSelector(VectorSelector vs, boolean bypassEmptyMatcherCheck) {
    List<LabelMatcher> ms = vs.matchers();
    if (!vs.name().isEmpty()) {
      // The last matcher is the one for the name outside the braces.
      for (LabelMatcher m : ms.subList(0, ms.size() - 1)) {
        if (m.name().equals(Labels.METRIC_NAME)) {
          throw error(
              vs.positionRange(),
              "metric name must not be set twice: "
                  + PromText.quote(vs.name())
                  + " or "
                  + PromText.quote(m.value()));
        }
      }
      return;
    }
    if (bypassEmptyMatcherCheck) {
      return;
    }
    for (LabelMatcher m : ms) {
      if (!m.matchesEmpty()) {
        return;
      }
    }
    throw error(vs.positionRange(), "vector selector must contain at least one non-empty matcher");
  }

  private ParseException error(PositionRange range, String reason) {
    return new ParseException(input, range, reason);
  }
}
