package dev.tidemark.tsdb.engine;

import dev.tidemark.tsdb.append.AppendResult;
import dev.tidemark.tsdb.append.Appender;
import dev.tidemark.tsdb.append.RejectReason;
import dev.tidemark.tsdb.append.SampleBatch;
import dev.tidemark.tsdb.append.StorageUnavailableException;
import dev.tidemark.tsdb.codec.BucketListValue;
import dev.tidemark.tsdb.codec.CorruptRecordException;
import dev.tidemark.tsdb.codec.ForwardIndexValue;
import dev.tidemark.tsdb.codec.ChunkDecoder;
import dev.tidemark.tsdb.codec.DecimalEncoder;
import dev.tidemark.tsdb.codec.GorillaEncoder;
import dev.tidemark.tsdb.codec.InvertedIndexValue;
import dev.tidemark.tsdb.codec.Keys;
import dev.tidemark.tsdb.codec.RecordType;
import dev.tidemark.tsdb.codec.SeriesDictionaryValue;
import dev.tidemark.tsdb.codec.SeriesLimits;
import dev.tidemark.tsdb.codec.TimeBucket;
import dev.tidemark.tsdb.codec.TimeSeriesValue;
import dev.tidemark.tsdb.kv.KeyRanges;
import dev.tidemark.tsdb.kv.KvCursor;
import dev.tidemark.tsdb.kv.KvReader;
import dev.tidemark.tsdb.kv.KvSnapshot;
import dev.tidemark.tsdb.kv.KvStore;
import dev.tidemark.tsdb.kv.KvStoreException;
import dev.tidemark.tsdb.kv.WriteBatch;
import dev.tidemark.tsdb.model.Labels;
import dev.tidemark.tsdb.model.MetricMetadata;
import dev.tidemark.tsdb.query.LabelMatcher;
import dev.tidemark.tsdb.query.Querier;
import dev.tidemark.tsdb.query.SampleIterator;
import dev.tidemark.tsdb.query.Series;
import dev.tidemark.tsdb.query.SeriesSet;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import org.roaringbitmap.IntIterator;
import org.roaringbitmap.RoaringBitmap;

/**
 * The storage engine: a durable in-memory head over RFC 0001 records in a {@link KvStore}. See
 * {@code docs/architecture.md} for the design (head, head log, group commit, sealing, reopening,
 * recovery, read path, retention) and {@code docs/format.md} for every persisted byte.
 *
 * <p>Thread-safe. Appends serialize on one write lock for the in-memory step and the KV write;
 * reads capture the head under the read lock and decode outside it. One background thread seals
 * buckets and applies retention. {@link #close()} seals the head and must be called before the
 * store is closed.
 */
public final class Engine implements Appender, Querier, AutoCloseable {

  private static final System.Logger LOG = System.getLogger(Engine.class.getName());
  private static final int CODE = EngineConfig.BUCKET_SIZE_CODE;
  /** A seal writes its records in batches of about this many payload bytes. */
  private static final long SEAL_BATCH_BYTES = 4L << 20;
  /** Above this share of a bucket's series, a select scans records instead of point reads. */
  private static final int SCAN_DENSITY_DIVISOR = 8;

  private final KvStore kv;
  private final EngineConfig config;
  private final long oooMillis;
  /** The retention in force: starts as the configured one, changed by {@link #setRetention}. */
  private volatile long retentionMillis;

  private final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();
  private final Condition sealEnded = lock.writeLock().newCondition();

  // Guarded by lock.
  private final TreeMap<TimeBucket, HeadBucket> open = new TreeMap<>();
  private final TreeMap<TimeBucket, HeadBucket> sealing = new TreeMap<>();
  /** Every bucket with data, open or sealed: the BucketList. */
  private final TreeSet<TimeBucket> buckets = new TreeSet<>();
  private final HashMap<Labels, SeriesRef> refs = new HashMap<>();
  private long headMaxT;
  private boolean hasHeadMaxT;
  private long logSeq;
  private long headSeries;
  private long headSampleBytes;
  private boolean closed;
  /** The undo journal of the append in progress. */
  private final AppendUndo undo = new AppendUndo();
  /** Set when a rollback itself failed: the head may differ from the store, so appends stop. */
  private Throwable failedRollback;
  /** Test hook: fails an append at chosen places (null in production). */
  FaultInjection faults;

  private final GroupSync groupSync;
  private final ScheduledExecutorService background;
  private final AtomicBoolean sealQueued = new AtomicBoolean();
  private final long recoveryMillis;

  private final LongAdder samplesAccepted = new LongAdder();
  private final LongAdder samplesRejected = new LongAdder();
  private final LongAdder unreadableRecords = new LongAdder();
  private final java.util.concurrent.atomic.AtomicLong lastUnreadableLog =
      new java.util.concurrent.atomic.AtomicLong(System.nanoTime() - UNREADABLE_LOG_INTERVAL_NANOS);
  private static final long UNREADABLE_LOG_INTERVAL_NANOS = 10_000_000_000L;

  /** What the engine knows of a series across buckets: its newest timestamp, exactly. */
  private static final class SeriesRef {
    long maxT;
    HeadSeries latest;

    SeriesRef(long maxT, HeadSeries latest) {
      this.maxT = maxT;
      this.latest = latest;
    }
  }

  private Engine(KvStore kv, EngineConfig config) {
    this.kv = kv;
    this.config = config;
    this.oooMillis = config.outOfOrderWindow().toMillis();
    this.retentionMillis = config.retention().toMillis();
    this.groupSync = new GroupSync(kv);
    this.background =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "tidemark-sealer");
              t.setDaemon(true);
              return t;
            });
    long started = System.nanoTime();
    lock.writeLock().lock();
    try {
      checkSchema();
      recover();
    } finally {
      lock.writeLock().unlock();
    }
    this.recoveryMillis = (System.nanoTime() - started) / 1_000_000;
    LOG.log(
        Level.INFO,
        "recovered head in {0} ms: {1} open buckets, {2} series",
        recoveryMillis,
        open.size(),
        headSeries);
    long every = config.retentionInterval().toMillis();
    if (every > 0) {
      background.scheduleWithFixedDelay(this::retentionQuietly, every, every, TimeUnit.MILLISECONDS);
    }
    scheduleSealIfDue();
  }

  /**
   * Opens the engine on a store: checks the schema record (creating it in an empty store),
   * recovers the head from the head log, and starts the background sealer.
   *
   * @throws IllegalStateException if the store's schema is unknown or contradicts the config
   */
  public static Engine open(KvStore kv, EngineConfig config) {
    return new Engine(kv, config);
  }

  // ---------------------------------------------------------------------------------------------
  // Opening

  private void checkSchema() {
    SchemaRecord wanted = new SchemaRecord(SchemaRecord.CURRENT_VERSION, CODE, SchemaRecord.HASH_XXH3_128);
    byte[] stored = kv.get(Keys.schema());
    if (stored == null) {
      try (KvCursor c = kv.scan(null, null)) {
        if (c.next()) {
          throw new IllegalStateException(
              "store holds data but no schema record: it was not written by Tidemark");
        }
      }
      kv.write(new WriteBatch().put(Keys.schema(), wanted.encode()));
      kv.sync();
      return;
    }
    wanted.checkCompatible(SchemaRecord.decode(stored));
  }

  /**
   * Rebuilds the head from the head log. Series refs are not created here: a series' newest
   * sample may lie in a sealed bucket newer than the recovered one (a late sample reopened an older
   * bucket), so refs are resolved on first use by {@link #newestAtOrAfter}, which sees both.
   */
  private void recover() {
    byte[] list = kv.get(Keys.bucketList());
    if (list != null) {
      buckets.addAll(BucketListValue.decode(list));
    }
    for (TimeBucket b : buckets) {
      byte[] prefix = Keys.bucketPrefix(RecordType.HEAD_LOG, b);
      try (KvCursor c = kv.scanPrefix(prefix)) {
        HeadBucket hb = null;
        while (c.next()) {
          if (hb == null) {
            hb = reopenLocked(b);
          }
          logSeq = Math.max(logSeq, headLogSeq(c.key()));
          HeadBucket target = hb;
          HeadLogBuffer.decode(c.value(), (id, t, bits) -> replay(target, id, t, bits));
        }
        if (hb != null && hb.maxTimestamp != Long.MIN_VALUE
            && (!hasHeadMaxT || hb.maxTimestamp > headMaxT)) {
          headMaxT = hb.maxTimestamp;
          hasHeadMaxT = true;
        }
      }
    }
  }

  private void replay(HeadBucket hb, int id, long t, long bits) {
    HeadSeries hs = hb.byId(id);
    if (hs == null) {
      throw new CorruptRecordException(
          "head log of bucket " + hb.bucket + " names series id " + id + " which has no ForwardIndex record");
    }
    headSampleBytes += hs.insertRecovered(t, bits);
    hb.noteTimestamp(t);
  }

  // ---------------------------------------------------------------------------------------------
  // Write path

  @Override
  public AppendResult append(SampleBatch batch) {
    int n = batch.size();
    RejectReason[] sampleReasons = new RejectReason[n];
    RejectReason[] pointReasons = new RejectReason[batch.pointCount()];
    long now = config.clock().millis();
    long oldest = now - retentionMillis;
    long newest = now + config.maxFutureSkew().toMillis();
    for (int i = 0; i < n; i++) {
      sampleReasons[i] = validate(batch, i, oldest, newest);
    }
    boolean[] skip = new boolean[n];
    SeriesRef[] refOf = new SeriesRef[n];
    HeadSeries[] seriesOf = new HeadSeries[n];
    String[] pointDetails = null;
    long writeSeq;
    int accepted = 0;
    lock.writeLock().lock();
    try {
      ensureOpen();
      if (failedRollback != null) {
        throw new StorageUnavailableException(
            "the engine refuses writes since an append could not be rolled back; restart the server",
            failedRollback);
      }
      if (headSampleBytes + headSeries * HeadSeries.OVERHEAD_BYTES > config.maxHeadBytes()) {
        scheduleSealIfDue();
        throw new StorageUnavailableException(
            "head memory is over its budget of " + config.maxHeadBytes() + " bytes; retry later");
      }
      awaitSealsTouching(batch, sampleReasons);
      WriteBatch wb = new WriteBatch();
      List<HeadBucket> touched = new ArrayList<>(2);
      undo.begin();
      long headMaxBefore = headMaxT;
      boolean hadHeadMax = hasHeadMaxT;
      boolean wrote;
      try {
        int i = 0;
        while (i < n) {
          int point = batch.pointOf(i);
          int end = i + 1;
          while (end < n && batch.pointOf(end) == point) {
            end++;
          }
          RejectReason reason = null;
          int failing = i;
          for (int k = i; k < end && reason == null; k++) {
            if (sampleReasons[k] == null) {
              sampleReasons[k] = check(batch, k, skip, refOf, seriesOf);
            }
            reason = sampleReasons[k];
            failing = k;
          }
          if (reason != null) {
            pointReasons[point] = reason;
            if (reason == RejectReason.LIMIT_EXCEEDED) {
              if (pointDetails == null) {
                pointDetails = new String[batch.pointCount()];
              }
              pointDetails[point] = SeriesLimits.violation(batch.labels(failing), batch.metadata(failing));
            }
          } else {
            for (int k = i; k < end; k++) {
              if (!skip[k]) {
                apply(batch, k, refOf[k], seriesOf[k], wb, touched);
              }
              accepted++;
            }
          }
          i = end;
        }
        if (faults != null) {
          faults.beforeWrite();
        }
        wrote = writeLocked(wb, touched);
      } catch (RuntimeException | Error e) {
        rollbackLocked(batch, touched, headMaxBefore, hadHeadMax, e);
        throw e;
      }
      // Registered under the lock, so sequence order is write order; nothing can fail after the
      // write and before this, where a rollback would undo what the store already has.
      writeSeq = wrote ? groupSync.registerWrite() : 0;
    } finally {
      lock.writeLock().unlock();
    }
    if (config.fsync() && writeSeq > 0) {
      groupSync.awaitDurable(writeSeq);
    }
    samplesAccepted.add(accepted);
    samplesRejected.add(n - accepted);
    scheduleSealIfDue();
    return new AppendResult(pointReasons, sampleReasons, pointDetails);
  }

  /**
   * Undoes what a failed append changed in the head, so the head again holds exactly what the
   * store (records and head log) holds: the undo journal newest first, the pending head-log bytes,
   * the newest head timestamp, and the cached refs of the batch's series (they are resolved again
   * on next use). Under the write lock. Should the undo itself fail, the engine refuses further
   * appends (reads go on); a restart rebuilds the head from the store.
   */
  private void rollbackLocked(
      SampleBatch batch, List<HeadBucket> touched, long headMaxBefore, boolean hadHeadMax, Throwable cause) {
    try {
      touched.clear();
      headSampleBytes += undo.undo(new Rollback());
      headMaxT = headMaxBefore;
      hasHeadMaxT = hadHeadMax;
      for (int i = 0; i < batch.size(); i++) {
        refs.remove(batch.labels(i));
      }
    } catch (RuntimeException | Error e) {
      failedRollback = e;
      e.addSuppressed(cause);
      LOG.log(Level.ERROR, "an append failed and could not be rolled back; appends are refused until a restart", e);
    }
  }

  /** Undoes the journal's series and buckets ({@link AppendUndo}). Under the write lock. */
  private final class Rollback implements AppendUndo.Visitor {
    @Override
    public void seriesCreated(HeadSeries hs) {
      hs.bucket.removeLast(hs);
      headSeries--;
    }

    @Override
    public void bucket(HeadBucket hb, boolean created, boolean listed, long minTimestamp, long maxTimestamp) {
      hb.minTimestamp = minTimestamp;
      hb.maxTimestamp = maxTimestamp;
      if (created) {
        open.remove(hb.bucket);
        hb.state = HeadBucket.State.SEALED; // unreachable now; a stale reference must not append
        if (listed) {
          buckets.remove(hb.bucket);
        }
      }
    }
  }

  /**
   * Waits, before the append changes anything, until no bucket it writes to is being sealed. A
   * seal starts only under the write lock, so none starts while the append then holds it: the
   * append is applied and written in one piece, and readers and a crash see all of it or none.
   * (Waiting in the middle of the append instead would publish the points applied before it.)
   * Under the write lock.
   */
  private void awaitSealsTouching(SampleBatch batch, RejectReason[] sampleReasons) {
    while (!sealing.isEmpty() && touchesSealing(batch, sampleReasons)) {
      sealEnded.awaitUninterruptibly();
      ensureOpen();
    }
  }

  private boolean touchesSealing(SampleBatch batch, RejectReason[] sampleReasons) {
    // Usually one bucket is sealing: a range check per sample, no allocation, no tree lookup.
    for (TimeBucket b : sealing.keySet()) {
      long start = b.startMillis();
      long end = b.endMillis();
      for (int i = 0; i < batch.size(); i++) {
        long t = batch.timestampMillis(i);
        if (sampleReasons[i] == null && t >= start && t < end) {
          return true;
        }
      }
    }
    return false;
  }


  private static RejectReason validate(SampleBatch batch, int i, long oldest, long newest) {
    long t = batch.timestampMillis(i);
    if (t < 0 || t > TimeBucket.MAX_START_MINUTES * 60_000L) {
      return RejectReason.INVALID;
    }
    if (batch.labels(i).metricName() == null) {
      return RejectReason.INVALID;
    }
    if (t > newest) {
      return RejectReason.TOO_FAR_IN_FUTURE;
    }
    if (t < oldest) {
      return RejectReason.TOO_OLD;
    }
    return null;
  }

  /**
   * Checks one sample against the stored state; creates nothing. Remembers the series' ref and
   * head series in {@code refOf}/{@code seriesOf} so {@link #apply} needs no second lookup. Under
   * the write lock.
   *
   * <p>Fast path (a known series appending to its newest, open bucket): one hash lookup, no
   * allocation.
   */
  private RejectReason check(
      SampleBatch batch, int k, boolean[] skip, SeriesRef[] refOf, HeadSeries[] seriesOf) {
    Labels labels = batch.labels(k);
    long t = batch.timestampMillis(k);
    SeriesRef ref = refs.get(labels);
    HeadSeries hs;
    HeadSeries latest = ref == null ? null : ref.latest;
    if (latest != null && latest.bucket.state == HeadBucket.State.OPEN && latest.bucket.contains(t)) {
      if (t < ref.maxT - oooMillis) {
        return RejectReason.OUT_OF_ORDER;
      }
      hs = latest;
    } else {
      TimeBucket b = TimeBucket.containing(t, CODE);
      if (ref == null) {
        long max = newestAtOrAfter(labels, b);
        if (max != Long.MIN_VALUE) {
          ref = new SeriesRef(max, null);
          refs.put(labels, ref);
        }
      }
      if (ref != null && t < ref.maxT - oooMillis) {
        return RejectReason.OUT_OF_ORDER;
      }
      HeadBucket hb = open.get(b);
      if (hb == null) {
        if (sealing.containsKey(b)) {
          // awaitSealsTouching ran under this lock hold, and seals start only under the lock.
          throw new IllegalStateException("bucket " + b + " is being sealed during an append");
        }
        if (!buckets.contains(b)) {
          refOf[k] = ref;
          // a new bucket: nothing to collide with, but the series must be storable
          return SeriesLimits.storable(labels, batch.metadata(k)) ? null : RejectReason.LIMIT_EXCEEDED;
        }
        hb = reopenLocked(b);
      }
      hs = hb.get(labels);
      if (hs == null && !SeriesLimits.storable(labels, batch.metadata(k))) {
        return RejectReason.LIMIT_EXCEEDED;
      }
    }
    refOf[k] = ref;
    seriesOf[k] = hs;
    if (hs != null) {
      int c = hs.check(t, batch.valueBits(k));
      if (c == HeadSeries.CONFLICT) {
        return RejectReason.DUPLICATE;
      }
      skip[k] = c == HeadSeries.SAME;
    }
    return null;
  }

  /** Stores one checked sample. Under the write lock. */
  private void apply(
      SampleBatch batch,
      int k,
      SeriesRef ref,
      HeadSeries hs,
      WriteBatch wb,
      List<HeadBucket> touched) {
    if (faults != null) {
      faults.beforeApply(k);
    }
    long t = batch.timestampMillis(k);
    long bits = batch.valueBits(k);
    if (hs == null) {
      // New to its bucket when checked; an earlier point of this batch may have created it since.
      Labels labels = batch.labels(k);
      TimeBucket b = TimeBucket.containing(t, CODE);
      HeadBucket hb = open.get(b);
      if (hb == null) {
        hb = new HeadBucket(b);
        boolean listed = buckets.add(b);
        open.put(b, hb);
        undo.bucket(hb, true, listed);
        if (listed) {
          wb.put(Keys.bucketList(), BucketListValue.encode(buckets));
        }
      }
      hs = hb.get(labels);
      if (hs == null) {
        MetricMetadata meta = batch.metadata(k);
        int id = hb.nextId();
        // Encoded before the head changes: a value that cannot be encoded changes nothing.
        byte[] forward = new ForwardIndexValue(meta, labels).encode();
        undo.bucket(hb, false, false);
        int[] ids = hb.add(labels, meta, id);
        hs = hb.byId(id);
        undo.seriesCreated(hs);
        headSeries++;
        wb.put(
            Keys.seriesDictionary(b, labels.fingerprintHigh(), labels.fingerprintLow()),
            SeriesDictionaryValue.encode(ids));
        wb.put(Keys.forwardIndex(b, id), forward);
      } else if (hs.check(t, bits) != HeadSeries.NEW) {
        return;
      }
      if (ref == null) {
        ref = refs.get(labels); // created by an earlier sample of this batch, or still absent
      }
    } else if (hs.check(t, bits) != HeadSeries.NEW) {
      return; // the same sample twice in one batch
    }
    HeadBucket hb = hs.bucket;
    undo.bucket(hb, false, false);
    headSampleBytes += hs.insert(t, bits);
    hb.noteTimestamp(t);
    if (hb.pendingLog.isEmpty()) {
      touched.add(hb);
    }
    hb.pendingLog.add(hs.id, t, bits);
    noteAccepted(ref, hs, t);
  }

  private void noteAccepted(SeriesRef ref, HeadSeries hs, long t) {
    if (ref == null) {
      refs.put(hs.labels, new SeriesRef(t, hs));
    } else {
      if (t > ref.maxT) {
        ref.maxT = t;
      }
      if (ref.latest == null || hs.bucket.bucket.compareTo(ref.latest.bucket.bucket) >= 0) {
        ref.latest = hs;
      }
    }
    if (!hasHeadMaxT || t > headMaxT) {
      headMaxT = t;
      hasHeadMaxT = true;
    }
  }

  /**
   * The newest stored timestamp of a series in bucket {@code b} or later, or Long.MIN_VALUE.
   * Buckets before {@code b} only hold older timestamps, so this decides the out-of-order rule
   * for a sample in {@code b}. Head buckets answer from memory; sealed ones with point reads
   * (this runs once per series not in the head).
   */
  private long newestAtOrAfter(Labels labels, TimeBucket b) {
    long max = Long.MIN_VALUE;
    for (TimeBucket sb : buckets.tailSet(b, true)) {
      HeadBucket hb = headBucketLocked(sb);
      if (hb != null) {
        HeadSeries hs = hb.get(labels);
        if (hs != null && !hs.isEmpty()) {
          max = Math.max(max, hs.maxTimestamp());
        }
        continue;
      }
      max = Math.max(max, storedNewest(kv, labels, sb));
    }
    return max;
  }

  private static long storedNewest(KvReader reader, Labels labels, TimeBucket b) {
    byte[] dict = reader.get(Keys.seriesDictionary(b, labels.fingerprintHigh(), labels.fingerprintLow()));
    if (dict == null) {
      return Long.MIN_VALUE;
    }
    for (int id : SeriesDictionaryValue.decode(dict)) {
      byte[] fwd = reader.get(Keys.forwardIndex(b, id));
      if (fwd == null || !ForwardIndexValue.decode(fwd).labels().equals(labels)) {
        continue;
      }
      byte[] chunk = reader.get(Keys.timeSeries(b, id));
      if (chunk == null) {
        return Long.MIN_VALUE;
      }
      ChunkDecoder d = new TimeSeriesValue.Decoders().open(chunk);
      long last = Long.MIN_VALUE;
      while (d.next()) {
        last = d.timestampMillis();
      }
      return last;
    }
    return Long.MIN_VALUE;
  }

  /**
   * Writes the pending head-log records and created series; false if there was nothing to write.
   * The pending logs are cleared only once the write succeeded: until then they are the undo
   * record of the append's samples ({@link AppendUndo}).
   */
  private boolean writeLocked(WriteBatch wb, List<HeadBucket> touched) {
    for (HeadBucket hb : touched) {
      if (!hb.pendingLog.isEmpty()) {
        wb.put(headLogKey(hb.bucket, ++logSeq), hb.pendingLog.toByteArray());
      }
    }
    if (wb.isEmpty()) {
      return false;
    }
    try {
      kv.write(wb);
    } catch (KvStoreException e) {
      throw new StorageUnavailableException("cannot write the head log: " + e.getMessage(), e);
    }
    for (HeadBucket hb : touched) {
      hb.pendingLog.clear();
    }
    touched.clear();
    return true;
  }

  /** Loads a sealed bucket back into the head: dictionary, postings, chunks. Under the write lock. */
  private HeadBucket reopenLocked(TimeBucket b) {
    HeadBucket hb = new HeadBucket(b);
    long series = 0;
    long bytes = 0;
    try (KvCursor c = kv.scanPrefix(Keys.bucketPrefix(RecordType.FORWARD_INDEX, b))) {
      while (c.next()) {
        ForwardIndexValue fi = ForwardIndexValue.decode(c.value());
        hb.add(fi.labels(), fi.metadata(), Keys.seriesId(c.key()));
        series++;
      }
    }
    TimeSeriesValue.Decoders decoders = new TimeSeriesValue.Decoders();
    try (KvCursor c = kv.scanPrefix(Keys.bucketPrefix(RecordType.TIME_SERIES, b))) {
      while (c.next()) {
        int id = Keys.seriesId(c.key());
        HeadSeries hs = hb.byId(id);
        if (hs == null) {
          throw new CorruptRecordException("TimeSeries record " + b + "/" + id + " has no ForwardIndex record");
        }
        ChunkDecoder d = decoders.open(c.value());
        while (d.next()) {
          bytes += hs.insertRecovered(d.timestampMillis(), d.valueBits());
          hb.noteTimestamp(d.timestampMillis());
        }
      }
    }
    // Counted only once the bucket is whole: a reopen that throws changes nothing.
    headSeries += series;
    headSampleBytes += bytes;
    open.put(b, hb);
    return hb;
  }

  /** The HeadLog key of sequence {@code seq} in bucket {@code b} (docs/format.md). */
  static byte[] headLogKey(TimeBucket b, long seq) {
    byte[] prefix = Keys.bucketPrefix(RecordType.HEAD_LOG, b);
    byte[] k = Arrays.copyOf(prefix, prefix.length + 8);
    for (int i = 0; i < 8; i++) {
      k[prefix.length + i] = (byte) (seq >>> (56 - 8 * i));
    }
    return k;
  }

  private static long headLogSeq(byte[] key) {
    if (key.length != Keys.BUCKET_PREFIX_LENGTH + 8) {
      throw new CorruptRecordException("HeadLog key must be " + (Keys.BUCKET_PREFIX_LENGTH + 8) + " bytes, was " + key.length);
    }
    long seq = 0;
    for (int i = Keys.BUCKET_PREFIX_LENGTH; i < key.length; i++) {
      seq = (seq << 8) | (key[i] & 0xFF);
    }
    return seq;
  }

  // ---------------------------------------------------------------------------------------------
  // Sealing

  private void scheduleSealIfDue() {
    if (!sealDue() || !sealQueued.compareAndSet(false, true)) {
      return;
    }
    try {
      background.execute(
          () -> {
            sealQueued.set(false);
            sealDueBuckets();
          });
    } catch (java.util.concurrent.RejectedExecutionException e) {
      sealQueued.set(false); // shutting down: close() seals
    }
  }

  private boolean sealDue() {
    lock.readLock().lock();
    try {
      return !closed && hasHeadMaxT && !open.isEmpty() && isDue(open.firstKey());
    } finally {
      lock.readLock().unlock();
    }
  }

  private boolean isDue(TimeBucket b) {
    return hasHeadMaxT && headMaxT >= b.endMillis() + oooMillis;
  }

  private void sealDueBuckets() {
    while (true) {
      HeadBucket hb;
      lock.writeLock().lock();
      try {
        if (closed || open.isEmpty() || !isDue(open.firstKey())) {
          return;
        }
        hb = startSealLocked(open.firstKey());
      } finally {
        lock.writeLock().unlock();
      }
      seal(hb);
    }
  }

  private HeadBucket startSealLocked(TimeBucket b) {
    HeadBucket hb = open.remove(b);
    sealing.put(b, hb);
    hb.state = HeadBucket.State.SEALING;
    return hb;
  }

  /** Writes a sealing bucket's records, then drops it from the head. Runs without the lock. */
  private void seal(HeadBucket hb) {
    TimeBucket b = hb.bucket;
    try {
      WriteBatch[] wb = {new WriteBatch()};
      DecimalEncoder scratch = new DecimalEncoder();
      for (HeadSeries hs : hb.series()) {
        if (hs.isEmpty()) {
          continue;
        }
        wb[0].put(Keys.timeSeries(b, hs.id), TimeSeriesValue.encodeSmallest(hs.sealedChunk(), scratch));
        if (wb[0].payloadBytes() > SEAL_BATCH_BYTES) {
          kv.write(wb[0]);
          wb[0] = new WriteBatch();
        }
      }
      hb.forEachPosting(
          (name, value, posting) -> {
            wb[0].put(Keys.invertedIndex(b, name, value), InvertedIndexValue.encode(posting.clone()));
            if (wb[0].payloadBytes() > SEAL_BATCH_BYTES) {
              kv.write(wb[0]);
              wb[0] = new WriteBatch();
            }
          });
      wb[0].put(Keys.invertedIndexAllSeries(b), InvertedIndexValue.encode(hb.all().clone()));
      byte[] logPrefix = Keys.bucketPrefix(RecordType.HEAD_LOG, b);
      wb[0].deleteRange(logPrefix, KeyRanges.prefixEnd(logPrefix));
      kv.write(wb[0]);
      if (config.fsync()) {
        kv.sync();
      }
    } catch (RuntimeException | Error e) {
      LOG.log(Level.ERROR, "sealing bucket " + b + " failed; it stays in the head", e);
      lock.writeLock().lock();
      try {
        sealing.remove(b);
        open.put(b, hb);
        hb.state = HeadBucket.State.OPEN;
        sealEnded.signalAll();
      } finally {
        lock.writeLock().unlock();
      }
      throw e;
    }
    lock.writeLock().lock();
    try {
      sealing.remove(b);
      hb.state = HeadBucket.State.SEALED;
      headSeries -= hb.seriesCount();
      for (HeadSeries hs : hb.series()) {
        headSampleBytes -= hs.sampleBytes();
      }
      // Forget series whose newest data just left the head; they are looked up again if they return.
      refs.values().removeIf(r -> r.latest == null || r.latest.bucket.state == HeadBucket.State.SEALED);
      sealEnded.signalAll();
    } finally {
      lock.writeLock().unlock();
    }
  }

  /** Seals every open bucket now and waits for it. */
  public void flush() {
    runOnBackground(this::sealAllOpen);
  }

  private void sealAllOpen() {
    List<HeadBucket> toSeal = new ArrayList<>();
    lock.writeLock().lock();
    try {
      for (TimeBucket b : new ArrayList<>(open.keySet())) {
        toSeal.add(startSealLocked(b));
      }
    } finally {
      lock.writeLock().unlock();
    }
    // Every bucket started above must end its seal, sealed or back in the open set: a failure of
    // one must not leave the others in the sealing set, where appends would wait for them forever.
    RuntimeException failure = null;
    for (HeadBucket hb : toSeal) {
      try {
        seal(hb);
      } catch (RuntimeException e) {
        if (failure == null) {
          failure = e;
        } else {
          failure.addSuppressed(e);
        }
      }
    }
    if (failure != null) {
      throw failure;
    }
  }

  private void runOnBackground(Runnable task) {
    Future<?> f = background.submit(task);
    try {
      f.get();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new StorageUnavailableException("interrupted", e);
    } catch (ExecutionException e) {
      Throwable cause = e.getCause();
      if (cause instanceof RuntimeException re) {
        throw re;
      }
      throw new StorageUnavailableException("background task failed: " + cause.getMessage(), cause);
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Retention

  /** Drops every bucket that ended before {@code now - retention}; returns how many. */
  public int applyRetention() {
    int[] dropped = {0};
    runOnBackground(() -> dropped[0] = dropExpired());
    return dropped[0];
  }

  private void retentionQuietly() {
    try {
      dropExpired();
    } catch (RuntimeException e) {
      LOG.log(Level.WARNING, "retention failed; will retry", e);
    }
  }

  private int dropExpired() {
    long cutoff = config.clock().millis() - retentionMillis;
    List<TimeBucket> victims = new ArrayList<>();
    lock.writeLock().lock();
    try {
      ensureOpen();
      for (TimeBucket b : buckets) {
        if (b.endMillis() > cutoff) {
          break;
        }
        if (!sealing.containsKey(b)) {
          victims.add(b);
        }
      }
      if (victims.isEmpty()) {
        return 0;
      }
      WriteBatch wb = new WriteBatch();
      TreeSet<TimeBucket> kept = new TreeSet<>(buckets);
      for (TimeBucket b : victims) {
        kept.remove(b);
        for (RecordType type : BUCKET_RECORD_TYPES) {
          byte[] prefix = Keys.bucketPrefix(type, b);
          wb.deleteRange(prefix, KeyRanges.prefixEnd(prefix));
        }
      }
      wb.put(Keys.bucketList(), BucketListValue.encode(kept));
      kv.write(wb); // the head changes only once the store has
      for (TimeBucket b : victims) {
        buckets.remove(b);
        HeadBucket hb = open.remove(b);
        if (hb != null) {
          hb.state = HeadBucket.State.SEALED;
          headSeries -= hb.seriesCount();
          for (HeadSeries hs : hb.series()) {
            headSampleBytes -= hs.sampleBytes();
          }
        }
      }
      refs.values().removeIf(r -> r.maxT < cutoff || (r.latest != null && r.latest.bucket.state == HeadBucket.State.SEALED));
    } finally {
      lock.writeLock().unlock();
    }
    for (RecordType type : BUCKET_RECORD_TYPES) {
      byte[] from = Keys.bucketPrefix(type, victims.get(0));
      byte[] to = KeyRanges.prefixEnd(Keys.bucketPrefix(type, victims.get(victims.size() - 1)));
      kv.compactRange(from, to);
    }
    LOG.log(Level.INFO, "retention dropped {0} buckets ending at or before {1}", victims.size(), cutoff);
    return victims.size();
  }

  private static final RecordType[] BUCKET_RECORD_TYPES = {
    RecordType.SERIES_DICTIONARY,
    RecordType.FORWARD_INDEX,
    RecordType.INVERTED_INDEX,
    RecordType.TIME_SERIES,
    RecordType.HEAD_LOG
  };

  /** The retention in force. */
  public Duration retention() {
    return Duration.ofMillis(retentionMillis);
  }

  /**
   * Changes the retention for the next {@link #applyRetention()} (scheduled or on demand) and for
   * the {@code TOO_OLD} check of later appends. Not persisted: a restart uses the configuration.
   *
   * @throws IllegalArgumentException below one hour
   */
  public void setRetention(Duration retention) {
    if (retention.compareTo(Duration.ofHours(1)) < 0) {
      throw new IllegalArgumentException("retention must be at least 1h, was " + retention);
    }
    retentionMillis = retention.toMillis();
  }

  // ---------------------------------------------------------------------------------------------
  // Deletion

  /** What {@link #deleteSeries} removed. */
  public record DeleteResult(int buckets, long series, long samples) {}

  /**
   * Deletes the samples of the matching series inside {@code [minT, maxT]}, for good.
   *
   * <p>Runs on the background thread (after any seal in progress) under the write lock, so no
   * append or read sees it half done: open buckets that overlap the range are sealed first (their
   * head log is gone, so a restart cannot bring the samples back). Then, per overlapping bucket:
   * a series with no sample left loses its TimeSeries, ForwardIndex and SeriesDictionary records
   * and its ids in the postings; a series with samples left outside the range gets its chunk
   * rewritten; a bucket with no series left is range-deleted whole and leaves the BucketList.
   * Finally the affected ranges are compacted, so the space is reclaimed.
   *
   * @throws IllegalArgumentException if {@code minT > maxT}
   */
  public DeleteResult deleteSeries(long minT, long maxT, List<LabelMatcher> matchers) {
    requireRange(minT, maxT);
    DeleteResult[] result = new DeleteResult[1];
    runOnBackground(() -> result[0] = deleteNow(minT, maxT, matchers));
    return result[0];
  }

  private DeleteResult deleteNow(long minT, long maxT, List<LabelMatcher> matchers) {
    List<TimeBucket> affected = new ArrayList<>();
    int bucketCount = 0;
    long series = 0;
    long samples = 0;
    lock.writeLock().lock();
    try {
      ensureOpen();
      affected.addAll(overlapping(buckets, minT, maxT));
      for (TimeBucket b : affected) {
        if (open.containsKey(b)) {
          seal(startSealLocked(b)); // the write lock is reentrant: seal() finishes under it
        }
      }
      for (TimeBucket b : affected) {
        long[] removed = deleteInBucketLocked(b, minT, maxT, matchers);
        if (removed[0] > 0) {
          bucketCount++;
          series += removed[0];
          samples += removed[1];
        }
      }
    } finally {
      lock.writeLock().unlock();
    }
    for (TimeBucket b : affected) {
      for (RecordType type : BUCKET_RECORD_TYPES) {
        byte[] prefix = Keys.bucketPrefix(type, b);
        kv.compactRange(prefix, KeyRanges.prefixEnd(prefix));
      }
    }
    LOG.log(Level.INFO, "deleted {0} samples of {1} series in {2} buckets", samples, series, bucketCount);
    return new DeleteResult(bucketCount, series, samples);
  }

  /** Returns {series touched, samples removed}. Under the write lock; the bucket is sealed. */
  private long[] deleteInBucketLocked(TimeBucket b, long minT, long maxT, List<LabelMatcher> matchers) {
    KvPostings postings = new KvPostings(kv, b);
    RoaringBitmap ids = PostingsSelector.select(postings, matchers);
    if (ids.isEmpty()) {
      return new long[] {0, 0};
    }
    WriteBatch wb = new WriteBatch();
    RoaringBitmap gone = new RoaringBitmap();
    List<Labels> goneLabels = new ArrayList<>();
    long touched = 0;
    long removedSamples = 0;
    TimeSeriesValue.Decoders decoders = new TimeSeriesValue.Decoders();
    DecimalEncoder scratch = new DecimalEncoder();
    for (IntIterator it = ids.getIntIterator(); it.hasNext(); ) {
      int id = it.next();
      byte[] chunk = kv.get(Keys.timeSeries(b, id));
      if (chunk == null) {
        continue;
      }
      ChunkDecoder d = decoders.open(chunk);
      GorillaEncoder kept = new GorillaEncoder();
      int removed = 0;
      while (d.next()) {
        if (d.timestampMillis() >= minT && d.timestampMillis() <= maxT) {
          removed++;
        } else {
          kept.append(d.timestampMillis(), d.valueBits());
        }
      }
      if (removed == 0) {
        continue;
      }
      touched++;
      removedSamples += removed;
      if (kept.count() > 0) {
        wb.put(Keys.timeSeries(b, id), TimeSeriesValue.encodeSmallest(kept, scratch));
        continue;
      }
      byte[] fwd = kv.get(Keys.forwardIndex(b, id));
      if (fwd == null) {
        throw new CorruptRecordException("series " + b + "/" + id + " has a chunk but no ForwardIndex record");
      }
      Labels labels = ForwardIndexValue.decode(fwd).labels();
      gone.add(id);
      goneLabels.add(labels);
      wb.delete(Keys.timeSeries(b, id));
      wb.delete(Keys.forwardIndex(b, id));
      byte[] dictKey = Keys.seriesDictionary(b, labels.fingerprintHigh(), labels.fingerprintLow());
      byte[] dict = kv.get(dictKey);
      if (dict != null) {
        int[] rest = Arrays.stream(SeriesDictionaryValue.decode(dict)).filter(x -> x != id).toArray();
        if (rest.length == 0) {
          wb.delete(dictKey);
        } else {
          wb.put(dictKey, SeriesDictionaryValue.encode(rest));
        }
      }
    }
    boolean dropBucket = false;
    if (!gone.isEmpty()) {
      RoaringBitmap all = RoaringBitmap.andNot(postings.all(), gone);
      if (all.isEmpty()) {
        // Nothing left in the bucket: drop it whole.
        wb.clear();
        for (RecordType type : BUCKET_RECORD_TYPES) {
          byte[] prefix = Keys.bucketPrefix(type, b);
          wb.deleteRange(prefix, KeyRanges.prefixEnd(prefix));
        }
        TreeSet<TimeBucket> kept = new TreeSet<>(buckets);
        kept.remove(b);
        wb.put(Keys.bucketList(), BucketListValue.encode(kept));
        dropBucket = true;
      } else {
        wb.put(Keys.invertedIndexAllSeries(b), InvertedIndexValue.encode(all));
        java.util.Set<String> done = new java.util.HashSet<>();
        for (Labels l : goneLabels) {
          for (int i = 0; i < l.size(); i++) {
            if (!done.add(l.name(i) + '\u0000' + l.value(i))) {
              continue;
            }
            byte[] key = Keys.invertedIndex(b, l.name(i), l.value(i));
            RoaringBitmap left = RoaringBitmap.andNot(postings.posting(l.name(i), l.value(i)), gone);
            if (left.isEmpty()) {
              wb.delete(key);
            } else {
              wb.put(key, InvertedIndexValue.encode(left));
            }
          }
        }
      }
    }
    kv.write(wb);
    if (dropBucket) {
      buckets.remove(b); // only once the store has dropped it too
    }
    if (config.fsync()) {
      kv.sync();
    }
    // Forget cached newest timestamps of the touched series; they are looked up again.
    refs.values().removeIf(r -> r.latest == null || r.latest.bucket.state == HeadBucket.State.SEALED);
    return new long[] {touched, removedSamples};
  }

  /** One bucket as the admin API lists it. {@code bytes} is the sum of its records' key and value sizes. */
  public record BucketInfo(TimeBucket bucket, boolean open, long seriesCount, long bytes) {}

  /** Every bucket with its series count and size; scans each bucket's records (an admin call, not a hot path). */
  public List<BucketInfo> bucketInfo() {
    List<BucketInfo> out = new ArrayList<>();
    List<TimeBucket> all;
    KvSnapshot snap;
    java.util.Map<TimeBucket, Long> headSeriesCount = new HashMap<>();
    lock.readLock().lock();
    try {
      ensureOpen();
      all = new ArrayList<>(buckets);
      snap = kv.snapshot();
      open.forEach((b, hb) -> headSeriesCount.put(b, (long) hb.seriesCount()));
      sealing.forEach((b, hb) -> headSeriesCount.put(b, (long) hb.seriesCount()));
    } finally {
      lock.readLock().unlock();
    }
    try (snap) {
      for (TimeBucket b : all) {
        long bytes = 0;
        long series = 0;
        for (RecordType type : BUCKET_RECORD_TYPES) {
          try (KvCursor c = snap.scanPrefix(Keys.bucketPrefix(type, b))) {
            while (c.next()) {
              bytes += c.key().length + c.value().length;
              if (type == RecordType.FORWARD_INDEX) {
                series++;
              }
            }
          }
        }
        Long head = headSeriesCount.get(b);
        out.add(new BucketInfo(b, head != null, head != null ? head : series, bytes));
      }
    }
    return out;
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
  public SeriesSet select(long minT, long maxT, List<LabelMatcher> matchers) {
    return SeriesSet.of(collect(minT, maxT, matchers, true));
  }

  @Override
  public List<Labels> series(long minT, long maxT, List<LabelMatcher> matchers) {
    List<Series> found = collect(minT, maxT, matchers, false);
    List<Labels> out = new ArrayList<>(found.size());
    for (Series s : found) {
      out.add(s.labels());
    }
    return out;
  }

  private static final class Found {
    final Labels labels;
    MetricMetadata metadata;
    TimeBucket newest;
    final List<ChunkSource> chunks = new ArrayList<>(2);

    Found(Labels labels) {
      this.labels = labels;
    }

    void add(TimeBucket b, MetricMetadata meta, ChunkSource chunk) {
      if (newest == null || b.compareTo(newest) > 0) {
        newest = b;
        metadata = meta;
      }
      if (chunk != null) {
        chunks.add(chunk);
      }
    }
  }

  private List<Series> collect(long minT, long maxT, List<LabelMatcher> matchers, boolean withSamples) {
    requireRange(minT, maxT);
    HashMap<Labels, Found> found = new HashMap<>();
    visitBuckets(
        minT,
        maxT,
        hb -> {
          if (withSamples && (hb.maxTimestamp < minT || hb.minTimestamp > maxT)) {
            return;
          }
          RoaringBitmap ids = PostingsSelector.select(hb, matchers);
          for (IntIterator it = ids.getIntIterator(); it.hasNext(); ) {
            HeadSeries hs = hb.byId(it.next());
            if (hs != null && !hs.isEmpty()) {
              found.computeIfAbsent(hs.labels, Found::new)
                  .add(hb.bucket, hs.metadata, withSamples ? hs.capture() : null);
            }
          }
        },
        (snap, b) -> collectStored(snap, b, matchers, withSamples, found));
    List<Found> sorted = new ArrayList<>(found.values());
    sorted.sort(Comparator.comparing(f -> f.labels));
    List<Series> out = new ArrayList<>(sorted.size());
    for (Found f : sorted) {
      if (withSamples) {
        f.chunks.sort(Comparator.comparing(ChunkSource::bucket));
        if (!insideRange(f.chunks, minT, maxT)) {
          ChunkIterator probe = new ChunkIterator(f.chunks, minT, maxT);
          if (!probe.next()) {
            continue; // no sample inside the range
          }
        }
      }
      out.add(new FoundSeries(f.labels, f.metadata, f.chunks, minT, maxT));
    }
    return out;
  }

  /**
   * Whether the chunks are not empty and every chunk's bucket lies inside {@code [minT, maxT]}:
   * then the series has a sample in the range without decoding one, since no chunk is empty (the
   * head captures only series with samples, a seal writes no TimeSeries record for an empty one).
   */
  private static boolean insideRange(List<ChunkSource> chunks, long minT, long maxT) {
    if (chunks.isEmpty()) {
      return false;
    }
    for (ChunkSource c : chunks) {
      if (c.bucket().startMillis() < minT || c.bucket().endMillis() - 1 > maxT) {
        return false;
      }
    }
    return true;
  }

  private void collectStored(
      KvReader snap, TimeBucket b, List<LabelMatcher> matchers, boolean withSamples, Map<Labels, Found> found) {
    KvPostings postings = new KvPostings(snap, b);
    RoaringBitmap ids = PostingsSelector.select(postings, matchers);
    if (ids.isEmpty()) {
      return;
    }
    boolean dense = ids.getLongCardinality() * SCAN_DENSITY_DIVISOR > postings.all().getLongCardinality();
    HashMap<Integer, Found> byId = new HashMap<>();
    if (dense) {
      try (KvCursor c = snap.scanPrefix(Keys.bucketPrefix(RecordType.FORWARD_INDEX, b))) {
        while (c.next()) {
          int id = Keys.seriesId(c.key());
          if (ids.contains(id)) {
            addStored(found, byId, b, id, c.value());
          }
        }
      }
      if (byId.size() < ids.getCardinality()) {
        for (IntIterator it = ids.getIntIterator(); it.hasNext(); ) {
          int id = it.next();
          if (!byId.containsKey(id)) {
            unreadable(b, id, "its posting names it, but it has no readable ForwardIndex record");
          }
        }
      }
    } else {
      for (IntIterator it = ids.getIntIterator(); it.hasNext(); ) {
        int id = it.next();
        byte[] v = snap.get(Keys.forwardIndex(b, id));
        if (v == null) {
          unreadable(b, id, "its posting names it, but it has no ForwardIndex record");
          continue;
        }
        addStored(found, byId, b, id, v);
      }
    }
    if (!withSamples) {
      return;
    }
    if (dense) {
      try (KvCursor c = snap.scanPrefix(Keys.bucketPrefix(RecordType.TIME_SERIES, b))) {
        while (c.next()) {
          int id = Keys.seriesId(c.key());
          Found f = byId.get(id);
          if (f != null) {
            addChunk(f, b, id, c.value());
          }
        }
      }
    } else {
      byId.forEach(
          (id, f) -> {
            byte[] v = snap.get(Keys.timeSeries(b, id));
            if (v != null) {
              addChunk(f, b, id, v);
            }
          });
    }
  }

  /** Adds a stored series found by id; a ForwardIndex value that does not decode is skipped. */
  private void addStored(Map<Labels, Found> found, Map<Integer, Found> byId, TimeBucket b, int id, byte[] value) {
    ForwardIndexValue fi;
    try {
      fi = ForwardIndexValue.decode(value);
    } catch (CorruptRecordException e) {
      unreadable(b, id, "its ForwardIndex record does not decode: " + e.getMessage());
      return;
    }
    Found f = found.computeIfAbsent(fi.labels(), Found::new);
    f.add(b, fi.metadata(), null);
    byId.put(id, f);
  }

  private void addChunk(Found f, TimeBucket b, int id, byte[] value) {
    if (value.length == 0 || !TimeSeriesValue.isKnownEncoding(value[0] & 0xFF)) {
      unreadable(b, id, "its TimeSeries record has unknown encoding id "
          + (value.length == 0 ? "(empty value)" : "0x" + Integer.toHexString(value[0] & 0xFF)));
      return;
    }
    f.chunks.add(new ChunkSource(b, value[0] & 0xFF, value, 1, null, null, 0));
  }

  /**
   * A read met a record it cannot use: the series is left out of the answer (the rest of the
   * bucket is still read), counted in {@link Stats#unreadableRecords()} and logged at most every
   * {@link #UNREADABLE_LOG_INTERVAL_NANOS}. {@code tidemark verify --repair} makes such a store
   * consistent again.
   */
  private void unreadable(TimeBucket b, int id, String why) {
    unreadableRecords.increment();
    long now = System.nanoTime();
    long last = lastUnreadableLog.get();
    if (now - last >= UNREADABLE_LOG_INTERVAL_NANOS && lastUnreadableLog.compareAndSet(last, now)) {
      LOG.log(
          Level.WARNING,
          "skipped series " + id + " of bucket " + b + " in a read: " + why
              + " (" + unreadableRecords.sum() + " unreadable records met so far; run tidemark verify)");
    }
  }

  /** The head's copy of a bucket, open or being sealed, or null. Under the lock. */
  private HeadBucket headBucketLocked(TimeBucket b) {
    HeadBucket hb = open.get(b);
    return hb != null ? hb : sealing.get(b);
  }

  private static void requireRange(long minT, long maxT) {
    if (minT > maxT) {
      throw new IllegalArgumentException("minT " + minT + " is after maxT " + maxT);
    }
  }

  private static Collection<TimeBucket> overlapping(TreeSet<TimeBucket> all, long minT, long maxT) {
    List<TimeBucket> out = new ArrayList<>();
    for (TimeBucket b : all) {
      if (b.startMillis() <= maxT && b.endMillis() > minT) {
        out.add(b);
      }
    }
    return out;
  }

  private static final class FoundSeries implements Series {
    private final Labels labels;
    private final MetricMetadata metadata;
    private final List<ChunkSource> chunks;
    private final long minT;
    private final long maxT;

    FoundSeries(Labels labels, MetricMetadata metadata, List<ChunkSource> chunks, long minT, long maxT) {
      this.labels = labels;
      this.metadata = metadata;
      this.chunks = chunks;
      this.minT = minT;
      this.maxT = maxT;
    }

    @Override
    public Labels labels() {
      return labels;
    }

    @Override
    public MetricMetadata metadata() {
      return metadata;
    }

    @Override
    public SampleIterator iterator() {
      return new ChunkIterator(chunks, minT, maxT);
    }
  }

  @Override
  public List<String> labelNames(long minT, long maxT, List<LabelMatcher> matchers) {
    TreeSet<String> out = new TreeSet<>(Labels.UTF8_ORDER);
    forEachPostingsSource(
        minT,
        maxT,
        src -> {
          RoaringBitmap selected = matchers.isEmpty() ? null : PostingsSelector.select(src, matchers);
          for (String name : src.labelNames()) {
            if (selected == null) {
              out.add(name);
              continue;
            }
            boolean[] hit = {false};
            src.forEachValue(name, "", (v, bm) -> hit[0] |= RoaringBitmap.intersects(bm, selected));
            if (hit[0]) {
              out.add(name);
            }
          }
        });
    return new ArrayList<>(out);
  }

  @Override
  public List<String> labelValues(String name, long minT, long maxT, List<LabelMatcher> matchers) {
    TreeSet<String> out = new TreeSet<>(Labels.UTF8_ORDER);
    forEachPostingsSource(
        minT,
        maxT,
        src -> {
          RoaringBitmap selected = matchers.isEmpty() ? null : PostingsSelector.select(src, matchers);
          src.forEachValue(
              name,
              "",
              (v, bm) -> {
                if (selected == null ? !bm.isEmpty() : RoaringBitmap.intersects(bm, selected)) {
                  out.add(v);
                }
              });
        });
    return new ArrayList<>(out);
  }

  private void forEachPostingsSource(long minT, long maxT, java.util.function.Consumer<PostingsSource> action) {
    requireRange(minT, maxT);
    visitBuckets(minT, maxT, action::accept, (snap, b) -> action.accept(new KvPostings(snap, b)));
  }

  /**
   * The read path's one way in: under the read lock, takes a KV snapshot and hands every head
   * bucket (open or sealing) overlapping the range to {@code head}, still under the lock (copy
   * what you need); then, without the lock, hands every other overlapping bucket to {@code
   * stored} with the snapshot. Every append is thus seen entirely or not at all.
   */
  private void visitBuckets(
      long minT,
      long maxT,
      java.util.function.Consumer<HeadBucket> head,
      java.util.function.BiConsumer<KvReader, TimeBucket> stored) {
    List<TimeBucket> fromStore = new ArrayList<>();
    KvSnapshot snap;
    lock.readLock().lock();
    try {
      ensureOpen();
      snap = kv.snapshot();
      for (TimeBucket b : overlapping(buckets, minT, maxT)) {
        HeadBucket hb = headBucketLocked(b);
        if (hb == null) {
          fromStore.add(b);
        } else {
          head.accept(hb);
        }
      }
    } finally {
      lock.readLock().unlock();
    }
    try (snap) {
      for (TimeBucket b : fromStore) {
        stored.accept(snap, b);
      }
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Status and lifecycle

  /** A point-in-time view of the engine's state for metrics and the admin API. */
  public record Stats(
      long headSeries,
      long headBytes,
      int openBuckets,
      int buckets,
      long samplesAccepted,
      long samplesRejected,
      long recoveryMillis,
      long headMaxTimestampMillis,
      long unreadableRecords) {
    /** Head bytes per active series (0 with an empty head). */
    public long headBytesPerSeries() {
      return headSeries == 0 ? 0 : headBytes / headSeries;
    }
  }

  public Stats stats() {
    lock.readLock().lock();
    try {
      long headBytes = headSampleBytes + headSeries * HeadSeries.OVERHEAD_BYTES;
      for (HeadBucket hb : open.values()) {
        for (HeadSeries hs : hb.series()) {
          headBytes += 2L * hs.labels.size() * 8; // label array references, strings are shared
        }
      }
      return new Stats(
          headSeries,
          headBytes,
          open.size(),
          buckets.size(),
          samplesAccepted.sum(),
          samplesRejected.sum(),
          recoveryMillis,
          hasHeadMaxT ? headMaxT : Long.MIN_VALUE,
          unreadableRecords.sum());
    } finally {
      lock.readLock().unlock();
    }
  }

  /** The schema version of the open store ({@code docs/format.md}, Schema record): open refuses any other. */
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

  private void ensureOpen() {
    if (closed) {
      throw new StorageUnavailableException("engine is closed");
    }
  }

  /**
   * Seals the head (so the next start has nothing to replay), stops the background thread and
   * refuses further calls. Does not close the store. Idempotent.
   */
  @Override
  public void close() {
    lock.readLock().lock();
    try {
      if (closed) {
        return;
      }
    } finally {
      lock.readLock().unlock();
    }
    try {
      flush();
    } finally {
      lock.writeLock().lock();
      try {
        closed = true;
        sealEnded.signalAll();
      } finally {
        lock.writeLock().unlock();
      }
      background.shutdown();
      try {
        background.awaitTermination(1, TimeUnit.MINUTES);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /** Stops without sealing, as a crash would (for tests of recovery). */
  void abandon() {
    lock.writeLock().lock();
    try {
      closed = true;
      sealEnded.signalAll();
    } finally {
      lock.writeLock().unlock();
    }
    background.shutdownNow();
  }
}
