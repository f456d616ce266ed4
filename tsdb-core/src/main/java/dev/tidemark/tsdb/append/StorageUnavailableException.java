package dev.tidemark.tsdb.append;

/**
 * The engine cannot take the write now (storage failure, memory limit, shutting down). Retryable:
 * receivers map it to gRPC {@code UNAVAILABLE} / HTTP 503 with a retry delay.
 */
public class StorageUnavailableException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public StorageUnavailableException(String message) {
    super(message);
  }

  public StorageUnavailableException(String message, Throwable cause) {
    super(message, cause);
  }
}
