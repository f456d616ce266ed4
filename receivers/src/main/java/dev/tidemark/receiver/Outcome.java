package dev.tidemark.receiver;

import java.util.Locale;

/**
 * How one OTLP request ended; the {@code outcome} label of {@code tidemark_otlp_requests_total}.
 * Each receiver maps an outcome to its protocol's status (the table is in {@link
 * dev.tidemark.receiver.otlp.OtlpIngestor}).
 */
public enum Outcome {
  /** Every data point accepted (the response may still carry warnings). */
  SUCCESS,
  /** Some data points rejected; the response's {@code partial_success} says which and why. */
  PARTIAL_SUCCESS,
  /** The request cannot be used at all: undecodable body or message, bad gzip stream. */
  INVALID,
  /** The body is over the size limit after decompression. */
  TOO_LARGE,
  /** HTTP only: a content type or content encoding the receiver does not take. */
  UNSUPPORTED_MEDIA_TYPE,
  /** HTTP only: a method other than POST. */
  METHOD_NOT_ALLOWED,
  /** Refused by admission control: the in-flight bytes limit is reached. Retryable. */
  OVERLOADED,
  /**
   * The engine cannot take writes now (storage failure, head memory limit, shutting down).
   * Retryable.
   */
  STORAGE_UNAVAILABLE,
  /**
   * HTTP only: the body could not be read to its end (the connection was reset or closed before the
   * body was complete, the client was silent for the idle timeout while sending it, or an I/O
   * failure on the server's side; Jetty reports a chunked body with broken framing as such an early
   * end too): not the client's data at fault. Nothing was decoded or written, and the same request
   * sent again can pass. Retryable.
   */
  BODY_UNREADABLE,
  /** The client cancelled the call (or its deadline passed) before processing started. */
  CANCELLED,
  /** An unexpected failure inside the receiver or translator. */
  INTERNAL_ERROR;

  private final String label = name().toLowerCase(Locale.ROOT);

  /** The metric label value: the name in lower case, e.g. {@code partial_success}. */
  public String label() {
    return label;
  }

  /** True for outcomes a client should retry (after {@link ReceiverConfig#retryAfter()}). */
  public boolean retryable() {
    return this == OVERLOADED || this == STORAGE_UNAVAILABLE || this == BODY_UNREADABLE;
  }
}
