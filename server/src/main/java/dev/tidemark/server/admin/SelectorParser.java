package dev.tidemark.server.admin;

import dev.tidemark.tsdb.model.Labels;
import dev.tidemark.tsdb.query.LabelMatcher;
import java.util.ArrayList;
import java.util.List;

/**
 * Parses a PromQL series selector into label matchers: {@code up}, {@code up{job="a"}}, {@code
 * {__name__=~"http_.*", code!="200",}}. Grammar (PromQL's, without offsets or ranges):
 *
 * <pre>
 * selector := [metric_name] ["{" [item ("," item)* [","]] "}"]
 * item     := label_name op string | string           (a lone string: the metric name, Prometheus 3)
 * label_name := [a-zA-Z_][a-zA-Z0-9_]* | string       (quoted: any UTF-8 name, Prometheus 3)
 * metric_name := [a-zA-Z_:][a-zA-Z0-9_:]*
 * op       := "=" | "!=" | "=~" | "!~"
 * string   := "..." | '...' | `...`                   (Go escapes in "..." and '...'; `...` is raw)
 * </pre>
 *
 * <p>Escapes, as Go and PromQL read them: {@code \a \b \f \n \r \t \v \\ \' \" \xHH \ooo \\uHHHH
 * \UHHHHHHHH}. A metric name becomes an {@code __name__=} matcher first. {@code {}} gives no
 * matchers (every series). Errors throw {@link IllegalArgumentException} with the position and
 * what was expected; regexes are compiled here too, so an invalid one is reported by name.
 * Stateless and thread-safe.
 */
public final class SelectorParser {

  private final String text;
  private int pos;

  private SelectorParser(String text) {
    this.text = text;
  }

  /**
   * Parses {@code selector}.
   *
   * @throws IllegalArgumentException naming the position and the problem
   */
  public static List<LabelMatcher> parse(String selector) {
    SelectorParser p = new SelectorParser(selector);
    return p.selector();
  }

  private List<LabelMatcher> selector() {
    List<LabelMatcher> out = new ArrayList<>();
    skipSpace();
    if (pos < text.length() && isMetricStart(text.charAt(pos))) {
      int start = pos;
      while (pos < text.length() && isMetricPart(text.charAt(pos))) {
        pos++;
      }
      out.add(LabelMatcher.equal(Labels.METRIC_NAME, text.substring(start, pos)));
      skipSpace();
    }
    if (pos < text.length() && text.charAt(pos) == '{') {
      pos++;
      items(out);
    } else if (out.isEmpty()) {
      throw error("expected a metric name or '{'");
    }
    skipSpace();
    if (pos < text.length()) {
      throw error("unexpected '" + text.charAt(pos) + "' after the selector");
    }
    return out;
  }

  private void items(List<LabelMatcher> out) {
    while (true) {
      skipSpace();
      if (pos >= text.length()) {
        throw error("expected '}'");
      }
      char c = text.charAt(pos);
      if (c == '}') {
        pos++;
        return;
      }
      String name;
      boolean quoted = isQuote(c);
      if (quoted) {
        name = string();
      } else if (isLabelStart(c)) {
        int start = pos;
        while (pos < text.length() && isLabelPart(text.charAt(pos))) {
          pos++;
        }
        name = text.substring(start, pos);
      } else {
        throw error("expected a label name, a quoted metric name or '}'");
      }
      skipSpace();
      if (quoted && (pos >= text.length() || text.charAt(pos) == ',' || text.charAt(pos) == '}')) {
        out.add(LabelMatcher.equal(Labels.METRIC_NAME, name)); // {"my.metric", ...}
      } else {
        int opAt = pos;
        LabelMatcher.Op op = op();
        skipSpace();
        if (pos >= text.length() || !isQuote(text.charAt(pos))) {
          throw error("expected a quoted value after " + name + op.symbol());
        }
        String value = string();
        try {
          out.add(LabelMatcher.of(name, op, value));
        } catch (IllegalArgumentException e) {
          throw new IllegalArgumentException(
              "invalid selector '" + text + "' at position " + (opAt + 1) + ": " + e.getMessage(), e);
        }
      }
      skipSpace();
      if (pos < text.length() && text.charAt(pos) == ',') {
        pos++;
      } else if (pos < text.length() && text.charAt(pos) == '}') {
        pos++;
        return;
      } else {
        throw error("expected ',' or '}'");
      }
    }
  }

  private LabelMatcher.Op op() {
    if (text.startsWith("=~", pos)) {
      pos += 2;
      return LabelMatcher.Op.REGEX;
    }
    if (text.startsWith("!~", pos)) {
      pos += 2;
      return LabelMatcher.Op.NOT_REGEX;
    }
    if (text.startsWith("!=", pos)) {
      pos += 2;
      return LabelMatcher.Op.NOT_EQUAL;
    }
    if (text.startsWith("=", pos)) {
      pos += 1;
      return LabelMatcher.Op.EQUAL;
    }
    throw error("expected one of =, !=, =~, !~");
  }

  /** Reads a quoted string starting at {@code pos} (on the quote). */
  private String string() {
    int start = pos;
    char quote = text.charAt(pos++);
    // Go strings are bytes: \xHH and \ooo give raw bytes, the rest UTF-8; decoded at the end.
    java.io.ByteArrayOutputStream sb = new java.io.ByteArrayOutputStream();
    while (true) {
      if (pos >= text.length()) {
        pos = start;
        throw error("unterminated string");
      }
      char c = text.charAt(pos++);
      if (c == quote) {
        return sb.toString(java.nio.charset.StandardCharsets.UTF_8);
      }
      if (Character.isHighSurrogate(c) && pos < text.length() && Character.isLowSurrogate(text.charAt(pos))) {
        utf8(sb, Character.toCodePoint(c, text.charAt(pos++)));
        continue;
      }
      if (quote == '`') {
        utf8(sb, c);
        continue;
      }
      if (c == '\n') {
        pos = start;
        throw error("newline in string");
      }
      if (c != '\\') {
        utf8(sb, c);
        continue;
      }
      if (pos >= text.length()) {
        pos = start;
        throw error("unterminated string");
      }
      int escAt = pos - 1;
      char e = text.charAt(pos++);
      switch (e) {
        case 'a' -> sb.write(7);
        case 'b' -> sb.write('\b');
        case 'f' -> sb.write('\f');
        case 'n' -> sb.write('\n');
        case 'r' -> sb.write('\r');
        case 't' -> sb.write('\t');
        case 'v' -> sb.write(11);
        case '\\' -> sb.write('\\');
        case '"', '\'' -> {
          if (e != quote) {
            pos = escAt;
            throw error("unknown escape \\" + e + " in a " + quote + "-quoted string");
          }
          sb.write(e);
        }
        case 'x' -> sb.write((int) hex(2, escAt));
        case 'u' -> utf8(sb, codePoint(hex(4, escAt), escAt));
        case 'U' -> utf8(sb, codePoint(hex(8, escAt), escAt));
        default -> {
          if (e >= '0' && e <= '7') {
            int v = e - '0';
            for (int i = 0; i < 2; i++) {
              if (pos >= text.length() || text.charAt(pos) < '0' || text.charAt(pos) > '7') {
                pos = escAt;
                throw error("octal escape needs 3 digits");
              }
              v = v * 8 + (text.charAt(pos++) - '0');
            }
            if (v > 255) {
              pos = escAt;
              throw error("octal escape above \\377");
            }
            sb.write(v);
          } else {
            pos = escAt;
            throw error("unknown escape \\" + e);
          }
        }
      }
    }
  }

  private static void utf8(java.io.ByteArrayOutputStream out, int codePoint) {
    byte[] b = new String(Character.toChars(codePoint)).getBytes(java.nio.charset.StandardCharsets.UTF_8);
    out.write(b, 0, b.length);
  }

  private long hex(int digits, int escAt) {
    long v = 0;
    for (int i = 0; i < digits; i++) {
      int d = pos < text.length() ? Character.digit(text.charAt(pos), 16) : -1;
      if (d < 0) {
        pos = escAt;
        throw error("escape needs " + digits + " hex digits");
      }
      v = v * 16 + d;
      pos++;
    }
    return v;
  }

  private int codePoint(long v, int escAt) {
    if (v > Character.MAX_CODE_POINT || (v >= 0xD800 && v <= 0xDFFF)) {
      pos = escAt;
      throw error("escape is not a valid Unicode code point");
    }
    return (int) v;
  }

  private void skipSpace() {
    while (pos < text.length() && Character.isWhitespace(text.charAt(pos))) {
      pos++;
    }
  }

  private IllegalArgumentException error(String what) {
    return new IllegalArgumentException(
        "invalid selector '" + text + "' at position " + (pos + 1) + ": " + what);
  }

  private static boolean isQuote(char c) {
    return c == '"' || c == '\'' || c == '`';
  }

  private static boolean isMetricStart(char c) {
    return isLabelStart(c) || c == ':';
  }

  private static boolean isMetricPart(char c) {
    return isLabelPart(c) || c == ':';
  }

  private static boolean isLabelStart(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
  }

  private static boolean isLabelPart(char c) {
    return isLabelStart(c) || (c >= '0' && c <= '9');
  }
}
