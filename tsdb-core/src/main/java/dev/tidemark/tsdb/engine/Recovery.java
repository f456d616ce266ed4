package dev.tidemark.tsdb.engine;

import static dev.tidemark.tsdb.engine.HeadState.CODE;

import dev.tidemark.tsdb.codec.BucketListValue;
import dev.tidemark.tsdb.codec.Bytes;
import dev.tidemark.tsdb.codec.ChunkDecoder;
import dev.tidemark.tsdb.codec.CorruptRecordException;
import dev.tidemark.tsdb.codec.ForwardIndexValue;
import dev.tidemark.tsdb.codec.HistogramDecoder;
import dev.tidemark.tsdb.codec.Keys;
import dev.tidemark.tsdb.codec.RecordType;
import dev.tidemark.tsdb.codec.TimeBucket;
import dev.tidemark.tsdb.codec.TimeSeriesValue;
import dev.tidemark.tsdb.kv.KvCursor;
import dev.tidemark.tsdb.kv.KvStore;
import dev.tidemark.tsdb.kv.WriteBatch;
import dev.tidemark.tsdb.model.LabelStrings;
import java.util.Arrays;
import java.util.List;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Opening and the head log: the schema check, the replay of the head log into the head on open, and
 * the reopening of a sealed bucket into the head (on recovery, and when a late sample reaches a
 * sealed bucket). See {@code docs/architecture.md}, Recovery and Sealing (Reopening).
 */
final class Recovery {

  private final HeadState head;
  private final KvStore kv;
  private final TreeMap<TimeBucket, HeadBucket> open;
  private final TreeSet<TimeBucket> buckets;

  Recovery(HeadState head) {
    this.head = head;
    this.kv = head.kv;
    this.open = head.open;
    this.buckets = head.buckets;
  }

  void checkSchema() {
    SchemaRecord wanted =
        new SchemaRecord(SchemaRecord.CURRENT_VERSION, CODE, SchemaRecord.HASH_XXH3_128);
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
   * Rebuilds the head from the head log. Series refs are not created here: a series' newest sample
   * may lie in a sealed bucket newer than the recovered one (a late sample reopened an older
   * bucket), so refs are resolved on first use by {@link Appends#newestAtOrAfter}, which sees both.
   */
  void recover() {
    byte[] list = kv.get(Keys.bucketList());
    if (list != null) {
      buckets.addAll(BucketListValue.decode(list));
    }
    for (TimeBucket b : buckets) {
      head.noteSize(b);
    }
    // A compaction interrupted before its switch left records of an unlisted coarse bucket.
    Compactor.dropOrphans(kv, buckets);
    dropHeadChunks(kv);
    int windowEntries = HeadLogReplay.windowEntries(Runtime.getRuntime().maxMemory());
    for (TimeBucket b : buckets) {
      byte[] prefix = Keys.bucketPrefix(RecordType.HEAD_LOG, b);
      KvCursor c = kv.scanPrefix(prefix);
      HeadBucket hb;
      try {
        if (!c.next()) {
          c.close();
          continue;
        }
        hb = reopenLocked(b);
      } catch (RuntimeException | Error e) {
        c.close();
        throw e;
      }
      new HeadLogReplay(head, hb, windowEntries).replay(c); // closes c
      if (hb.maxTimestamp != Long.MIN_VALUE
          && (!head.hasHeadMaxT || hb.maxTimestamp > head.headMaxT)) {
        head.headMaxT = hb.maxTimestamp;
        head.hasHeadMaxT = true;
      }
    }
  }

  /**
   * Deletes every HeadChunk record (the frozen parts of the head that stopped): the head is rebuilt
   * from the head log, the only source of truth for it, and freezes again. One seek when there are
   * none, so a store without any (every store before issue #22's item 5) is opened without a write.
   */
  static void dropHeadChunks(KvStore kv) {
    byte[][] range = Keys.headChunkRange();
    boolean any;
    try (KvCursor c = kv.scan(range[0], range[1])) {
      any = c.next();
    }
    if (any) {
      kv.write(new WriteBatch().deleteRange(range[0], range[1]));
    }
  }

  /**
   * Loads a sealed bucket back into the head: dictionary, postings, chunks. Under the write lock.
   */
  HeadBucket reopenLocked(TimeBucket b) {
    HeadBucket hb = new HeadBucket(b, kv);
    long series = 0;
    long bytes = 0;
    // Decoding a record (strings, the label set, its fingerprint) is most of the work: done on a
    // second thread, while this one only inserts. Label sets share their strings (names, metric
    // names, job and instance values repeat across series) through the table the receivers use
    // for new series (LabelStrings), so a duplicate is garbage at once instead of a string kept per
    // series, and the receivers' label sets for the same series share them too.
    try (PrefetchingScan<LoadedSeries> scan =
        new PrefetchingScan<>(
            kv,
            Keys.bucketPrefix(RecordType.FORWARD_INDEX, b),
            (k, v) ->
                new LoadedSeries(
                    Keys.seriesId(k), ForwardIndexValue.decode(v, LabelStrings::share)),
            "tidemark-reopen-" + b)) {
      for (List<LoadedSeries> batch = scan.next(); batch != null; batch = scan.next()) {
        for (LoadedSeries s : batch) {
          hb.add(s.fi.labels(), s.fi.metadata(), s.id);
        }
        series += batch.size();
      }
    }
    TimeSeriesValue.Decoders decoders = new TimeSeriesValue.Decoders();
    HistogramDecoder histogramDecoder = new HistogramDecoder();
    try (KvCursor c = kv.scanPrefix(Keys.bucketPrefix(RecordType.TIME_SERIES, b))) {
      while (c.next()) {
        int id = Keys.seriesId(c.key());
        HeadSeries hs = hb.byId(id);
        if (hs == null) {
          throw new CorruptRecordException(
              "TimeSeries record " + b + "/" + id + " has no ForwardIndex record");
        }
        byte[] v = c.value();
        if (v.length > 0 && TimeSeriesValue.isHistogramEncoding(v[0] & 0xFF)) {
          HistogramDecoder h = TimeSeriesValue.openHistogram(histogramDecoder, v);
          while (h.next()) {
            hs.insertHistogramRecovered(h.timestampMillis(), h.histogram());
            hb.noteTimestamp(h.timestampMillis());
          }
          continue;
        }
        ChunkDecoder d = decoders.open(v);
        while (d.next()) {
          hs.insertRecovered(
              d.timestampMillis(),
              d.valueBits(),
              head.config.headFreezeSamples(),
              head.freezeScratch);
          hb.noteTimestamp(d.timestampMillis());
        }
      }
    }
    for (HeadSeries hs : hb.series()) {
      bytes += hs.sampleBytes(); // what a seal or retention subtracts when the bucket leaves
    }
    // Counted only once the bucket is whole: a reopen that throws changes nothing.
    head.headSeries += series;
    head.headSampleBytes += bytes;
    head.bucketEnteredLocked(hb);
    open.put(b, hb);
    head.labelCache.invalidate(b); // reads go to the head now; the next seal rewrites the records
    return hb;
  }

  private record LoadedSeries(int id, ForwardIndexValue fi) {}

  /** The HeadLog key of sequence {@code seq} in bucket {@code b} (docs/format.md). */
  static byte[] headLogKey(TimeBucket b, long seq) {
    byte[] prefix = Keys.bucketPrefix(RecordType.HEAD_LOG, b);
    byte[] k = Arrays.copyOf(prefix, prefix.length + 8);
    for (int i = 0; i < 8; i++) {
      k[prefix.length + i] = (byte) (seq >>> (56 - 8 * i));
    }
    return k;
  }

  static long headLogSeq(byte[] key) {
    if (key.length != Keys.BUCKET_PREFIX_LENGTH + 8) {
      throw new CorruptRecordException(
          "HeadLog key must be " + (Keys.BUCKET_PREFIX_LENGTH + 8) + " bytes, was " + key.length);
    }
    return Bytes.getLongBe(key, Keys.BUCKET_PREFIX_LENGTH);
  }
}
