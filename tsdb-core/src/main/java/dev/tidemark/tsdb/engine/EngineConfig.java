package dev.tidemark.tsdb.engine;

import java.time.Clock;
import java.time.Duration;
import java.util.Objects;

/**
 * The engine's settings. Immutable; built with {@link #builder()} and validated by {@link
 * Builder#build()} (the message names the bad value).
 *
 * @param outOfOrderWindow how far behind the newest sample of its series a sample may be (default
 *     {@link #DEFAULT_OUT_OF_ORDER_WINDOW})
 * @param retention how long data is kept (default {@link #DEFAULT_RETENTION})
 * @param maxFutureSkew how far ahead of the clock a sample may be (default {@link
 *     #DEFAULT_MAX_FUTURE_SKEW})
 * @param fsync whether {@code append} waits for a power-loss-safe sync (group commit)
 * @param maxHeadBytes the head's memory budget; beyond it appends fail with {@code
 *     StorageUnavailableException} until sealing frees memory (default {@link
 *     #DEFAULT_MAX_HEAD_BYTES})
 * @param retentionInterval how often retention runs in the background; zero disables it
 * @param clock the clock for retention and future checks
 * @param labelCacheBytes the bound, in estimated heap bytes, of the decoded ForwardIndex tables of
 *     sealed buckets that selects keep (per bucket {@code series id → labels}; docs/architecture.md,
 *     Read path); 0 disables the cache (default {@link #DEFAULT_LABEL_CACHE_BYTES})
 * @param readParallelism how many threads one select may use to read sealed buckets (the caller's
 *     and {@code ForkJoinPool.commonPool()} workers); 1 reads them on the caller's thread (default
 *     {@link #DEFAULT_READ_PARALLELISM})
 */
public record EngineConfig(
    Duration outOfOrderWindow,
    Duration retention,
    Duration maxFutureSkew,
    boolean fsync,
    long maxHeadBytes,
    Duration retentionInterval,
    Clock clock,
    long labelCacheBytes,
    int readParallelism) {

  public static final Duration DEFAULT_OUT_OF_ORDER_WINDOW = Duration.ofMinutes(30);
  public static final Duration DEFAULT_RETENTION = Duration.ofDays(15);
  public static final Duration DEFAULT_MAX_FUTURE_SKEW = Duration.ofMinutes(10);
  public static final long DEFAULT_MAX_HEAD_BYTES = 4L << 30;
  public static final Duration DEFAULT_RETENTION_INTERVAL = Duration.ofMinutes(5);
  /**
   * 256 MiB: about 400,000 series-buckets of 10 labels held alone (a series' tables share its
   * labels, so more in practice), e.g. 16,000 series over 24 hour buckets.
   */
  public static final long DEFAULT_LABEL_CACHE_BYTES = 256L << 20;
  /** The machine's processors, as the PromQL engine's parallelism. */
  public static final int DEFAULT_READ_PARALLELISM = Runtime.getRuntime().availableProcessors();

  /** The only bucket size ingestion writes: 1 hour (size code 1). */
  public static final int BUCKET_SIZE_CODE = 1;

  public EngineConfig {
    Objects.requireNonNull(clock, "clock");
    requireNonNegative("outOfOrderWindow", outOfOrderWindow);
    requireNonNegative("maxFutureSkew", maxFutureSkew);
    requireNonNegative("retentionInterval", retentionInterval);
    Objects.requireNonNull(retention, "retention");
    if (retention.compareTo(Duration.ofHours(1)) < 0) {
      throw new IllegalArgumentException("retention must be at least 1h, was " + retention);
    }
    if (maxHeadBytes <= 0) {
      throw new IllegalArgumentException("maxHeadBytes must be positive, was " + maxHeadBytes);
    }
    if (labelCacheBytes < 0) {
      throw new IllegalArgumentException("labelCacheBytes must not be negative, was " + labelCacheBytes);
    }
    if (readParallelism < 1) {
      throw new IllegalArgumentException("readParallelism must be at least 1, was " + readParallelism);
    }
  }

  private static void requireNonNegative(String name, Duration d) {
    Objects.requireNonNull(d, name);
    if (d.isNegative()) {
      throw new IllegalArgumentException(name + " must not be negative, was " + d);
    }
  }

  public static Builder builder() {
    return new Builder();
  }

  public Builder toBuilder() {
    return new Builder()
        .outOfOrderWindow(outOfOrderWindow)
        .retention(retention)
        .maxFutureSkew(maxFutureSkew)
        .fsync(fsync)
        .maxHeadBytes(maxHeadBytes)
        .retentionInterval(retentionInterval)
        .clock(clock)
        .labelCacheBytes(labelCacheBytes)
        .readParallelism(readParallelism);
  }

  /** Builder with the documented defaults. */
  public static final class Builder {
    private Duration outOfOrderWindow = DEFAULT_OUT_OF_ORDER_WINDOW;
    private Duration retention = DEFAULT_RETENTION;
    private Duration maxFutureSkew = DEFAULT_MAX_FUTURE_SKEW;
    private boolean fsync;
    private long maxHeadBytes = DEFAULT_MAX_HEAD_BYTES;
    private Duration retentionInterval = DEFAULT_RETENTION_INTERVAL;
    private Clock clock = Clock.systemUTC();
    private long labelCacheBytes = DEFAULT_LABEL_CACHE_BYTES;
    private int readParallelism = DEFAULT_READ_PARALLELISM;

    public Builder outOfOrderWindow(Duration v) {
      outOfOrderWindow = v;
      return this;
    }

    public Builder retention(Duration v) {
      retention = v;
      return this;
    }

    public Builder maxFutureSkew(Duration v) {
      maxFutureSkew = v;
      return this;
    }

    public Builder fsync(boolean v) {
      fsync = v;
      return this;
    }

    public Builder maxHeadBytes(long v) {
      maxHeadBytes = v;
      return this;
    }

    public Builder retentionInterval(Duration v) {
      retentionInterval = v;
      return this;
    }

    public Builder clock(Clock v) {
      clock = v;
      return this;
    }

    public Builder labelCacheBytes(long v) {
      labelCacheBytes = v;
      return this;
    }

    public Builder readParallelism(int v) {
      readParallelism = v;
      return this;
    }

    public EngineConfig build() {
      return new EngineConfig(
          outOfOrderWindow,
          retention,
          maxFutureSkew,
          fsync,
          maxHeadBytes,
          retentionInterval,
          clock,
          labelCacheBytes,
          readParallelism);
    }
  }
}
