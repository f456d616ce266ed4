package dev.tidemark.receiver.http;

import java.util.Base64;

/**
 * The one OTLP/JSON deviation {@code JsonFormat} cannot be configured for (contract §5.3): {@code
 * traceId} and {@code spanId} are case-insensitive hex, not base64. A 32-character hex trace id is
 * also valid base64 and would silently decode to 24 wrong bytes, so before parsing, every string
 * value of a {@code traceId}/{@code spanId} key (or their proto names {@code trace_id}/{@code
 * span_id}) that is an even number of hex digits is rewritten to base64. Other values are left
 * alone (JsonFormat then reports them). {@code bytesValue} in attributes stays base64.
 *
 * <p>A single linear scan over the text: it only has to find string tokens and the keys before
 * them; it does not validate the JSON (the parser does). Text without such ids is returned as is.
 */
final class OtlpJson {
  private OtlpJson() {}

  static String hexIdsToBase64(String json) {
    StringBuilder out = null;
    int copied = 0;
    int n = json.length();
    int i = json.indexOf('"');
    while (i >= 0 && i < n) {
      int end = endOfString(json, i);
      if (end < 0) {
        break;
      }
      int colon = skipWhitespace(json, end);
      if (colon < n && json.charAt(colon) == ':' && isIdKey(json, i + 1, end - 1)) {
        int v = skipWhitespace(json, colon + 1);
        if (v < n && json.charAt(v) == '"') {
          int vEnd = endOfString(json, v);
          if (vEnd < 0) {
            break;
          }
          String base64 = hexToBase64(json, v + 1, vEnd - 1);
          if (base64 != null) {
            if (out == null) {
              out = new StringBuilder(n + 16);
            }
            out.append(json, copied, v + 1).append(base64);
            copied = vEnd - 1;
          }
          end = vEnd;
        }
      }
      i = json.indexOf('"', end);
    }
    if (out == null) {
      return json;
    }
    return out.append(json, copied, n).toString();
  }

  /** Index after the closing quote of the string opening at {@code quote}, or -1 if unterminated. */
  private static int endOfString(String s, int quote) {
    int n = s.length();
    for (int k = quote + 1; k < n; k++) {
      char c = s.charAt(k);
      if (c == '\\') {
        k++;
      } else if (c == '"') {
        return k + 1;
      }
    }
    return -1;
  }

  private static int skipWhitespace(String s, int k) {
    int n = s.length();
    while (k < n) {
      char c = s.charAt(k);
      if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
        break;
      }
      k++;
    }
    return k;
  }

  private static boolean isIdKey(String s, int from, int to) {
    int len = to - from;
    return (len == 7 && s.startsWith("traceId", from))
        || (len == 6 && s.startsWith("spanId", from))
        || (len == 8 && s.startsWith("trace_id", from))
        || (len == 7 && s.startsWith("span_id", from));
  }

  /** The base64 form of {@code s[from, to)} if it is a non-empty even run of hex digits, else null. */
  private static String hexToBase64(String s, int from, int to) {
    int len = to - from;
    if (len == 0 || (len & 1) != 0) {
      return null;
    }
    byte[] bytes = new byte[len / 2];
    for (int k = 0; k < bytes.length; k++) {
      int hi = Character.digit(s.charAt(from + 2 * k), 16);
      int lo = Character.digit(s.charAt(from + 2 * k + 1), 16);
      if (hi < 0 || lo < 0 || !isAsciiHex(s.charAt(from + 2 * k)) || !isAsciiHex(s.charAt(from + 2 * k + 1))) {
        return null;
      }
      bytes[k] = (byte) ((hi << 4) | lo);
    }
    return Base64.getEncoder().encodeToString(bytes);
  }

  private static boolean isAsciiHex(char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
  }
}
