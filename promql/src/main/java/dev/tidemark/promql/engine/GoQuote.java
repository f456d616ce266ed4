package dev.tidemark.promql.engine;

/** Go's {@code strconv.Quote} for the texts of error messages. */
final class GoQuote {
  private GoQuote() {}

  static String quote(String s) {
    StringBuilder sb = new StringBuilder(s.length() + 2).append('"');
    for (int i = 0; i < s.length(); ) {
      int cp = s.codePointAt(i);
      i += Character.charCount(cp);
      switch (cp) {
        case '"' -> sb.append("\\\"");
        case '\\' -> sb.append("\\\\");
        case '\n' -> sb.append("\\n");
        case '\t' -> sb.append("\\t");
        case '\r' -> sb.append("\\r");
        case 7 -> sb.append("\\a");
        case 8 -> sb.append("\\b");
        case 12 -> sb.append("\\f");
        case 11 -> sb.append("\\v");
        default -> {
          if (cp < 0x20 || cp == 0x7f) {
            sb.append(String.format("\\x%02x", cp));
          } else if (Character.isISOControl(cp) || !Character.isDefined(cp)) {
            sb.append(cp <= 0xffff ? String.format("\\u%04x", cp) : String.format("\\U%08x", cp));
          } else {
            sb.appendCodePoint(cp);
          }
        }
      }
    }
    return sb.append('"').toString();
  }
}
