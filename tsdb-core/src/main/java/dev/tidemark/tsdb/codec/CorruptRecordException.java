package dev.tidemark.tsdb.codec;

/**
 * Stored bytes cannot be decoded: truncated, an unknown version or encoding id, invalid UTF-8, a
 * corrupt bitmap or chunk. Decoders check bounds first and throw this, never an {@link
 * IndexOutOfBoundsException}. The message says which record and what is wrong.
 */
public class CorruptRecordException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public CorruptRecordException(String message) {
    super(message);
  }

  public CorruptRecordException(String message, Throwable cause) {
    super(message, cause);
  }
}
