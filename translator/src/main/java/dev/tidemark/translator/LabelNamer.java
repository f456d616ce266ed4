package dev.tidemark.translator;

import dev.tidemark.tsdb.model.PromText;

/**
 * Turns OTLP attribute keys into Prometheus label names (contract §2.2).
 *
 * <p>Escaping mode: each invalid code point (not byte) becomes {@code _}; unless {@code
 * preserveMultipleUnderscores}, runs of {@code _} collapse to one (the reserved form {@code __x__}
 * keeps its double underscores at both ends); a leading digit gets the prefix {@code key_}; with
 * {@code underscoreLabelSanitization} a leading single {@code _} gets the prefix {@code key}. A
 * result of only underscores is an error. UTF-8 mode keeps names verbatim and rejects only empty or
 * all-underscore names. Our defaults are the Prometheus server defaults (both flags true).
 *
 * <p>Immutable and thread-safe.
 */
public final class LabelNamer {
  private final boolean utf8Allowed;
  private final boolean underscoreLabelSanitization;
  private final boolean preserveMultipleUnderscores;

  public LabelNamer(
      boolean utf8Allowed,
      boolean underscoreLabelSanitization,
      boolean preserveMultipleUnderscores) {
    this.utf8Allowed = utf8Allowed;
    this.underscoreLabelSanitization = underscoreLabelSanitization;
    this.preserveMultipleUnderscores = preserveMultipleUnderscores;
  }

  /**
   * The label name for an attribute key.
   *
   * @throws InvalidNameException if the key is empty or the result is only underscores
   */
  public String build(String key) throws InvalidNameException {
    if (key.isEmpty()) {
      throw new InvalidNameException("label name is empty");
    }
    if (utf8Allowed) {
      if (MetricNamer.onlyUnderscores(key)) {
        throw new InvalidNameException(
            "label name " + PromText.quote(key) + " contains only underscores");
      }
      return key;
    }
    if (isValidLegacy(key) && (preserveMultipleUnderscores || key.indexOf("__") < 0)) {
      // Fast path: nothing to escape or collapse; only the prefix rules can apply.
      return prefix(key, key);
    }
    StringBuilder sb = new StringBuilder(key.length() + 4);
    for (int i = 0; i < key.length(); ) {
      int cp = key.codePointAt(i);
      i += Character.charCount(cp);
      sb.append(isValidChar(cp) ? (char) cp : '_');
    }
    String s = sb.toString();
    if (!preserveMultipleUnderscores) {
      s = collapse(s);
    }
    return prefix(key, s);
  }

  private String prefix(String key, String s) throws InvalidNameException {
    String out = s;
    char first = s.charAt(0);
    if (first >= '0' && first <= '9') {
      out = "key_" + s;
    } else if (underscoreLabelSanitization && first == '_' && !s.startsWith("__")) {
      out = "key" + s;
    }
    if (MetricNamer.onlyUnderscores(out)) {
      throw new InvalidNameException(
          "normalization for label name "
              + PromText.quote(key)
              + " resulted in invalid name "
              + PromText.quote(out));
    }
    return out;
  }

  /** Collapses runs of underscores, keeping the reserved {@code __x__} form intact at the ends. */
  private static String collapse(String s) {
    boolean reserved =
        s.length() > 4 && s.startsWith("__") && s.endsWith("__") && !MetricNamer.onlyUnderscores(s);
    StringBuilder sb = new StringBuilder(s.length());
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == '_' && sb.length() > 0 && sb.charAt(sb.length() - 1) == '_') {
        continue;
      }
      sb.append(c);
    }
    String out = sb.toString();
    return reserved ? "_" + out + "_" : out;
  }

  private static boolean isValidChar(int c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  }

  private static boolean isValidLegacy(String s) {
    for (int i = 0; i < s.length(); i++) {
      if (!isValidChar(s.charAt(i))) {
        return false;
      }
    }
    return true;
  }
}
