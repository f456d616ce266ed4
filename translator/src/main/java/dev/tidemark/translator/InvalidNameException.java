package dev.tidemark.translator;

/**
 * A metric or label name that cannot be translated (for instance one that is empty or only
 * underscores after escaping). The message is the reference implementation's wording. Carries no
 * stack trace: it is an expected outcome on the ingest path, not a bug.
 */
public final class InvalidNameException extends Exception {
  private static final long serialVersionUID = 1L;

  public InvalidNameException(String message) {
    super(message, null, false, false);
  }
}
