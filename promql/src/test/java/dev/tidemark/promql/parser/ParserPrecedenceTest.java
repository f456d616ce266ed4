package dev.tidemark.promql.parser;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Precedence and associativity of every binary operator and of unary minus/plus and the postfix
 * modifiers, against Prometheus' yacc precedences. {@link #shape} prints the tree fully
 * parenthesized.
 */
class ParserPrecedenceTest {

  /** The tree with every binary and unary node in parentheses; leaves in canonical form. */
  static String shape(Expr e) {
    if (e instanceof BinaryExpr b) {
      String mods = b.returnBool() ? " bool" : "";
      return "(" + shape(b.lhs()) + " " + b.op().symbol() + mods + " " + shape(b.rhs()) + ")";
    }
    if (e instanceof UnaryExpr u) {
      return "(" + (u.negate() ? "-" : "+") + shape(u.expr()) + ")";
    }
    if (e instanceof ParenExpr p) {
      return "[" + shape(p.expr()) + "]";
    }
    return e.toString();
  }

  @ParameterizedTest(name = "{0}  =>  {1}")
  @CsvSource(
      delimiter = '|',
      value = {
        // ^ binds tightest and is right-associative.
        "a ^ b ^ c | (a ^ (b ^ c))",
        "a * b ^ c | (a * (b ^ c))",
        "a ^ b * c | ((a ^ b) * c)",
        // * / % atan2: one level, left-associative.
        "a * b / c | ((a * b) / c)",
        "a / b * c | ((a / b) * c)",
        "a % b * c | ((a % b) * c)",
        "a * b % c | ((a * b) % c)",
        "a atan2 b * c | ((a atan2 b) * c)",
        "a * b atan2 c | ((a * b) atan2 c)",
        // + -: below * and left-associative.
        "a + b * c | (a + (b * c))",
        "a * b + c | ((a * b) + c)",
        "a - b - c | ((a - b) - c)",
        "a - b + c | ((a - b) + c)",
        "a + b atan2 c | (a + (b atan2 c))",
        "a + b ^ c | (a + (b ^ c))",
        // Comparisons: below + -, left-associative, all one level.
        "a + b == c | ((a + b) == c)",
        "a == b + c | (a == (b + c))",
        "a == b != c | ((a == b) != c)",
        "a != b == c | ((a != b) == c)",
        "a < b > c | ((a < b) > c)",
        "a <= b >= c | ((a <= b) >= c)",
        "a > bool b == bool c | ((a > bool b) == bool c)",
        // and, unless: below comparisons, one level, left-associative.
        "a > b and c < d | ((a > b) and (c < d))",
        "a and b unless c | ((a and b) unless c)",
        "a unless b and c | ((a unless b) and c)",
        // or: lowest.
        "a or b and c | (a or (b and c))",
        "a and b or c | ((a and b) or c)",
        "a unless b or c | ((a unless b) or c)",
        "a or b or c | ((a or b) or c)",
        "a or b == c + d * e ^ f | (a or (b == (c + (d * (e ^ f)))))",
        "a ^ b * c + d == e and f or g | ((((((a ^ b) * c) + d) == e) and f) or g)",
        // Unary minus/plus binds like *: over ^ only.
        "-a ^ b | (-(a ^ b))",
        "-a * b | ((-a) * b)",
        "-a + b | ((-a) + b)",
        "a * -b | (a * (-b))",
        "a + -b * c | (a + ((-b) * c))",
        "a ^ -b ^ c | (a ^ (-(b ^ c)))",
        "+a - b | ((+a) - b)",
        "--a | (-(-a))",
        "-2 ^ 2 | (-(2 ^ 2))",
        "2 ^ -1 | (2 ^ -1)",
        "- -1 | 1",
        "-(1) | (-[1])",
        // Parentheses.
        "(a + b) * c | ([(a + b)] * c)",
        "a * (b + c) | (a * [(b + c)])",
        // Postfix modifiers bind to the operand right before them.
        "a + b offset 5m | (a + b offset 5m)",
        "-a offset 5m | (-a offset 5m)",
        "a ^ b @ 10 | (a ^ b @ 10.000)",
        "sum(a) + rate(b[5m]) * 2 | (sum(a) + (rate(b[5m]) * 2))",
      })
  void precedenceAndAssociativity(String query, String expected) {
    assertThat(shape(PromqlParser.parseExpr(query))).isEqualTo(expected);
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        "a+b*c | a + b * c",
        "(a+b)*c | (a + b) * c",
        "a^b^c | a ^ b ^ c",
        "-a^b | -a ^ b",
        "a>bool on(x)b | a > bool on (x) b",
        "a and b | a and b",
        "1 + 2 * 3 | 1 + 2 * 3",
      })
  void binaryExpressionsPrintWithoutAddedParentheses(String query, String printed) {
    assertThat(PromqlParser.parseExpr(query).toString()).isEqualTo(printed);
  }
}
