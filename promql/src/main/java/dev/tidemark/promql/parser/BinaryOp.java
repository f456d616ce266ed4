package dev.tidemark.promql.parser;

/**
 * The binary operators, with Prometheus' precedence (higher binds tighter) and associativity:
 * {@code ^} (6, right-associative); {@code * / % atan2} (5); {@code + -} (4); {@code == != <= < >=
 * >} and the histogram trims {@code </ >/} (3); {@code and unless} (2); {@code or} (1). All but
 * {@code ^} are left-associative. A unary {@code -}/{@code +} binds like {@code *}: {@code -a ^ b}
 * is {@code -(a ^ b)}, {@code -a * b} is {@code (-a) * b}.
 */
public enum BinaryOp {
  POW("^", 6),
  MUL("*", 5),
  DIV("/", 5),
  MOD("%", 5),
  ATAN2("atan2", 5),
  ADD("+", 4),
  SUB("-", 4),
  EQLC("==", 3),
  NEQ("!=", 3),
  LTE("<=", 3),
  LSS("<", 3),
  GTE(">=", 3),
  GTR(">", 3),
  /** {@code </}: native-histogram trim (keeps the buckets below the bound); not a comparison. */
  TRIM_UPPER("</", 3),
  /** {@code >/}: native-histogram trim (keeps the buckets above the bound); not a comparison. */
  TRIM_LOWER(">/", 3),
  AND("and", 2),
  UNLESS("unless", 2),
  OR("or", 1);

  private final String symbol;
  private final int precedence;

  BinaryOp(String symbol, int precedence) {
    this.symbol = symbol;
    this.precedence = precedence;
  }

  /** The operator as printed. */
  public String symbol() {
    return symbol;
  }

  /** 1 (lowest, {@code or}) to 6 (highest, {@code ^}). */
  public int precedence() {
    return precedence;
  }

  public boolean rightAssociative() {
    return this == POW;
  }

  /** {@code == != <= < >= >}: these take the {@code bool} modifier. */
  public boolean isComparison() {
    return precedence == 3 && this != TRIM_UPPER && this != TRIM_LOWER;
  }

  /** {@code and or unless}: only between instant vectors, always many-to-many. */
  public boolean isSetOperator() {
    return this == AND || this == OR || this == UNLESS;
  }
}
