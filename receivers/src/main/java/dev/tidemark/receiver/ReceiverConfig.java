package dev.tidemark.receiver;

import java.time.Duration;
import java.util.Objects;

/**
 * Limits and back-pressure settings of the OTLP receivers (contract: {@code
 * docs/otlp-translation.md} §5.2, §5.3). Immutable; validated on construction, every message names
 * the bad value.
 *
 * @param maxGrpcMessageBytes largest OTLP/gRPC message, measured after decompression; the server
 *     sets it as {@code maxInboundMessageSize} on its gRPC server builder, which answers larger
 *     messages with {@code RESOURCE_EXHAUSTED} (default {@link #DEFAULT_MAX_GRPC_MESSAGE_BYTES})
 * @param maxHttpBodyBytes largest OTLP/HTTP body, measured after decompression; larger bodies get
 *     413 (default {@link #DEFAULT_MAX_HTTP_BODY_BYTES}; at most {@link #MAX_HTTP_BODY_BYTES_LIMIT}
 *     because a body is decoded from one array)
 * @param maxInFlightBytes request bytes (decompressed, serialized) held at once by requests being
 *     read, decoded and translated; a request that would exceed it is refused as overloaded, except
 *     when nothing else is in flight (default {@link #DEFAULT_MAX_IN_FLIGHT_BYTES})
 * @param retryAfter the delay suggested to clients refused for overload or storage trouble: gRPC
 *     {@code RetryInfo.retry_delay}, HTTP {@code Retry-After} rounded up to whole seconds (default
 *     {@link #DEFAULT_RETRY_AFTER})
 */
public record ReceiverConfig(
    int maxGrpcMessageBytes, long maxHttpBodyBytes, long maxInFlightBytes, Duration retryAfter) {

  /** 4 MiB, the gRPC default and the collector's {@code max_recv_msg_size_mib}. */
  public static final int DEFAULT_MAX_GRPC_MESSAGE_BYTES = 4 * 1024 * 1024;

  /** 64 MiB, the OTLP recommendation the contract follows (§5.3). */
  public static final long DEFAULT_MAX_HTTP_BODY_BYTES = 64L * 1024 * 1024;

  /** 256 MiB. */
  public static final long DEFAULT_MAX_IN_FLIGHT_BYTES = 256L * 1024 * 1024;

  /** One second. */
  public static final Duration DEFAULT_RETRY_AFTER = Duration.ofSeconds(1);

  /** The largest allowed {@link #maxHttpBodyBytes()}: a Java array's practical size limit. */
  public static final long MAX_HTTP_BODY_BYTES_LIMIT = Integer.MAX_VALUE - 16;

  /**
   * @throws IllegalArgumentException naming the first bad value
   */
  public ReceiverConfig {
    if (maxGrpcMessageBytes <= 0) {
      throw new IllegalArgumentException(
          "maxGrpcMessageBytes must be positive, was " + maxGrpcMessageBytes);
    }
    if (maxHttpBodyBytes <= 0 || maxHttpBodyBytes > MAX_HTTP_BODY_BYTES_LIMIT) {
      throw new IllegalArgumentException(
          "maxHttpBodyBytes must be in [1, "
              + MAX_HTTP_BODY_BYTES_LIMIT
              + "], was "
              + maxHttpBodyBytes);
    }
    if (maxInFlightBytes <= 0) {
      throw new IllegalArgumentException(
          "maxInFlightBytes must be positive, was " + maxInFlightBytes);
    }
    Objects.requireNonNull(retryAfter, "retryAfter");
    if (retryAfter.isNegative() || retryAfter.isZero()) {
      throw new IllegalArgumentException("retryAfter must be positive, was " + retryAfter);
    }
  }

  public static ReceiverConfig defaults() {
    return builder().build();
  }

  public static Builder builder() {
    return new Builder();
  }

  /**
   * {@link #retryAfter()} in whole seconds, rounded up, at least 1 (for HTTP {@code Retry-After}).
   */
  public long retryAfterSeconds() {
    long millis = retryAfter.toMillis();
    return Math.max(1, (millis + 999) / 1000);
  }

  /** Not thread-safe. */
  public static final class Builder {
    private int maxGrpcMessageBytes = DEFAULT_MAX_GRPC_MESSAGE_BYTES;
    private long maxHttpBodyBytes = DEFAULT_MAX_HTTP_BODY_BYTES;
    private long maxInFlightBytes = DEFAULT_MAX_IN_FLIGHT_BYTES;
    private Duration retryAfter = DEFAULT_RETRY_AFTER;

    private Builder() {}

    public Builder maxGrpcMessageBytes(int v) {
      maxGrpcMessageBytes = v;
      return this;
    }

    public Builder maxHttpBodyBytes(long v) {
      maxHttpBodyBytes = v;
      return this;
    }

    public Builder maxInFlightBytes(long v) {
      maxInFlightBytes = v;
      return this;
    }

    public Builder retryAfter(Duration v) {
      retryAfter = Objects.requireNonNull(v, "retryAfter");
      return this;
    }

    /**
     * @throws IllegalArgumentException naming the first bad value
     */
    public ReceiverConfig build() {
      return new ReceiverConfig(
          maxGrpcMessageBytes, maxHttpBodyBytes, maxInFlightBytes, retryAfter);
    }
  }
}
