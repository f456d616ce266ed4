package dev.tidemark.tsdb.engine;

import static dev.tidemark.tsdb.engine.HeadState.BUCKET_RECORD_TYPES;
import static dev.tidemark.tsdb.engine.HeadState.LOG;
import static dev.tidemark.tsdb.engine.HeadState.overlapping;
import static dev.tidemark.tsdb.engine.HeadState.requireRange;

import dev.tidemark.tsdb.codec.CorruptRecordException;
import dev.tidemark.tsdb.codec.ForwardIndexValue;
import dev.tidemark.tsdb.codec.Keys;
import dev.tidemark.tsdb.codec.RecordType;
import dev.tidemark.tsdb.codec.TimeBucket;
import dev.tidemark.tsdb.codec.TimeSeriesValue;
import dev.tidemark.tsdb.engine.Engine.BucketInfo;
import dev.tidemark.tsdb.kv.KvCursor;
import dev.tidemark.tsdb.kv.KvReader;
import dev.tidemark.tsdb.kv.KvSnapshot;
import dev.tidemark.tsdb.kv.KvStore;
import dev.tidemark.tsdb.model.Labels;
import dev.tidemark.tsdb.model.MetricMetadata;
import dev.tidemark.tsdb.query.LabelMatcher;
import dev.tidemark.tsdb.query.Querier;
import dev.tidemark.tsdb.query.SampleIterator;
import dev.tidemark.tsdb.query.Series;
import dev.tidemark.tsdb.query.SeriesSet;
import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import org.roaringbitmap.IntIterator;
import org.roaringbitmap.RoaringBitmap;

/**
 * The read path ({@link Querier}): captures the head and a KV snapshot under the read lock, selects
 * series by postings in each bucket, joins them across buckets by labels; label names and values;
 * the admin listing of buckets. A record a read cannot use is skipped and counted. See {@code
 * docs/architecture.md}, Read path.
 */
final class Reads implements Querier {

  /** Above this share of a bucket's series, a select scans records instead of point reads. */
  private static final int SCAN_DENSITY_DIVISOR = 8;
  private static final long UNREADABLE_LOG_INTERVAL_NANOS = 10_000_000_000L;

  private final java.util.concurrent.atomic.AtomicLong lastUnreadableLog =
      new java.util.concurrent.atomic.AtomicLong(System.nanoTime() - UNREADABLE_LOG_INTERVAL_NANOS);
  private final HeadState head;
  private final KvStore kv;
  private final ReentrantReadWriteLock lock;
  private final TreeMap<TimeBucket, HeadBucket> open;
  private final TreeMap<TimeBucket, HeadBucket> sealing;
  private final TreeSet<TimeBucket> buckets;
  private final LongAdder unreadableRecords;

  Reads(HeadState head) {
    this.head = head;
    this.kv = head.kv;
    this.lock = head.lock;
    this.open = head.open;
    this.sealing = head.sealing;
    this.buckets = head.buckets;
    this.unreadableRecords = head.unreadableRecords;
  }

  List<BucketInfo> bucketInfo() {
    List<BucketInfo> out = new ArrayList<>();
    List<TimeBucket> all;
    KvSnapshot snap;
    java.util.Map<TimeBucket, Long> headSeriesCount = new HashMap<>();
    lock.readLock().lock();
    try {
      head.ensureOpen();
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
   * bucket is still read), counted in {@link Engine.Stats#unreadableRecords()} and logged at most every
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
      this.head.ensureOpen();
      snap = kv.snapshot();
      for (TimeBucket b : overlapping(buckets, minT, maxT)) {
        HeadBucket hb = this.head.headBucketLocked(b);
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
}
