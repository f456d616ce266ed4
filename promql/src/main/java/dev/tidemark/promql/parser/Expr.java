package dev.tidemark.promql.parser;

/**
 * A node of a parsed PromQL expression. Every node is an immutable record that knows where it came
 * from in the query ({@link #positionRange()}) and what it evaluates to ({@link #type()}).
 *
 * <p>{@link #toString()} of every node is its canonical PromQL text, Prometheus' {@code String()}
 * form ({@code sum by (job) (rate(foo{a="b"}[5m]))}); parsing that text again gives an expression
 * that prints the same (print → parse → print is a fixed point).
 *
 * <p>Expressions returned by {@link PromqlParser#parseExpr(String)} are type checked: an evaluator
 * may rely on argument types, operand types and vector matching having been validated exactly as
 * Prometheus' {@code checkAST} does.
 */
public sealed interface Expr
    permits AggregateExpr,
        BinaryExpr,
        Call,
        MatrixSelector,
        NumberLiteral,
        ParenExpr,
        StringLiteral,
        SubqueryExpr,
        UnaryExpr,
        VectorSelector {

  /** Where this expression is in the query text, modifiers ({@code offset}, {@code @}) included. */
  PositionRange positionRange();

  /** The type of value this expression evaluates to. */
  ValueType type();
}
