package dev.tidemark.receiver.http;

import java.io.IOException;

/**
 * A compressed request body that cannot be decoded (bad header, bad checksum, truncated stream),
 * with a plain message for the client's answer.
 */
final class CorruptBodyException extends IOException {
  private static final long serialVersionUID = 1L;

  CorruptBodyException(String message) {
    super(message);
  }
}
