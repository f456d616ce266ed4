package dev.tidemark.promql.parser;

import dev.tidemark.tsdb.query.LabelMatcher;
import java.util.List;
import java.util.Objects;

/**
 * Entry points of the PromQL parser: Prometheus 3's {@code ParseExpr} and {@code
 * ParseMetricSelector}.
 *
 * <pre>{@code
 * Expr e = PromqlParser.parseExpr("sum by (job) (rate(http_requests_total{code=~\"5..\"}[5m]))");
 * e.type();      // VECTOR
 * e.toString();  // the canonical text, the same here
 * }</pre>
 *
 * <p>Stateless and thread-safe; every call parses independently.
 */
public final class PromqlParser {

  /**
   * The deepest nesting a query may have: parentheses, unary operators, function and aggregation
   * arguments, subqueries and chains of binary operators ({@code a + b + c} is three levels deep)
   * each count. Deeper queries are refused with a {@link ParseException} ({@code expression nested
   * too deeply: more than 500 levels}) rather than overflowing a thread's stack in the parser,
   * printer or evaluator, which recurse over the tree: with the JVM's default 1 MiB thread stack
   * the costliest shape, nested function calls, overflowed the parser at about 700 levels, so 500
   * leaves room for the HTTP server's own frames. Prometheus has no such limit (Go stacks grow);
   * real queries stay far below it.
   */
  public static final int MAX_DEPTH = 500;

  private PromqlParser() {}

  /** {@link #parseExpr(String, ParserOptions)} with {@link ParserOptions#DEFAULT}. */
  public static Expr parseExpr(String query) {
    return parseExpr(query, ParserOptions.DEFAULT);
  }

  /**
   * Parses and type checks a PromQL expression.
   *
   * @return the type-checked expression; see {@link Expr} for the node types
   * @throws ParseException for the first syntax or type error, with Prometheus' position and
   *     wording ({@code 1:14: parse error: unexpected right parenthesis ')'})
   */
  public static Expr parseExpr(String query, ParserOptions options) {
    Objects.requireNonNull(query, "query");
    Objects.requireNonNull(options, "options");
    Expr e = new Parser(query, options).parseExpression();
    return new TypeChecker(query).check(e);
  }

  /**
   * Parses a metric selector alone, {@code foo{a="b", c!~"d.*"}} or {@code {"my.metric"}}, as
   * Prometheus' {@code ParseMetricSelector}: no offset, {@code @} or range, and not type checked,
   * so {@code {}} gives an empty list and callers decide whether a selector may match everything.
   *
   * @return the matchers in query order, the {@code __name__} matcher of a name written before the
   *     braces last; unmodifiable
   * @throws ParseException if the text is not exactly one selector or a regex does not compile
   */
  public static List<LabelMatcher> parseMetricSelector(String selector) {
    Objects.requireNonNull(selector, "selector");
    return new Parser(selector, ParserOptions.DEFAULT).parseSelectorOnly().matchers();
  }
}
