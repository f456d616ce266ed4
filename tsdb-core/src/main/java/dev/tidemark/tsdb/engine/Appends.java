package dev.tidemark.tsdb.engine;

import static dev.tidemark.tsdb.engine.HeadState.LOG;

import dev.tidemark.tsdb.append.AppendResult;
import dev.tidemark.tsdb.append.RejectReason;
import dev.tidemark.tsdb.append.SampleBatch;
import dev.tidemark.tsdb.append.StorageUnavailableException;
import dev.tidemark.tsdb.codec.BucketListValue;
import dev.tidemark.tsdb.codec.ChunkDecoder;
import dev.tidemark.tsdb.codec.ForwardIndexValue;
import dev.tidemark.tsdb.codec.HistogramDecoder;
import dev.tidemark.tsdb.codec.Keys;
import dev.tidemark.tsdb.codec.SeriesDictionaryValue;
import dev.tidemark.tsdb.codec.SeriesLimits;
import dev.tidemark.tsdb.codec.TimeBucket;
import dev.tidemark.tsdb.codec.TimeSeriesValue;
import dev.tidemark.tsdb.engine.HeadState.SeriesRef;
import dev.tidemark.tsdb.kv.KvReader;
import dev.tidemark.tsdb.kv.KvStore;
import dev.tidemark.tsdb.kv.KvStoreException;
import dev.tidemark.tsdb.kv.WriteBatch;
import dev.tidemark.tsdb.model.Labels;
import dev.tidemark.tsdb.model.MetricMetadata;
import dev.tidemark.tsdb.model.NativeHistogram;
import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * The write path: validation, the per-point check and apply, the one KV write of an append's head
 * log and new series, and the all-or-nothing rollback when anything before that write returns
 * throws. See {@code docs/architecture.md}, Write path and durability, All or nothing.
 */
final class Appends {

  /** The undo journal of the append in progress. */
  private final AppendUndo undo = new AppendUndo();

  /** Set when a rollback itself failed: the head may differ from the store, so appends stop. */
  private Throwable failedRollback;

  /** Set by an append that left a series due for freezing ({@link Freezer}); under the lock. */
  private boolean freezeDue;

  /** {@link #headFullLocked()} for the append in progress; under the write lock. */
  private String headFull;

  /**
   * Series new to the head among the samples of the point being checked, which the limit counts as
   * if created (they are, if the point is accepted). Under the write lock.
   */
  private int newSeriesInPoint;

  /** {@link EngineConfig#maxActiveSeries()}; 0: no limit. */
  private final long maxActiveSeries;

  /** The point detail of {@link RejectReason#SERIES_LIMIT}: the limit and what it means. */
  private final String seriesLimitDetail;

  private final GroupSync groupSync;
  private final HeadState head;
  private final Sealer sealer;
  private final Freezer freezer;
  private final int freezeSamples;
  private final Recovery recovery;
  private final KvStore kv;
  private final EngineConfig config;
  private final long oooMillis;
  private final ReentrantReadWriteLock lock;
  private final TreeMap<TimeBucket, HeadBucket> open;
  private final TreeSet<TimeBucket> buckets;
  private final LongAdder samplesAccepted;
  private final LongAdder samplesRejected;

  Appends(HeadState head, Sealer sealer, Freezer freezer, Recovery recovery) {
    this.head = head;
    this.sealer = sealer;
    this.freezer = freezer;
    this.freezeSamples = head.config.headFreezeSamples();
    this.recovery = recovery;
    this.kv = head.kv;
    this.config = head.config;
    this.oooMillis = head.oooMillis;
    this.lock = head.lock;
    this.open = head.open;
    this.buckets = head.buckets;
    this.samplesAccepted = head.samplesAccepted;
    this.samplesRejected = head.samplesRejected;
    this.groupSync = new GroupSync(kv);
    this.maxActiveSeries = config.maxActiveSeries();
    this.seriesLimitDetail = seriesLimitDetail(maxActiveSeries);
  }

  /**
   * The detail of a {@link RejectReason#SERIES_LIMIT} refusal, naming the limit. No parentheses or
   * semicolons: receivers put the detail inside their own.
   */
  static String seriesLimitDetail(long maxActiveSeries) {
    return "the head holds "
        + maxActiveSeries
        + " active series, the --max-active-series limit: new series are refused until some"
        + " stop, series already in the head are still accepted";
  }

  AppendResult append(SampleBatch batch, FaultInjection faults) {
    int n = batch.size();
    RejectReason[] sampleReasons = new RejectReason[n];
    RejectReason[] pointReasons = new RejectReason[batch.pointCount()];
    long now = config.clock().millis();
    long oldest = now - head.retentionMillis;
    long newest = now + config.maxFutureSkew().toMillis();
    for (int i = 0; i < n; i++) {
      sampleReasons[i] = validate(batch, i, oldest, newest);
    }
    boolean[] skip = new boolean[n];
    SeriesRef[] refOf = new SeriesRef[n];
    HeadSeries[] seriesOf = new HeadSeries[n];
    String[] pointDetails = null;
    long writeSeq;
    boolean freeze;
    boolean sealDue;
    int accepted = 0;
    lock.writeLock().lock();
    try {
      head.ensureOpen();
      String refused = refusalLocked();
      if (refused != null) {
        throw new StorageUnavailableException(refused, failedRollback);
      }
      headFull = headFullLocked();
      WriteBatch wb = new WriteBatch();
      List<HeadBucket> touched = new ArrayList<>(2);
      undo.begin();
      long headMaxBefore = head.headMaxT;
      boolean hadHeadMax = head.hasHeadMaxT;
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
          newSeriesInPoint = 0;
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
              pointDetails[point] =
                  SeriesLimits.violation(batch.labels(failing), batch.metadata(failing));
            } else if (reason == RejectReason.SERIES_LIMIT) {
              if (pointDetails == null) {
                pointDetails = new String[batch.pointCount()];
              }
              pointDetails[point] = headFull != null ? headFull : seriesLimitDetail;
            }
          } else {
            for (int k = i; k < end; k++) {
              if (!skip[k]) {
                apply(batch, k, refOf[k], seriesOf[k], wb, touched, faults);
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
      freeze = freezeDue;
      freezeDue = false;
      sealDue = sealer.sealDueLocked(); // scheduled after the lock (Sealer.scheduleSeal)
    } finally {
      lock.writeLock().unlock();
    }
    if (config.fsync() && writeSeq > 0) {
      groupSync.awaitDurable(writeSeq);
    }
    samplesAccepted.add(accepted);
    samplesRejected.add(n - accepted);
    if (sealDue) {
      sealer.scheduleSeal();
    }
    if (freeze) {
      freezer.requestPass();
    }
    return new AppendResult(pointReasons, sampleReasons, pointDetails);
  }

  /**
   * Why every append is refused now ({@code UNAVAILABLE}), or null while appends are taken: a
   * failed rollback. The one place this is decided: {@link #append} throws with this text, {@link
   * Engine#writeRefusal()} reports it. Under the lock (either).
   */
  String refusalLocked() {
    if (failedRollback != null) {
      return "the engine refuses writes since an append could not be rolled back; restart the"
          + " server";
    }
    return null;
  }

  /**
   * Why new series are refused now, or null: the head over its byte budget ({@link
   * EngineConfig#maxHeadBytes()}). Samples of series already in the head are still taken (issue
   * #22: a sender's known series are never refused for memory); a new series gets {@link
   * RejectReason#SERIES_LIMIT} with this text as its point detail, until a seal frees the memory.
   * No parentheses or semicolons: receivers put the detail inside their own. Under the lock
   * (either).
   */
  String headFullLocked() {
    if (head.headSampleBytes + HeadSeries.fixedBytes(head.headSeries, head.activeSeries)
        > config.maxHeadBytes()) {
      return "head memory is over its budget of "
          + config.maxHeadBytes()
          + " bytes: new series are refused until a seal frees memory, series already in the"
          + " head are still accepted";
    }
    return null;
  }

  /**
   * Undoes what a failed append changed in the head, so the head again holds exactly what the store
   * (records and head log) holds: the undo journal newest first, the pending head-log bytes, the
   * newest head timestamp, and the cached refs of the batch's series (they are resolved again on
   * next use). Under the write lock. Should the undo itself fail, the engine refuses further
   * appends (reads go on); a restart rebuilds the head from the store.
   */
  private void rollbackLocked(
      SampleBatch batch,
      List<HeadBucket> touched,
      long headMaxBefore,
      boolean hadHeadMax,
      Throwable cause) {
    try {
      touched.clear();
      long undone = undo.undo(new Rollback()); // which itself subtracts the removed series
      head.headSampleBytes += undone;
      head.headMaxT = headMaxBefore;
      head.hasHeadMaxT = hadHeadMax;
      for (int i = 0; i < batch.size(); i++) {
        head.forgetRefLocked(batch.labels(i));
      }
    } catch (RuntimeException | Error e) {
      failedRollback = e;
      e.addSuppressed(cause);
      LOG.log(
          Level.ERROR,
          "an append failed and could not be rolled back; appends are refused until a restart",
          e);
    }
  }

  /** Undoes the journal's series and buckets ({@link AppendUndo}). Under the write lock. */
  private final class Rollback implements AppendUndo.Visitor {
    @Override
    public void seriesCreated(HeadSeries hs) {
      head.seriesRemovedLocked(hs);
      hs.bucket.removeLast(hs);
      head.headSeries--;
      head.headSampleBytes -= hs.sampleBytes();
    }

    @Override
    public void bucket(
        HeadBucket hb, boolean created, boolean listed, long minTimestamp, long maxTimestamp) {
      hb.minTimestamp = minTimestamp;
      hb.maxTimestamp = maxTimestamp;
      if (created) {
        open.remove(hb.bucket);
        head.labelCache.invalidate(hb.bucket);
        hb.state = HeadBucket.State.SEALED; // unreachable now; a stale reference must not append
        if (listed) {
          buckets.remove(hb.bucket);
        }
      }
    }
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
   * Checks one sample against the stored state; creates nothing. Remembers the series' ref and head
   * series in {@code refOf}/{@code seriesOf} so {@link #apply} needs no second lookup. Under the
   * write lock.
   *
   * <p>Fast path (a known series appending to its newest, open bucket): the label set's hint, else
   * one hash lookup; no allocation.
   *
   * <p>Series limit ({@link EngineConfig#maxActiveSeries()}): a series in none of the open buckets
   * (its ref's newest head series is not open, and no open bucket's dictionary has it) is refused
   * with {@link RejectReason#SERIES_LIMIT} while the head holds the limit of distinct series
   * ({@link HeadState#activeSeries}, plus the new series of this point checked so far), and while
   * the head is over its byte budget ({@link #headFullLocked()}). A series in any open bucket is
   * never refused for either, and the decision needs no key-value read.
   */
  private RejectReason check(
      SampleBatch batch, int k, boolean[] skip, SeriesRef[] refOf, HeadSeries[] seriesOf) {
    Labels labels = batch.labels(k);
    long t = batch.timestampMillis(k);
    SeriesRef ref = head.refLocked(labels);
    HeadSeries hs;
    HeadSeries latest = ref == null ? null : ref.latest;
    if (latest != null
        && latest.bucket.state == HeadBucket.State.OPEN
        && latest.bucket.contains(t)) {
      if (t < ref.maxT - oooMillis) {
        return RejectReason.OUT_OF_ORDER;
      }
      hs = latest;
    } else {
      if ((maxActiveSeries > 0 || headFull != null)
          && (latest == null || latest.bucket.state != HeadBucket.State.OPEN)
          && !head.inOpenBucket(labels)) {
        // New to the head: decided from memory, before any key-value read for the series.
        if (headFull != null
            || (maxActiveSeries > 0 && head.activeSeries + newSeriesInPoint >= maxActiveSeries)) {
          return RejectReason.SERIES_LIMIT;
        }
        newSeriesInPoint++;
      }
      TimeBucket b = head.bucketFor(t);
      if (ref == null) {
        long max = newestAtOrAfter(labels, b);
        if (max != Long.MIN_VALUE) {
          ref = head.putRefLocked(labels, max, null);
        }
      }
      if (ref != null && t < ref.maxT - oooMillis) {
        return RejectReason.OUT_OF_ORDER;
      }
      HeadBucket hb = open.get(b);
      if (hb == null) {
        if (!buckets.contains(b)) {
          refOf[k] = ref;
          // a new bucket: nothing to collide with, but the series must be storable
          return SeriesLimits.storable(labels, batch.metadata(k))
              ? null
              : RejectReason.LIMIT_EXCEEDED;
        }
        hb = recovery.reopenLocked(b);
      }
      hs = hb.get(labels);
      if (hs == null && !SeriesLimits.storable(labels, batch.metadata(k))) {
        return RejectReason.LIMIT_EXCEEDED;
      }
    }
    refOf[k] = ref;
    seriesOf[k] = hs;
    if (hs != null) {
      int c = check(hs, batch, k, t);
      if (c == HeadSeries.CONFLICT) {
        return RejectReason.DUPLICATE;
      }
      if (c == HeadSeries.KIND_CONFLICT) {
        return RejectReason.KIND_CONFLICT;
      }
      skip[k] = c == HeadSeries.SAME;
    }
    return null;
  }

  /**
   * {@link HeadSeries#check} of sample {@code k}, a float or a histogram: a float-only batch pays
   * the batch's flag, read per sample, and nothing else.
   */
  private static int check(HeadSeries hs, SampleBatch batch, int k, long t) {
    NativeHistogram h = batch.hasHistograms() ? batch.histogram(k) : null;
    return h == null ? hs.check(t, batch.valueBits(k)) : hs.checkHistogram(t, h);
  }

  /** Stores one checked sample. Under the write lock. */
  private void apply(
      SampleBatch batch,
      int k,
      SeriesRef ref,
      HeadSeries hs,
      WriteBatch wb,
      List<HeadBucket> touched,
      FaultInjection faults) {
    if (faults != null) {
      faults.beforeApply(k);
    }
    long t = batch.timestampMillis(k);
    long bits = batch.valueBits(k);
    if (hs == null) {
      // New to its bucket when checked; an earlier point of this batch may have created it since.
      Labels labels = batch.labels(k);
      TimeBucket b = head.bucketFor(t);
      HeadBucket hb = open.get(b);
      if (hb == null) {
        hb = new HeadBucket(b, head.kv);
        boolean listed = buckets.add(b);
        open.put(b, hb);
        head.labelCache.invalidate(b); // new, or reopened: reads go to the head now
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
        head.headSeries++;
        head.headSampleBytes += hs.sampleBytes(); // an empty series' encoder header: 1 byte
        head.seriesAddedLocked(hs);
        if (hs.otherCopy != null && hs.otherCopy.due(freezeSamples)) {
          freezeDue = true; // moved on from an older open bucket: freeze the copy there
        }
        wb.put(
            Keys.seriesDictionary(b, labels.fingerprintHigh(), labels.fingerprintLow()),
            SeriesDictionaryValue.encode(ids));
        wb.put(Keys.forwardIndex(b, id), forward);
      } else if (check(hs, batch, k, t) != HeadSeries.NEW) {
        return;
      }
      if (ref == null) {
        ref = head.refLocked(labels); // created by an earlier sample of this batch, or absent
      }
    } else if (check(hs, batch, k, t) != HeadSeries.NEW) {
      return; // the same sample twice in one batch
    }
    HeadBucket hb = hs.bucket;
    undo.bucket(hb, false, false);
    if (hb.pendingLog.isEmpty() && hb.pendingHistogramLog.isEmpty()) {
      touched.add(hb);
    }
    NativeHistogram h = batch.hasHistograms() ? batch.histogram(k) : null;
    if (h == null) {
      head.headSampleBytes += hs.insert(t, bits);
      if (hs.due(freezeSamples)) {
        freezeDue = true;
      }
      hb.pendingLog.add(hs.id, t, bits);
    } else {
      head.headSampleBytes += hs.insertHistogram(t, h);
      hb.pendingHistogramLog.add(hs.id, t, h);
    }
    hb.noteTimestamp(t);
    noteAccepted(ref, hs, t);
  }

  private void noteAccepted(SeriesRef ref, HeadSeries hs, long t) {
    if (ref == null) {
      head.putRefLocked(hs.labels, t, hs);
    } else {
      if (t > ref.maxT) {
        ref.maxT = t;
      }
      // Stored only when it changes: a reference store into the long-lived ref dirties a card
      // for the collector's refinement threads, which cost more than the rest of the append.
      if (ref.latest != hs
          && (ref.latest == null || hs.bucket.bucket.compareTo(ref.latest.bucket.bucket) >= 0)) {
        ref.latest = hs;
      }
    }
    if (!head.hasHeadMaxT || t > head.headMaxT) {
      head.headMaxT = t;
      head.hasHeadMaxT = true;
    }
  }

  /**
   * The newest stored timestamp of a series in bucket {@code b} or later, or Long.MIN_VALUE.
   * Buckets before {@code b} only hold older timestamps, so this decides the out-of-order rule for
   * a sample in {@code b}. Head buckets answer from memory; sealed ones with point reads (this runs
   * once per series not in the head).
   */
  private long newestAtOrAfter(Labels labels, TimeBucket b) {
    long max = Long.MIN_VALUE;
    for (TimeBucket sb : buckets.tailSet(b, true)) {
      HeadBucket hb = head.headBucketLocked(sb);
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
    byte[] dict =
        reader.get(Keys.seriesDictionary(b, labels.fingerprintHigh(), labels.fingerprintLow()));
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
      long last = Long.MIN_VALUE;
      if (chunk.length > 0 && TimeSeriesValue.isHistogramEncoding(chunk[0] & 0xFF)) {
        HistogramDecoder h = TimeSeriesValue.openHistogram(new HistogramDecoder(), chunk);
        while (h.next()) {
          last = h.timestampMillis();
        }
        return last;
      }
      ChunkDecoder d = new TimeSeriesValue.Decoders().open(chunk);
      while (d.next()) {
        last = d.timestampMillis();
      }
      return last;
    }
    return Long.MIN_VALUE;
  }

  /**
   * Writes the pending head-log records and created series; false if there was nothing to write.
   * The pending logs are cleared only once the write succeeded: until then they are the undo record
   * of the append's samples ({@link AppendUndo}).
   */
  private boolean writeLocked(WriteBatch wb, List<HeadBucket> touched) {
    for (HeadBucket hb : touched) {
      if (!hb.pendingLog.isEmpty()) {
        wb.put(Recovery.headLogKey(hb.bucket, ++head.logSeq), hb.pendingLog.toByteArray());
        hb.lastLogSeq = head.logSeq; // a seal in progress now keeps the bucket open
      }
      if (!hb.pendingHistogramLog.isEmpty()) { // its own record, format 0x03 (docs/format.md)
        wb.put(Recovery.headLogKey(hb.bucket, ++head.logSeq), hb.pendingHistogramLog.toByteArray());
        hb.lastLogSeq = head.logSeq;
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
      hb.pendingHistogramLog.clear();
    }
    touched.clear();
    return true;
  }
}
