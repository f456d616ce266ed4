package dev.tidemark.translator;

/**
 * How OTLP metric and attribute names become Prometheus names (contract §1.1; Prometheus {@code
 * otlp.translation_strategy}).
 */
public enum TranslationStrategy {
  /**
   * Escape invalid characters to {@code _}, add unit and type suffixes. Prometheus' and our
   * default.
   */
  UNDERSCORE_ESCAPING_WITH_SUFFIXES(true, true),
  /** Escape invalid characters, no suffixes (names of different units may collide). */
  UNDERSCORE_ESCAPING_WITHOUT_SUFFIXES(true, false),
  /** Keep UTF-8 names, add suffixes. Needs UTF-8-capable queries. */
  NO_UTF8_ESCAPING_WITH_SUFFIXES(false, true),
  /** Names verbatim (experimental; collisions such as {@code foo.bar} in s and in ms). */
  NO_TRANSLATION(false, false);

  private final boolean escape;
  private final boolean suffixes;

  TranslationStrategy(boolean escape, boolean suffixes) {
    this.escape = escape;
    this.suffixes = suffixes;
  }

  /** Whether names are escaped to the legacy Prometheus character set. */
  public boolean shouldEscape() {
    return escape;
  }

  /**
   * Whether unit and type suffixes ({@code _seconds}, {@code _total}, {@code _ratio}) are added.
   */
  public boolean shouldAddSuffixes() {
    return suffixes;
  }

  /** The strategy with these two properties. */
  public static TranslationStrategy of(boolean escape, boolean suffixes) {
    if (escape) {
      return suffixes ? UNDERSCORE_ESCAPING_WITH_SUFFIXES : UNDERSCORE_ESCAPING_WITHOUT_SUFFIXES;
    }
    return suffixes ? NO_UTF8_ESCAPING_WITH_SUFFIXES : NO_TRANSLATION;
  }
}
