package dev.tidemark.rocksdb;

import dev.tidemark.tsdb.kv.KvCursor;
import dev.tidemark.tsdb.kv.KvReader;
import dev.tidemark.tsdb.kv.KvSnapshot;
import dev.tidemark.tsdb.kv.KvStore;
import dev.tidemark.tsdb.kv.KvStoreException;
import dev.tidemark.tsdb.kv.WriteBatch;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import org.rocksdb.BlockBasedTableConfig;
import org.rocksdb.BloomFilter;
import org.rocksdb.Checkpoint;
import org.rocksdb.ColumnFamilyHandle;
import org.rocksdb.CompactRangeOptions;
import org.rocksdb.CompactionStyle;
import org.rocksdb.CompressionType;
import org.rocksdb.Filter;
import org.rocksdb.FlushOptions;
import org.rocksdb.LRUCache;
import org.rocksdb.LogFile;
import org.rocksdb.Options;
import org.rocksdb.ReadOptions;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.RocksIterator;
import org.rocksdb.Slice;
import org.rocksdb.Snapshot;
import org.rocksdb.Statistics;
import org.rocksdb.Status;
import org.rocksdb.TickerType;

/**
 * The {@link KvStore} on RocksDB: one database in one folder, default column family only, keys in
 * RocksDB's bytewise (unsigned) order.
 *
 * <h2>Contract</h2>
 *
 * <ul>
 *   <li>Thread-safe. {@link #write} is atomic (one RocksDB write batch through the WAL). When it
 *       returns the batch survives a crash of the process; with {@link
 *       RocksDbConfig#fsyncOnWrite()} or after {@link #sync()} it also survives power loss.
 *   <li>Storage failures throw {@link KvStoreException} naming the operation; no RocksDB type
 *       crosses this class's public API. A folder already open (in this or another process) fails
 *       {@link #open} with a {@link KvStoreException} that names the folder.
 *   <li>Ownership: the store owns every native object it creates (options, cache, filter,
 *       statistics, write options, the database). Each cursor owns its iterator, read options and
 *       bound slice; each snapshot owns its RocksDB snapshot, its read options and the cursors
 *       opened on it.
 *   <li>{@link #close()} is idempotent and waits for calls in flight. Cursors and snapshots still
 *       open are <em>closed by it</em> (with a warning in the log, since it is a caller bug): their
 *       native memory is freed and their later calls throw {@link IllegalStateException}, as do
 *       calls on the store. We close rather than refuse because a refused close would leak the
 *       whole database and keep its folder locked.
 * </ul>
 *
 * <h2>Design note: options for this workload</h2>
 *
 * Tidemark writes time-ordered batches (series samples, index entries) and reads by point lookup
 * (dictionary, forward index) and by short prefix scans inside one (record type, bucket) prefix;
 * whole buckets are dropped with range deletes.
 *
 * <ul>
 *   <li><b>Level compaction with dynamic level bytes</b>: bounded space amplification (about 1.1x),
 *       which matters more than write amplification for a store that keeps months of data; dynamic
 *       sizing keeps the level targets right while the data set grows.
 *   <li><b>LZ4 on the upper levels, ZSTD at the bottommost</b>: values are already Gorilla-
 *       compressed, keys and index values are not. Upper levels are rewritten often, so they get
 *       the cheap codec; about 90% of the data lives in the bottommost level and is written once
 *       more, so it gets the dense one.
 *   <li><b>Bloom filter, 10 bits per key, whole-key</b> (about 1% false positives): point lookups
 *       of absent keys (a new series' dictionary entry) skip the SST files without reading data
 *       blocks. No prefix extractor: range scans do not use the filter.
 *   <li><b>One shared LRU block cache</b> ({@link RocksDbConfig#blockCacheBytes()}) that also holds
 *       index and filter blocks (L0 ones pinned), so the memory budget is one number.
 *   <li><b>{@link RocksDbConfig#DEFAULT_BLOCK_SIZE_BYTES 16 KiB blocks}</b>: prefix scans read
 *       neighbouring keys anyway; bigger blocks compress better and keep the index small.
 *   <li><b>{@link RocksDbConfig#DEFAULT_MAX_BACKGROUND_JOBS 2 background jobs}</b>, no
 *       subcompactions: one flush and one compaction fit 2 cores next to ingestion.
 *   <li><b>WAL always on</b>, point-in-time recovery (RocksDB's default); {@code bytes_per_sync} of
 *       1 MiB spreads SST write-back instead of one large fsync per file.
 * </ul>
 *
 * <h2>Reclaiming space</h2>
 *
 * {@link #compactRange} first drops the SST files that lie wholly inside the range ({@code
 * DeleteFilesInRanges}), then compacts the range with a forced bottommost compaction so range
 * tombstones and the data they cover leave the disk before it returns. File dropping bypasses
 * sequence numbers, so it is only done when it cannot lose visible data: when no snapshot of this
 * store is open and the range is empty in the current view. Otherwise the compaction alone reclaims
 * what the open snapshots no longer need.
 */
public final class RocksDbKvStore implements KvStore {

  private static final System.Logger LOG = System.getLogger(RocksDbKvStore.class.getName());

  /** Bloom filter bits per key: about 1% false positives. */
  static final double BLOOM_BITS_PER_KEY = 10;

  /** Statistic names of {@link #statistics()}; stable, used by the server's metrics. */
  public static final String STAT_BYTES_WRITTEN = "bytes_written";

  public static final String STAT_BLOCK_CACHE_HIT = "block_cache_hit";
  public static final String STAT_BLOCK_CACHE_MISS = "block_cache_miss";
  public static final String STAT_BLOCK_CACHE_USAGE_BYTES = "block_cache_usage_bytes";
  public static final String STAT_FLUSH_BYTES_WRITTEN = "flush_bytes_written";
  public static final String STAT_COMPACTION_BYTES_READ = "compaction_bytes_read";
  public static final String STAT_COMPACTION_BYTES_WRITTEN = "compaction_bytes_written";
  public static final String STAT_PENDING_COMPACTION_BYTES = "pending_compaction_bytes";
  public static final String STAT_MEMTABLE_BYTES = "memtable_bytes";
  public static final String STAT_SST_FILES = "sst_files";
  public static final String STAT_SST_BYTES = "sst_bytes";
  public static final String STAT_WAL_BYTES = "wal_bytes";

  static {
    NativeLibraryCache.load(); // once per machine into a cache folder, not per start into /tmp
  }

  private final Path dir;
  private final RocksDbConfig config;
  private final RocksDB db;
  private final ColumnFamilyHandle defaultColumnFamily; // owned by db, never closed by us
  private final int numLevels;
  // Closed in reverse order of creation, after db.
  private final Options options;
  private final org.rocksdb.WriteOptions writeOptions;

  /**
   * Reads of {@link #oneShot()}: not filling the block cache. A seal reads every frozen part of a
   * million series once and deletes it; through the cache that filled it to its limit (256 MiB, all
   * of it RSS) with blocks nobody reads again (docs/benchmarks.md, session 17).
   */
  private final ReadOptions oneShotReads = new ReadOptions().setFillCache(false);

  private final Filter bloomFilter;
  private final LRUCache blockCache;
  private final Statistics statistics;

  private final Set<RocksDbCursor> cursors = ConcurrentHashMap.newKeySet();
  private final Set<RocksDbSnapshot> snapshots = ConcurrentHashMap.newKeySet();

  /**
   * Read lock: any call that touches native memory. Write lock: {@link #close()}, which therefore
   * waits for calls in flight, and makes later calls see {@code closed}.
   */
  private final ReentrantReadWriteLock lifecycle = new ReentrantReadWriteLock();

  private volatile boolean closed;

  private RocksDbKvStore(
      Path dir,
      RocksDbConfig config,
      RocksDB db,
      Options options,
      org.rocksdb.WriteOptions writeOptions,
      Filter bloomFilter,
      LRUCache blockCache,
      Statistics statistics) {
    this.dir = dir;
    this.config = config;
    this.db = db;
    this.defaultColumnFamily = db.getDefaultColumnFamily();
    this.numLevels = options.numLevels();
    this.options = options;
    this.writeOptions = writeOptions;
    this.bloomFilter = bloomFilter;
    this.blockCache = blockCache;
    this.statistics = statistics;
  }

  /** Opens the store in {@code dir} with {@link RocksDbConfig#defaults()}. */
  public static RocksDbKvStore open(Path dir) {
    return open(dir, RocksDbConfig.defaults());
  }

  /**
   * Opens (creating if needed) the store in folder {@code dir}.
   *
   * @throws KvStoreException if the folder cannot be created, is in use by another store or process
   *     (RocksDB's {@code LOCK} file), or RocksDB fails to open it
   */
  public static RocksDbKvStore open(Path dir, RocksDbConfig config) {
    Objects.requireNonNull(dir, "dir");
    Objects.requireNonNull(config, "config");
    Path folder = dir.toAbsolutePath().normalize();
    try {
      Files.createDirectories(folder);
    } catch (IOException e) {
      throw new KvStoreException("cannot create RocksDB folder " + folder + ": " + e, e);
    }
    List<AutoCloseable> created = new ArrayList<>();
    try {
      Statistics statistics = add(created, new Statistics());
      LRUCache cache = add(created, new LRUCache(config.blockCacheBytes()));
      Filter bloom = add(created, new BloomFilter(BLOOM_BITS_PER_KEY, false));
      Options options = add(created, new Options());
      BlockBasedTableConfig table =
          new BlockBasedTableConfig()
              .setBlockCache(cache)
              .setFilterPolicy(bloom)
              .setWholeKeyFiltering(true)
              .setBlockSize(config.blockSizeBytes())
              .setCacheIndexAndFilterBlocks(true)
              .setCacheIndexAndFilterBlocksWithHighPriority(true)
              .setPinL0FilterAndIndexBlocksInCache(true);
      options
          .setCreateIfMissing(true)
          .setStatistics(statistics)
          .setTableFormatConfig(table)
          .setCompactionStyle(CompactionStyle.LEVEL)
          .setLevelCompactionDynamicLevelBytes(true)
          .setWriteBufferSize(config.writeBufferBytes())
          .setMaxBackgroundJobs(config.maxBackgroundJobs())
          .setMaxSubcompactions(1)
          .setMaxOpenFiles(config.maxOpenFiles())
          .setBytesPerSync(1L << 20)
          .setKeepLogFileNum(5)
          .setMaxLogFileSize(16L << 20);
      List<CompressionType> perLevel = new ArrayList<>();
      for (int i = 0; i < options.numLevels(); i++) {
        perLevel.add(CompressionType.LZ4_COMPRESSION);
      }
      options.setCompressionPerLevel(perLevel);
      options.setBottommostCompressionType(CompressionType.ZSTD_COMPRESSION);
      org.rocksdb.WriteOptions writeOptions =
          add(created, new org.rocksdb.WriteOptions())
              .setSync(config.fsyncOnWrite())
              .setDisableWAL(false);
      RocksDB db = add(created, RocksDB.open(options, folder.toString()));
      return new RocksDbKvStore(
          folder, config, db, options, writeOptions, bloom, cache, statistics);
    } catch (RocksDBException e) {
      closeAll(created);
      throw openFailure(folder, e);
    } catch (RuntimeException | Error e) {
      closeAll(created);
      throw e;
    }
  }

  /** The folder of this store (absolute). */
  public Path directory() {
    return dir;
  }

  public RocksDbConfig config() {
    return config;
  }

  @Override
  public byte[] get(byte[] key) {
    Objects.requireNonNull(key, "key");
    lifecycle.readLock().lock();
    try {
      ensureOpen();
      return db.get(key);
    } catch (RocksDBException e) {
      throw failure("get", e);
    } finally {
      lifecycle.readLock().unlock();
    }
  }

  @Override
  public KvReader oneShot() {
    return new KvReader() {
      @Override
      public byte[] get(byte[] key) {
        lifecycle.readLock().lock();
        try {
          ensureOpen();
          return getWith(oneShotReads, key);
        } finally {
          lifecycle.readLock().unlock();
        }
      }

      @Override
      public List<byte[]> multiGet(List<byte[]> keys) {
        lifecycle.readLock().lock();
        try {
          ensureOpen();
          return multiGetWith(oneShotReads, keys);
        } finally {
          lifecycle.readLock().unlock();
        }
      }

      @Override
      public KvCursor scan(byte[] fromInclusive, byte[] toExclusive) {
        return RocksDbKvStore.this.scan(fromInclusive, toExclusive); // cursors: as the store's
      }
    };
  }

  @Override
  public KvCursor scan(byte[] fromInclusive, byte[] toExclusive) {
    lifecycle.readLock().lock();
    try {
      ensureOpen();
      return newCursor(null, fromInclusive, toExclusive, cursors);
    } finally {
      lifecycle.readLock().unlock();
    }
  }

  @Override
  public void write(WriteBatch batch) {
    Objects.requireNonNull(batch, "batch");
    lifecycle.readLock().lock();
    try {
      ensureOpen();
      if (batch.isEmpty()) {
        return;
      }
      try (org.rocksdb.WriteBatch rocksBatch = new org.rocksdb.WriteBatch()) {
        for (WriteBatch.Op op : inInsertOrder(batch.ops())) {
          switch (op.kind()) {
            case PUT -> rocksBatch.put(op.key(), op.value());
            case DELETE -> rocksBatch.delete(op.key());
            case DELETE_RANGE -> {
              // An empty range deletes nothing; RocksDB may reject begin == end.
              if (Arrays.compareUnsigned(op.key(), op.value()) < 0) {
                rocksBatch.deleteRange(op.key(), op.value());
              }
            }
          }
        }
        db.write(writeOptions, rocksBatch);
      }
    } catch (RocksDBException e) {
      throw failure("write", e);
    } finally {
      lifecycle.readLock().unlock();
    }
  }

  /**
   * Batches of at least this many operations are inserted in key order ({@link #inInsertOrder}).
   */
  static final int SORTED_INSERT_MIN_OPS = 8;

  /**
   * The order in which a batch's operations go into RocksDB's batch: key order (stable, so two
   * operations on one key keep theirs) when the batch has only puts and point deletes and at least
   * {@link #SORTED_INSERT_MIN_OPS} of them, else as given. The result is the same either way (a
   * batch is applied atomically; only operations on the same key depend on their order), but the
   * memtable's skip list keeps the search path of its last insert and reuses it when the next key
   * is just after it: an append's new series come with ids in a row (ForwardIndex keys next to each
   * other) but interleaved with their SeriesDictionary keys, which sent every insert back to the
   * top of the skip list. A range delete is never moved, since it covers other keys.
   */
  static List<WriteBatch.Op> inInsertOrder(List<WriteBatch.Op> ops) {
    if (ops.size() < SORTED_INSERT_MIN_OPS) {
      return ops;
    }
    boolean sorted = true;
    byte[] previous = null;
    for (WriteBatch.Op op : ops) {
      if (op.kind() == WriteBatch.Kind.DELETE_RANGE) {
        return ops;
      }
      if (previous != null && Arrays.compareUnsigned(previous, op.key()) > 0) {
        sorted = false;
      }
      previous = op.key();
    }
    if (sorted) {
      return ops;
    }
    List<WriteBatch.Op> copy = new ArrayList<>(ops);
    copy.sort((a, b) -> Arrays.compareUnsigned(a.key(), b.key())); // List.sort is stable
    return copy;
  }

  /**
   * Fsyncs the WAL: every batch written before this call survives power loss. Concurrent callers
   * share RocksDB's WAL sync (group commit).
   */
  @Override
  public void sync() {
    lifecycle.readLock().lock();
    try {
      ensureOpen();
      db.syncWal();
    } catch (RocksDBException e) {
      throw failure("sync", e);
    } finally {
      lifecycle.readLock().unlock();
    }
  }

  @Override
  public KvSnapshot snapshot() {
    lifecycle.readLock().lock();
    try {
      ensureOpen();
      Snapshot snap = db.getSnapshot();
      ReadOptions readOptions;
      try {
        readOptions = new ReadOptions().setSnapshot(snap);
      } catch (RuntimeException | Error e) {
        db.releaseSnapshot(snap);
        throw e;
      }
      RocksDbSnapshot s = new RocksDbSnapshot(this, snap, readOptions);
      snapshots.add(s);
      return s;
    } finally {
      lifecycle.readLock().unlock();
    }
  }

  /**
   * Reclaims the space of deleted keys in {@code [fromInclusive, toExclusive)} (a null bound is
   * unbounded) and returns when done; see "Reclaiming space" in the class comment. Live keys in the
   * range are kept.
   */
  @Override
  public void compactRange(byte[] fromInclusive, byte[] toExclusive) {
    lifecycle.readLock().lock();
    try {
      ensureOpen();
      if (fromInclusive != null
          && toExclusive != null
          && Arrays.compareUnsigned(fromInclusive, toExclusive) >= 0) {
        return;
      }
      if (fromInclusive != null
          && toExclusive != null
          && snapshots.isEmpty()
          && isEmpty(fromInclusive, toExclusive)) {
        db.deleteFilesInRanges(defaultColumnFamily, List.of(fromInclusive, toExclusive), false);
      }
      try (CompactRangeOptions cro =
          new CompactRangeOptions()
              .setBottommostLevelCompaction(
                  CompactRangeOptions.BottommostLevelCompaction.kForceOptimized)
              .setExclusiveManualCompaction(false)) {
        db.compactRange(defaultColumnFamily, fromInclusive, toExclusive, cro);
      }
    } catch (RocksDBException e) {
      throw failure("compactRange", e);
    } finally {
      lifecycle.readLock().unlock();
    }
  }

  /**
   * Bytes on disk: every SST file still on disk (including obsolete ones an open cursor pins) plus
   * the WAL. Falls once {@link #compactRange} has reclaimed a deleted range.
   */
  @Override
  public long approximateSizeBytes() {
    lifecycle.readLock().lock();
    try {
      ensureOpen();
      return db.getLongProperty("rocksdb.total-sst-files-size") + walBytes();
    } catch (RocksDBException e) {
      throw failure("approximateSizeBytes", e);
    } finally {
      lifecycle.readLock().unlock();
    }
  }

  /**
   * Copies a consistent image of the store into the NEW folder {@code target} (hard links for SST
   * files on the same file system). The copy is a store of its own: open it with {@link #open}.
   *
   * @throws IllegalArgumentException if {@code target} already exists
   * @throws KvStoreException if RocksDB fails
   */
  public void createCheckpoint(Path target) {
    Objects.requireNonNull(target, "target");
    Path folder = target.toAbsolutePath().normalize();
    lifecycle.readLock().lock();
    try {
      ensureOpen();
      if (Files.exists(folder)) {
        throw new IllegalArgumentException(
            "checkpoint target " + folder + " already exists; a checkpoint needs a new folder");
      }
      Path parent = folder.getParent();
      if (parent != null) {
        Files.createDirectories(parent);
      }
      try (Checkpoint checkpoint = Checkpoint.create(db)) {
        checkpoint.createCheckpoint(folder.toString());
      }
    } catch (IOException e) {
      throw new KvStoreException("checkpoint into " + folder + " failed: " + e, e);
    } catch (RocksDBException e) {
      throw failure("checkpoint into " + folder, e);
    } finally {
      lifecycle.readLock().unlock();
    }
  }

  /**
   * A read-only snapshot of a few counters and gauges for metrics, keyed by the {@code STAT_*}
   * names: cumulative tickers since open ({@value #STAT_BYTES_WRITTEN}, block cache hits and
   * misses, flush and compaction bytes) and current values (memtable, SST and WAL bytes, SST file
   * count, block cache usage, pending compaction bytes). Iteration order is stable.
   */
  public Map<String, Long> statistics() {
    lifecycle.readLock().lock();
    try {
      ensureOpen();
      Map<String, Long> m = new LinkedHashMap<>();
      m.put(STAT_BYTES_WRITTEN, statistics.getTickerCount(TickerType.BYTES_WRITTEN));
      m.put(STAT_BLOCK_CACHE_HIT, statistics.getTickerCount(TickerType.BLOCK_CACHE_HIT));
      m.put(STAT_BLOCK_CACHE_MISS, statistics.getTickerCount(TickerType.BLOCK_CACHE_MISS));
      m.put(STAT_BLOCK_CACHE_USAGE_BYTES, db.getLongProperty("rocksdb.block-cache-usage"));
      m.put(STAT_FLUSH_BYTES_WRITTEN, statistics.getTickerCount(TickerType.FLUSH_WRITE_BYTES));
      m.put(STAT_COMPACTION_BYTES_READ, statistics.getTickerCount(TickerType.COMPACT_READ_BYTES));
      m.put(
          STAT_COMPACTION_BYTES_WRITTEN, statistics.getTickerCount(TickerType.COMPACT_WRITE_BYTES));
      m.put(
          STAT_PENDING_COMPACTION_BYTES,
          db.getLongProperty("rocksdb.estimate-pending-compaction-bytes"));
      m.put(STAT_MEMTABLE_BYTES, db.getLongProperty("rocksdb.cur-size-all-mem-tables"));
      long files = 0;
      for (int level = 0; level < numLevels; level++) {
        files += Long.parseLong(db.getProperty("rocksdb.num-files-at-level" + level));
      }
      m.put(STAT_SST_FILES, files);
      m.put(STAT_SST_BYTES, db.getLongProperty("rocksdb.total-sst-files-size"));
      m.put(STAT_WAL_BYTES, walBytes());
      return Collections.unmodifiableMap(m);
    } catch (RocksDBException e) {
      throw failure("statistics", e);
    } finally {
      lifecycle.readLock().unlock();
    }
  }

  /**
   * Flushes the memtables to SST files and waits. For tests and tools; the engine never needs it
   * (the WAL already makes writes durable).
   */
  void flush() {
    lifecycle.readLock().lock();
    try (FlushOptions fo = new FlushOptions().setWaitForFlush(true)) {
      ensureOpen();
      db.flush(fo);
    } catch (RocksDBException e) {
      throw failure("flush", e);
    } finally {
      lifecycle.readLock().unlock();
    }
  }

  /** Cursors and snapshots not yet closed (a snapshot's cursors included). */
  int openResourceCount() {
    int n = cursors.size() + snapshots.size();
    for (RocksDbSnapshot s : snapshots) {
      n += s.openCursorCount();
    }
    return n;
  }

  /**
   * Closes the store: open snapshots and cursors first (see the class comment), then the database,
   * then the options, filter, cache and statistics. Idempotent.
   *
   * @throws KvStoreException if RocksDB reports an error while closing (everything is released
   *     anyway)
   */
  @Override
  public void close() {
    lifecycle.writeLock().lock();
    try {
      if (closed) {
        return;
      }
      closed = true;
      int leftOpen = openResourceCount();
      if (leftOpen > 0) {
        LOG.log(
            Level.WARNING,
            "closing RocksDB store {0} with {1} cursor(s)/snapshot(s) still open; closing them",
            dir,
            leftOpen);
      }
      for (RocksDbSnapshot s : snapshots) {
        s.release("store is closed");
      }
      snapshots.clear();
      for (RocksDbCursor c : cursors) {
        c.release("store is closed");
      }
      cursors.clear();
      RocksDBException closeFailure = null;
      try {
        db.closeE();
      } catch (RocksDBException e) {
        closeFailure = e;
      }
      writeOptions.close();
      oneShotReads.close();
      options.close();
      bloomFilter.close();
      blockCache.close();
      statistics.close();
      if (closeFailure != null) {
        throw failure("close", closeFailure);
      }
    } finally {
      lifecycle.writeLock().unlock();
    }
  }

  @Override
  public String toString() {
    return "RocksDbKvStore[" + dir + (closed ? ", closed]" : "]");
  }

  // ---- for RocksDbSnapshot and RocksDbCursor ----

  /** A cursor registered in {@code owner}; the caller holds a lock that keeps the db open. */
  KvCursor newCursor(
      Snapshot snapshot, byte[] fromInclusive, byte[] toExclusive, Set<RocksDbCursor> owner) {
    if (fromInclusive != null
        && toExclusive != null
        && Arrays.compareUnsigned(fromInclusive, toExclusive) >= 0) {
      return new RocksDbCursor.Empty();
    }
    ReadOptions readOptions = new ReadOptions();
    Slice upperBound = null;
    try {
      if (snapshot != null) {
        readOptions.setSnapshot(snapshot);
      }
      if (toExclusive != null) {
        upperBound = new Slice(toExclusive);
        readOptions.setIterateUpperBound(upperBound);
      }
      RocksIterator iterator = db.newIterator(readOptions);
      RocksDbCursor cursor =
          new RocksDbCursor(iterator, readOptions, upperBound, fromInclusive, owner);
      owner.add(cursor);
      return cursor;
    } catch (RuntimeException | Error e) {
      if (upperBound != null) {
        upperBound.close();
      }
      readOptions.close();
      throw e;
    }
  }

  /** A get through {@code readOptions}; the caller holds a lock that keeps the db open. */
  byte[] getWith(ReadOptions readOptions, byte[] key) {
    Objects.requireNonNull(key, "key");
    if (closed) {
      throw new IllegalStateException("store is closed");
    }
    try {
      return db.get(readOptions, key);
    } catch (RocksDBException e) {
      throw failure("get", e);
    }
  }

  List<byte[]> multiGetWith(ReadOptions readOptions, List<byte[]> keys) {
    for (byte[] k : keys) {
      Objects.requireNonNull(k, "key");
    }
    if (closed) {
      throw new IllegalStateException("store is closed");
    }
    try {
      return db.multiGetAsList(readOptions, keys);
    } catch (RocksDBException e) {
      throw failure("multiGet", e);
    }
  }

  void releaseSnapshot(Snapshot snapshot) {
    db.releaseSnapshot(snapshot);
    snapshot.close(); // does not own the native snapshot: a no-op kept for symmetry
  }

  void forget(RocksDbSnapshot snapshot) {
    snapshots.remove(snapshot);
  }

  static KvStoreException failure(String operation, RocksDBException e) {
    Status status = e.getStatus();
    String code = status == null ? "" : " (" + status.getCodeString() + ")";
    return new KvStoreException(
        "RocksDB " + operation + " failed" + code + ": " + e.getMessage(), e);
  }

  // ---- internals ----

  private boolean isEmpty(byte[] fromInclusive, byte[] toExclusive) {
    try (KvCursor c = newCursor(null, fromInclusive, toExclusive, cursors)) {
      return !c.next();
    }
  }

  private long walBytes() throws RocksDBException {
    long n = 0;
    for (LogFile f : db.getSortedWalFiles()) {
      n += f.sizeFileBytes();
    }
    return n;
  }

  private void ensureOpen() {
    if (closed) {
      throw new IllegalStateException("store is closed");
    }
  }

  private static KvStoreException openFailure(Path folder, RocksDBException e) {
    Status status = e.getStatus();
    String msg = String.valueOf(e.getMessage());
    boolean ioError = status != null && status.getCode() == Status.Code.IOError;
    if (ioError && msg.toLowerCase(Locale.ROOT).contains("lock")) {
      return new KvStoreException(
          "RocksDB folder "
              + folder
              + " is in use by another store or process (its LOCK file is held): "
              + msg,
          e);
    }
    return failure("open of " + folder, e);
  }

  private static <T extends AutoCloseable> T add(List<AutoCloseable> created, T resource) {
    created.add(resource);
    return resource;
  }

  private static void closeAll(List<AutoCloseable> created) {
    for (int i = created.size() - 1; i >= 0; i--) {
      try {
        created.get(i).close();
      } catch (Exception suppressed) {
        // Best effort while failing to open; the open failure is what the caller sees.
      }
    }
  }
}
