package dev.tidemark.rocksdb;

/**
 * Settings of a {@link RocksDbKvStore}. Immutable; every value is checked when the config is built
 * and a bad one fails at once with the value in the message. Start from {@link #defaults()} or
 * {@link #builder()}.
 *
 * <p>What is deliberately not configurable: the WAL (always on), compression (LZ4 on the upper
 * levels, ZSTD at the bottommost), the bloom filter (10 bits per key, whole key) and the comparator
 * (RocksDB's bytewise one, i.e. unsigned byte order, which the KV seam requires). See the design
 * note in {@link RocksDbKvStore}.
 *
 * @param blockCacheBytes size of the shared LRU block cache, which also holds index and filter
 *     blocks; default {@link #DEFAULT_BLOCK_CACHE_BYTES}
 * @param fsyncOnWrite whether every {@code write} fsyncs the WAL before it returns. Default false:
 *     a returned write survives a crash of the process (it is in the WAL, handed to the OS); {@code
 *     sync()} makes it survive power loss, one sync serving many writes
 * @param writeBufferBytes size of one memtable before it is flushed to an SST file; default {@link
 *     #DEFAULT_WRITE_BUFFER_BYTES}; at least {@link #MIN_WRITE_BUFFER_BYTES}
 * @param maxBackgroundJobs flushes plus compactions running at once; default {@link
 *     #DEFAULT_MAX_BACKGROUND_JOBS} (our machines have 2 cores)
 * @param blockSizeBytes uncompressed size of an SST data block; default {@link
 *     #DEFAULT_BLOCK_SIZE_BYTES}
 * @param maxOpenFiles SST files kept open, or -1 for all of them (needs {@code ulimit -n} above the
 *     SST count, about data size / 64 MiB); default {@link #DEFAULT_MAX_OPEN_FILES}
 */
public record RocksDbConfig(
    long blockCacheBytes,
    boolean fsyncOnWrite,
    long writeBufferBytes,
    int maxBackgroundJobs,
    long blockSizeBytes,
    int maxOpenFiles) {

  /** 256 MiB. */
  public static final long DEFAULT_BLOCK_CACHE_BYTES = 256L << 20;

  /** 64 MiB (RocksDB's own default). */
  public static final long DEFAULT_WRITE_BUFFER_BYTES = 64L << 20;

  /** RocksDB refuses smaller memtables. 64 KiB. */
  public static final long MIN_WRITE_BUFFER_BYTES = 64L << 10;

  /** One flush and one compaction at a time on a 2-core machine. */
  public static final int DEFAULT_MAX_BACKGROUND_JOBS = 2;

  /**
   * 16 KiB: a time series value (one series, one bucket) is often a few KiB, and engine scans walk
   * one (record type, bucket) prefix from start to end, so larger blocks compress better and need
   * fewer index entries without costing point lookups much.
   */
  public static final long DEFAULT_BLOCK_SIZE_BYTES = 16L << 10;

  /** Smallest and largest block size accepted: 1 KiB and 1 MiB. */
  public static final long MIN_BLOCK_SIZE_BYTES = 1L << 10;

  public static final long MAX_BLOCK_SIZE_BYTES = 1L << 20;

  /** -1: every SST file stays open (no table-cache misses). */
  public static final int DEFAULT_MAX_OPEN_FILES = -1;

  /** RocksDB raises smaller limits to 20 anyway; we refuse them instead of changing them. */
  public static final int MIN_MAX_OPEN_FILES = 20;

  public RocksDbConfig {
    if (blockCacheBytes <= 0) {
      throw new IllegalArgumentException(
          "blockCacheBytes must be positive, was " + blockCacheBytes);
    }
    if (writeBufferBytes < MIN_WRITE_BUFFER_BYTES) {
      throw new IllegalArgumentException(
          "writeBufferBytes must be at least "
              + MIN_WRITE_BUFFER_BYTES
              + ", was "
              + writeBufferBytes);
    }
    if (maxBackgroundJobs < 1) {
      throw new IllegalArgumentException(
          "maxBackgroundJobs must be at least 1, was " + maxBackgroundJobs);
    }
    if (blockSizeBytes < MIN_BLOCK_SIZE_BYTES || blockSizeBytes > MAX_BLOCK_SIZE_BYTES) {
      throw new IllegalArgumentException(
          "blockSizeBytes must be between "
              + MIN_BLOCK_SIZE_BYTES
              + " and "
              + MAX_BLOCK_SIZE_BYTES
              + ", was "
              + blockSizeBytes);
    }
    if (maxOpenFiles != -1 && maxOpenFiles < MIN_MAX_OPEN_FILES) {
      throw new IllegalArgumentException(
          "maxOpenFiles must be -1 (unlimited) or at least "
              + MIN_MAX_OPEN_FILES
              + ", was "
              + maxOpenFiles);
    }
  }

  /** Every setting at its default. */
  public static RocksDbConfig defaults() {
    return builder().build();
  }

  public static Builder builder() {
    return new Builder();
  }

  /** A builder starting from this config's values. */
  public Builder toBuilder() {
    return new Builder()
        .blockCacheBytes(blockCacheBytes)
        .fsyncOnWrite(fsyncOnWrite)
        .writeBufferBytes(writeBufferBytes)
        .maxBackgroundJobs(maxBackgroundJobs)
        .blockSizeBytes(blockSizeBytes)
        .maxOpenFiles(maxOpenFiles);
  }

  /** Builds a {@link RocksDbConfig}; values are checked in {@link #build()}. Not thread-safe. */
  public static final class Builder {
    private long blockCacheBytes = DEFAULT_BLOCK_CACHE_BYTES;
    private boolean fsyncOnWrite;
    private long writeBufferBytes = DEFAULT_WRITE_BUFFER_BYTES;
    private int maxBackgroundJobs = DEFAULT_MAX_BACKGROUND_JOBS;
    private long blockSizeBytes = DEFAULT_BLOCK_SIZE_BYTES;
    private int maxOpenFiles = DEFAULT_MAX_OPEN_FILES;

    private Builder() {}

    public Builder blockCacheBytes(long v) {
      blockCacheBytes = v;
      return this;
    }

    public Builder fsyncOnWrite(boolean v) {
      fsyncOnWrite = v;
      return this;
    }

    public Builder writeBufferBytes(long v) {
      writeBufferBytes = v;
      return this;
    }

    public Builder maxBackgroundJobs(int v) {
      maxBackgroundJobs = v;
      return this;
    }

    public Builder blockSizeBytes(long v) {
      blockSizeBytes = v;
      return this;
    }

    public Builder maxOpenFiles(int v) {
      maxOpenFiles = v;
      return this;
    }

    /**
     * @throws IllegalArgumentException naming the first bad value
     */
    public RocksDbConfig build() {
      return new RocksDbConfig(
          blockCacheBytes,
          fsyncOnWrite,
          writeBufferBytes,
          maxBackgroundJobs,
          blockSizeBytes,
          maxOpenFiles);
    }
  }
}
