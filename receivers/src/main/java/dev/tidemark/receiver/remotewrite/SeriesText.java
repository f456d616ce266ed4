package dev.tidemark.receiver.remotewrite;

import java.util.List;
import java.util.Locale;

/**
 * A label set as Prometheus' {@code labels.Labels.String()} writes it, for the lines of an answer:
 * {@code {__name__="up", job="a"}}. Stateless.
 */
final class SeriesText {
  private SeriesText() {}

  /** The text of name/value pairs (in the order given). */
  static String of(List<String> pairs) {
    StringBuilder sb = new StringBuilder("{");
    for (int i = 0; i < pairs.size(); i += 2) {
      if (i > 0) {
        sb.append(", ");
      }
      String n = pairs.get(i);
      if (isLegacyName(n)) {
        sb.append(n);
      } else {
        quote(sb, n);
      }
      sb.append('=');
      quote(sb, pairs.get(i + 1));
    }
    return sb.append('}').toString();
  }

  private static boolean isLegacyName(String n) {
    if (n.isEmpty()) {
      return false;
    }
    for (int i = 0; i < n.length(); i++) {
      char c = n.charAt(i);
      boolean ok =
          c == '_'
              || (c >= 'a' && c <= 'z')
              || (c >= 'A' && c <= 'Z')
              || (i > 0 && c >= '0' && c <= '9');
      if (!ok) {
        return false;
      }
    }
    return true;
  }

  private static void quote(StringBuilder sb, String s) {
    sb.append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '\\' -> sb.append("\\\\");
        case '"' -> sb.append("\\\"");
        case '\n' -> sb.append("\\n");
        case '\r' -> sb.append("\\r");
        case '\t' -> sb.append("\\t");
        default -> {
          if (c < 0x20 || c == 0x7f) {
            sb.append(String.format(Locale.ROOT, "\\x%02x", (int) c));
          } else {
            sb.append(c);
          }
        }
      }
    }
    sb.append('"');
  }
}
