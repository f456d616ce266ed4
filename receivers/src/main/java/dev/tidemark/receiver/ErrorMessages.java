package dev.tidemark.receiver;

import java.util.regex.Pattern;

/**
 * Error texts for clients: what went wrong in plain words, never a Java class name. Exception
 * messages often carry one ({@code JsonFormat} reports {@code
 * "com.google.gson.stream.MalformedJsonException: Unterminated array at ..."}, wrapping exceptions
 * use their cause's {@code toString()}); {@link #describe} drops those names and keeps the rest.
 * The full exception belongs in the server log (through a rate limit), not in the answer.
 */
public final class ErrorMessages {
  /**
   * A class name with its colon: qualified ({@code java.io.EOFException}) or simple ending in
   * {@code Exception} or {@code Error} ({@code IllegalArgumentException}).
   */
  private static final Pattern CLASS_NAME =
      Pattern.compile(
          "(?:\\b(?:[a-z_$][\\w$]*\\.)+[A-Z][\\w$]*|\\b[A-Z][\\w$]*(?:Exception|Error))(?:\\s*:\\s*|\\b)");

  private ErrorMessages() {}

  /**
   * The message of {@code t} without class names, or {@code fallback} when nothing is left (no
   * message, or only a class name).
   */
  public static String describe(Throwable t, String fallback) {
    return clean(t == null ? null : t.getMessage(), fallback);
  }

  /** {@code message} without class names, or {@code fallback} when nothing is left. */
  public static String clean(String message, String fallback) {
    if (message == null) {
      return fallback;
    }
    String s = CLASS_NAME.matcher(message).replaceAll("").strip();
    while (s.startsWith(":") || s.startsWith(";")) {
      s = s.substring(1).strip();
    }
    return s.isEmpty() ? fallback : s;
  }
}
