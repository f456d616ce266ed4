package dev.tidemark.promql.parser;

import dev.tidemark.tsdb.model.PromText;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Locale;

/**
 * Go's string rules as PromQL reads them: Prometheus' {@code strutil.Unquote} for string literals,
 * and the {@code %#U} form of error messages; quoting ({@code strconv.Quote}, {@code %q}) is {@link
 * PromText}'s.
 *
 * <p>Go strings are bytes; Java strings are UTF-16. Escapes that produce bytes ({@code \xNN},
 * {@code \NNN}) are collected as bytes and the result decoded as UTF-8; a byte that is not part of
 * a valid UTF-8 sequence becomes the lone surrogate U+DC00+byte (PEP 383 "surrogateescape"), and
 * {@link PromText#quote} prints such a char back as {@code \xNN}, so values survive print → parse.
 */
final class GoStrings {

  private GoStrings() {}

  /** Thrown by {@link #unquote} for malformed literals; the message is Go's {@code ErrSyntax}. */
  static final class SyntaxException extends Exception {
    private static final long serialVersionUID = 1L;

    SyntaxException() {
      super("invalid syntax");
    }
  }

  /** Go's {@code %#U}: {@code U+0063 'c'}, without the quoted rune when it is not printable. */
  static String formatU(int cp) {
    String hex = String.format(Locale.ROOT, "U+%04X", cp);
    return PromText.isPrint(cp) ? hex + " '" + new String(Character.toChars(cp)) + "'" : hex;
  }

  /**
   * Prometheus' {@code strutil.Unquote}: the value of a literal written in single, double or back
   * quotes (quotes included in {@code s}).
   */
  static String unquote(String s) throws SyntaxException {
    int n = s.length();
    if (n < 2) {
      throw new SyntaxException();
    }
    char quote = s.charAt(0);
    if (quote != s.charAt(n - 1)) {
      throw new SyntaxException();
    }
    String body = s.substring(1, n - 1);
    if (quote == '`') {
      if (body.indexOf('`') >= 0) {
        throw new SyntaxException();
      }
      return body;
    }
    if (quote != '"' && quote != '\'') {
      throw new SyntaxException();
    }
    if (body.indexOf('\n') >= 0) {
      throw new SyntaxException();
    }
    if (body.indexOf('\\') < 0 && body.indexOf(quote) < 0) {
      return body;
    }
    ByteArrayOutputStream buf = new ByteArrayOutputStream(body.length() + 8);
    int i = 0;
    while (i < body.length()) {
      char c = body.charAt(i);
      if (c == quote) {
        throw new SyntaxException();
      }
      if (c != '\\') {
        int cp = body.codePointAt(i);
        i += Character.charCount(cp);
        writeUtf8(buf, cp);
        continue;
      }
      if (i + 1 >= body.length()) {
        throw new SyntaxException();
      }
      char e = body.charAt(i + 1);
      i += 2;
      switch (e) {
        case 'a' -> buf.write(0x07);
        case 'b' -> buf.write('\b');
        case 'f' -> buf.write('\f');
        case 'n' -> buf.write('\n');
        case 'r' -> buf.write('\r');
        case 't' -> buf.write('\t');
        case 'v' -> buf.write(0x0B);
        case '\\' -> buf.write('\\');
        case '\'', '"' -> {
          if (e != quote) {
            throw new SyntaxException();
          }
          buf.write(e);
        }
        case 'x', 'u', 'U' -> {
          int digits = e == 'x' ? 2 : e == 'u' ? 4 : 8;
          if (i + digits > body.length()) {
            throw new SyntaxException();
          }
          long v = 0;
          for (int j = 0; j < digits; j++) {
            int d = digitVal(body.charAt(i + j));
            if (d >= 16) {
              throw new SyntaxException();
            }
            v = v << 4 | d;
          }
          i += digits;
          if (e == 'x') {
            buf.write((int) v);
          } else {
            if (v > Character.MAX_CODE_POINT || (v >= 0xD800 && v < 0xE000)) {
              throw new SyntaxException();
            }
            writeUtf8(buf, (int) v);
          }
        }
        case '0', '1', '2', '3', '4', '5', '6', '7' -> {
          int v = e - '0';
          if (i + 2 > body.length()) {
            throw new SyntaxException();
          }
          for (int j = 0; j < 2; j++) {
            int d = body.charAt(i + j) - '0';
            if (d < 0 || d > 7) {
              throw new SyntaxException();
            }
            v = (v << 3) | d;
          }
          i += 2;
          if (v > 255) {
            throw new SyntaxException();
          }
          buf.write(v);
        }
        default -> throw new SyntaxException();
      }
    }
    return decodeUtf8(buf.toByteArray());
  }

  /** lex.go's {@code digitVal}: the value of a hex digit, or 16 for anything else. */
  static int digitVal(int ch) {
    if (ch >= '0' && ch <= '9') {
      return ch - '0';
    }
    if (ch >= 'a' && ch <= 'f') {
      return ch - 'a' + 10;
    }
    if (ch >= 'A' && ch <= 'F') {
      return ch - 'A' + 10;
    }
    return 16;
  }

  private static void writeUtf8(ByteArrayOutputStream buf, int cp) {
    if (cp >= 0xDC80 && cp <= 0xDCFF) {
      buf.write(cp - 0xDC00); // an escaped byte travelling through a Java string
      return;
    }
    byte[] b = new String(Character.toChars(cp)).getBytes(StandardCharsets.UTF_8);
    buf.write(b, 0, b.length);
  }

  /** UTF-8 to UTF-16; each byte outside a valid sequence becomes U+DC00+byte. */
  static String decodeUtf8(byte[] b) {
    StringBuilder out = new StringBuilder(b.length);
    int i = 0;
    while (i < b.length) {
      int c = b[i] & 0xff;
      if (c < 0x80) {
        out.append((char) c);
        i++;
        continue;
      }
      int len;
      int cp;
      int min;
      if (c >= 0xC2 && c <= 0xDF) {
        len = 2;
        cp = c & 0x1F;
        min = 0x80;
      } else if (c >= 0xE0 && c <= 0xEF) {
        len = 3;
        cp = c & 0x0F;
        min = 0x800;
      } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4;
        cp = c & 0x07;
        min = 0x10000;
      } else {
        out.append((char) (0xDC00 + c));
        i++;
        continue;
      }
      boolean ok = i + len <= b.length;
      for (int j = 1; ok && j < len; j++) {
        int cc = b[i + j] & 0xff;
        if ((cc & 0xC0) != 0x80) {
          ok = false;
        } else {
          cp = cp << 6 | (cc & 0x3F);
        }
      }
      if (ok && (cp < min || cp > Character.MAX_CODE_POINT || (cp >= 0xD800 && cp < 0xE000))) {
        ok = false;
      }
      if (ok) {
        out.appendCodePoint(cp);
        i += len;
      } else {
        out.append((char) (0xDC00 + c));
        i++;
      }
    }
    return out.toString();
  }

  /** Whether the string is valid UTF-8 text (no lone surrogates, so no escaped bytes). */
  static boolean isValidUtf8(String s) {
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (Character.isHighSurrogate(c)) {
        if (i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
          i++;
          continue;
        }
        return false;
      }
      if (Character.isLowSurrogate(c)) {
        return false;
      }
    }
    return true;
  }
}
