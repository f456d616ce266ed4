package dev.tidemark.tsdb.engine;

import static dev.tidemark.tsdb.engine.HeadState.LOG;
import static dev.tidemark.tsdb.engine.HeadState.overlapping;
import static dev.tidemark.tsdb.engine.HeadState.requireRange;

import dev.tidemark.tsdb.append.AppendResult;
import dev.tidemark.tsdb.append.Appender;
import dev.tidemark.tsdb.append.SampleBatch;
import dev.tidemark.tsdb.codec.Keys;
import dev.tidemark.tsdb.codec.RecordType;
import dev.tidemark.tsdb.codec.TimeBucket;
import dev.tidemark.tsdb.kv.KeyRanges;
import dev.tidemark.tsdb.kv.KvStore;
import dev.tidemark.tsdb.model.Labels;
import dev.tidemark.tsdb.model.MetadataRegistry;
import dev.tidemark.tsdb.query.LabelMatcher;
import dev.tidemark.tsdb.query.Querier;
import dev.tidemark.tsdb.query.QueryContext;
import dev.tidemark.tsdb.query.SeriesSet;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * The storage engine: a durable in-memory head over RFC 0001 records in a {@link KvStore}. See
 * {@code docs/architecture.md} for the design (head, head log, group commit, sealing, reopening,
 * recovery, read path, retention) and {@code docs/format.md} for every persisted byte.
 *
 * <p>Thread-safe. Appends serialize on one write lock for the in-memory step and the KV write;
 * reads capture the head under the read lock and decode outside it. One background thread seals
 * buckets and applies retention. {@link #close()} seals the head and must be called before the
 * store is closed.
 *
 * <p>This class is the public facade; the work is done by package-private parts over one shared
 * {@link HeadState}, each answering one question: {@link Appends} (the write path and its
 * all-or-nothing undo), {@link Reads} (select, series, label names and values), {@link Sealer}
 * (sealing and the background thread), {@link Retention}, {@link Deletion}, {@link Recovery}
 * (schema check, head-log replay, reopening a sealed bucket) and {@link Compactor} (merging sealed
 * buckets into coarser ones).
 */
public final class Engine implements Appender, Querier, AutoCloseable {

  private final HeadState head;
  private final Recovery recovery;
  private final Sealer sealer;
  private final Appends appends;
  private final Reads reads;
  private final Retention retention;
  private final Deletion deletion;
  private final Compactor compactor;
  private final MetadataStore metadata;
  private final KvStore kv;
  private final EngineConfig config;
  private final ReentrantReadWriteLock lock;
  private final TreeMap<TimeBucket, HeadBucket> open;
  private final TreeSet<TimeBucket> buckets;

  /** Test hook: fails an append at chosen places (null in production). */
  FaultInjection faults;

  private final long recoveryMillis;

  private final Freezer freezer;

  private Engine(KvStore kv, EngineConfig config, EngineEvents events) {
    this.head = new HeadState(kv, config, events);
    this.recovery = new Recovery(head);
    this.sealer = new Sealer(head);
    this.freezer = new Freezer(head, sealer);
    this.appends = new Appends(head, sealer, freezer, recovery);
    this.reads = new Reads(head);
    this.retention = new Retention(head, sealer);
    this.deletion = new Deletion(head, sealer);
    this.compactor = new Compactor(head, sealer);
    this.kv = kv;
    this.config = config;
    this.lock = head.lock;
    this.open = head.open;
    this.buckets = head.buckets;
    long started = System.nanoTime();
    lock.writeLock().lock();
    try {
      recovery.checkSchema();
      recovery.recover();
    } finally {
      lock.writeLock().unlock();
    }
    this.metadata = new MetadataStore(kv);
    this.recoveryMillis = (System.nanoTime() - started) / 1_000_000;
    LOG.log(
        Level.INFO,
        "recovered head in {0} ms: {1} open buckets, {2} series",
        recoveryMillis,
        open.size(),
        head.headSeries);
    long every = config.retentionInterval().toMillis();
    if (every > 0) {
      sealer.scheduleWithFixedDelay(retention::retentionQuietly, every);
    }
    long compactEvery = config.compactionInterval().toMillis();
    if (compactEvery > 0 && compactor.enabled()) {
      sealer.scheduleWithFixedDelay(compactor::compactOneQuietly, compactEvery);
    }
    sealer.scheduleWithFixedDelay(sealer::sealIdleBucketsQuietly, Sealer.IDLE_CHECK_MILLIS);
    sealer.scheduleWithFixedDelay(metadata::saveQuietly, MetadataStore.SAVE_EVERY_MILLIS);
    sealer.scheduleSealIfDue();
  }

  /**
   * Opens the engine on a store: checks the schema record (creating it in an empty store), recovers
   * the head from the head log, and starts the background sealer.
   *
   * @throws IllegalStateException if the store's schema is unknown or contradicts the config
   */
  public static Engine open(KvStore kv, EngineConfig config) {
    return new Engine(kv, config, EngineEvents.NONE);
  }

  /**
   * {@link #open(KvStore, EngineConfig)}, telling {@code events} of every seal and compaction from
   * the recovery on.
   */
  public static Engine open(KvStore kv, EngineConfig config, EngineEvents events) {
    return new Engine(kv, config, java.util.Objects.requireNonNull(events, "events"));
  }

  // ---------------------------------------------------------------------------------------------
  // Write path

  @Override
  public AppendResult append(SampleBatch batch) {
    return appends.append(batch, faults);
  }

  /**
   * Why samples of series new to the head are refused now (the head over its byte budget, {@link
   * EngineConfig#maxHeadBytes()}: the point detail those samples carry), or null. Samples of the
   * head's series are taken all the same. Takes the read lock for a moment.
   */
  public String newSeriesRefusal() {
    lock.readLock().lock();
    try {
      return head.closed ? null : appends.headFullLocked();
    } finally {
      lock.readLock().unlock();
    }
  }

  /**
   * Why every append is refused now, or null while appends are taken: a failed rollback, or the
   * engine closed. The text is the one the refused appends' {@link
   * dev.tidemark.tsdb.append.StorageUnavailableException} carries. The head over its byte budget
   * refuses only new series ({@link #newSeriesRefusal()}). Takes the read lock for a moment.
   */
  public String writeRefusal() {
    lock.readLock().lock();
    try {
      return head.closed ? "engine is closed" : appends.refusalLocked();
    } finally {
      lock.readLock().unlock();
    }
  }

  /**
   * The metric families' metadata (TYPE, UNIT, HELP) every receiver registers and {@code
   * /api/v1/metadata} serves: read from the store at open; each family registered for the first
   * time is written to the store behind the requests, within about a second and at close ({@code
   * docs/format.md}, Metadata).
   */
  public MetadataRegistry metadata() {
    return metadata.registry();
  }

  // ---------------------------------------------------------------------------------------------
  // Sealing

  /**
   * Seals every open bucket now and waits for it. A bucket appended to while it is sealed stays
   * open (its new samples are in the head log).
   */
  public void flush() {
    sealer.flush();
  }

  /**
   * Runs a freeze pass now, on the background thread, and waits: every due head series is frozen
   * and its part written as a HeadChunk record. The engine runs passes when appends leave series
   * due. For tests.
   */
  void freezeNow() {
    sealer.runOnBackground(freezer::freezeDue);
  }

  /** HeadChunk records the freezer wrote since the engine opened. For tests. */
  long headChunksWritten() {
    return freezer.partsWritten;
  }

  /**
   * Runs the idle-bucket check now, on the background thread, and waits; returns how many buckets
   * it sealed. The engine runs it every minute ({@link Sealer#sealIdleBuckets}). For tests.
   */
  int sealIdleBuckets() {
    int[] n = new int[1];
    sealer.runOnBackground(() -> n[0] = sealer.sealIdleBuckets());
    return n[0];
  }

  // ---------------------------------------------------------------------------------------------
  // Retention

  /** Drops every bucket that ended before {@code now - retention}; returns how many. */
  public int applyRetention() {
    return retention.applyRetention();
  }

  /** The retention in force. */
  public Duration retention() {
    return retention.retention();
  }

  /**
   * Changes the retention for the next {@link #applyRetention()} (scheduled or on demand) and for
   * the {@code TOO_OLD} check of later appends. Not persisted: a restart uses the configuration.
   *
   * @throws IllegalArgumentException below {@link EngineConfig#MIN_RETENTION}
   */
  public void setRetention(Duration retention) {
    this.retention.setRetention(retention);
  }

  // ---------------------------------------------------------------------------------------------
  // Compaction

  /**
   * Compacts every due group of sealed buckets into the coarser buckets of {@link
   * EngineConfig#compactionLevels()} now, on the background thread, and waits; returns how many
   * coarse buckets it made. The background compactor does the same, one group at a time, every
   * {@link EngineConfig#compactionInterval()}. A group is due once its whole range lies more than
   * {@link EngineConfig#compactionDelay()} (and the out-of-order window) behind both the clock and
   * the newest sample, and none of its buckets is open. See {@code docs/architecture.md},
   * Compaction.
   */
  public int compactNow() {
    return compactor.compactNow();
  }

  /** Test hook: runs before every write a compaction makes (null: none). */
  void compactionFaults(Runnable beforeWrite) {
    compactor.beforeWrite = beforeWrite;
  }

  /** Test hook: whether {@link #close()} has told the compactor to stop. */
  boolean compactorStopping() {
    return compactor.stopping;
  }

  // ---------------------------------------------------------------------------------------------
  // Deletion

  /** What {@link #deleteSeries} removed. */
  public record DeleteResult(int buckets, long series, long samples) {}

  /**
   * Deletes the samples of the matching series inside {@code [minT, maxT]}, for good.
   *
   * <p>Runs on the background thread (after any seal in progress). Open buckets that overlap the
   * range are sealed first (their head log is gone, so a restart cannot bring the samples back),
   * without the write lock; then, under the write lock, so no append or read sees it half done, a
   * bucket appended to meanwhile is sealed again, and per overlapping bucket: a series with no
   * sample left loses its TimeSeries, ForwardIndex and SeriesDictionary records and its ids in the
   * postings; a series with samples left outside the range gets its chunk rewritten; a bucket with
   * no series left is range-deleted whole and leaves the BucketList. Finally the affected ranges
   * are compacted, so the space is reclaimed.
   *
   * @throws IllegalArgumentException if {@code minT > maxT}
   */
  public DeleteResult deleteSeries(long minT, long maxT, List<LabelMatcher> matchers) {
    return deletion.deleteSeries(minT, maxT, matchers);
  }

  /**
   * One bucket as the admin API lists it. {@code bytes} is the sum of its records' key and value
   * sizes.
   */
  public record BucketInfo(TimeBucket bucket, boolean open, long seriesCount, long bytes) {}

  /**
   * Every bucket with its series count and size; scans each bucket's records (an admin call, not a
   * hot path).
   */
  public List<BucketInfo> bucketInfo() {
    return reads.bucketInfo();
  }

  // ---------------------------------------------------------------------------------------------
  // Read path

  /**
   * {@inheritDoc}
   *
   * <p>Each series' iterator merges its chunks across buckets and the head. The series are found
   * (postings, ForwardIndex records, captured head chunks) when this returns; samples are decoded
   * only as the iterators walk them.
   */
  @Override
  public SeriesSet select(long minT, long maxT, List<LabelMatcher> matchers, QueryContext ctx) {
    return reads.select(minT, maxT, matchers, ctx);
  }

  @Override
  public List<Labels> series(
      long minT, long maxT, List<LabelMatcher> matchers, int limit, QueryContext ctx) {
    return reads.series(minT, maxT, matchers, limit, ctx);
  }

  @Override
  public List<String> labelNames(
      long minT, long maxT, List<LabelMatcher> matchers, int limit, QueryContext ctx) {
    return reads.labelNames(minT, maxT, matchers, limit, ctx);
  }

  @Override
  public List<String> labelValues(
      String name, long minT, long maxT, List<LabelMatcher> matchers, int limit, QueryContext ctx) {
    return reads.labelValues(name, minT, maxT, matchers, limit, ctx);
  }

  // ---------------------------------------------------------------------------------------------
  // Status and lifecycle

  /**
   * A point-in-time view of the engine's state for metrics and the admin API.
   *
   * @param buckets buckets with data, of every size
   * @param coarseBuckets of those, the ones coarser than one hour (made by compaction)
   * @param compactions coarse buckets the compactor made since start
   * @param compactedBuckets finer buckets those replaced
   * @param compactionBytesWritten key and value bytes the compactor wrote since start
   * @param compactionMillis time the compactor spent since start (wall clock, per group)
   * @param compactionsAbandoned groups given up because a bucket of theirs changed meanwhile
   * @param compactionFailures compactions that failed (store errors); retried later
   */
  public record Stats(
      long headSeries,
      long headBytes,
      int openBuckets,
      int buckets,
      long samplesAccepted,
      long samplesRejected,
      long recoveryMillis,
      long headMaxTimestampMillis,
      long unreadableRecords,
      int coarseBuckets,
      long compactions,
      long compactedBuckets,
      long compactionBytesWritten,
      long compactionMillis,
      long compactionsAbandoned,
      long compactionFailures) {
    /** Head bytes per active series (0 with an empty head). */
    public long headBytesPerSeries() {
      return headSeries == 0 ? 0 : headBytes / headSeries;
    }
  }

  public Stats stats() {
    lock.readLock().lock();
    try {
      long headBytes =
          head.headSampleBytes + HeadSeries.fixedBytes(head.headSeries, head.activeSeries);
      for (HeadBucket hb : open.values()) {
        for (HeadSeries hs : hb.series()) {
          if (hs.countsShared()) { // one label set however many copies reference it
            headBytes += 2L * hs.labels.size() * 8; // label array references, strings are shared
          }
        }
      }
      return new Stats(
          head.headSeries,
          headBytes,
          open.size(),
          buckets.size(),
          head.samplesAccepted.sum(),
          head.samplesRejected.sum(),
          recoveryMillis,
          head.hasHeadMaxT ? head.headMaxT : Long.MIN_VALUE,
          head.unreadableRecords.sum(),
          Compactor.coarseCount(buckets),
          head.compactions.sum(),
          head.compactedBuckets.sum(),
          head.compactionBytesWritten.sum(),
          head.compactionNanos.sum() / 1_000_000,
          head.compactionsAbandoned.sum(),
          head.compactionFailures.sum());
    } finally {
      lock.readLock().unlock();
    }
  }

  /**
   * The head's running count of sample bytes minus a recount over every head series: 0 unless the
   * accounting drifts (tests check it after appends, rollbacks, freezes, seals and reopens).
   */
  long headSampleBytesDrift() {
    lock.readLock().lock();
    try {
      long recount = 0;
      for (HeadBucket hb : open.values()) {
        for (HeadSeries hs : hb.series()) {
          recount += hs.sampleBytes();
        }
      }
      return head.headSampleBytes - recount;
    } finally {
      lock.readLock().unlock();
    }
  }

  /**
   * Distinct series in the head's open buckets (a series in two open buckets counts once): what
   * {@link EngineConfig#maxActiveSeries()} limits.
   */
  public long activeSeries() {
    lock.readLock().lock();
    try {
      return head.activeSeries;
    } finally {
      lock.readLock().unlock();
    }
  }

  /**
   * The active-series count minus a scan of the open buckets' distinct series, both read in one
   * read-lock hold (a background seal may run between two separate reads): 0 unless the count is
   * wrong (tests).
   */
  long activeSeriesDrift() {
    lock.readLock().lock();
    try {
      HashSet<Labels> distinct = new HashSet<>();
      for (HeadBucket hb : open.values()) {
        for (HeadSeries hs : hb.series()) {
          distinct.add(hs.labels);
        }
      }
      return head.activeSeries - distinct.size();
    } finally {
      lock.readLock().unlock();
    }
  }

  /**
   * The schema version of the open store ({@code docs/format.md}, Schema record): open refuses any
   * other.
   */
  public int schemaVersion() {
    return SchemaRecord.CURRENT_VERSION;
  }

  /** The store's approximate size on disk in bytes. */
  public long storageBytes() {
    return kv.approximateSizeBytes();
  }

  /**
   * Compacts the store's records of the buckets overlapping {@code [minT, maxT]} (per record type
   * the buckets of the range are one key range), on the caller's thread. Does not block appends or
   * reads.
   *
   * @throws IllegalArgumentException if {@code minT > maxT}
   */
  public void compact(long minT, long maxT) {
    requireRange(minT, maxT);
    List<TimeBucket> range = new ArrayList<>(overlapping(new TreeSet<>(buckets()), minT, maxT));
    if (range.isEmpty()) {
      return;
    }
    for (RecordType type : RecordType.values()) {
      if (type.bucketScoped()) {
        kv.compactRange(
            Keys.bucketPrefix(type, range.get(0)),
            KeyRanges.prefixEnd(Keys.bucketPrefix(type, range.get(range.size() - 1))));
      }
    }
  }

  /** Compacts the whole store, on the caller's thread. */
  public void compactAll() {
    kv.compactRange(null, null);
  }

  /** The buckets with data, oldest first. */
  public List<TimeBucket> buckets() {
    lock.readLock().lock();
    try {
      return new ArrayList<>(buckets);
    } finally {
      lock.readLock().unlock();
    }
  }

  public EngineConfig config() {
    return config;
  }

  /**
   * Seals the head (so the next start has nothing to replay), stops the background thread and
   * refuses further calls. Does not close the store. Idempotent.
   */
  @Override
  public void close() {
    lock.readLock().lock();
    try {
      if (head.closed) {
        return;
      }
    } finally {
      lock.readLock().unlock();
    }
    compactor.stopping = true; // a long compaction must not hold the close back
    try {
      metadata.saveQuietly();
      flush();
    } finally {
      lock.writeLock().lock();
      try {
        head.closed = true;
      } finally {
        lock.writeLock().unlock();
      }
      sealer.stop();
    }
  }

  /** Stops without sealing, as a crash would (for tests of recovery). */
  /** See {@link Sealer#holdForTests}. */
  void holdBackgroundForTests(java.util.concurrent.CountDownLatch release) {
    sealer.holdForTests(release);
  }

  void abandon() {
    compactor.stopping = true;
    lock.writeLock().lock();
    try {
      head.closed = true;
    } finally {
      lock.writeLock().unlock();
    }
    sealer.stopNow();
  }

  /** The HeadLog key of sequence {@code seq} in bucket {@code b} (docs/format.md). */
  static byte[] headLogKey(TimeBucket b, long seq) {
    return Recovery.headLogKey(b, seq);
  }
}
