package dev.tidemark.server;

/**
 * A setting has a bad value, an unknown name, or contradicts another setting. The message names the
 * setting, the value and where it came from, and is meant for the operator as is: {@code main}
 * prints it without a stack trace and exits with {@link Main#EXIT_USAGE}.
 */
public final class ConfigException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public ConfigException(String message) {
    super(message);
  }

  public ConfigException(String message, Throwable cause) {
    super(message, cause);
  }
}
