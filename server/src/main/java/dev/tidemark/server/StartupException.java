package dev.tidemark.server;

/**
 * The server could not start: a port in use, a data folder locked by another process, a store whose
 * schema contradicts this version. The message is meant for the operator as is ({@code main} prints
 * it without a stack trace and exits with {@link Main#EXIT_FAILURE}); whatever was opened before
 * the failure has been released when this is thrown.
 */
public final class StartupException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public StartupException(String message, Throwable cause) {
    super(message, cause);
  }
}
