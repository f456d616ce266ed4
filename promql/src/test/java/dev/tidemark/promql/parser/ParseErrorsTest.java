package dev.tidemark.promql.parser;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Syntax and type errors: every class of error with its message and position. The cases and texts
 * are Prometheus' ({@code promql/parser/parse_test.go}); the positions are the start of Prometheus'
 * error range as {@code line:column}.
 */
class ParseErrorsTest {

  private static String error(String query) {
    ParseException e =
        org.junit.jupiter.api.Assertions.assertThrows(
            ParseException.class, () -> PromqlParser.parseExpr(query), query);
    return e.getMessage();
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      quoteCharacter = '~',
      value = {
        // Lexer: characters, numbers, durations, strings.
        ". | 1:1: parse error: unexpected character: '.'",
        "2.5. | 1:1: parse error: bad number or duration syntax: \"2.5.\"",
        "100..4 | 1:1: parse error: bad number or duration syntax: \"100..\"",
        "0deadbeef | 1:1: parse error: bad number or duration syntax: \"0de\"",
        "1e | 1:1: parse error: bad number or duration syntax: \"1e\"",
        "1 !~ 1 | 1:3: parse error: unexpected character after '!': '~'",
        "1 =~ 1 | 1:3: parse error: unexpected character after '=': '~'",
        "} | 1:1: parse error: unexpected character: '}'",
        "some} | 1:5: parse error: unexpected character: '}'",
        "{ | 1:2: parse error: unexpected end of input inside braces",
        "some{ | 1:6: parse error: unexpected end of input inside braces",
        "some_metric{a:b=\"b\"} | 1:14: parse error: unexpected character inside braces: ':'",
        "foo{a*\"b\"} | 1:6: parse error: unexpected character inside braces: '*'",
        "foo{a>=\"b\"} | 1:6: parse error: unexpected character inside braces: '>'",
        "foo{1} | 1:5: parse error: unexpected character inside braces: '1'",
        "foo{a!\"b\"} | 1:6: parse error: unexpected character after '!' inside braces: '\"'",
        "foo{{ | 1:5: parse error: unexpected left brace '{'",
        "\"\\ | 1:1: parse error: escape sequence not terminated",
        "\"\\c\" | 1:1: parse error: unknown escape sequence U+0063 'c'",
        "\"\\'\" | 1:1: parse error: unknown escape sequence U+0027 '''",
        "\"\\x.\" | 1:1: parse error: illegal character U+002E '.' in escape sequence",
        "\"\\400\" | 1:1: parse error: escape sequence is an invalid Unicode code point",
        "\"\\ud800\" | 1:1: parse error: escape sequence is an invalid Unicode code point",
        "\"\\U00110000\" | 1:1: parse error: escape sequence is an invalid Unicode code point",
        "\"abc | 1:1: parse error: unterminated quoted string",
        "sum by (\"foo)(some_metric{}) | 1:9: parse error: unterminated quoted string",
        "`abc | 1:1: parse error: unterminated raw string",
        "`\\`` | 1:4: parse error: unterminated raw string",
        // Parentheses and brackets.
        "(1)) | 1:5: parse error: unexpected right parenthesis ')'",
        "((1) | 1:5: parse error: unclosed left parenthesis",
        "( | 1:2: parse error: unclosed left parenthesis",
        "sum( | 1:5: parse error: unclosed left parenthesis",
        "foo] | 1:4: parse error: unexpected right bracket ']'",
        "foo[5m][ | 1:9: parse error: unexpected end of input in duration expression",
        "foo{bar=\"baz\"}[ | 1:16: parse error: unexpected end of input in duration expression",
        "foo[5m | 1:7: parse error: unclosed left bracket",
        "foo[5m[ | 1:7: parse error: unexpected left bracket '['",
        "foo[5s x 5s] | 1:8: parse error: unexpected character: 'x', expected ':'",
        "foo[5s s 5s] | 1:8: parse error: unexpected character: 's', expected ':'",
        "foo[\"5m\"] | 1:5: parse error: unexpected character in duration expression: '\"'",
        "foo[:5m] | 1:6: parse error: unexpected colon before duration in duration expression",
        "foo[5m::] | 1:8: parse error: unexpected colon ':'",
        // Parser: unexpected tokens, with context where Prometheus gives one.
        "1+ | 1:3: parse error: unexpected end of input",
        "1 / | 1:4: parse error: unexpected end of input",
        "*1 | 1:1: parse error: unexpected <op:*>",
        "@@ | 1:1: parse error: unexpected <op:@>",
        "-= | 1:2: parse error: unexpected \"=\"",
        "++-++-+-+-< | 1:11: parse error: unexpected <op:<>",
        "e-+=/(0) | 1:4: parse error: unexpected \"=\"",
        "foo bar | 1:5: parse error: unexpected identifier \"bar\"",
        "foo 1 | 1:5: parse error: unexpected number \"1\"",
        "foo \"a long string literal\" | 1:5: parse error: unexpected string \"\\\"a long st\"...",
        "a - on(b) ignoring(c) d | 1:11: parse error: unexpected <ignoring>",
        "foo + group_left(baz) bar | 1:7: parse error: unexpected <group_left>",
        "foo + on bar | 1:10: parse error: unexpected identifier \"bar\" in grouping opts, expected \"(\"",
        "some_metric{a=b} | 1:15: parse error: unexpected identifier \"b\" in label matching, expected string",
        "foo{gibberish} | 1:14: parse error: unexpected \"}\" in label matching, expected label matching operator",
        "foo{__name__= =} | 1:15: parse error: unexpected \"=\" in label matching, expected string",
        "foo{__name__ == \"bar\"} | 1:15: parse error: unexpected \"=\" in label matching, expected string",
        "foo{,} | 1:5: parse error: unexpected \",\" in label matching, expected identifier or \"}\"",
        "foo{__name__=\"bar\" lol} | 1:20: parse error: unexpected identifier \"lol\" in label matching, expected \",\" or \"}\"",
        "foo{\"a\"=} | 1:9: parse error: unexpected \"}\" in label matching, expected string",
        "foo{a=~\"(\"} | 1:5: parse error: ",
        "foo[] | 1:5: parse error: unexpected \"]\" in subquery or range selector, expected number, duration, step(), or range()",
        "foo[5m 5m] | 1:8: parse error: unexpected duration \"5m\" in subquery or range, expected \":\" or \"]\"",
        "foo[5m:1m 1m] | 1:11: parse error: unexpected duration \"1m\" in subquery selector, expected \"]\"",
        "some_metric[5m] OFFSET | 1:23: parse error: unexpected end of input in offset, expected number, duration, step(), or range()",
        "some_metric[5m] @ | 1:18: parse error: unexpected end of input in @, expected timestamp",
        "sum without(==)(some_metric) | 1:13: parse error: unexpected <op:==> in grouping opts, expected label",
        "sum without(,)(some_metric) | 1:13: parse error: unexpected \",\" in grouping opts, expected label",
        "sum without(foo,,)(some_metric) | 1:17: parse error: unexpected \",\" in grouping opts, expected label",
        "sum by(foo bar)(x) | 1:12: parse error: unexpected identifier \"bar\" in grouping opts, expected \",\" or \")\"",
        "sum some_metric by (test) | 1:5: parse error: unexpected identifier \"some_metric\"",
        "sum (some_metric) by test | 1:22: parse error: unexpected identifier \"test\" in grouping opts, expected \"(\"",
        "sum by (test) some_metric | 1:15: parse error: unexpected identifier \"some_metric\" in aggregation",
        "MIN keep_common (some_metric) | 1:5: parse error: unexpected identifier \"keep_common\"",
        "MIN (some_metric) keep_common | 1:19: parse error: unexpected identifier \"keep_common\"",
        "sum (some_metric) without (test) by (test) | 1:34: parse error: unexpected <by>",
        "sum without (test) (some_metric) by (test) | 1:34: parse error: unexpected <by>",
        "foo:bar(x) | 1:8: parse error: unexpected \"(\"",
        // Semantic checks made while parsing.
        "non_existent_function_far_bar() | 1:1: parse error: unknown function with name \"non_existent_function_far_bar\"",
        "a>b() | 1:3: parse error: unknown function with name \"b\"",
        "holt_winters(foo[5m], 0.5, 0.5) | 1:1: parse error: unknown function with name \"holt_winters\"",
        "RATE(foo[5m]) | 1:1: parse error: unknown function with name \"RATE\"",
        "sum () by (test) | 1:1: parse error: no arguments for aggregate expression provided",
        "topk(some_metric) | 1:1: parse error: wrong number of arguments for aggregate expression provided, expected 2, got 1",
        "sum(a, b) | 1:1: parse error: wrong number of arguments for aggregate expression provided, expected 1, got 2",
        "topk(some_metric,) | 1:17: parse error: trailing commas not allowed in function call args",
        "1 offset 1d | 1:1: parse error: offset modifier must be preceded by an instant vector selector or range vector selector or a subquery",
        "foo offset 1s offset 2s | 1:1: parse error: offset may not be set multiple times",
        "foo[5m] offset 1s offset 2s | 1:1: parse error: offset may not be set multiple times",
        "foo[5m:] offset 1s offset 2s | 1:1: parse error: offset may not be set multiple times",
        "rate(some_metric[5m]) @ 1234 | 1:1: parse error: @ modifier must be preceded by an instant vector selector or range vector selector or a subquery",
        "foo @ 1 @ 2 | 1:1: parse error: @ <timestamp> may not be set multiple times",
        "foo @ start() @ end() | 1:1: parse error: @ <timestamp> may not be set multiple times",
        "foo @ +Inf | 1:1: parse error: timestamp out of bounds for @ modifier: +Inf",
        "foo @ -Inf | 1:1: parse error: timestamp out of bounds for @ modifier: -Inf",
        "foo @ NaN | 1:1: parse error: timestamp out of bounds for @ modifier: NaN",
        "foo @ 1e19 | 1:1: parse error: timestamp out of bounds for @ modifier: 10000000000000000000.000000",
        "some_metric OFFSET 1m[5m] | 1:22: parse error: no offset modifiers allowed before range",
        "some_metric @ 1234 [5m] | 1:20: parse error: no @ modifiers allowed before range",
        "some_metric @ start() [5m] | 1:23: parse error: no @ modifiers allowed before range",
        "some_metric @ end()[5m] | 1:20: parse error: no @ modifiers allowed before range",
        "(foo + bar)[5m] | 1:12: parse error: ranges only allowed for vector selectors",
        "rate(food[1m])[1h] offset 1h | 1:15: parse error: ranges only allowed for vector selectors",
        "1[5m] | 1:2: parse error: ranges only allowed for vector selectors",
        "foo[5mm] | 1:5: parse error: bad number or duration syntax: \"5mm\"",
        "foo[5m1] | 1:5: parse error: bad number or duration syntax: \"5m1\"",
        "foo[5m:1m1] | 1:8: parse error: bad number or duration syntax: \"1m1\"",
        "foo[5y1hs] | 1:5: parse error: unknown unit \"hs\" in duration \"5y1hs\"",
        "foo[5m1h] | 1:5: parse error: not a valid duration string: \"5m1h\"",
        "foo[5m1m] | 1:5: parse error: not a valid duration string: \"5m1m\"",
        "foo[1.5h] | 1:5: parse error: unknown unit \".\" in duration \"1.5h\"",
        "foo[0m] | 1:5: parse error: duration must be greater than 0",
        "foo[-1] | 1:5: parse error: duration must be greater than 0",
        "foo[5m:0s] | 1:8: parse error: duration must be greater than 0",
        "foo[9.5e10] | 1:5: parse error: duration out of range",
        "foo offset 9.5e10 | 1:12: parse error: duration out of range",
        "some_metric[5m] OFFSET 1mm | 1:24: parse error: bad number or duration syntax: \"1mm\"",
        "1000000y | 1:1: parse error: duration out of range",
        // Feature-flagged syntax Prometheus 3 refuses by default.
        "foo[5m * 2] | 1:5: parse error: experimental duration expression is not enabled",
        "foo[step()] | 1:5: parse error: experimental duration expression is not enabled",
        "foo offset step() | 1:12: parse error: experimental duration expression is not enabled",
        "foo[5m] anchored | 1:1: parse error: anchored modifier is experimental and not enabled",
        "foo[5m] smoothed | 1:1: parse error: smoothed modifier is experimental and not enabled",
        "foo + fill(0) bar | 1:7: parse error: binop fill modifiers are experimental and not enabled",
      })
  void syntaxErrors(String query, String message) {
    assertThat(error(query)).startsWith(message);
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      quoteCharacter = '~',
      value = {
        "1 and 1 | 1:1: parse error: set operator \"and\" not allowed in binary scalar expression",
        "1 or 1 | 1:1: parse error: set operator \"or\" not allowed in binary scalar expression",
        "1 unless 1 | 1:1: parse error: set operator \"unless\" not allowed in binary scalar expression",
        "foo and 1 | 1:1: parse error: set operator \"and\" not allowed in binary scalar expression",
        "1 unless foo | 1:1: parse error: set operator \"unless\" not allowed in binary scalar expression",
        "1 == 1 | 1:3: parse error: comparisons between scalars must use BOOL modifier",
        "1 > 2 | 1:3: parse error: comparisons between scalars must use BOOL modifier",
        "foo + bool bar | 1:5: parse error: bool modifier can only be used on comparison operators",
        "foo + bool 10 | 1:5: parse error: bool modifier can only be used on comparison operators",
        "foo and bool 10 | 1:5: parse error: bool modifier can only be used on comparison operators",
        "1 or on(bar) foo | 1:1: parse error: vector matching only allowed between instant vectors",
        "foo == on(bar) 10 | 1:1: parse error: vector matching only allowed between instant vectors",
        "foo and on(bar) group_left(baz) bar | 1:1: parse error: no grouping allowed for \"and\" operation",
        "foo or on(bar) group_right(baz) bar | 1:1: parse error: no grouping allowed for \"or\" operation",
        "foo unless on(bar) group_left(baz) bar | 1:1: parse error: no grouping allowed for \"unless\" operation",
        "http_requests{group=\"production\"} + on(instance) group_left(job,instance) cpu_count{type=\"smp\"} | 1:35: parse error: label \"instance\" must not occur in ON and GROUP clause at once",
        "\"a\" + 1 | 1:1: parse error: binary expression must contain only scalar and instant vector types",
        "1 + foo[5m] | 1:5: parse error: binary expression must contain only scalar and instant vector types",
        "-\"string\" | 1:1: parse error: unary expression only allowed on expressions of type scalar or instant vector, got \"string\"",
        "-test[5m] | 1:1: parse error: unary expression only allowed on expressions of type scalar or instant vector, got \"range vector\"",
        "{} | 1:1: parse error: vector selector must contain at least one non-empty matcher",
        "{x=\"\"} | 1:1: parse error: vector selector must contain at least one non-empty matcher",
        "{x=~\".*\"} | 1:1: parse error: vector selector must contain at least one non-empty matcher",
        "{x!~\".+\"} | 1:1: parse error: vector selector must contain at least one non-empty matcher",
        "{x!=\"a\"} | 1:1: parse error: vector selector must contain at least one non-empty matcher",
        "foo{__name__=\"bar\"} | 1:1: parse error: metric name must not be set twice: \"foo\" or \"bar\"",
        "foo{\"bar\"} | 1:1: parse error: metric name must not be set twice: \"foo\" or \"bar\"",
        "topk(some_metric, other_metric) | 1:6: parse error: expected type scalar in aggregation parameter, got instant vector",
        "count_values(5, other_metric) | 1:14: parse error: expected type string in aggregation parameter, got scalar",
        "quantile(\"a\", x) | 1:10: parse error: expected type scalar in aggregation parameter, got string",
        "sum(foo[5m]) | 1:5: parse error: expected type instant vector in aggregation expression, got range vector",
        "sum(1) | 1:5: parse error: expected type instant vector in aggregation expression, got scalar",
        "floor() | 1:1: parse error: expected 1 argument(s) in call to \"floor\", got 0",
        "floor(some_metric, other_metric) | 1:1: parse error: expected 1 argument(s) in call to \"floor\", got 2",
        "floor(1) | 1:7: parse error: expected type instant vector in call to function \"floor\", got scalar",
        "hour(some_metric, some_metric, some_metric) | 1:1: parse error: expected at most 1 argument(s) in call to \"hour\", got 3",
        "round(a, 1, 2) | 1:1: parse error: expected at most 2 argument(s) in call to \"round\", got 3",
        "label_join(a, \"b\") | 1:1: parse error: expected at least 3 argument(s) in call to \"label_join\", got 2",
        "label_join(a, \"b\", \",\", \"c\", 1) | 1:30: parse error: expected type string in call to function \"label_join\", got scalar",
        "time(some_metric) | 1:1: parse error: expected 0 argument(s) in call to \"time\", got 1",
        "rate(some_metric) | 1:6: parse error: expected type range vector in call to function \"rate\", got instant vector",
        "rate(avg) | 1:6: parse error: expected type range vector in call to function \"rate\", got instant vector",
        "rate(foo[5m:]) + rate(1) | 1:23: parse error: expected type range vector in call to function \"rate\", got scalar",
        "histogram_quantile(foo, bar) | 1:20: parse error: expected type scalar in call to function \"histogram_quantile\", got instant vector",
        "test[5d] OFFSET 10s [10m:5s] | 1:1: parse error: subquery is only allowed on instant vector, got matrix instead",
        "(foo + bar{nm=\"val\"})[5m:][10m:5s] | 1:1: parse error: subquery is only allowed on instant vector, got matrix instead",
        "1[5m:] | 1:1: parse error: subquery is only allowed on instant vector, got scalar instead",
        "info(rate(http_request_counter_total{}[5m]), target_info{foo=\"bar\"}) | 1:46: parse error: expected label selectors only, got vector selector instead",
        "info(foo[5m]) | 1:6: parse error: expected type instant vector in call to function \"info\", got range vector",
        "info(http_request_counter_total{namespace=\"zzz\"}, target_info{foo=\"bar\"}) | 1:51: parse error: expected label selectors only, got vector selector instead",
        "info(http_request_counter_total{namespace=\"zzz\"}, {foo=\"bar\"} == 1) | 1:51: parse error: expected label selectors only",
      })
  void typeErrors(String query, String message) {
    assertThat(error(query)).isEqualTo(message);
  }

  @Test
  void emptyInputs() {
    assertThat(error("")).isEqualTo("unknown position: parse error: no expression found in input");
    assertThat(error("# just a comment\n\n"))
        .isEqualTo("1:1: parse error: no expression found in input");
    assertThat(error("   ")).isEqualTo("1:1: parse error: no expression found in input");
  }

  @Test
  void numberOutOfRange() {
    String nines = "9".repeat(309);
    assertThat(error(nines))
        .isEqualTo(
            "1:1: parse error: error parsing number: strconv.ParseFloat: parsing \""
                + nines
                + "\": value out of range");
  }

  @Test
  void invalidRegexNamesTheMatcher() {
    ParseException e =
        org.junit.jupiter.api.Assertions.assertThrows(
            ParseException.class, () -> PromqlParser.parseExpr("foo{a=~\"(\"}"));
    assertThat(e.positionRange()).isEqualTo(new PositionRange(4, 10));
    assertThat(e.reason()).contains("invalid regex");
  }

  @Test
  void positionsCountLinesAndUtf8Bytes() {
    ParseException e =
        org.junit.jupiter.api.Assertions.assertThrows(
            ParseException.class, () -> PromqlParser.parseExpr("foo +\n  )"));
    assertThat(e.getMessage()).isEqualTo("2:4: parse error: unexpected right parenthesis ')'");
    assertThat(e.line()).isEqualTo(2);
    assertThat(e.column()).isEqualTo(4);
    assertThat(e.reason()).isEqualTo("unexpected right parenthesis ')'");
    // "é" is 2 bytes in UTF-8: Prometheus' column counts bytes.
    assertThat(error("\"é\" +")).isEqualTo("1:7: parse error: unexpected end of input");
    assertThat(error("sum(rate(x[5m]))\n+ rate(y)"))
        .isEqualTo(
            "2:8: parse error: expected type range vector in call to function \"rate\", got instant vector");
  }

  @Test
  void experimentalFunctionsFollowTheOption() {
    ParserOptions strict = ParserOptions.PROMETHEUS_DEFAULTS;
    assertThatThrownBy(() -> PromqlParser.parseExpr("mad_over_time(foo[5m])", strict))
        .hasMessage("1:1: parse error: function \"mad_over_time\" is not enabled");
    assertThatThrownBy(() -> PromqlParser.parseExpr("sort_by_label(foo, \"a\")", strict))
        .hasMessage("1:1: parse error: function \"sort_by_label\" is not enabled");
    assertThatThrownBy(() -> PromqlParser.parseExpr("limitk(2, foo)", strict))
        .hasMessage(
            "1:1: parse error: limitk() is experimental and must be enabled with"
                + " --enable-feature=promql-experimental-functions");
    assertThatThrownBy(() -> PromqlParser.parseExpr("limit_ratio(0.5, foo)", strict))
        .hasMessageContaining("limit_ratio() is experimental");
    assertThat(PromqlParser.parseExpr("rate(foo[5m])", strict).type()).isEqualTo(ValueType.VECTOR);
    assertThat(PromqlParser.parseExpr("mad_over_time(foo[5m])").type()).isEqualTo(ValueType.VECTOR);
    assertThat(PromqlParser.parseExpr("limitk(2, foo)").toString()).isEqualTo("limitk(2, foo)");
  }
}
