package dev.tidemark.promql.parser;

import dev.tidemark.tsdb.model.PromText;
import dev.tidemark.tsdb.query.LabelMatcher;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The PromQL parser: recursive descent with precedence climbing for binary operators, producing the
 * same trees as Prometheus' yacc grammar ({@code generated_parser.y}).
 *
 * <p>Design note. Prometheus resolves its grammar's ambiguities with yacc precedences; the same
 * decisions here, in order of binding strength:
 *
 * <ol>
 *   <li>Postfix modifiers ({@code [range]}, {@code [range:step]}, {@code offset}, {@code @}, {@code
 *       anchored}, {@code smoothed}) bind to the primary expression right before them: {@code a + b
 *       offset 5m} is {@code a + (b offset 5m)}, {@code -foo[5m]} is {@code -(foo[5m])}.
 *   <li>{@code ^}, right-associative.
 *   <li>Unary {@code -}/{@code +} (yacc's {@code %prec MUL}): its operand takes postfix modifiers
 *       and {@code ^} only; a number literal operand is folded ({@code -1} is a literal).
 *   <li>The binary operators by {@link BinaryOp#precedence()}, left-associative.
 * </ol>
 *
 * <p>Keywords are context-dependent as in Prometheus: in operand position {@code sum}, {@code by},
 * {@code offset}, {@code and}... name metrics unless an aggregation (or function call) follows;
 * after an operand they are modifiers or operators.
 *
 * <p>The first error ends the parse with a {@link ParseException} in Prometheus' wording ({@code
 * unexpected <op:*>}, {@code unexpected identifier "b" in label matching, expected string});
 * Prometheus collects several but reports the first. Type checking is a separate pass ({@link
 * TypeChecker}) run on a tree without syntax errors.
 *
 * <p>Nesting is limited to {@link PromqlParser#MAX_DEPTH} levels, both while parsing (each nested
 * parenthesis, unary operator, call argument or right-associative {@code ^} is one recursion) and
 * in the finished tree (a chain {@code a + a + ... + a} is parsed in a loop but is as deep as it is
 * long): the parser, type checker, printer and evaluator all recurse over the tree, and a thread's
 * stack holds some hundreds of levels of the costliest shape (nested calls), not 10,000.
 *
 * <p>Not thread-safe: one parser per query.
 */
final class Parser {

  private final String input;
  private final Lexer lexer;
  private final ParserOptions options;
  private Token peeked;

  /** End of the last consumed token: where the node being built ends. */
  private int lastEnd;

  /** How many {@link #parseExpr} calls are open: the parser's recursion depth. */
  private int depth;

  Parser(String input, ParserOptions options) {
    this.input = input;
    this.lexer = new Lexer(input);
    this.options = options;
  }

  // ---- entry points ----

  /** A whole expression, then the end of input. Not type checked yet. */
  Expr parseExpression() {
    if (peek().type() == TokenType.EOF) {
      throw error(new PositionRange(0, 0), "no expression found in input");
    }
    Expr e = parseExpr(0);
    expectEof();
    checkDepth(e);
    return e;
  }

  private ParseException tooDeep(PositionRange at) {
    return error(
        at, "expression nested too deeply: more than " + PromqlParser.MAX_DEPTH + " levels");
  }

  /**
   * Refuses a tree deeper than {@link PromqlParser#MAX_DEPTH} nodes, walking it without recursion;
   * the error points at the first node too deep.
   */
  private void checkDepth(Expr root) {
    java.util.ArrayDeque<Expr> nodes = new java.util.ArrayDeque<>();
    java.util.ArrayDeque<Integer> depths = new java.util.ArrayDeque<>();
    nodes.push(root);
    depths.push(1);
    while (!nodes.isEmpty()) {
      Expr e = nodes.pop();
      int d = depths.pop();
      if (d > PromqlParser.MAX_DEPTH) {
        throw tooDeep(e.positionRange());
      }
      for (Expr child : children(e)) {
        if (child != null) {
          nodes.push(child);
          depths.push(d + 1);
        }
      }
    }
  }

  private static List<Expr> children(Expr e) {
    if (e instanceof ParenExpr p) {
      return List.of(p.expr());
    } else if (e instanceof UnaryExpr u) {
      return List.of(u.expr());
    } else if (e instanceof BinaryExpr b) {
      return List.of(b.lhs(), b.rhs());
    } else if (e instanceof Call c) {
      return c.args();
    } else if (e instanceof AggregateExpr a) {
      return a.param() == null ? List.of(a.expr()) : List.of(a.param(), a.expr());
    } else if (e instanceof SubqueryExpr q) {
      return List.of(q.expr());
    } else if (e instanceof MatrixSelector m) {
      return List.of(m.selector());
    }
    return List.of();
  }

  /** A vector selector alone ({@code foo{a="b"}}), then the end of input. */
  VectorSelector parseSelectorOnly() {
    Token t = peek();
    VectorSelector vs;
    if (t.type() == TokenType.LEFT_BRACE) {
      vs = parseVectorSelector(null);
    } else if (t.type().isMetricIdentifier()) {
      next();
      vs = parseVectorSelector(t);
    } else {
      throw unexpected(t, null, null);
    }
    expectEof();
    return vs;
  }

  private void expectEof() {
    Token t = peek();
    if (t.type() != TokenType.EOF) {
      throw unexpected(t, null, null);
    }
  }

  // ---- tokens and errors ----

  private Token peek() {
    if (peeked == null) {
      peeked = lexer.next();
      if (peeked.type() == TokenType.ERROR) {
        throw error(new PositionRange(peeked.pos(), input.length()), peeked.val());
      }
    }
    return peeked;
  }

  private Token next() {
    Token t = peek();
    peeked = null;
    lastEnd = t.end();
    return t;
  }

  ParseException error(PositionRange range, String reason) {
    return new ParseException(input, range, reason);
  }

  /** Prometheus' {@code parser.unexpected}: "unexpected X[ in context][, expected Y]". */
  private ParseException unexpected(Token t, String context, String expected) {
    StringBuilder msg = new StringBuilder("unexpected ").append(t.desc());
    if (context != null) {
      msg.append(" in ").append(context);
    }
    if (expected != null) {
      msg.append(", expected ").append(expected);
    }
    return error(t.range(), msg.toString());
  }

  // ---- expressions ----

  /** Binary operators of precedence {@code minPrec} and above, by precedence climbing. */
  private Expr parseExpr(int minPrec) {
    if (depth >= PromqlParser.MAX_DEPTH) {
      throw tooDeep(peek().range());
    }
    depth++;
    try {
      return parseBinary(minPrec);
    } finally {
      depth--;
    }
  }

  private Expr parseBinary(int minPrec) {
    Expr lhs = parseUnary();
    while (true) {
      BinaryOp op = peek().type().binaryOp();
      if (op == null || op.precedence() < minPrec) {
        return lhs;
      }
      next();
      boolean returnBool = false;
      if (peek().type() == TokenType.BOOL) {
        next();
        returnBool = true;
      }
      VectorMatching matching = parseVectorMatching();
      Expr rhs = parseExpr(op.rightAssociative() ? op.precedence() : op.precedence() + 1);
      lhs = new BinaryExpr(op, lhs, rhs, matching, returnBool);
    }
  }

  /** {@code on (...)} / {@code ignoring (...)}, then {@code group_left}/{@code group_right}. */
  private VectorMatching parseVectorMatching() {
    VectorMatching.Cardinality card = VectorMatching.Cardinality.ONE_TO_ONE;
    List<String> matchingLabels = List.of();
    List<String> include = List.of();
    boolean on = false;
    TokenType t = peek().type();
    if (t == TokenType.ON || t == TokenType.IGNORING) {
      next();
      on = t == TokenType.ON;
      matchingLabels = parseGroupingLabels();
      t = peek().type();
      if (t == TokenType.GROUP_LEFT || t == TokenType.GROUP_RIGHT) {
        next();
        card =
            t == TokenType.GROUP_LEFT
                ? VectorMatching.Cardinality.MANY_TO_ONE
                : VectorMatching.Cardinality.ONE_TO_MANY;
        if (peek().type() == TokenType.LEFT_PAREN) {
          include = parseGroupingLabels();
        }
      }
    }
    t = peek().type();
    Double fillLeft = null;
    Double fillRight = null;
    if (t == TokenType.FILL || t == TokenType.FILL_LEFT || t == TokenType.FILL_RIGHT) {
      if (!options.binopFillModifiers()) {
        throw error(peek().range(), "binop fill modifiers are experimental and not enabled");
      }
      next();
      double v = parseFillValue();
      if (t == TokenType.FILL) {
        fillLeft = v;
        fillRight = v;
      } else {
        // fill_left(a) may be followed by fill_right(b), and the other way round.
        TokenType other = t == TokenType.FILL_LEFT ? TokenType.FILL_RIGHT : TokenType.FILL_LEFT;
        Double second = null;
        if (peek().type() == other) {
          next();
          second = parseFillValue();
        }
        fillLeft = t == TokenType.FILL_LEFT ? Double.valueOf(v) : second;
        fillRight = t == TokenType.FILL_RIGHT ? Double.valueOf(v) : second;
      }
    }
    return new VectorMatching(card, matchingLabels, on, include, fillLeft, fillRight);
  }

  /** {@code ( [+|-] number-or-duration )} after a {@code fill*} keyword. */
  private double parseFillValue() {
    Token open = next();
    if (open.type() != TokenType.LEFT_PAREN) {
      throw unexpected(open, "fill modifier", "\"(\"");
    }
    boolean negate = false;
    if (peek().type() == TokenType.ADD || peek().type() == TokenType.SUB) {
      negate = next().type() == TokenType.SUB;
    }
    Token num = next();
    if (num.type() != TokenType.NUMBER && num.type() != TokenType.DURATION) {
      throw unexpected(num, "fill modifier", "number or duration");
    }
    double v = ((NumberLiteral) literal(num)).value();
    Token close = next();
    if (close.type() != TokenType.RIGHT_PAREN) {
      throw unexpected(close, "fill modifier", "\")\"");
    }
    return negate ? -v : v;
  }

  /** A unary {@code -}/{@code +} binds like {@code *}: its operand extends over {@code ^} only. */
  private Expr parseUnary() {
    Token t = peek();
    if (t.type() == TokenType.ADD || t.type() == TokenType.SUB) {
      next();
      boolean negate = t.type() == TokenType.SUB;
      Expr operand = parseExpr(BinaryOp.POW.precedence());
      if (operand instanceof NumberLiteral n) {
        return new NumberLiteral(
            negate ? -n.value() : n.value(),
            n.duration(),
            new PositionRange(t.pos(), n.positionRange().end()));
      }
      return new UnaryExpr(negate, operand, t.pos());
    }
    return parsePostfix(parsePrimary());
  }

  private Expr parsePrimary() {
    Token t = peek();
    switch (t.type()) {
      case NUMBER:
      case DURATION:
        next();
        return literal(t);
      case STRING:
        next();
        return new StringLiteral(unquote(t), t.range());
      case LEFT_PAREN:
        {
          next();
          Expr e = parseExpr(0);
          Token r = next();
          if (r.type() != TokenType.RIGHT_PAREN) {
            throw unexpected(r, null, null);
          }
          return new ParenExpr(e, new PositionRange(t.pos(), r.end()));
        }
      case LEFT_BRACE:
        return parseVectorSelector(null);
      default:
        break;
    }
    if (t.type().aggregateOp() != null) {
      next();
      TokenType n = peek().type();
      if (n == TokenType.LEFT_PAREN || n == TokenType.BY || n == TokenType.WITHOUT) {
        return parseAggregate(t);
      }
      return parseVectorSelector(t);
    }
    if (t.type().isMetricIdentifier()) {
      next();
      if (t.type().isFunctionName() && peek().type() == TokenType.LEFT_PAREN) {
        return parseCall(t);
      }
      return parseVectorSelector(t);
    }
    throw unexpected(t, null, null);
  }

  /** Range or subquery brackets, {@code offset} and {@code @}, as many as follow. */
  private Expr parsePostfix(Expr e) {
    while (true) {
      Token t = peek();
      switch (t.type()) {
        case LEFT_BRACKET:
          e = parseRangeOrSubquery(e);
          break;
        case OFFSET:
          e = parseOffset(e);
          break;
        case AT:
          e = parseAt(e);
          break;
        case ANCHORED:
        case SMOOTHED:
          next();
          e =
              extendedRange(
                  e,
                  t.type() == TokenType.ANCHORED ? ExtendedRange.ANCHORED : ExtendedRange.SMOOTHED);
          break;
        default:
          return e;
      }
    }
  }

  // ---- literals ----

  private NumberLiteral literal(Token t) {
    try {
      if (t.type() == TokenType.DURATION) {
        return new NumberLiteral(
            GoNumbers.seconds(GoNumbers.parseDuration(t.val())), true, t.range());
      }
      return new NumberLiteral(GoNumbers.parseNumber(t.val()), false, t.range());
    } catch (GoNumbers.NumberFormatError e) {
      String reason =
          t.type() == TokenType.DURATION
              ? e.getMessage()
              : "error parsing number: " + e.getMessage();
      throw error(t.range(), reason);
    }
  }

  private String unquote(Token t) {
    try {
      return GoStrings.unquote(t.val());
    } catch (GoStrings.SyntaxException e) {
      throw error(
          t.range(), "error unquoting string " + PromText.quote(t.val()) + ": " + e.getMessage());
    }
  }

  // ---- selectors ----

  /** {@code name}, {@code name{...}} or {@code {...}} ({@code name} null). */
  private VectorSelector parseVectorSelector(Token name) {
    int start = name != null ? name.pos() : peek().pos();
    int end = name != null ? name.end() : start;
    List<LabelMatcher> matchers = new ArrayList<>();
    if (peek().type() == TokenType.LEFT_BRACE) {
      next();
      parseLabelMatchers(matchers);
      end = lastEnd;
    }
    String metric = name == null ? "" : name.val();
    if (!metric.isEmpty()) {
      matchers.add(LabelMatcher.equal(dev.tidemark.tsdb.model.Labels.METRIC_NAME, metric));
    }
    return new VectorSelector(metric, matchers, Duration.ZERO, null, new PositionRange(start, end));
  }

  /** The inside of braces, the left brace consumed, up to and including the right brace. */
  private void parseLabelMatchers(List<LabelMatcher> out) {
    if (peek().type() == TokenType.RIGHT_BRACE) {
      next();
      return;
    }
    while (true) {
      Token label = next();
      if (label.type() == TokenType.IDENTIFIER) {
        Token op = next();
        LabelMatcher.Op matchOp = matchOp(op);
        if (matchOp == null) {
          throw unexpected(op, "label matching", "label matching operator");
        }
        out.add(matcher(label, label.val(), matchOp, next()));
      } else if (label.type() == TokenType.STRING) {
        String name = unquote(label);
        LabelMatcher.Op matchOp = matchOp(peek());
        if (matchOp != null) {
          next();
          out.add(matcher(label, name, matchOp, next()));
        } else {
          out.add(LabelMatcher.equal(dev.tidemark.tsdb.model.Labels.METRIC_NAME, name));
        }
      } else {
        throw unexpected(label, "label matching", "identifier or \"}\"");
      }
      Token sep = next();
      if (sep.type() == TokenType.RIGHT_BRACE) {
        return;
      }
      if (sep.type() != TokenType.COMMA) {
        throw unexpected(sep, "label matching", "\",\" or \"}\"");
      }
      if (peek().type() == TokenType.RIGHT_BRACE) {
        next();
        return;
      }
    }
  }

  private static LabelMatcher.Op matchOp(Token t) {
    return switch (t.type()) {
      case EQL -> LabelMatcher.Op.EQUAL;
      case NEQ -> LabelMatcher.Op.NOT_EQUAL;
      case EQL_REGEX -> LabelMatcher.Op.REGEX;
      case NEQ_REGEX -> LabelMatcher.Op.NOT_REGEX;
      default -> null;
    };
  }

  private LabelMatcher matcher(Token label, String name, LabelMatcher.Op op, Token value) {
    if (value.type() != TokenType.STRING) {
      throw unexpected(value, "label matching", "string");
    }
    String v = unquote(value);
    try {
      return LabelMatcher.of(name, op, v);
    } catch (IllegalArgumentException e) {
      throw error(new PositionRange(label.pos(), value.end()), e.getMessage());
    }
  }

  /** {@code [range]} or {@code [range:step]} / {@code [range:]} after {@code e}. */
  private Expr parseRangeOrSubquery(Expr e) {
    Token lb = next();
    Object range =
        positiveDuration("subquery or range selector", "number, duration, step(), or range()");
    Token t = next();
    if (t.type() == TokenType.RIGHT_BRACKET) {
      String problem = null;
      if (!(e instanceof VectorSelector)) {
        problem = "ranges only allowed for vector selectors";
      } else if (((VectorSelector) e).hasOffset()) {
        problem = "no offset modifiers allowed before range";
      } else if (((VectorSelector) e).at() != null) {
        problem = "no @ modifiers allowed before range";
      }
      if (problem != null) {
        throw error(new PositionRange(lb.pos(), t.end()), problem);
      }
      VectorSelector vs = (VectorSelector) e;
      return new MatrixSelector(
          vs,
          durationOf(range),
          new PositionRange(vs.positionRange().start(), t.end()),
          exprOf(range));
    }
    if (t.type() != TokenType.COLON) {
      throw unexpected(t, "subquery or range", "\":\" or \"]\"");
    }
    Object step = null;
    if (peek().type() != TokenType.RIGHT_BRACKET) {
      step = positiveDuration("subquery selector", "number, duration, step(), range(), or \"]\"");
      Token rb = peek();
      if (rb.type() != TokenType.RIGHT_BRACKET) {
        throw unexpected(rb, "subquery selector", "\"]\"");
      }
    }
    Token rb = next();
    return new SubqueryExpr(
        e,
        durationOf(range),
        step == null ? Duration.ZERO : durationOf(step),
        Duration.ZERO,
        null,
        new PositionRange(e.positionRange().start(), rb.end()),
        exprOf(range),
        step == null ? null : exprOf(step),
        null);
  }

  /** The duration of a parsed literal, zero for an expression (resolved by the engine). */
  private static Duration durationOf(Object parsed) {
    return parsed instanceof NumberLiteral n ? toDuration(n.value()) : Duration.ZERO;
  }

  private static DurationExpr exprOf(Object parsed) {
    return parsed instanceof DurationExpr d ? d : null;
  }

  /**
   * A positive duration inside brackets: a number of seconds or a duration with an optional sign (a
   * {@link NumberLiteral}), or, with {@link ParserOptions#durationExpressions()}, a {@link
   * DurationExpr} ({@code [5m * 2]}, {@code [step()]}), whose sign the engine checks.
   */
  private Object positiveDuration(String context, String expected) {
    Token t = peek();
    boolean startsExpr =
        isDurationExprStart(t.type())
            || t.type() == TokenType.NUMBER
            || t.type() == TokenType.DURATION
            || t.type() == TokenType.ADD
            || t.type() == TokenType.SUB;
    if (!startsExpr) {
      throw unexpected(t, context, expected);
    }
    DurationExpr d = parseDurationExpr(0);
    if (d.kind() != DurationExpr.Kind.LITERAL) {
      requireDurationExpressions(d);
      return d;
    }
    NumberLiteral lit = d.literal();
    if (lit.value() <= 0) {
      throw error(lit.positionRange(), "duration must be greater than 0");
    }
    return lit;
  }

  private void requireDurationExpressions(DurationExpr d) {
    if (!options.durationExpressions()) {
      throw error(d.positionRange(), "experimental duration expression is not enabled");
    }
  }

  /**
   * Duration arithmetic by precedence climbing, with PromQL's binary precedences ({@code + -}, then
   * {@code * / %}, then right-associative {@code ^}); a unary sign binds like {@code *}. Literals
   * stay literals (a sign folds into them); anything else becomes a {@link DurationExpr}.
   */
  private DurationExpr parseDurationExpr(int minPrec) {
    DurationExpr lhs = parseDurationUnary();
    while (true) {
      Token t = peek();
      int prec = durationPrecedence(t.type());
      if (prec < 0 || prec < minPrec) {
        return lhs;
      }
      next();
      DurationExpr rhs = parseDurationExpr(t.type() == TokenType.POW ? prec : prec + 1);
      DurationExpr.Kind kind =
          switch (t.type()) {
            case ADD -> DurationExpr.Kind.ADD;
            case SUB -> DurationExpr.Kind.SUB;
            case MUL -> DurationExpr.Kind.MUL;
            case DIV -> DurationExpr.Kind.DIV;
            case MOD -> DurationExpr.Kind.MOD;
            default -> DurationExpr.Kind.POW;
          };
      if ((kind == DurationExpr.Kind.DIV || kind == DurationExpr.Kind.MOD)
          && rhs.kind() == DurationExpr.Kind.LITERAL
          && rhs.literal().value() == 0) {
        throw error(
            t.range(), kind == DurationExpr.Kind.DIV ? "division by zero" : "modulo by zero");
      }
      lhs =
          new DurationExpr(
              kind,
              null,
              lhs,
              rhs,
              false,
              new PositionRange(lhs.positionRange().start(), rhs.positionRange().end()));
    }
  }

  private static int durationPrecedence(TokenType t) {
    return switch (t) {
      case ADD, SUB -> 1;
      case MUL, DIV, MOD -> 2;
      case POW -> 3;
      default -> -1;
    };
  }

  private DurationExpr parseDurationUnary() {
    Token t = peek();
    if (t.type() == TokenType.ADD || t.type() == TokenType.SUB) {
      next();
      return applySign(t, parseDurationExpr(3));
    }
    return parseDurationPrimary();
  }

  /** Prometheus' {@code applyUnaryOpToDurationExpr}: a sign folds into a literal. */
  private DurationExpr applySign(Token sign, DurationExpr operand) {
    PositionRange range = new PositionRange(sign.pos(), operand.positionRange().end());
    if (operand.kind() == DurationExpr.Kind.LITERAL && !operand.wrapped()) {
      NumberLiteral lit = signed(sign, operand.literal());
      if (durationOutOfRange(lit.value())) {
        throw error(sign.range(), "duration out of range");
      }
      return DurationExpr.literal(lit);
    }
    if (sign.type() == TokenType.ADD) {
      return operand;
    }
    return new DurationExpr(DurationExpr.Kind.SUB, null, null, operand, false, range);
  }

  private DurationExpr parseDurationPrimary() {
    Token t = next();
    switch (t.type()) {
      case NUMBER, DURATION -> {
        NumberLiteral lit = literal(t);
        if (durationOutOfRange(lit.value())) {
          throw error(lit.positionRange(), "duration out of range");
        }
        return DurationExpr.literal(lit);
      }
      case LEFT_PAREN -> {
        DurationExpr inner = parseDurationExpr(0);
        Token r = next();
        if (r.type() != TokenType.RIGHT_PAREN) {
          throw unexpected(r, "duration expression", "\")\"");
        }
        PositionRange range = new PositionRange(t.pos(), r.end());
        DurationExpr wrapped =
            inner.kind() == DurationExpr.Kind.LITERAL
                ? new DurationExpr(DurationExpr.Kind.ADD, null, null, inner, true, range)
                : inner.withWrapped(range);
        requireDurationExpressions(wrapped);
        return wrapped;
      }
      case STEP, RANGE -> {
        expectEmptyParens();
        return new DurationExpr(
            t.type() == TokenType.STEP ? DurationExpr.Kind.STEP : DurationExpr.Kind.RANGE,
            null,
            null,
            null,
            false,
            new PositionRange(t.pos(), lastEnd));
      }
      case MIN_OF, MAX_OF -> {
        Token lp = next();
        if (lp.type() != TokenType.LEFT_PAREN) {
          throw unexpected(lp, "duration expression", "\"(\"");
        }
        DurationExpr a = parseDurationExpr(0);
        Token comma = next();
        if (comma.type() != TokenType.COMMA) {
          throw unexpected(comma, "duration expression", "\",\"");
        }
        DurationExpr b = parseDurationExpr(0);
        Token rp = next();
        if (rp.type() != TokenType.RIGHT_PAREN) {
          throw unexpected(rp, "duration expression", "\")\"");
        }
        return new DurationExpr(
            t.type() == TokenType.MIN_OF ? DurationExpr.Kind.MIN_OF : DurationExpr.Kind.MAX_OF,
            null,
            a,
            b,
            false,
            new PositionRange(t.pos(), rp.end()));
      }
      default -> throw unexpected(t, "duration expression", "number, duration, step(), or range()");
    }
  }

  private void expectEmptyParens() {
    Token lp = next();
    if (lp.type() != TokenType.LEFT_PAREN) {
      throw unexpected(lp, "duration expression", "\"(\"");
    }
    Token rp = next();
    if (rp.type() != TokenType.RIGHT_PAREN) {
      throw unexpected(rp, "duration expression", "\")\"");
    }
  }

  /**
   * The duration after {@code offset}: one term, never a binary operation, so that {@code foo
   * offset 2 ^ 2} is {@code (foo offset 2) ^ 2} (Prometheus' {@code offset_duration_expr}): a
   * signed literal, a signed {@code step()}, {@code range()}, {@code min_of(…)}, {@code max_of(…)}
   * or parenthesized duration expression.
   */
  private DurationExpr parseOffsetDuration() {
    Token sign = null;
    if (peek().type() == TokenType.ADD || peek().type() == TokenType.SUB) {
      sign = next();
    }
    TokenType t = peek().type();
    if (t != TokenType.NUMBER && t != TokenType.DURATION && !isDurationExprStart(t)) {
      throw unexpected(peek(), "offset", "number, duration, step(), or range()");
    }
    DurationExpr term = parseDurationPrimary();
    DurationExpr d = sign == null ? term : applySign(sign, term);
    if (d.kind() != DurationExpr.Kind.LITERAL) {
      requireDurationExpressions(d);
    }
    return d;
  }

  private static boolean isDurationExprStart(TokenType t) {
    return t == TokenType.STEP
        || t == TokenType.RANGE
        || t == TokenType.MAX_OF
        || t == TokenType.MIN_OF
        || t == TokenType.LEFT_PAREN;
  }

  private static NumberLiteral signed(Token sign, NumberLiteral lit) {
    if (sign == null) {
      return lit;
    }
    double v = sign.type() == TokenType.SUB ? -lit.value() : lit.value();
    return new NumberLiteral(
        v, lit.duration(), new PositionRange(sign.pos(), lit.positionRange().end()));
  }

  /** Whether seconds would overflow a Go {@code time.Duration} (int64 nanoseconds). */
  private static boolean durationOutOfRange(double seconds) {
    return seconds > 0x1p63 / 1e9 || seconds < -0x1p63 / 1e9;
  }

  /** Go's {@code time.Duration(math.Round(seconds * 1e9))}. */
  private static Duration toDuration(double seconds) {
    return Duration.ofNanos(goRound(seconds * 1e9));
  }

  /** Go's {@code math.Round}: half away from zero. */
  private static long goRound(double x) {
    return (long) (x < 0 ? -Math.floor(-x + 0.5) : Math.floor(x + 0.5));
  }

  // ---- offset and @ ----

  private Expr parseOffset(Expr e) {
    next(); // offset
    DurationExpr d = parseOffsetDuration();
    Duration offset = Duration.ZERO;
    DurationExpr offsetExpr = null;
    if (d.kind() == DurationExpr.Kind.LITERAL) {
      offset = toDuration(d.literal().value());
    } else {
      offsetExpr = d;
    }
    int end = lastEnd;
    String twice = "offset may not be set multiple times";
    if (e instanceof VectorSelector vs) {
      if (vs.hasOffset()) {
        throw error(e.positionRange(), twice);
      }
      return vs.withOffset(offset, offsetExpr, end);
    }
    if (e instanceof MatrixSelector ms) {
      VectorSelector vs = ms.selector();
      if (vs.hasOffset()) {
        throw error(e.positionRange(), twice);
      }
      return new MatrixSelector(
          vs.withOffset(offset, offsetExpr, vs.positionRange().end()),
          ms.range(),
          new PositionRange(ms.positionRange().start(), end),
          ms.rangeExpr());
    }
    if (e instanceof SubqueryExpr sq) {
      if (sq.hasOffset()) {
        throw error(e.positionRange(), twice);
      }
      return new SubqueryExpr(
          sq.expr(),
          sq.range(),
          sq.step(),
          offset,
          sq.at(),
          new PositionRange(sq.positionRange().start(), end),
          sq.rangeExpr(),
          sq.stepExpr(),
          offsetExpr);
    }
    throw error(
        e.positionRange(),
        "offset modifier must be preceded by an instant vector selector or range vector selector"
            + " or a subquery");
  }

  private Expr parseAt(Expr e) {
    next(); // @
    Token t = peek();
    AtModifier at;
    if (t.type() == TokenType.START || t.type() == TokenType.END) {
      next();
      Token lp = next();
      if (lp.type() != TokenType.LEFT_PAREN) {
        throw unexpected(lp, null, null);
      }
      Token rp = next();
      if (rp.type() != TokenType.RIGHT_PAREN) {
        throw unexpected(rp, null, null);
      }
      at = t.type() == TokenType.START ? AtModifier.START : AtModifier.END;
    } else {
      Token sign = null;
      if (t.type() == TokenType.ADD || t.type() == TokenType.SUB) {
        sign = next();
        t = peek();
      }
      if (t.type() != TokenType.NUMBER && t.type() != TokenType.DURATION) {
        throw unexpected(t, "@", "timestamp");
      }
      next();
      double ts = signed(sign, literal(t)).value();
      if (Double.isNaN(ts) || Double.isInfinite(ts) || ts >= 0x1p63 || ts <= -0x1p63) {
        throw error(
            e.positionRange(),
            "timestamp out of bounds for @ modifier: " + PromText.formatFixed(ts, 6));
      }
      at = AtModifier.timestamp(goRound(ts * 1000));
    }
    int end = lastEnd;
    String twice = "@ <timestamp> may not be set multiple times";
    if (e instanceof VectorSelector vs) {
      if (vs.at() != null) {
        throw error(e.positionRange(), twice);
      }
      return vs.withAt(at, end);
    }
    if (e instanceof MatrixSelector ms) {
      VectorSelector vs = ms.selector();
      if (vs.at() != null) {
        throw error(e.positionRange(), twice);
      }
      return new MatrixSelector(
          vs.withAt(at, vs.positionRange().end()),
          ms.range(),
          new PositionRange(ms.positionRange().start(), end),
          ms.rangeExpr());
    }
    if (e instanceof SubqueryExpr sq) {
      if (sq.at() != null) {
        throw error(e.positionRange(), twice);
      }
      return new SubqueryExpr(
          sq.expr(),
          sq.range(),
          sq.step(),
          sq.offset(),
          at,
          new PositionRange(sq.positionRange().start(), end),
          sq.rangeExpr(),
          sq.stepExpr(),
          sq.offsetExpr());
    }
    throw error(
        e.positionRange(),
        "@ modifier must be preceded by an instant vector selector or range vector selector or a"
            + " subquery");
  }

  /**
   * {@code anchored} or {@code smoothed} after {@code e}, as Prometheus' {@code setAnchored} and
   * {@code setSmoothed}: on a selector or a range selector it sets the modifier (written twice it
   * is still set once; the other one already set is an error), anything else is an error. The
   * position range of {@code e} does not grow: Prometheus' grammar rule keeps the operand's.
   */
  private Expr extendedRange(Expr e, ExtendedRange m) {
    String kw = m.keyword;
    if (!options.extendedRangeSelectors()) {
      throw error(e.positionRange(), kw + " modifier is experimental and not enabled");
    }
    String both = "anchored and smoothed modifiers cannot be used together";
    if (e instanceof VectorSelector vs) {
      if (vs.extendedRange() != ExtendedRange.NONE && vs.extendedRange() != m) {
        throw error(e.positionRange(), both);
      }
      return vs.withExtendedRange(m);
    }
    if (e instanceof MatrixSelector ms) {
      VectorSelector vs = ms.selector();
      if (vs.extendedRange() != ExtendedRange.NONE && vs.extendedRange() != m) {
        throw error(e.positionRange(), both);
      }
      return new MatrixSelector(
          vs.withExtendedRange(m), ms.range(), ms.positionRange(), ms.rangeExpr());
    }
    if (e instanceof SubqueryExpr) {
      throw error(e.positionRange(), kw + " modifier is not supported for subqueries");
    }
    throw error(e.positionRange(), kw + " modifier not implemented");
  }

  // ---- calls and aggregations ----

  private Expr parseCall(Token name) {
    List<Expr> args = parseCallArgs();
    PositionRange range = new PositionRange(name.pos(), lastEnd);
    Function f =
        Functions.lookup(name.val())
            .orElseThrow(
                () ->
                    error(
                        name.range(), "unknown function with name " + PromText.quote(name.val())));
    if (f.experimental() && !options.experimentalFunctions()) {
      throw error(name.range(), "function " + PromText.quote(name.val()) + " is not enabled");
    }
    return new Call(f, args, range);
  }

  /** {@code ( expr, ... )}; the next token is known to be the left parenthesis. */
  private List<Expr> parseCallArgs() {
    next();
    List<Expr> args = new ArrayList<>();
    if (peek().type() == TokenType.RIGHT_PAREN) {
      next();
      return args;
    }
    while (true) {
      args.add(parseExpr(0));
      Token t = next();
      if (t.type() == TokenType.RIGHT_PAREN) {
        return args;
      }
      if (t.type() != TokenType.COMMA) {
        throw unexpected(t, null, null);
      }
      if (peek().type() == TokenType.RIGHT_PAREN) {
        throw error(t.range(), "trailing commas not allowed in function call args");
      }
    }
  }

  private Expr parseAggregate(Token opToken) {
    AggregateOp op = opToken.type().aggregateOp();
    List<String> grouping = List.of();
    boolean without = false;
    boolean modifier = false;
    TokenType n = peek().type();
    if (n == TokenType.BY || n == TokenType.WITHOUT) {
      next();
      without = n == TokenType.WITHOUT;
      grouping = parseGroupingLabels();
      modifier = true;
    }
    if (peek().type() != TokenType.LEFT_PAREN) {
      throw unexpected(peek(), "aggregation", null);
    }
    List<Expr> args = parseCallArgs();
    n = peek().type();
    if (!modifier && (n == TokenType.BY || n == TokenType.WITHOUT)) {
      next();
      without = n == TokenType.WITHOUT;
      grouping = parseGroupingLabels();
    }
    PositionRange range = new PositionRange(opToken.pos(), lastEnd);
    if (args.isEmpty()) {
      throw error(range, "no arguments for aggregate expression provided");
    }
    int desired = 1;
    Expr param = null;
    if (op.hasParam()) {
      if (op.experimental() && !options.experimentalFunctions()) {
        throw error(
            range,
            op.keyword()
                + "() is experimental and must be enabled with"
                + " --enable-feature=promql-experimental-functions");
      }
      desired = 2;
      param = args.get(0);
    }
    if (args.size() != desired) {
      throw error(
          range,
          "wrong number of arguments for aggregate expression provided, expected "
              + desired
              + ", got "
              + args.size());
    }
    return new AggregateExpr(op, param, args.get(desired - 1), grouping, without, range);
  }

  /** {@code (label, "quoted.label", ...)} of by, without, on, ignoring, group_left/right. */
  private List<String> parseGroupingLabels() {
    Token lp = next();
    if (lp.type() != TokenType.LEFT_PAREN) {
      throw unexpected(lp, "grouping opts", "\"(\"");
    }
    List<String> labels = new ArrayList<>();
    if (peek().type() == TokenType.RIGHT_PAREN) {
      next();
      return labels;
    }
    while (true) {
      Token l = next();
      String name;
      if (l.type().isMaybeLabel()) {
        name = l.val();
      } else if (l.type() == TokenType.STRING) {
        name = unquote(l);
        if (name.isEmpty() || !GoStrings.isValidUtf8(name)) {
          throw error(l.range(), "invalid label name for grouping: " + PromText.quote(name));
        }
      } else {
        throw unexpected(l, "grouping opts", "label");
      }
      labels.add(name);
      Token sep = next();
      if (sep.type() == TokenType.RIGHT_PAREN) {
        return labels;
      }
      if (sep.type() != TokenType.COMMA) {
        throw unexpected(sep, "grouping opts", "\",\" or \")\"");
      }
      if (peek().type() == TokenType.RIGHT_PAREN) {
        next();
        return labels;
      }
    }
  }
}
