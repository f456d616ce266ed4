package dev.tidemark.promql.parser;

import java.time.Duration;
import java.util.Objects;

/**
 * A duration expression, Prometheus 3's experimental arithmetic where a duration is written: a
 * range ({@code foo[5m * 2]}), a subquery's range and step ({@code [29s+1s:5s+5s]}), an offset
 * ({@code offset (1h / 2)}, {@code offset -step()}). Its value, in seconds, is known only once the
 * query's step and range are ({@code step()}, {@code range()}), so selectors keep the expression
 * beside their duration and the engine resolves it before evaluating ({@link #seconds}).
 *
 * <p>Not an {@link Expr}: it never stands alone as a query. The parser accepts it only with {@link
 * ParserOptions#durationExpressions()}; a plain number or duration literal never becomes one.
 *
 * @param kind the operation
 * @param literal the number or duration of a {@link Kind#LITERAL}, else null
 * @param lhs the left operand of a binary operation and the first argument of {@code min_of}/{@code
 *     max_of}; null for unary {@code +}/{@code -}, literals, {@code step()} and {@code range()}
 * @param rhs the operand of a unary operation, the right one of a binary operation, the second
 *     argument of {@code min_of}/{@code max_of}; else null
 * @param wrapped whether it was written in parentheses (printed back with them)
 * @param positionRange where it is in the query
 */
public record DurationExpr(
    Kind kind,
    NumberLiteral literal,
    DurationExpr lhs,
    DurationExpr rhs,
    boolean wrapped,
    PositionRange positionRange) {

  /** The operations, as Prometheus' {@code DurationExpr.Op}. */
  public enum Kind {
    LITERAL(""),
    STEP("step"),
    RANGE("range"),
    MIN_OF("min_of"),
    MAX_OF("max_of"),
    ADD("+"),
    SUB("-"),
    MUL("*"),
    DIV("/"),
    MOD("%"),
    POW("^");

    final String symbol;

    Kind(String symbol) {
      this.symbol = symbol;
    }
  }

  public DurationExpr {
    Objects.requireNonNull(kind, "kind");
    Objects.requireNonNull(positionRange, "positionRange");
  }

  static DurationExpr literal(NumberLiteral n) {
    return new DurationExpr(Kind.LITERAL, n, null, null, false, n.positionRange());
  }

  DurationExpr withWrapped(PositionRange range) {
    return new DurationExpr(kind, literal, lhs, rhs, true, range);
  }

  /** Whether it is a unary {@code +} or {@code -}. */
  public boolean unary() {
    return lhs == null && (kind == Kind.ADD || kind == Kind.SUB);
  }

  /**
   * The value in seconds (Prometheus' {@code evaluateDurationExpr}).
   *
   * @param stepSeconds what {@code step()} is: the query's step, 0 for an instant query
   * @param rangeSeconds what {@code range()} is: the query's end minus its start
   * @throws ArithmeticException for a division or modulo by zero, with the position
   */
  public double seconds(double stepSeconds, double rangeSeconds) {
    double l = lhs == null ? 0 : lhs.seconds(stepSeconds, rangeSeconds);
    double r = rhs == null ? 0 : rhs.seconds(stepSeconds, rangeSeconds);
    return switch (kind) {
      case LITERAL -> literal.value();
      case STEP -> stepSeconds;
      case RANGE -> rangeSeconds;
      case MIN_OF -> Math.min(l, r);
      case MAX_OF -> Math.max(l, r);
      case ADD -> lhs == null ? r : l + r;
      case SUB -> lhs == null ? -r : l - r;
      case MUL -> l * r;
      case DIV -> {
        if (r == 0) {
          throw new ArithmeticException(where() + ": division by zero");
        }
        yield l / r;
      }
      case MOD -> {
        if (r == 0) {
          throw new ArithmeticException(where() + ": modulo by zero");
        }
        yield l % r; // Go's math.Mod: the sign of the dividend, as Java's %
      }
      case POW -> Math.pow(l, r);
    };
  }

  /**
   * The duration it stands for (Prometheus' {@code calculateDuration}): the seconds truncated to
   * milliseconds.
   *
   * @param allowNegative whether zero and negative values are allowed (offsets) or not (ranges,
   *     steps)
   * @throws ArithmeticException for NaN or infinite values, a value that must be positive and is
   *     not, or one beyond a Go {@code time.Duration}, with the position
   */
  public Duration resolve(double stepSeconds, double rangeSeconds, boolean allowNegative) {
    double v = seconds(stepSeconds, rangeSeconds);
    if (Double.isNaN(v) || Double.isInfinite(v)) {
      throw new ArithmeticException(where() + ": duration is NaN or infinite");
    }
    if (v <= 0 && !allowNegative) {
      throw new ArithmeticException(where() + ": duration must be greater than 0");
    }
    if (v > 0x1p63 / 1e9 || v < -0x1p63 / 1e9) {
      throw new ArithmeticException(where() + ": duration is out of range");
    }
    return Duration.ofMillis((long) (v * 1000));
  }

  /** Whether its value depends on the query ({@code step()} or {@code range()} inside). */
  public boolean queryDependent() {
    return kind == Kind.STEP
        || kind == Kind.RANGE
        || (lhs != null && lhs.queryDependent())
        || (rhs != null && rhs.queryDependent());
  }

  private String where() {
    return positionRange.start() + ":" + positionRange.end();
  }

  /** Prometheus' text of the expression. */
  @Override
  public String toString() {
    StringBuilder b = new StringBuilder();
    write(b);
    return b.toString();
  }

  void write(StringBuilder b) {
    if (wrapped) {
      b.append('(');
    }
    switch (kind) {
      case LITERAL -> b.append(literal);
      case STEP -> b.append("step()");
      case RANGE -> b.append("range()");
      case MIN_OF, MAX_OF -> {
        b.append(kind.symbol).append('(');
        lhs.write(b);
        b.append(", ");
        rhs.write(b);
        b.append(')');
      }
      default -> {
        if (lhs == null) {
          if (kind == Kind.SUB) {
            b.append('-');
          }
          rhs.write(b);
        } else {
          lhs.write(b);
          b.append(' ').append(kind.symbol).append(' ');
          rhs.write(b);
        }
      }
    }
    if (wrapped) {
      b.append(')');
    }
  }
}
