package dev.tidemark.receiver.http;

import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.Message;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;

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
 *
 * <p><b>Negative zero.</b> {@code JsonFormat} reads every double through {@code BigDecimal}, which
 * has no negative zero, so {@code "asDouble": -0.0} would arrive as +0.0 while protobuf keeps the
 * sign. {@link #negativeZeros} finds, in one more scan of the text (only when it contains {@code
 * -0}), the path of every number (or numeric string) that is a negative zero, and {@link
 * #restoreNegativeZeros} sets those double and float fields of the parsed message to -0.0: any
 * field, at any depth ({@code asDouble}, {@code sum}, {@code explicitBounds[i]}, {@code
 * doubleValue} of an attribute, ...), named by its JSON or proto name. Paths that do not lead to a
 * double or float field holding +0.0 (unknown fields, integers) are left alone. Keys written with
 * escapes are not recognised (the value keeps +0.0).
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

  /**
   * Index after the closing quote of the string opening at {@code quote}, or -1 if unterminated.
   */
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

  /**
   * The base64 form of {@code s[from, to)} if it is a non-empty even run of hex digits, else null.
   */
  private static String hexToBase64(String s, int from, int to) {
    int len = to - from;
    if (len == 0 || (len & 1) != 0) {
      return null;
    }
    byte[] bytes = new byte[len / 2];
    for (int k = 0; k < bytes.length; k++) {
      int hi = Character.digit(s.charAt(from + 2 * k), 16);
      int lo = Character.digit(s.charAt(from + 2 * k + 1), 16);
      if (hi < 0
          || lo < 0
          || !isAsciiHex(s.charAt(from + 2 * k))
          || !isAsciiHex(s.charAt(from + 2 * k + 1))) {
        return null;
      }
      bytes[k] = (byte) ((hi << 4) | lo);
    }
    return Base64.getEncoder().encodeToString(bytes);
  }

  private static boolean isAsciiHex(char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
  }

  // ------------------------------------------------------------------ negative zero

  /**
   * The paths of the negative zeros in {@code json}: each a list of object keys ({@code String})
   * and array indexes ({@code Integer}) from the root, e.g. {@code [resourceMetrics, 0,
   * scopeMetrics, 0, metrics, 2, gauge, dataPoints, 0, asDouble]}. Empty when there is none (the
   * common case, decided by one {@code indexOf}). Never throws, whatever the text.
   */
  static List<Object[]> negativeZeros(String json) {
    if (json.indexOf("-0") < 0) {
      return List.of();
    }
    List<Object[]> found = new ArrayList<>();
    Object[] frames =
        new Object
            [16]; // per open container: its current key (String, may be null) or index (int[])
    int depth = 0;
    int n = json.length();
    int i = 0;
    while (i < n) {
      char c = json.charAt(i);
      switch (c) {
        case '{', '[' -> {
          if (depth == frames.length) {
            frames = Arrays.copyOf(frames, depth * 2);
          }
          frames[depth++] = c == '[' ? new int[1] : null;
          i++;
        }
        case '}', ']' -> {
          if (depth > 0) {
            depth--;
          }
          i++;
        }
        case ',' -> {
          if (depth > 0) {
            if (frames[depth - 1] instanceof int[] index) {
              index[0]++;
            } else {
              frames[depth - 1] = null;
            }
          }
          i++;
        }
        case '"' -> {
          int end = endOfString(json, i);
          if (end < 0) {
            return found;
          }
          int after = skipWhitespace(json, end);
          if (after < n && json.charAt(after) == ':') {
            if (depth > 0 && !(frames[depth - 1] instanceof int[])) {
              frames[depth - 1] = json.substring(i + 1, end - 1);
            }
            i = after + 1;
          } else {
            if (isNegativeZero(json, i + 1, end - 1)) {
              found.add(path(frames, depth));
            }
            i = end;
          }
        }
        case '-' -> {
          int end = i + 1;
          while (end < n && isNumberChar(json.charAt(end))) {
            end++;
          }
          if (isNegativeZero(json, i, end)) {
            found.add(path(frames, depth));
          }
          i = end;
        }
        default -> i++;
      }
    }
    return found;
  }

  /** Sets the double or float field at each path of {@code builder} to -0.0 where it holds +0.0. */
  static void restoreNegativeZeros(Message.Builder builder, List<Object[]> paths) {
    for (Object[] p : paths) {
      restore(builder, p, 0);
    }
  }

  private static void restore(Message.Builder b, Object[] path, int at) {
    if (at >= path.length || !(path[at] instanceof String name)) {
      return;
    }
    FieldDescriptor f = field(b.getDescriptorForType(), name);
    if (f == null || f.isMapField()) {
      return;
    }
    int next = at + 1;
    boolean message = f.getJavaType() == FieldDescriptor.JavaType.MESSAGE;
    if (f.isRepeated()) {
      if (next >= path.length
          || !(path[next] instanceof Integer index)
          || index >= b.getRepeatedFieldCount(f)) {
        return;
      }
      if (message) {
        restore(b.getRepeatedFieldBuilder(f, index), path, next + 1);
      } else if (next + 1 == path.length && isPositiveZero(b.getRepeatedField(f, index))) {
        b.setRepeatedField(f, index, negativeZero(f));
      }
      return;
    }
    if (f.hasPresence() && !b.hasField(f)) {
      return;
    }
    if (message) {
      restore(b.getFieldBuilder(f), path, next);
    } else if (next == path.length && isPositiveZero(b.getField(f))) {
      b.setField(f, negativeZero(f));
    }
  }

  private static FieldDescriptor field(Descriptor type, String name) {
    FieldDescriptor f = type.findFieldByName(name);
    if (f != null) {
      return f;
    }
    for (FieldDescriptor candidate : type.getFields()) {
      if (candidate.getJsonName().equals(name)) {
        return candidate;
      }
    }
    return null;
  }

  private static boolean isPositiveZero(Object value) {
    return (value instanceof Double d && Double.doubleToRawLongBits(d) == 0L)
        || (value instanceof Float f && Float.floatToRawIntBits(f) == 0);
  }

  private static Object negativeZero(FieldDescriptor f) {
    return f.getJavaType() == FieldDescriptor.JavaType.FLOAT ? (Object) (-0.0f) : (Object) (-0.0d);
  }

  private static Object[] path(Object[] frames, int depth) {
    Object[] p = new Object[depth];
    for (int k = 0; k < depth; k++) {
      p[k] = frames[k] instanceof int[] index ? (Object) index[0] : frames[k];
    }
    return p;
  }

  private static boolean isNumberChar(char c) {
    return (c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-';
  }

  /**
   * True if {@code s[from, to)} is a number with a minus sign whose digits are all zeros ({@code
   * -0}, {@code -0.00e5}).
   */
  private static boolean isNegativeZero(String s, int from, int to) {
    if (to - from < 2 || s.charAt(from) != '-') {
      return false;
    }
    boolean zero = false;
    for (int k = from + 1; k < to; k++) {
      char c = s.charAt(k);
      if (c == '0') {
        zero = true;
      } else if (c == 'e' || c == 'E') {
        return zero && isExponent(s, k + 1, to);
      } else if (c != '.') {
        return false;
      }
    }
    return zero;
  }

  private static boolean isExponent(String s, int from, int to) {
    if (from < to && (s.charAt(from) == '+' || s.charAt(from) == '-')) {
      from++;
    }
    if (from == to) {
      return false;
    }
    for (int k = from; k < to; k++) {
      if (s.charAt(k) < '0' || s.charAt(k) > '9') {
        return false;
      }
    }
    return true;
  }
}
