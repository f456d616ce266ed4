package dev.tidemark.promql.parser;

import dev.tidemark.tsdb.model.PromText;

/**
 * The PromQL lexer: a modal scanner ported from Prometheus' {@code promql/parser/lex.go}.
 *
 * <p>Design: lex.go is a set of state functions; here the state is a mode ({@link Mode}) plus the
 * flags lex.go keeps ({@code parenDepth}, {@code braceOpen}, {@code bracketOpen}, {@code gotColon},
 * {@code gotDuration}), and each call of {@link #next()} runs the mode's scanner until it produces
 * one token. The modes are the top level (operators, numbers, durations, strings, identifiers and
 * keywords), inside braces (label names are plain identifiers there: {@code {on="x"}} is fine) and
 * right after {@code [} (durations, {@code :}, duration-expression operators). The first error ends
 * the scan: it comes back as one {@link TokenType#ERROR} token whose value is lex.go's message and
 * whose position is the start of the token being scanned; every later call returns {@link
 * TokenType#EOF}.
 *
 * <p>Comments ({@code # ...} to the end of the line) are skipped. Series descriptions and histogram
 * literals of the test-script language are not lexed (they are no part of queries).
 *
 * <p>Positions are char indexes. Not thread-safe; one lexer per query.
 */
final class Lexer {

  private static final int EOF = -1;
  private static final String DIGITS = "0123456789";
  private static final String HEX_DIGITS = "0123456789abcdefABCDEF";

  private enum Mode {
    STATEMENTS,
    DURATION_EXPR
  }

  private final String input;
  private int pos;
  private int start;
  private int width;
  private Mode mode = Mode.STATEMENTS;
  private boolean done;

  private int parenDepth;
  private boolean braceOpen;
  private boolean bracketOpen;
  private boolean gotColon;
  private boolean gotDuration;
  private int stringOpen;

  Lexer(String input) {
    this.input = input;
  }

  /** The next token; after the end or an error, {@link TokenType#EOF} forever. */
  Token next() {
    while (true) {
      if (done) {
        return new Token(TokenType.EOF, pos, "");
      }
      Token t;
      if (braceOpen) {
        t = lexInsideBraces();
      } else if (mode == Mode.DURATION_EXPR) {
        t = lexDurationExpr();
      } else {
        t = lexStatements();
      }
      if (t != null) {
        if (t.type() == TokenType.ERROR || t.type() == TokenType.EOF) {
          done = true;
        }
        return t;
      }
    }
  }

  // ---- rune primitives (lex.go's next, peek, backup, accept) ----

  private int nextRune() {
    if (pos >= input.length()) {
      width = 0;
      return EOF;
    }
    int cp = input.codePointAt(pos);
    width = Character.charCount(cp);
    pos += width;
    return cp;
  }

  private int peek() {
    int r = nextRune();
    backup();
    return r;
  }

  private void backup() {
    pos -= width;
  }

  private boolean accept(String valid) {
    int r = nextRune();
    if (r != EOF && valid.indexOf(r) >= 0) {
      return true;
    }
    backup();
    return false;
  }

  private boolean is(String valid) {
    int r = peek();
    return r != EOF && valid.indexOf(r) >= 0;
  }

  private void acceptRun(String valid) {
    while (true) {
      int r = nextRune();
      if (r == EOF || valid.indexOf(r) < 0) {
        break;
      }
    }
    backup();
  }

  private Token emit(TokenType type) {
    Token t = new Token(type, start, input.substring(start, pos));
    start = pos;
    return t;
  }

  private Token error(String message) {
    return new Token(TokenType.ERROR, start, message);
  }

  private void skipSpaces() {
    while (isSpace(peek())) {
      nextRune();
    }
    start = pos;
  }

  private boolean atComment() {
    return input.startsWith("#", pos);
  }

  private void skipComment() {
    while (pos < input.length() && input.charAt(pos) != '\n' && input.charAt(pos) != '\r') {
      pos++;
    }
    start = pos;
  }

  // ---- states ----

  /** lex.go's {@code lexStatements}: the top level. Returns null to go round again. */
  private Token lexStatements() {
    if (atComment()) {
      skipComment();
      return null;
    }
    int r = nextRune();
    if (r == EOF) {
      if (parenDepth != 0) {
        return error("unclosed left parenthesis");
      }
      if (bracketOpen) {
        return error("unclosed left bracket");
      }
      return emit(TokenType.EOF);
    }
    if (isSpace(r)) {
      skipSpaces();
      return null;
    }
    switch (r) {
      case ',':
        return emit(TokenType.COMMA);
      case '*':
        return emit(TokenType.MUL);
      case '/':
        return emit(TokenType.DIV);
      case '%':
        return emit(TokenType.MOD);
      case '+':
        return emit(TokenType.ADD);
      case '-':
        return emit(TokenType.SUB);
      case '^':
        return emit(TokenType.POW);
      case '@':
        return emit(TokenType.AT);
      case '=':
        {
          int t = peek();
          if (t == '=') {
            nextRune();
            return emit(TokenType.EQLC);
          }
          if (t == '~') {
            return error("unexpected character after '=': " + PromText.quoteRune(t));
          }
          return emit(TokenType.EQL);
        }
      case '!':
        {
          int t = nextRune();
          if (t != '=') {
            return error("unexpected character after '!': " + PromText.quoteRune(t));
          }
          return emit(TokenType.NEQ);
        }
      case '<':
        if (accept("=")) {
          return emit(TokenType.LTE);
        }
        if (accept("/")) {
          return emit(TokenType.TRIM_UPPER);
        }
        return emit(TokenType.LSS);
      case '>':
        if (accept("=")) {
          return emit(TokenType.GTE);
        }
        if (accept("/")) {
          return emit(TokenType.TRIM_LOWER);
        }
        return emit(TokenType.GTR);
      case '"':
      case '\'':
        stringOpen = r;
        return lexString();
      case '`':
        stringOpen = r;
        return lexRawString();
      case '(':
        parenDepth++;
        return emit(TokenType.LEFT_PAREN);
      case ')':
        {
          Token t = emit(TokenType.RIGHT_PAREN);
          parenDepth--;
          if (parenDepth < 0) {
            return error("unexpected right parenthesis " + PromText.quoteRune(r));
          }
          return t;
        }
      case '{':
        braceOpen = true;
        return emit(TokenType.LEFT_BRACE);
      case '[':
        {
          if (bracketOpen) {
            return error("unexpected left bracket " + PromText.quoteRune(r));
          }
          gotColon = false;
          Token t = emit(TokenType.LEFT_BRACKET);
          skipSpaces();
          bracketOpen = true;
          mode = Mode.DURATION_EXPR;
          return t;
        }
      case ']':
        if (!bracketOpen) {
          return error("unexpected right bracket " + PromText.quoteRune(r));
        }
        bracketOpen = false;
        return emit(TokenType.RIGHT_BRACKET);
      default:
        break;
    }
    if (isDigit(r) || (r == '.' && isDigit(peek()))) {
      backup();
      return lexNumberOrDuration();
    }
    if (isAlpha(r) || r == ':') {
      if (!bracketOpen) {
        backup();
        return lexKeywordOrIdentifier();
      }
      if (r == ':') {
        if (gotColon) {
          return error("unexpected colon " + PromText.quoteRune(r));
        }
        gotColon = true;
        return emit(TokenType.COLON);
      }
      if (isDurationKeywordStart(r)) {
        Token t = scanDurationKeyword();
        if (t != null) {
          return t;
        }
      }
      return error(
          "unexpected character: "
              + PromText.quoteRune(r)
              + ", expected "
              + PromText.quoteRune(':'));
    }
    return error("unexpected character: " + PromText.quoteRune(r));
  }

  /** lex.go's {@code lexInsideBraces}: label names, matcher operators, strings. */
  private Token lexInsideBraces() {
    if (atComment()) {
      skipComment();
      return null;
    }
    int r = nextRune();
    if (r == EOF) {
      return error("unexpected end of input inside braces");
    }
    if (isSpace(r)) {
      skipSpaces();
      return null;
    }
    if (isAlpha(r)) {
      while (isAlphaNumeric(nextRune())) {
        // absorb
      }
      backup();
      return emit(TokenType.IDENTIFIER);
    }
    switch (r) {
      case ',':
        return emit(TokenType.COMMA);
      case '"':
      case '\'':
        stringOpen = r;
        return lexString();
      case '`':
        stringOpen = r;
        return lexRawString();
      case '=':
        if (nextRune() == '~') {
          return emit(TokenType.EQL_REGEX);
        }
        backup();
        return emit(TokenType.EQL);
      case '!':
        {
          int nr = nextRune();
          if (nr == '~') {
            return emit(TokenType.NEQ_REGEX);
          }
          if (nr == '=') {
            return emit(TokenType.NEQ);
          }
          return error("unexpected character after '!' inside braces: " + PromText.quoteRune(nr));
        }
      case '{':
        return error("unexpected left brace " + PromText.quoteRune(r));
      case '}':
        braceOpen = false;
        return emit(TokenType.RIGHT_BRACE);
      default:
        return error("unexpected character inside braces: " + PromText.quoteRune(r));
    }
  }

  /** lex.go's {@code lexDurationExpr}: right after {@code [}, and after operators in there. */
  private Token lexDurationExpr() {
    int r = nextRune();
    if (r == EOF) {
      return error("unexpected end of input in duration expression");
    }
    if (isSpace(r)) {
      skipSpaces();
      return null;
    }
    switch (r) {
      case ']':
        bracketOpen = false;
        gotColon = false;
        mode = Mode.STATEMENTS;
        return emit(TokenType.RIGHT_BRACKET);
      case ':':
        {
          Token t = emit(TokenType.COLON);
          if (!gotDuration) {
            return error("unexpected colon before duration in duration expression");
          }
          if (gotColon) {
            return error("unexpected repeated colon in duration expression");
          }
          gotColon = true;
          return t;
        }
      case '(':
        parenDepth++;
        return emit(TokenType.LEFT_PAREN);
      case ')':
        {
          Token t = emit(TokenType.RIGHT_PAREN);
          parenDepth--;
          if (parenDepth < 0) {
            return error("unexpected right parenthesis " + PromText.quoteRune(r));
          }
          return t;
        }
      case '+':
        return emit(TokenType.ADD);
      case '-':
        return emit(TokenType.SUB);
      case '*':
        return emit(TokenType.MUL);
      case '/':
        return emit(TokenType.DIV);
      case '%':
        return emit(TokenType.MOD);
      case '^':
        return emit(TokenType.POW);
      case ',':
        return emit(TokenType.COMMA);
      default:
        break;
    }
    if (isDurationKeywordStart(r)) {
      Token t = scanDurationKeyword();
      if (t != null) {
        return t;
      }
      return error("unexpected character in duration expression: " + PromText.quoteRune(r));
    }
    if (isDigit(r) || (r == '.' && isDigit(peek()))) {
      backup();
      gotDuration = true;
      mode = Mode.STATEMENTS;
      return lexNumberOrDuration();
    }
    return error("unexpected character in duration expression: " + PromText.quoteRune(r));
  }

  /** lex.go's {@code lexString}: a single- or double-quoted string with Go escapes. */
  private Token lexString() {
    while (true) {
      int r = nextRune();
      if (r == '\\') {
        Token err = lexEscape();
        if (err != null) {
          return err;
        }
      } else if (r != EOF && Character.isSurrogate((char) r)) {
        return error("invalid UTF-8 rune");
      } else if (r == EOF || r == '\n') {
        return error("unterminated quoted string");
      } else if (r == stringOpen) {
        return emit(TokenType.STRING);
      }
    }
  }

  /** lex.go's {@code lexRawString}: a back-quoted string, no escapes, may span lines. */
  private Token lexRawString() {
    while (true) {
      int r = nextRune();
      if (r != EOF && Character.isSurrogate((char) r)) {
        return error("invalid UTF-8 rune");
      } else if (r == EOF) {
        return error("unterminated raw string");
      } else if (r == stringOpen) {
        return emit(TokenType.STRING);
      }
    }
  }

  /** lex.go's {@code lexEscape}: checks one escape; null when it is fine. */
  private Token lexEscape() {
    int n;
    int base;
    int max;
    int ch = nextRune();
    switch (ch) {
      case 'a', 'b', 'f', 'n', 'r', 't', 'v', '\\':
        return null;
      case '0', '1', '2', '3', '4', '5', '6', '7':
        n = 3;
        base = 8;
        max = 255;
        break;
      case 'x':
        ch = nextRune();
        n = 2;
        base = 16;
        max = 255;
        break;
      case 'u':
        ch = nextRune();
        n = 4;
        base = 16;
        max = Character.MAX_CODE_POINT;
        break;
      case 'U':
        ch = nextRune();
        n = 8;
        base = 16;
        max = Character.MAX_CODE_POINT;
        break;
      case EOF:
        return error("escape sequence not terminated");
      default:
        if (ch == stringOpen) {
          return null;
        }
        return error("unknown escape sequence " + GoStrings.formatU(ch));
    }
    long x = 0;
    while (n > 0) {
      int d = ch == EOF ? 16 : GoStrings.digitVal(ch);
      if (d >= base) {
        if (ch == EOF) {
          return error("escape sequence not terminated");
        }
        return error("illegal character " + GoStrings.formatU(ch) + " in escape sequence");
      }
      x = x * base + d;
      n--;
      if (n > 0) {
        ch = nextRune();
      }
    }
    if (x > max || (x >= 0xD800 && x < 0xE000)) {
      return error("escape sequence is an invalid Unicode code point");
    }
    return null;
  }

  /** lex.go's {@code lexNumberOrDuration}. */
  private Token lexNumberOrDuration() {
    if (scanNumber()) {
      return emit(TokenType.NUMBER);
    }
    if (acceptRemainingDuration()) {
      backup();
      return emit(TokenType.DURATION);
    }
    return error("bad number or duration syntax: " + PromText.quote(input.substring(start, pos)));
  }

  private boolean acceptRemainingDuration() {
    if (!accept("smhdwy")) {
      return false;
    }
    accept("s"); // ms; bad units such as "hs" are caught when the duration is parsed
    while (accept(DIGITS)) {
      while (accept(DIGITS)) {
        // absorb
      }
      if (!accept("smhdw")) { // y only comes first
        return false;
      }
      accept("s");
    }
    return !isAlphaNumeric(nextRune());
  }

  /** lex.go's {@code scanNumber}: decimal, hex, octal or float; validity is the parser's job. */
  private boolean scanNumber() {
    int initialPos = pos;
    String digitPattern = DIGITS;
    if (accept("0") && accept("xX")) {
      accept("_");
      digitPattern = HEX_DIGITS;
    }
    accept(".");
    accept(digitPattern);
    boolean dotConsumed = false;
    boolean exponentConsumed = false;
    while (is(digitPattern + "._eE")) {
      if (is(".") && dotConsumed) {
        accept(".");
        return false;
      }
      if (is("eE") && exponentConsumed) {
        accept("eE");
        return false;
      }
      if (accept(".")) {
        dotConsumed = true;
        if (accept("_.")) {
          return false;
        }
        if (digitPattern.length() > 10) { // no fractional hex
          return false;
        }
        continue;
      }
      if (accept("eE")) {
        exponentConsumed = true;
        accept("+-");
        if (accept("._eE") || peek() == EOF) {
          return false;
        }
        continue;
      }
      if (accept("_")) {
        if (accept("._eE") || peek() == EOF) {
          return false;
        }
        continue;
      }
      acceptRun(digitPattern);
    }
    if (pos == initialPos) {
      return false;
    }
    return !isAlphaNumeric(peek());
  }

  /** lex.go's {@code lexKeywordOrIdentifier}: names with colons, keywords, Inf and NaN. */
  private Token lexKeywordOrIdentifier() {
    while (true) {
      int r = nextRune();
      if (!(isAlphaNumeric(r) || r == ':')) {
        break;
      }
    }
    backup();
    String word = input.substring(start, pos);
    TokenType kw = TokenType.keyword(word);
    if (kw != null) {
      // fill, fill_left and fill_right are keywords only before "(", so they stay metric names.
      if ((kw == TokenType.FILL || kw == TokenType.FILL_LEFT || kw == TokenType.FILL_RIGHT)
          && !followedByLeftParen()) {
        return emit(TokenType.IDENTIFIER);
      }
      return emit(kw);
    }
    return emit(word.indexOf(':') < 0 ? TokenType.IDENTIFIER : TokenType.METRIC_IDENTIFIER);
  }

  private boolean followedByLeftParen() {
    int p = pos;
    while (p < input.length() && isSpace(input.charAt(p))) {
      p++;
    }
    return p < input.length() && input.charAt(p) == '(';
  }

  /** {@code step}, {@code range}, {@code max_of}, {@code min_of} inside brackets; else null. */
  private Token scanDurationKeyword() {
    while (isAlpha(nextRune())) {
      // absorb
    }
    backup();
    TokenType kw = TokenType.keyword(input.substring(start, pos));
    if (kw == TokenType.STEP
        || kw == TokenType.RANGE
        || kw == TokenType.MAX_OF
        || kw == TokenType.MIN_OF) {
      return emit(kw);
    }
    return null;
  }

  private static boolean isDurationKeywordStart(int r) {
    int lower = Character.toLowerCase(r);
    return lower == 's' || lower == 'r' || lower == 'm';
  }

  static boolean isSpace(int r) {
    return r == ' ' || r == '\t' || r == '\n' || r == '\r';
  }

  private static boolean isDigit(int r) {
    return r >= '0' && r <= '9';
  }

  private static boolean isAlpha(int r) {
    return r == '_' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z');
  }

  private static boolean isAlphaNumeric(int r) {
    return isAlpha(r) || isDigit(r);
  }
}
