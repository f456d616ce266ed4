package dev.tidemark.promql.parser;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/**
 * The parser refuses nesting deeper than {@link PromqlParser#MAX_DEPTH} with a parse error that
 * names the position, instead of overflowing the stack (10,000 nested parentheses were a {@code
 * StackOverflowError}, HTTP 500), and accepts what is just below it.
 */
class NestingDepthTest {

  static final String TOO_DEEP = "parse error: expression nested too deeply: more than 500 levels";

  static String parens(int n, String inner) {
    return "(".repeat(n) + inner + ")".repeat(n);
  }

  /** {@code a + a + ... + a} with {@code terms} terms: a left-deep tree, parsed in a loop. */
  static String chain(int terms, String op) {
    StringBuilder b = new StringBuilder("a");
    for (int i = 1; i < terms; i++) {
      b.append(' ').append(op).append(" a");
    }
    return b.toString();
  }

  @Test
  void tenThousandNestedParenthesesAreAParseErrorAtTheTooDeepOne() {
    // the 501st '(' is at column 501: a parse error there, on this thread's stack or any other
    assertThatThrownBy(() -> PromqlParser.parseExpr(parens(10_000, "1")))
        .isInstanceOf(ParseException.class)
        .hasMessage("1:501: " + TOO_DEEP);
  }

  @Test
  void tenThousandUnaryMinusesAreAParseError() {
    assertThatThrownBy(() -> PromqlParser.parseExpr("-".repeat(10_000) + "a"))
        .isInstanceOf(ParseException.class)
        .hasMessage("1:501: " + TOO_DEEP);
  }

  @Test
  void tenThousandBinaryOperatorsAreAParseError() {
    for (String op : new String[] {"+", "or", "^", "and on (x)"}) {
      assertThatThrownBy(() -> PromqlParser.parseExpr(chain(10_001, op)))
          .as(op)
          .isInstanceOf(ParseException.class)
          .hasMessageEndingWith(TOO_DEEP);
    }
    assertThatThrownBy(() -> PromqlParser.parseExpr(chain(10_001, "+").replace("a", "1")))
        .isInstanceOf(ParseException.class)
        .hasMessageEndingWith(TOO_DEEP);
  }

  @Test
  void deepCallsAndAggregationsAreAParseError() {
    String calls = "abs(".repeat(10_000) + "a" + ")".repeat(10_000);
    assertThatThrownBy(() -> PromqlParser.parseExpr(calls))
        .isInstanceOf(ParseException.class)
        .hasMessageEndingWith(TOO_DEEP);
    String sums = "sum(".repeat(10_000) + "a" + ")".repeat(10_000);
    assertThatThrownBy(() -> PromqlParser.parseExpr(sums))
        .isInstanceOf(ParseException.class)
        .hasMessageEndingWith(TOO_DEEP);
  }

  @Test
  void justBelowTheLimitParsesPrintsAndReparsesOnAnOrdinaryThread() throws Exception {
    String[] queries = {
      parens(499, "1"),
      "-".repeat(499) + "a",
      chain(500, "+"),
      chain(500, "^"),
      chain(500, "or"),
      "abs(".repeat(499) + "a" + ")".repeat(499),
      "sum(".repeat(499) + "a" + ")".repeat(499),
      "sum(".repeat(249) + "-(a)" + ")".repeat(249)
    };
    Throwable[] failure = new Throwable[1];
    Thread t =
        new Thread(
            () -> {
              try {
                for (String q : queries) {
                  Expr e = PromqlParser.parseExpr(q);
                  assertThat(PromqlParser.parseExpr(e.toString()).toString())
                      .isEqualTo(e.toString());
                }
              } catch (Throwable x) {
                failure[0] = x;
              }
            });
    t.start(); // the JVM's default thread stack, as an HTTP thread has
    t.join();
    assertThat(failure[0]).isNull();
  }
}
