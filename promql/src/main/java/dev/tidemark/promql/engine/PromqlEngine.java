package dev.tidemark.promql.engine;

import dev.tidemark.promql.parser.Expr;
import dev.tidemark.promql.parser.ParseException;
import dev.tidemark.promql.parser.ParserOptions;
import dev.tidemark.promql.parser.PromqlParser;
import dev.tidemark.promql.parser.ValueType;
import dev.tidemark.tsdb.query.Querier;
import java.util.Objects;

/**
 * Evaluates PromQL over a {@link Querier}, with Prometheus 3.x semantics for float samples.
 * Thread-safe: one engine serves any number of concurrent queries; each query reads through the
 * querier it is given and holds no lock of the store.
 *
 * <p>Errors are {@link QueryException}s whose {@link QueryException#errorType()} is the Prometheus
 * API error type: a query that does not parse or has bad parameters is {@code BAD_DATA}, a failing
 * evaluation {@code EXECUTION}, an expired deadline {@code TIMEOUT}, a {@link
 * QueryControl#cancel()} {@code CANCELED}.
 */
public final class PromqlEngine {
  private final EngineOptions options;
  private final ParserOptions parserOptions;
  private final QueryMemory memory;

  public PromqlEngine(EngineOptions options) {
    this(options, ParserOptions.DEFAULT);
  }

  /**
   * An engine whose queries together hold at most what {@code memory} allows, each also within
   * {@link EngineOptions#maxSamples()}.
   */
  public PromqlEngine(EngineOptions options, ParserOptions parserOptions, QueryMemory memory) {
    this.options = Objects.requireNonNull(options, "options");
    this.parserOptions = Objects.requireNonNull(parserOptions, "parserOptions");
    this.memory = Objects.requireNonNull(memory, "memory");
  }

  /**
   * An engine whose parser accepts what {@code parserOptions} allow (the HTTP API turns Prometheus'
   * experimental functions off unless configured).
   */
  public PromqlEngine(EngineOptions options, ParserOptions parserOptions) {
    this(options, parserOptions, QueryMemory.unlimited());
  }

  public PromqlEngine() {
    this(EngineOptions.DEFAULTS);
  }

  public EngineOptions options() {
    return options;
  }

  /** The samples budget all this engine's queries share. */
  public QueryMemory memory() {
    return memory;
  }

  /**
   * Evaluates {@code expr} at {@code timeMillis}: a vector, scalar, string or (for a range
   * expression) matrix.
   */
  public QueryResult instantQuery(Querier querier, String expr, long timeMillis) {
    return instantQuery(querier, expr, timeMillis, new QueryControl());
  }

  public QueryResult instantQuery(
      Querier querier, String expr, long timeMillis, QueryControl control) {
    Expr e = DurationResolver.resolve(parse(expr), 0, 0);
    Evaluator ev =
        Evaluator.top(querier, options, memory, control, expr, timeMillis, timeMillis, 0);
    return run(ev, e, true);
  }

  /**
   * Evaluates {@code expr} at {@code start}, {@code start + step}, ... up to {@code end}; the
   * result is a matrix sorted by labels. The expression must be a scalar or an instant vector.
   */
  public QueryResult rangeQuery(
      Querier querier, String expr, long startMillis, long endMillis, long stepMillis) {
    return rangeQuery(querier, expr, startMillis, endMillis, stepMillis, new QueryControl());
  }

  public QueryResult rangeQuery(
      Querier querier,
      String expr,
      long startMillis,
      long endMillis,
      long stepMillis,
      QueryControl control) {
    if (stepMillis <= 0) {
      throw new QueryException(
          QueryException.ErrorType.BAD_DATA,
          "zero or negative query resolution step widths are not accepted. Try a positive integer");
    }
    if (endMillis < startMillis) {
      throw new QueryException(
          QueryException.ErrorType.BAD_DATA, "end timestamp must not be before start time");
    }
    Expr e = DurationResolver.resolve(parse(expr), stepMillis, endMillis - startMillis);
    if (e.type() != ValueType.VECTOR && e.type() != ValueType.SCALAR) {
      throw new QueryException(
          QueryException.ErrorType.BAD_DATA,
          "invalid expression type \""
              + e.type().documentedName()
              + "\" for range query, must be Scalar or instant Vector");
    }
    Evaluator ev =
        Evaluator.top(querier, options, memory, control, expr, startMillis, endMillis, stepMillis);
    return run(ev, e, false);
  }

  /** The message of a query whose evaluation recursed deeper than the thread's stack. */
  static final String TOO_DEEP = "query is nested too deeply to evaluate";

  /**
   * Runs {@code ev}. The parser refuses trees deeper than {@link PromqlParser#MAX_DEPTH}, so the
   * evaluator's recursion fits a thread's stack; should it not (a small stack, a costlier node),
   * the overflow is this query's execution error, and the thread lives on.
   */
  private static QueryResult run(Evaluator ev, Expr e, boolean instant) {
    try {
      return ev.run(e, instant);
    } catch (StackOverflowError so) {
      throw new QueryException(QueryException.ErrorType.EXECUTION, TOO_DEEP);
    }
  }

  private Expr parse(String expr) {
    try {
      return PromqlParser.parseExpr(expr, parserOptions);
    } catch (ParseException pe) {
      throw new QueryException(QueryException.ErrorType.BAD_DATA, pe.getMessage(), pe);
    } catch (StackOverflowError so) { // a safety net: the parser limits its depth first
      throw new QueryException(
          QueryException.ErrorType.BAD_DATA, "query is nested too deeply to parse");
    }
  }
}
