package dev.tidemark.tsdb.engine;

import static dev.tidemark.tsdb.engine.HeadState.BUCKET_RECORD_TYPES;
import static dev.tidemark.tsdb.engine.HeadState.LOG;
import static dev.tidemark.tsdb.engine.HeadState.overlapping;
import static dev.tidemark.tsdb.engine.HeadState.requireRange;

import dev.tidemark.tsdb.codec.BucketListValue;
import dev.tidemark.tsdb.codec.ChunkDecoder;
import dev.tidemark.tsdb.codec.CorruptRecordException;
import dev.tidemark.tsdb.codec.DecimalEncoder;
import dev.tidemark.tsdb.codec.ForwardIndexValue;
import dev.tidemark.tsdb.codec.GorillaEncoder;
import dev.tidemark.tsdb.codec.HistogramDecoder;
import dev.tidemark.tsdb.codec.HistogramEncoder;
import dev.tidemark.tsdb.codec.InvertedIndexValue;
import dev.tidemark.tsdb.codec.Keys;
import dev.tidemark.tsdb.codec.RecordType;
import dev.tidemark.tsdb.codec.SeriesDictionaryValue;
import dev.tidemark.tsdb.codec.TimeBucket;
import dev.tidemark.tsdb.codec.TimeSeriesValue;
import dev.tidemark.tsdb.engine.Engine.DeleteResult;
import dev.tidemark.tsdb.kv.KeyRanges;
import dev.tidemark.tsdb.kv.KvStore;
import dev.tidemark.tsdb.kv.WriteBatch;
import dev.tidemark.tsdb.model.Labels;
import dev.tidemark.tsdb.query.LabelMatcher;
import dev.tidemark.tsdb.query.QueryContext;
import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import org.roaringbitmap.IntIterator;
import org.roaringbitmap.RoaringBitmap;

/**
 * Deletion of the samples of matching series in a time range, for good: seals the overlapping open
 * buckets, rewrites or removes each series' records, drops emptied buckets and compacts. See {@link
 * Engine#deleteSeries}.
 */
final class Deletion {

  private final HeadState head;
  private final Sealer sealer;
  private final KvStore kv;
  private final EngineConfig config;
  private final ReentrantReadWriteLock lock;
  private final TreeMap<TimeBucket, HeadBucket> open;
  private final TreeSet<TimeBucket> buckets;

  Deletion(HeadState head, Sealer sealer) {
    this.head = head;
    this.sealer = sealer;
    this.kv = head.kv;
    this.config = head.config;
    this.lock = head.lock;
    this.open = head.open;
    this.buckets = head.buckets;
  }

  DeleteResult deleteSeries(long minT, long maxT, List<LabelMatcher> matchers) {
    requireRange(minT, maxT);
    DeleteResult[] result = new DeleteResult[1];
    sealer.runOnBackground(() -> result[0] = deleteNow(minT, maxT, matchers));
    return result[0];
  }

  private DeleteResult deleteNow(long minT, long maxT, List<LabelMatcher> matchers) {
    List<TimeBucket> affected = new ArrayList<>();
    int bucketCount = 0;
    long series = 0;
    long samples = 0;
    // First seal the open buckets of the range without the write lock: appends go on meanwhile.
    List<TimeBucket> toSeal = new ArrayList<>();
    lock.readLock().lock();
    try {
      head.ensureOpen();
      toSeal.addAll(overlapping(buckets, minT, maxT));
    } finally {
      lock.readLock().unlock();
    }
    for (TimeBucket b : toSeal) {
      HeadBucket hb;
      lock.writeLock().lock();
      try {
        if (!open.containsKey(b)) {
          continue;
        }
        hb = sealer.startSealLocked(b);
      } finally {
        lock.writeLock().unlock();
      }
      sealer.seal(hb);
    }
    lock.writeLock().lock();
    try {
      head.ensureOpen();
      affected.addAll(overlapping(buckets, minT, maxT));
      for (TimeBucket b : affected) {
        if (open.containsKey(b)) {
          // Appended to since (or new): sealed again, under the write lock (it is reentrant), so
          // no append can keep it open; this seal holds appends back, the first one did not.
          sealer.seal(sealer.startSealLocked(b));
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
    LOG.log(
        Level.INFO,
        "deleted {0} samples of {1} series in {2} buckets",
        samples,
        series,
        bucketCount);
    return new DeleteResult(bucketCount, series, samples);
  }

  /** Returns {series touched, samples removed}. Under the write lock; the bucket is sealed. */
  private long[] deleteInBucketLocked(
      TimeBucket b, long minT, long maxT, List<LabelMatcher> matchers) {
    KvPostings postings = new KvPostings(kv, b);
    RoaringBitmap ids = PostingsSelector.select(postings, matchers, QueryContext.NONE);
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
      int removed = 0;
      byte[] keptValue = null;
      if (TimeSeriesValue.isHistogramEncoding(chunk[0] & 0xFF)) {
        HistogramDecoder d = TimeSeriesValue.openHistogram(new HistogramDecoder(), chunk);
        HistogramEncoder kept = new HistogramEncoder();
        while (d.next()) {
          if (d.timestampMillis() >= minT && d.timestampMillis() <= maxT) {
            removed++;
          } else {
            kept.append(d.timestampMillis(), d.histogram());
          }
        }
        keptValue = kept.count() > 0 ? TimeSeriesValue.encode(kept) : null;
      } else {
        ChunkDecoder d = decoders.open(chunk);
        GorillaEncoder kept = new GorillaEncoder();
        while (d.next()) {
          if (d.timestampMillis() >= minT && d.timestampMillis() <= maxT) {
            removed++;
          } else {
            kept.append(d.timestampMillis(), d.valueBits());
          }
        }
        keptValue = kept.count() > 0 ? TimeSeriesValue.encodeSmallest(kept, scratch) : null;
      }
      if (removed == 0) {
        continue;
      }
      touched++;
      removedSamples += removed;
      if (keptValue != null) {
        wb.put(Keys.timeSeries(b, id), keptValue);
        continue;
      }
      byte[] fwd = kv.get(Keys.forwardIndex(b, id));
      if (fwd == null) {
        throw new CorruptRecordException(
            "series " + b + "/" + id + " has a chunk but no ForwardIndex record");
      }
      Labels labels = ForwardIndexValue.decode(fwd).labels();
      gone.add(id);
      goneLabels.add(labels);
      wb.delete(Keys.timeSeries(b, id));
      wb.delete(Keys.forwardIndex(b, id));
      byte[] dictKey = Keys.seriesDictionary(b, labels.fingerprintHigh(), labels.fingerprintLow());
      byte[] dict = kv.get(dictKey);
      if (dict != null) {
        int[] rest =
            Arrays.stream(SeriesDictionaryValue.decode(dict)).filter(x -> x != id).toArray();
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
            RoaringBitmap left =
                RoaringBitmap.andNot(postings.posting(l.name(i), l.value(i)), gone);
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
    head.labelCache.invalidate(b); // records deleted: an id may be reused after a reopen
    if (dropBucket) {
      buckets.remove(b); // only once the store has dropped it too
    }
    if (config.fsync()) {
      kv.sync();
    }
    // Forget cached newest timestamps of the touched series; they are looked up again.
    head.forgetRefs(r -> r.latest == null || r.latest.bucket.state == HeadBucket.State.SEALED);
    return new long[] {touched, removedSamples};
  }
}
