package dev.tidemark.tsdb.engine;

import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Objects;

/**
 * The engine's settings. Immutable; built with {@link #builder()} and validated by {@link
 * Builder#build()} (the message names the bad value).
 *
 * @param outOfOrderWindow how far behind the newest sample of its series a sample may be (default
 *     {@link #DEFAULT_OUT_OF_ORDER_WINDOW})
 * @param retention how long data is kept, at least {@link #MIN_RETENTION} (default {@link
 *     #DEFAULT_RETENTION})
 * @param maxFutureSkew how far ahead of the clock a sample may be (default {@link
 *     #DEFAULT_MAX_FUTURE_SKEW})
 * @param fsync whether {@code append} waits for a power-loss-safe sync (group commit)
 * @param maxHeadBytes the head's memory budget; beyond it a sample of a series in no open bucket is
 *     refused on its own point ({@code RejectReason.SERIES_LIMIT}, the detail naming the budget)
 *     until sealing frees memory, while samples of the head's series are still taken (default
 *     {@link #DEFAULT_MAX_HEAD_BYTES})
 * @param retentionInterval how often retention runs in the background; zero disables it
 * @param compactionLevels the bucket sizes the background compactor merges sealed buckets into
 *     ({@code docs/architecture.md}, Compaction): the first is one hour (what ingestion writes),
 *     each next one a larger power of two hours up to 16384 h; a list of one hour alone disables
 *     compaction (default {@link #DEFAULT_COMPACTION_LEVELS})
 * @param compactionDelay how far a bucket group's end must lie behind the clock and the newest
 *     sample before it is compacted (at least the out-of-order window is always waited): recent
 *     data stays in one-hour buckets, where a late sample reopens one hour, not a coarse bucket
 *     (default {@link #DEFAULT_COMPACTION_DELAY})
 * @param compactionInterval how often the compactor looks for due bucket groups; zero disables the
 *     background compactor ({@link Engine#compactNow()} still works) (default {@link
 *     #DEFAULT_COMPACTION_INTERVAL})
 * @param clock the clock for retention and future checks
 * @param labelCacheBytes the bound, in estimated heap bytes, of the decoded ForwardIndex tables of
 *     sealed buckets that selects keep (per bucket {@code series id → labels};
 *     docs/architecture.md, Read path); 0 disables the cache (default {@link
 *     #DEFAULT_LABEL_CACHE_BYTES})
 * @param readParallelism how many threads one select may use to read sealed buckets (the caller's
 *     and {@code ForkJoinPool.commonPool()} workers); 1 reads them on the caller's thread (default
 *     {@link #DEFAULT_READ_PARALLELISM})
 * @param headFreezeSamples an open series whose Gorilla stream holds this many samples has them
 *     re-encoded by the background thread into its frozen part, in the smaller of the sealed
 *     encodings (docs/architecture.md, The head); 0 never does (default {@link
 *     #DEFAULT_HEAD_FREEZE_SAMPLES})
 * @param maxActiveSeries most distinct series the head (its open buckets) holds; a sample of a
 *     series in no open bucket is refused on its own point ({@code RejectReason.SERIES_LIMIT})
 *     while the head holds this many, a sample of a series already there never is; 0 means no limit
 *     (default {@link #DEFAULT_MAX_ACTIVE_SERIES}; docs/architecture.md, Write path)
 */
public record EngineConfig(
    Duration outOfOrderWindow,
    Duration retention,
    Duration maxFutureSkew,
    boolean fsync,
    long maxHeadBytes,
    Duration retentionInterval,
    List<Duration> compactionLevels,
    Duration compactionDelay,
    Duration compactionInterval,
    Clock clock,
    long labelCacheBytes,
    int readParallelism,
    int headFreezeSamples,
    long maxActiveSeries) {

  public static final Duration DEFAULT_OUT_OF_ORDER_WINDOW = Duration.ofMinutes(30);
  public static final Duration DEFAULT_RETENTION = Duration.ofDays(15);

  /**
   * The shortest retention: one hour, the size of the buckets ingestion writes (retention drops
   * whole buckets). The one home of this rule: this config, {@link Engine#setRetention}, the
   * server's {@code retention} setting and the admin API's {@code SetRetention} all check through
   * {@link #retentionProblem}, or this constant and {@link #MIN_RETENTION_TEXT}.
   */
  public static final Duration MIN_RETENTION = Duration.ofHours(1);

  /** {@link #MIN_RETENTION} as messages and help texts say it: {@code at least 1h}. */
  public static final String MIN_RETENTION_TEXT = "at least " + MIN_RETENTION.toHours() + "h";

  public static final Duration DEFAULT_MAX_FUTURE_SKEW = Duration.ofMinutes(10);
  public static final long DEFAULT_MAX_HEAD_BYTES = 4L << 30;

  /**
   * A head series re-encodes its stream after 48 samples (12 minutes at a 15 s interval) and writes
   * it out as a HeadChunk record: at most 48 samples of appendable encoding per series on the heap
   * (about 170 bytes at 3.5 bytes a sample, where 96 held up to about 340). 96 until session 17;
   * issue #14 set head memory per series under 1 KiB with 96 (docs/benchmarks.md).
   */
  public static final int DEFAULT_HEAD_FREEZE_SAMPLES = 48;

  /** No limit on active series: 0. The server sizes its default from the heap. */
  public static final long DEFAULT_MAX_ACTIVE_SERIES = 0;

  public static final Duration DEFAULT_RETENTION_INTERVAL = Duration.ofMinutes(5);

  /**
   * 1 h → 8 h (size codes 1, 4), chosen by measurement (docs/benchmarks.md, "Bucket compaction"):
   * 8-hour buckets take nearly all of the saving (the per-bucket index records), a 64-hour level
   * saved 0.3 % more while a one-hour query and a late sample's reopening grow with the bucket.
   */
  public static final List<Duration> DEFAULT_COMPACTION_LEVELS =
      List.of(Duration.ofHours(1), Duration.ofHours(8));

  /** Compaction disabled: ingestion's one-hour buckets only. */
  public static final List<Duration> NO_COMPACTION = List.of(Duration.ofHours(1));

  public static final Duration DEFAULT_COMPACTION_INTERVAL = Duration.ofMinutes(1);

  /** Eight hours: the last 8 to 16 hours stay in one-hour buckets. */
  public static final Duration DEFAULT_COMPACTION_DELAY = Duration.ofHours(8);

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
    requireNonNegative("compactionInterval", compactionInterval);
    requireNonNegative("compactionDelay", compactionDelay);
    compactionLevels = List.copyOf(Objects.requireNonNull(compactionLevels, "compactionLevels"));
    checkLevels(compactionLevels);
    checkRetention(retention);
    if (maxHeadBytes <= 0) {
      throw new IllegalArgumentException("maxHeadBytes must be positive, was " + maxHeadBytes);
    }
    if (headFreezeSamples < 0) {
      throw new IllegalArgumentException(
          "headFreezeSamples must not be negative, was " + headFreezeSamples);
    }
    if (labelCacheBytes < 0) {
      throw new IllegalArgumentException(
          "labelCacheBytes must not be negative, was " + labelCacheBytes);
    }
    if (maxActiveSeries < 0) {
      throw new IllegalArgumentException(
          "maxActiveSeries must not be negative, was " + maxActiveSeries);
    }
    if (readParallelism < 1) {
      throw new IllegalArgumentException(
          "readParallelism must be at least 1, was " + readParallelism);
    }
  }

  private static void checkLevels(List<Duration> levels) {
    if (levels.isEmpty() || !levels.get(0).equals(Duration.ofHours(1))) {
      throw new IllegalArgumentException("compactionLevels must start with 1h, was " + levels);
    }
    long previous = 0;
    for (Duration d : levels) {
      long hours = d.toHours();
      if (!d.equals(Duration.ofHours(hours)) || Long.bitCount(hours) != 1 || hours > 16384) {
        throw new IllegalArgumentException(
            "compactionLevels must be powers of two hours up to 16384h, was "
                + d
                + " in "
                + levels);
      }
      if (hours <= previous) {
        throw new IllegalArgumentException("compactionLevels must increase, was " + levels);
      }
      previous = hours;
    }
  }

  /** The size codes of {@link #compactionLevels()}, finest (1) first. */
  int[] compactionSizeCodes() {
    int[] codes = new int[compactionLevels.size()];
    for (int i = 0; i < codes.length; i++) {
      codes[i] = 1 + Long.numberOfTrailingZeros(compactionLevels.get(i).toHours());
    }
    return codes;
  }

  /**
   * Why {@code retention} cannot be the retention ({@code must be at least 1h}), or null if it can
   * ({@link #MIN_RETENTION}).
   */
  public static String retentionProblem(Duration retention) {
    return retention.compareTo(MIN_RETENTION) < 0 ? "must be " + MIN_RETENTION_TEXT : null;
  }

  /**
   * {@code retention}, checked by {@link #retentionProblem}.
   *
   * @throws IllegalArgumentException {@code retention must be at least 1h, was PT30M}
   */
  static Duration checkRetention(Duration retention) {
    Objects.requireNonNull(retention, "retention");
    String problem = retentionProblem(retention);
    if (problem != null) {
      throw new IllegalArgumentException("retention " + problem + ", was " + retention);
    }
    return retention;
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
        .compactionLevels(compactionLevels)
        .compactionDelay(compactionDelay)
        .compactionInterval(compactionInterval)
        .clock(clock)
        .labelCacheBytes(labelCacheBytes)
        .readParallelism(readParallelism)
        .headFreezeSamples(headFreezeSamples)
        .maxActiveSeries(maxActiveSeries);
  }

  /** Builder with the documented defaults. */
  public static final class Builder {
    private Duration outOfOrderWindow = DEFAULT_OUT_OF_ORDER_WINDOW;
    private Duration retention = DEFAULT_RETENTION;
    private Duration maxFutureSkew = DEFAULT_MAX_FUTURE_SKEW;
    private boolean fsync;
    private long maxHeadBytes = DEFAULT_MAX_HEAD_BYTES;
    private Duration retentionInterval = DEFAULT_RETENTION_INTERVAL;
    private List<Duration> compactionLevels = DEFAULT_COMPACTION_LEVELS;
    private Duration compactionInterval = DEFAULT_COMPACTION_INTERVAL;
    private Duration compactionDelay = DEFAULT_COMPACTION_DELAY;
    private Clock clock = Clock.systemUTC();
    private long labelCacheBytes = DEFAULT_LABEL_CACHE_BYTES;
    private int readParallelism = DEFAULT_READ_PARALLELISM;
    private int headFreezeSamples = DEFAULT_HEAD_FREEZE_SAMPLES;
    private long maxActiveSeries = DEFAULT_MAX_ACTIVE_SERIES;

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

    public Builder compactionLevels(List<Duration> v) {
      compactionLevels = v;
      return this;
    }

    public Builder compactionDelay(Duration v) {
      compactionDelay = v;
      return this;
    }

    public Builder compactionInterval(Duration v) {
      compactionInterval = v;
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

    public Builder headFreezeSamples(int v) {
      headFreezeSamples = v;
      return this;
    }

    public Builder maxActiveSeries(long v) {
      maxActiveSeries = v;
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
          compactionLevels,
          compactionDelay,
          compactionInterval,
          clock,
          labelCacheBytes,
          readParallelism,
          headFreezeSamples,
          maxActiveSeries);
    }
  }
}
