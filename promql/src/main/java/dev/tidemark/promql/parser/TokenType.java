package dev.tidemark.promql.parser;

import java.util.HashMap;
import java.util.Locale;
import java.util.Map;

/** Token types of the PromQL lexer, as Prometheus' {@code ItemType}s (lex.go). */
enum TokenType {
  // Values and names.
  EOF(Kind.OTHER, null),
  ERROR(Kind.OTHER, null),
  IDENTIFIER(Kind.OTHER, null),
  METRIC_IDENTIFIER(Kind.OTHER, null),
  NUMBER(Kind.OTHER, null),
  DURATION(Kind.OTHER, null),
  STRING(Kind.OTHER, null),
  // Punctuation.
  LEFT_PAREN(Kind.PUNCTUATION, "("),
  RIGHT_PAREN(Kind.PUNCTUATION, ")"),
  LEFT_BRACE(Kind.PUNCTUATION, "{"),
  RIGHT_BRACE(Kind.PUNCTUATION, "}"),
  LEFT_BRACKET(Kind.PUNCTUATION, "["),
  RIGHT_BRACKET(Kind.PUNCTUATION, "]"),
  COMMA(Kind.PUNCTUATION, ","),
  EQL(Kind.PUNCTUATION, "="),
  COLON(Kind.PUNCTUATION, ":"),
  // Operators.
  ADD(Kind.OPERATOR, "+"),
  SUB(Kind.OPERATOR, "-"),
  MUL(Kind.OPERATOR, "*"),
  DIV(Kind.OPERATOR, "/"),
  MOD(Kind.OPERATOR, "%"),
  POW(Kind.OPERATOR, "^"),
  EQLC(Kind.OPERATOR, "=="),
  NEQ(Kind.OPERATOR, "!="),
  LTE(Kind.OPERATOR, "<="),
  LSS(Kind.OPERATOR, "<"),
  GTE(Kind.OPERATOR, ">="),
  GTR(Kind.OPERATOR, ">"),
  EQL_REGEX(Kind.OPERATOR, "=~"),
  NEQ_REGEX(Kind.OPERATOR, "!~"),
  TRIM_UPPER(Kind.OPERATOR, "</"),
  TRIM_LOWER(Kind.OPERATOR, ">/"),
  AT(Kind.OPERATOR, "@"),
  LAND(Kind.OPERATOR, "and"),
  LOR(Kind.OPERATOR, "or"),
  LUNLESS(Kind.OPERATOR, "unless"),
  ATAN2(Kind.OPERATOR, "atan2"),
  // Aggregators.
  SUM(Kind.AGGREGATOR, "sum"),
  AVG(Kind.AGGREGATOR, "avg"),
  COUNT(Kind.AGGREGATOR, "count"),
  MIN(Kind.AGGREGATOR, "min"),
  MAX(Kind.AGGREGATOR, "max"),
  GROUP(Kind.AGGREGATOR, "group"),
  STDDEV(Kind.AGGREGATOR, "stddev"),
  STDVAR(Kind.AGGREGATOR, "stdvar"),
  TOPK(Kind.AGGREGATOR, "topk"),
  BOTTOMK(Kind.AGGREGATOR, "bottomk"),
  COUNT_VALUES(Kind.AGGREGATOR, "count_values"),
  QUANTILE(Kind.AGGREGATOR, "quantile"),
  LIMITK(Kind.AGGREGATOR, "limitk"),
  LIMIT_RATIO(Kind.AGGREGATOR, "limit_ratio"),
  // Keywords.
  BOOL(Kind.KEYWORD, "bool"),
  BY(Kind.KEYWORD, "by"),
  GROUP_LEFT(Kind.KEYWORD, "group_left"),
  GROUP_RIGHT(Kind.KEYWORD, "group_right"),
  FILL(Kind.KEYWORD, "fill"),
  FILL_LEFT(Kind.KEYWORD, "fill_left"),
  FILL_RIGHT(Kind.KEYWORD, "fill_right"),
  IGNORING(Kind.KEYWORD, "ignoring"),
  OFFSET(Kind.KEYWORD, "offset"),
  SMOOTHED(Kind.KEYWORD, "smoothed"),
  ANCHORED(Kind.KEYWORD, "anchored"),
  ON(Kind.KEYWORD, "on"),
  WITHOUT(Kind.KEYWORD, "without"),
  // Preprocessors: @ start(), @ end(), and duration-expression words.
  START(Kind.PREPROCESSOR, "start"),
  END(Kind.PREPROCESSOR, "end"),
  STEP(Kind.PREPROCESSOR, "step"),
  RANGE(Kind.PREPROCESSOR, "range"),
  MAX_OF(Kind.PREPROCESSOR, "max_of"),
  MIN_OF(Kind.PREPROCESSOR, "min_of");

  /** How a token is described in "unexpected ..." messages (lex.go {@code Item.String}). */
  enum Kind {
    OTHER,
    PUNCTUATION,
    OPERATOR,
    AGGREGATOR,
    KEYWORD,
    PREPROCESSOR
  }

  final Kind kind;

  /** Prometheus' {@code ItemTypeStr}: the canonical text, null for value tokens. */
  final String text;

  private static final Map<String, TokenType> WORDS = new HashMap<>();

  static {
    for (TokenType t : values()) {
      if (t.text != null && Character.isLetter(t.text.charAt(0))) {
        WORDS.put(t.text, t);
      }
    }
    WORDS.put("inf", NUMBER);
    WORDS.put("nan", NUMBER);
  }

  TokenType(Kind kind, String text) {
    this.kind = kind;
    this.text = text;
  }

  /** The keyword type of a word (case-insensitive), or null for a plain identifier. */
  static TokenType keyword(String word) {
    return WORDS.get(word.toLowerCase(Locale.ROOT));
  }

  /** Whether a token of this type can name a metric: {@code sum}, {@code by}, {@code offset}... */
  boolean isMetricIdentifier() {
    return switch (this) {
      case IDENTIFIER,
          METRIC_IDENTIFIER,
          AVG,
          BOTTOMK,
          BY,
          COUNT,
          COUNT_VALUES,
          FILL,
          FILL_LEFT,
          FILL_RIGHT,
          GROUP,
          LAND,
          LOR,
          LUNLESS,
          MAX,
          MIN,
          OFFSET,
          QUANTILE,
          STDDEV,
          STDVAR,
          SUM,
          TOPK,
          WITHOUT,
          START,
          END,
          LIMITK,
          LIMIT_RATIO,
          STEP,
          RANGE,
          ANCHORED,
          SMOOTHED,
          MAX_OF,
          MIN_OF ->
          true;
      default -> false;
    };
  }

  /** Whether a token of this type can be a label name in {@code by (...)} ({@code maybe_label}). */
  boolean isMaybeLabel() {
    return isMetricIdentifier()
        || this == BOOL
        || this == GROUP_LEFT
        || this == GROUP_RIGHT
        || this == IGNORING
        || this == ON
        || this == ATAN2;
  }

  /** Whether a word of this type followed by {@code (} is a function call. */
  boolean isFunctionName() {
    return switch (this) {
      case IDENTIFIER, START, END, STEP, RANGE, MAX_OF, MIN_OF -> true;
      default -> false;
    };
  }

  AggregateOp aggregateOp() {
    return kind == Kind.AGGREGATOR ? AggregateOp.valueOf(name()) : null;
  }

  BinaryOp binaryOp() {
    return switch (this) {
      case POW -> BinaryOp.POW;
      case MUL -> BinaryOp.MUL;
      case DIV -> BinaryOp.DIV;
      case MOD -> BinaryOp.MOD;
      case ATAN2 -> BinaryOp.ATAN2;
      case ADD -> BinaryOp.ADD;
      case SUB -> BinaryOp.SUB;
      case EQLC -> BinaryOp.EQLC;
      case NEQ -> BinaryOp.NEQ;
      case LTE -> BinaryOp.LTE;
      case LSS -> BinaryOp.LSS;
      case GTE -> BinaryOp.GTE;
      case GTR -> BinaryOp.GTR;
      case TRIM_UPPER -> BinaryOp.TRIM_UPPER;
      case TRIM_LOWER -> BinaryOp.TRIM_LOWER;
      case LAND -> BinaryOp.AND;
      case LUNLESS -> BinaryOp.UNLESS;
      case LOR -> BinaryOp.OR;
      default -> null;
    };
  }
}
