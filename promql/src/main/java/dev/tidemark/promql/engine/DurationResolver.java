package dev.tidemark.promql.engine;

import dev.tidemark.promql.parser.AggregateExpr;
import dev.tidemark.promql.parser.BinaryExpr;
import dev.tidemark.promql.parser.Call;
import dev.tidemark.promql.parser.DurationExpr;
import dev.tidemark.promql.parser.Expr;
import dev.tidemark.promql.parser.MatrixSelector;
import dev.tidemark.promql.parser.ParenExpr;
import dev.tidemark.promql.parser.SubqueryExpr;
import dev.tidemark.promql.parser.UnaryExpr;
import dev.tidemark.promql.parser.VectorSelector;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Replaces every {@link DurationExpr} of a parsed query by the duration it stands for in this query
 * (Prometheus' {@code durationVisitor} in {@code PreprocessExpr}): {@code step()} is the query's
 * step (0 for an instant query), {@code range()} its end minus its start. Ranges and subquery steps
 * must come out positive; offsets may be anything. The evaluator then sees plain durations only.
 */
final class DurationResolver {

  private final double stepSeconds;
  private final double rangeSeconds;

  private DurationResolver(long stepMillis, long rangeMillis) {
    this.stepSeconds = stepMillis / 1000.0;
    this.rangeSeconds = rangeMillis / 1000.0;
  }

  /**
   * {@code e} with its duration expressions resolved; {@code e} itself when it has none.
   *
   * @throws QueryException (bad data) for a duration that is not positive where it must be, NaN,
   *     infinite, out of range, or divides by zero
   */
  static Expr resolve(Expr e, long stepMillis, long rangeMillis) {
    try {
      return new DurationResolver(stepMillis, rangeMillis).walk(e);
    } catch (ArithmeticException ex) {
      throw new QueryException(QueryException.ErrorType.BAD_DATA, ex.getMessage());
    }
  }

  private Duration value(DurationExpr d, boolean allowNegative) {
    return d.resolve(stepSeconds, rangeSeconds, allowNegative);
  }

  private Expr walk(Expr e) {
    if (e instanceof VectorSelector vs) {
      return selector(vs);
    } else if (e instanceof MatrixSelector ms) {
      VectorSelector vs = selector(ms.selector());
      if (vs == ms.selector() && ms.rangeExpr() == null) {
        return ms;
      }
      Duration range = ms.rangeExpr() == null ? ms.range() : value(ms.rangeExpr(), false);
      return new MatrixSelector(vs, range, ms.positionRange());
    } else if (e instanceof SubqueryExpr sq) {
      Expr inner = walk(sq.expr());
      if (inner == sq.expr()
          && sq.rangeExpr() == null
          && sq.stepExpr() == null
          && sq.offsetExpr() == null) {
        return sq;
      }
      return new SubqueryExpr(
          inner,
          sq.rangeExpr() == null ? sq.range() : value(sq.rangeExpr(), false),
          sq.stepExpr() == null ? sq.step() : value(sq.stepExpr(), false),
          sq.offsetExpr() == null ? sq.offset() : value(sq.offsetExpr(), true),
          sq.at(),
          sq.positionRange());
    } else if (e instanceof ParenExpr p) {
      Expr inner = walk(p.expr());
      return inner == p.expr() ? p : new ParenExpr(inner, p.positionRange());
    } else if (e instanceof UnaryExpr u) {
      Expr inner = walk(u.expr());
      return inner == u.expr() ? u : new UnaryExpr(u.negate(), inner, u.start());
    } else if (e instanceof BinaryExpr b) {
      Expr l = walk(b.lhs());
      Expr r = walk(b.rhs());
      return l == b.lhs() && r == b.rhs()
          ? b
          : new BinaryExpr(b.op(), l, r, b.matching(), b.returnBool());
    } else if (e instanceof AggregateExpr a) {
      Expr param = a.param() == null ? null : walk(a.param());
      Expr inner = walk(a.expr());
      return param == a.param() && inner == a.expr()
          ? a
          : new AggregateExpr(a.op(), param, inner, a.grouping(), a.without(), a.positionRange());
    } else if (e instanceof Call c) {
      List<Expr> args = new ArrayList<>(c.args().size());
      boolean changed = false;
      for (Expr x : c.args()) {
        Expr y = walk(x);
        changed |= y != x;
        args.add(y);
      }
      return changed ? new Call(c.function(), args, c.positionRange()) : c;
    }
    return e;
  }

  private VectorSelector selector(VectorSelector vs) {
    if (vs.offsetExpr() == null) {
      return vs;
    }
    return new VectorSelector(
        vs.name(),
        vs.matchers(),
        value(vs.offsetExpr(), true),
        vs.at(),
        vs.positionRange(),
        null,
        vs.extendedRange());
  }
}
