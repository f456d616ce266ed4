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
import dev.tidemark.tsdb.query.CallerRunsParallel;
import dev.tidemark.tsdb.query.HistogramIterator;
import dev.tidemark.tsdb.query.LabelMatcher;
import dev.tidemark.tsdb.query.Querier;
import dev.tidemark.tsdb.query.QueryContext;
import dev.tidemark.tsdb.query.SampleIterator;
import dev.tidemark.tsdb.query.Series;
import dev.tidemark.tsdb.query.SeriesSet;
import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicInteger;
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

  /** How many series a loop handles between two checks of the query's context. */
  private static final int CHECK_SERIES_EVERY = 4096;

  /**
   * The least time the buckets after the first must be expected to take before a select reads them
   * on several threads (see {@link #selectStored(KvReader, List, List, boolean)}).
   */
  static final long PARALLEL_MIN_NANOS = 2_000_000;

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
  private final LabelCache labelCache;

  Reads(HeadState head) {
    this.head = head;
    this.kv = head.kv;
    this.lock = head.lock;
    this.open = head.open;
    this.sealing = head.sealing;
    this.buckets = head.buckets;
    this.unreadableRecords = head.unreadableRecords;
    this.labelCache = head.labelCache;
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
  public SeriesSet select(long minT, long maxT, List<LabelMatcher> matchers, QueryContext ctx) {
    return collect(minT, maxT, matchers, true, 0, ctx);
  }

  @Override
  public List<Labels> series(
      long minT, long maxT, List<LabelMatcher> matchers, int limit, QueryContext ctx) {
    SeriesSet found = collect(minT, maxT, matchers, false, limit, ctx);
    List<Labels> out = new ArrayList<>();
    while (found.next()) {
      out.add(found.at().labels());
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

  private SeriesSet collect(
      long minT,
      long maxT,
      List<LabelMatcher> matchers,
      boolean withSamples,
      int limit,
      QueryContext ctx) {
    requireRange(minT, maxT);
    HashMap<Labels, Found> found = new HashMap<>();
    // Under the read lock only what the head holds now: the series and, for samples, a
    // constant-time capture of each; the joins by labels and the copies of the streams run after
    // it (docs/architecture.md, Read path).
    HeadHits headHits = new HeadHits(withSamples);
    // The head buckets that gave hits: with one and no stored bucket, nothing needs joining.
    HeadBucket[] hitBucket = new HeadBucket[1];
    boolean[] hitsInSeveral = new boolean[1];
    StoredHits[][] stored = new StoredHits[1][];
    visitBuckets(
        minT,
        maxT,
        matchers,
        ctx,
        (hb, decided) -> {
          if (withSamples && (hb.maxTimestamp < minT || hb.minTimestamp > maxT)) {
            return;
          }
          RoaringBitmap ids = PostingsSelector.select(hb, matchers, decided, ctx);
          int n = 0;
          int inBucket = 0; // distinct series: a bucket holds a series once
          for (IntIterator it = ids.getIntIterator(); it.hasNext(); ) {
            if ((++n & (CHECK_SERIES_EVERY - 1)) == 0) {
              ctx.check();
            }
            HeadSeries hs = hb.byId(it.next());
            if (hs != null && !hs.isEmpty()) {
              if (hitBucket[0] != hb) {
                hitsInSeveral[0] |= hitBucket[0] != null;
                hitBucket[0] = hb;
              }
              headHits.add(hs);
              if (limit > 0 && ++inBucket >= limit) {
                return;
              }
            }
          }
        },
        () -> headHits.storedParts,
        (snap, keys) -> {
          // Frozen parts in the store, read through the snapshot taken with the captures.
          headHits.loadParts(snap);
          // A bucket holds a series once: the hits of one head bucket, with no stored bucket to
          // join, are distinct series (no map of a million label sets for a query over the head).
          boolean join = !keys.isEmpty() || hitsInSeveral[0];
          if (!join) {
            stored[0] = new StoredHits[0];
            return; // one head bucket's hits: handed out lazily, below
          }
          for (int i = 0; i < headHits.size; i++) {
            HeadSeries hs = headHits.series(i);
            HeadSeries.Capture capture = headHits.capture(i);
            Found f = found.computeIfAbsent(hs.labels, Found::new);
            if (capture == null) {
              f.add(hs.bucket.bucket, hs.metadata, null);
            } else {
              for (ChunkSource c : capture.chunks()) { // the frozen part first
                f.add(hs.bucket.bucket, hs.metadata, c);
              }
            }
          }
          headHits.clear();
          stored[0] =
              limit > 0 && found.size() >= limit
                  ? new StoredHits[0]
                  : selectStored(snap, keys, matchers, withSamples, limit, ctx);
        });
    if (headHits.size > 0) { // the hits of one head bucket and nothing else: distinct series
      headHits.sortByLabels();
      if (limit > 0 && headHits.size > limit) {
        headHits.size = limit; // sorted among themselves, as the contract says
      }
      return new HeadSeriesSet(headHits, minT, maxT, withSamples, ctx);
    }
    // Join across buckets by labels. Stored buckets' labels are interned (LabelCache), so a series
    // met in several of them compares by reference.
    for (StoredHits h : stored[0]) {
      for (int i = 0; i < h.size; i++) {
        found
            .computeIfAbsent(h.labels[i], Found::new)
            .add(h.bucket, h.metadata[i], h.chunks == null ? null : h.chunks[i]);
      }
    }
    Found[] sorted = found.values().toArray(new Found[0]);
    Arrays.sort(sorted, (a, b) -> a.labels.compareTo(b.labels));
    List<Series> out = new ArrayList<>(sorted.length);
    ChunkIterator probe = null;
    long[] probed = new long[2];
    if (limit > 0 && sorted.length > limit) {
      sorted = Arrays.copyOf(sorted, limit); // sorted among themselves, as the contract says
    }
    int n = 0;
    for (Found f : sorted) {
      if ((++n & (CHECK_SERIES_EVERY - 1)) == 0) {
        ctx.check();
      }
      if (withSamples) {
        if (f.chunks.size() > 1) {
          f.chunks.sort(Comparator.comparing(ChunkSource::bucket));
        }
        if (!surelyHasSampleInside(f.chunks, minT, maxT)) {
          // newest chunk first: a short range (an instant selector's lookback) mostly has its
          // samples in the newest bucket, whose chunk is then the only one decoded
          probe =
              probe == null
                  ? new ChunkIterator(f.chunks, minT, maxT)
                  : probe.reset(f.chunks, minT, maxT);
          if (!probe.newestIn(minT, maxT, probed) && !hasHistogramInside(f.chunks, minT, maxT)) {
            continue; // no sample inside the range
          }
        }
      }
      out.add(new FoundSeries(f.labels, f.metadata, f.chunks, minT, maxT));
    }
    return SeriesSet.of(out);
  }

  /**
   * Whether some chunk's bucket lies inside {@code [minT, maxT]}: then the series has a sample in
   * the range without decoding one, since no chunk is empty (the head captures only series with
   * samples, a seal writes no TimeSeries record for an empty one). Only series whose every chunk
   * straddles an end of the range are decoded to find out.
   */
  /** Whether some histogram chunk has a sample inside {@code [minT, maxT]} (decodes, rarely). */
  private static boolean hasHistogramInside(List<ChunkSource> chunks, long minT, long maxT) {
    return HistogramChunkIterator.hasHistogramChunk(chunks)
        && new HistogramChunkIterator(chunks, minT, maxT).next();
  }

  private static boolean surelyHasSampleInside(List<ChunkSource> chunks, long minT, long maxT) {
    for (ChunkSource c : chunks) {
      if (c.bucket().startMillis() >= minT && c.bucket().endMillis() - 1 <= maxT) {
        return true;
      }
    }
    return false;
  }

  /**
   * The head series a select found: their samples' captures if it wants them (a capture names its
   * series), else the series; one array, not an object per hit, since a select over a million
   * series holds them until the query has walked them. A series' labels, metadata and bucket are
   * immutable, so they may be read after the lock.
   */
  private static final class HeadHits {
    private static final Comparator<HeadSeries> BY_LABELS = (a, b) -> a.labels.compareTo(b.labels);
    private static final Comparator<HeadSeries.Capture> CAPTURES_BY_LABELS =
        (a, b) -> a.series.labels.compareTo(b.series.labels);

    /** Whether some capture has frozen parts in the store ({@link #loadParts}). */
    boolean storedParts;

    /** Reads the stored frozen parts of the captures that have some; without the lock. */
    void loadParts(KvReader snap) {
      if (storedParts) {
        for (int i = 0; i < size; i++) {
          captures[i].loadParts(snap);
        }
      }
    }

    /** Null when the select wants samples: {@link #captures} holds the hits then. */
    HeadSeries[] series;

    HeadSeries.Capture[] captures;
    int size;

    HeadHits(boolean withSamples) {
      if (withSamples) {
        captures = new HeadSeries.Capture[16];
      } else {
        series = new HeadSeries[16];
      }
    }

    void add(HeadSeries hs) {
      if (captures != null) {
        if (size == captures.length) {
          captures = Arrays.copyOf(captures, captures.length + (captures.length >> 1));
        }
        HeadSeries.Capture c = hs.captureLocked();
        storedParts |= c.hasStoredParts();
        captures[size++] = c;
      } else {
        if (size == series.length) {
          series = Arrays.copyOf(series, series.length + (series.length >> 1));
        }
        series[size++] = hs;
      }
    }

    HeadSeries series(int i) {
      return captures != null ? captures[i].series : series[i];
    }

    /** The capture of hit {@code i}, or null when the select wants no samples. */
    HeadSeries.Capture capture(int i) {
      return captures != null ? captures[i] : null;
    }

    /** Lets hit {@code i} go. */
    void drop(int i) {
      if (captures != null) {
        captures[i] = null;
      } else {
        series[i] = null;
      }
    }

    void clear() {
      if (captures != null) {
        captures = new HeadSeries.Capture[0];
      } else {
        series = new HeadSeries[0];
      }
      size = 0;
    }

    /**
     * In label order (the series of one head bucket have distinct labels). A merge sort that takes
     * runs already in order (the JDK's), since hits come in creation order and a sender often
     * creates its series in label order: a quicksort compared three times as many label sets on a
     * query over 100k series.
     */
    void sortByLabels() {
      if (captures != null) {
        Arrays.sort(captures, 0, size, CAPTURES_BY_LABELS);
      } else {
        Arrays.sort(series, 0, size, BY_LABELS);
      }
    }
  }

  /**
   * The series of one head bucket's hits, made as they are walked: a {@link FoundSeries} and its
   * chunks exist only for the series at hand and those a caller keeps, and a hit is let go once
   * walked, so a query folding a wide selection as it reads it holds the hits it has not reached
   * yet (a capture each), not a graph per series.
   */
  private static final class HeadSeriesSet implements SeriesSet {
    private final HeadHits hits;
    private final long minT;
    private final long maxT;
    private final boolean withSamples;
    private final QueryContext ctx;
    private int i = -1;
    private Series current;
    private ChunkIterator probe;
    private final long[] probed = new long[2];

    HeadSeriesSet(HeadHits hits, long minT, long maxT, boolean withSamples, QueryContext ctx) {
      this.hits = hits;
      this.minT = minT;
      this.maxT = maxT;
      this.withSamples = withSamples;
      this.ctx = ctx;
    }

    @Override
    public boolean next() {
      current = null;
      while (++i < hits.size) {
        if (((i + 1) & (CHECK_SERIES_EVERY - 1)) == 0) {
          ctx.check();
        }
        HeadSeries hs = hits.series(i);
        HeadSeries.Capture capture = hits.capture(i);
        hits.drop(i);
        List<ChunkSource> chunks =
            capture == null ? List.of() : Arrays.asList(capture.chunks()); // frozen part first
        if (withSamples && !surelyHasSampleInside(chunks, minT, maxT)) {
          probe =
              probe == null
                  ? new ChunkIterator(chunks, minT, maxT)
                  : probe.reset(chunks, minT, maxT);
          if (!probe.newestIn(minT, maxT, probed) && !hasHistogramInside(chunks, minT, maxT)) {
            continue; // no sample inside the range
          }
        }
        current = new FoundSeries(hs.labels, hs.metadata, chunks, minT, maxT);
        return true;
      }
      i = hits.size;
      return false;
    }

    @Override
    public Series at() {
      if (current == null) {
        throw new IllegalStateException("no current series");
      }
      return current;
    }
  }

  /** What a select found in one stored bucket: parallel arrays, in series id order. */
  private static final class StoredHits {
    static final StoredHits NONE = new StoredHits(null, 0);

    final TimeBucket bucket;
    final int[] ids;
    final Labels[] labels;
    final MetricMetadata[] metadata;
    ChunkSource[] chunks;
    int size;

    StoredHits(TimeBucket bucket, int capacity) {
      this.bucket = bucket;
      this.ids = new int[capacity];
      this.labels = new Labels[capacity];
      this.metadata = new MetricMetadata[capacity];
    }

    void add(int id, Labels l, MetricMetadata m) {
      ids[size] = id;
      labels[size] = l;
      metadata[size++] = m;
    }
  }

  /**
   * Selects in every stored bucket, on up to {@link EngineConfig#readParallelism()} threads when
   * that pays: the caller selects in the first bucket alone, and only if the rest would take it at
   * least {@link #PARALLEL_MIN_NANOS} at that pace do common-pool helpers join (waking a thread and
   * waiting for it costs more than a small select: a select of 100 series in two buckets took ~50
   * µs per bucket). Then the caller and the helpers take buckets from a shared counter (a helper
   * that has not started when the caller ran out of buckets is told not to, so the caller never
   * waits for an idle pool). Buckets are independent until the join; results keep the bucket order.
   */
  private StoredHits[] selectStored(
      KvReader snap,
      List<LabelCache.Key> keys,
      List<LabelMatcher> matchers,
      boolean withSamples,
      int limit,
      QueryContext ctx) {
    int n = keys.size();
    StoredHits[] out = new StoredHits[n];
    if (n == 0) {
      return out;
    }
    long t0 = System.nanoTime();
    out[0] = selectStored(snap, keys.get(0), matchers, withSamples, limit, ctx);
    long firstNanos = System.nanoTime() - t0;
    AtomicInteger next = new AtomicInteger(1);
    Runnable work =
        () -> {
          for (int i; (i = next.getAndIncrement()) < n; ) {
            out[i] = selectStored(snap, keys.get(i), matchers, withSamples, limit, ctx);
          }
        };
    int helpers = Math.min(head.config.readParallelism(), n - 1) - 1;
    if (helpers <= 0 || firstNanos * (n - 1) < PARALLEL_MIN_NANOS) {
      work.run();
      return out;
    }
    CallerRunsParallel.run(work, helpers, () -> next.set(n)); // the others stop after their bucket
    return out;
  }

  /**
   * The matching series of one stored bucket, with their labels from the bucket's {@link
   * LabelCache} table (built here, from the snapshot, when a select reads a large share of the
   * bucket and the cache has none) or from ForwardIndex point reads, and with their chunks.
   */
  private StoredHits selectStored(
      KvReader snap,
      LabelCache.Key key,
      List<LabelMatcher> matchers,
      boolean withSamples,
      int limit,
      QueryContext ctx) {
    TimeBucket b = key.bucket();
    KvPostings postings = new KvPostings(snap, b);
    RoaringBitmap ids = PostingsSelector.select(postings, matchers, ctx);
    if (ids.isEmpty()) {
      return StoredHits.NONE;
    }
    if (limit > 0 && ids.getLongCardinality() > limit) {
      ids =
          ids.limit(limit); // any limit series will do (the contract); the lowest ids are cheapest
    }
    ctx.check();
    boolean dense =
        ids.getLongCardinality() * SCAN_DENSITY_DIVISOR > postings.all().getLongCardinality();
    LabelCache.Table table = labelCache.get(key);
    if (table == null && dense && labelCache.enabled()) {
      table = buildTable(snap, b);
      labelCache.put(key, table);
    }
    StoredHits hits = new StoredHits(b, ids.getCardinality());
    if (table != null) {
      for (IntIterator it = ids.getIntIterator(); it.hasNext(); ) {
        int id = it.next();
        Labels l = table.labels(id);
        if (l == null) {
          unreadable(b, id, "its posting names it, but it has no readable ForwardIndex record");
        } else {
          hits.add(id, l, table.metadata[id]);
        }
      }
    } else if (dense) {
      try (KvCursor c = snap.scanPrefix(Keys.bucketPrefix(RecordType.FORWARD_INDEX, b))) {
        while (c.next()) {
          int id = Keys.seriesId(c.key());
          if (ids.contains(id)) {
            addDecoded(hits, id, c.value());
          }
        }
      }
      if (hits.size < ids.getCardinality()) {
        for (IntIterator it = ids.getIntIterator(); it.hasNext(); ) {
          int id = it.next();
          if (Arrays.binarySearch(hits.ids, 0, hits.size, id) < 0) {
            unreadable(b, id, "its posting names it, but it has no readable ForwardIndex record");
          }
        }
      }
    } else {
      int[] wanted = ids.toArray();
      List<byte[]> keys = new ArrayList<>(wanted.length);
      for (int id : wanted) {
        keys.add(Keys.forwardIndex(b, id));
      }
      List<byte[]> values = snap.multiGet(keys);
      for (int i = 0; i < wanted.length; i++) {
        byte[] v = values.get(i);
        if (v == null) {
          unreadable(b, wanted[i], "its posting names it, but it has no ForwardIndex record");
          continue;
        }
        addDecoded(hits, wanted[i], v);
      }
    }
    if (withSamples) {
      addChunks(snap, hits, dense);
    }
    return hits;
  }

  /** Adds a series read by id; a ForwardIndex value that does not decode is skipped and counted. */
  private void addDecoded(StoredHits hits, int id, byte[] value) {
    try {
      ForwardIndexValue fi = ForwardIndexValue.decode(value);
      hits.add(id, labelCache.intern(fi.labels()), fi.metadata());
    } catch (CorruptRecordException e) {
      unreadable(hits.bucket, id, "its ForwardIndex record does not decode: " + e.getMessage());
    }
  }

  /**
   * The bucket's whole ForwardIndex, decoded: one scan. A record that does not decode leaves its id
   * empty (a select naming it counts it as unreadable).
   */
  private LabelCache.Table buildTable(KvReader snap, TimeBucket b) {
    List<Labels> labels = new ArrayList<>();
    List<MetricMetadata> metadata = new ArrayList<>();
    HashMap<MetricMetadata, MetricMetadata> sameMetadata = new HashMap<>();
    long bytes = 64;
    try (KvCursor c = snap.scanPrefix(Keys.bucketPrefix(RecordType.FORWARD_INDEX, b))) {
      while (c.next()) {
        int id = Keys.seriesId(c.key());
        ForwardIndexValue fi;
        try {
          fi = ForwardIndexValue.decode(c.value(), labelCache::intern);
        } catch (CorruptRecordException e) {
          continue;
        }
        while (labels.size() <= id) {
          labels.add(null);
          metadata.add(null);
        }
        Labels l = labelCache.intern(fi.labels());
        labels.set(id, l);
        metadata.set(id, sameMetadata.computeIfAbsent(fi.metadata(), m -> m));
        bytes += 8 + LabelCache.estimateBytes(l);
      }
    }
    bytes += 8L * labels.size() + 64L * sameMetadata.size();
    return new LabelCache.Table(
        labels.toArray(new Labels[0]), metadata.toArray(new MetricMetadata[0]), bytes);
  }

  /**
   * The chunks of the hits: one scan of the bucket's TimeSeries records when dense, else point
   * reads.
   */
  private void addChunks(KvReader snap, StoredHits hits, boolean dense) {
    hits.chunks = new ChunkSource[hits.size];
    TimeBucket b = hits.bucket;
    if (dense) {
      int i = 0;
      try (KvCursor c = snap.scanPrefix(Keys.bucketPrefix(RecordType.TIME_SERIES, b))) {
        while (i < hits.size && c.next()) {
          int id = Keys.seriesId(c.key());
          while (i < hits.size && hits.ids[i] < id) {
            i++; // a series without chunk (none in a sealed bucket): no samples
          }
          if (i < hits.size && hits.ids[i] == id) {
            hits.chunks[i] = chunk(b, id, c.value());
            i++;
          }
        }
      }
    } else {
      List<byte[]> keys = new ArrayList<>(hits.size);
      for (int i = 0; i < hits.size; i++) {
        keys.add(Keys.timeSeries(b, hits.ids[i]));
      }
      List<byte[]> values = snap.multiGet(keys); // one batched lookup, keys ascending
      for (int i = 0; i < hits.size; i++) {
        byte[] v = values.get(i);
        if (v != null) {
          hits.chunks[i] = chunk(b, hits.ids[i], v);
        }
      }
    }
  }

  private ChunkSource chunk(TimeBucket b, int id, byte[] value) {
    if (value.length == 0
        || !(TimeSeriesValue.isKnownEncoding(value[0] & 0xFF)
            || TimeSeriesValue.isHistogramEncoding(value[0] & 0xFF))) {
      unreadable(
          b,
          id,
          "its TimeSeries record has unknown encoding id "
              + (value.length == 0
                  ? "(empty value)"
                  : "0x" + Integer.toHexString(value[0] & 0xFF)));
      return null;
    }
    return new ChunkSource(b, value[0] & 0xFF, value, 1, null, null, 0);
  }

  /**
   * A read met a record it cannot use: the series is left out of the answer (the rest of the bucket
   * is still read), counted in {@link Engine.Stats#unreadableRecords()} and logged at most every
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
          "skipped series "
              + id
              + " of bucket "
              + b
              + " in a read: "
              + why
              + " ("
              + unreadableRecords.sum()
              + " unreadable records met so far; run tidemark verify)");
    }
  }

  private static final class FoundSeries implements Series {
    private final Labels labels;
    private final MetricMetadata metadata;
    private final List<ChunkSource> chunks;
    private final long minT;
    private final long maxT;

    FoundSeries(
        Labels labels, MetricMetadata metadata, List<ChunkSource> chunks, long minT, long maxT) {
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

    @Override
    public SampleIterator iterator(SampleIterator reuse) {
      return reuse instanceof ChunkIterator c ? c.reset(chunks, minT, maxT) : iterator();
    }

    @Override
    public boolean hasHistograms() {
      return HistogramChunkIterator.hasHistogramChunk(chunks);
    }

    @Override
    public HistogramIterator histogramIterator() {
      return hasHistograms()
          ? new HistogramChunkIterator(chunks, minT, maxT)
          : HistogramIterator.EMPTY;
    }
  }

  @Override
  public List<String> labelNames(
      long minT, long maxT, List<LabelMatcher> matchers, int limit, QueryContext ctx) {
    if (matchers.isEmpty()) {
      return limited(presentEverywhere(minT, maxT, null, limit, ctx), limit);
    }
    return collectStrings(
        minT,
        maxT,
        matchers,
        limit,
        ctx,
        (l, out) -> {
          for (int i = 0; i < l.size(); i++) {
            out.add(l.name(i));
          }
        },
        (src, selected, out) -> {
          int n = 0;
          for (String name : src.labelNames()) {
            if ((++n & (PostingsSelector.CHECK_EVERY - 1)) == 0) {
              ctx.check();
            }
            boolean[] hit = {false};
            src.forEachValue(name, "", (v, bm) -> hit[0] |= RoaringBitmap.intersects(bm, selected));
            if (hit[0]) {
              out.add(name);
            }
          }
        });
  }

  @Override
  public List<String> labelValues(
      String name, long minT, long maxT, List<LabelMatcher> matchers, int limit, QueryContext ctx) {
    if (matchers.isEmpty()) {
      return limited(presentEverywhere(minT, maxT, name, limit, ctx), limit);
    }
    return collectStrings(
        minT,
        maxT,
        matchers,
        limit,
        ctx,
        (l, out) -> {
          String v = l.get(name);
          if (v != null && !v.isEmpty()) {
            out.add(v);
          }
        },
        (src, selected, out) -> {
          int[] n = {0};
          src.forEachValue(
              name,
              "",
              (v, bm) -> {
                if ((++n[0] & (PostingsSelector.CHECK_EVERY - 1)) == 0) {
                  ctx.check();
                }
                if (RoaringBitmap.intersects(bm, selected)) {
                  out.add(v);
                }
              });
        });
  }

  /** How a label lookup reads the strings it wants from one bucket's postings. */
  private interface FromPostings {
    void collect(PostingsSource src, RoaringBitmap selected, TreeSet<String> out);
  }

  /**
   * Label names or values of the series the matchers select, sorted, at most {@code limit} (0:
   * all): per bucket from the selected series' label sets ({@code fromSeries}) in a head bucket
   * where the matchers select at most {@link #HEAD_SERIES_WALK} series, else from the postings
   * ({@code fromPostings}); a bucket is skipped once the limit is reached.
   */
  private List<String> collectStrings(
      long minT,
      long maxT,
      List<LabelMatcher> matchers,
      int limit,
      QueryContext ctx,
      java.util.function.BiConsumer<Labels, TreeSet<String>> fromSeries,
      FromPostings fromPostings) {
    TreeSet<String> out = new TreeSet<>(Labels.UTF8_ORDER);
    forEachPostingsSource(
        minT,
        maxT,
        matchers,
        ctx,
        (src, selected) -> {
          if (selected.isEmpty() || (limit > 0 && out.size() >= limit)) {
            return;
          }
          if (src instanceof HeadBucket hb && selected.getLongCardinality() <= HEAD_SERIES_WALK) {
            forEachSelectedSeries(hb, selected, ctx, l -> fromSeries.accept(l, out));
          } else {
            fromPostings.collect(src, selected, out);
          }
        });
    return limited(new ArrayList<>(out), limit);
  }

  /**
   * Up to this many selected series of a head bucket, label names and values are read from the
   * series' label sets (a walk of the selected series); above it, from the postings (a walk of the
   * label's values).
   */
  private static final long HEAD_SERIES_WALK = 10_000;

  private static void forEachSelectedSeries(
      HeadBucket hb,
      RoaringBitmap selected,
      QueryContext ctx,
      java.util.function.Consumer<Labels> action) {
    int n = 0;
    for (IntIterator it = selected.getIntIterator(); it.hasNext(); ) {
      if ((++n & (PostingsSelector.CHECK_EVERY - 1)) == 0) {
        ctx.check();
      }
      HeadSeries hs = hb.byId(it.next());
      if (hs != null) {
        action.accept(hs.labels);
      }
    }
  }

  /** The first {@code limit} of a sorted list ({@code limit} 0: all). */
  private static List<String> limited(List<String> sorted, int limit) {
    return limit > 0 && sorted.size() > limit ? sorted.subList(0, limit) : sorted;
  }

  /**
   * The label names ({@code label} null) or the values of {@code label} that some series of a
   * bucket overlapping the range has, without matchers: per stored bucket a sorted list kept in the
   * {@link LabelCache} (a sealed bucket's names do not change while its incarnation holds), merged.
   * No posting list is decoded.
   */
  private List<String> presentEverywhere(
      long minT, long maxT, String label, int limit, QueryContext ctx) {
    requireRange(minT, maxT);
    List<String[]> lists = new ArrayList<>();
    visitBuckets(
        minT,
        maxT,
        hb ->
            lists.add(
                label == null
                    ? hb.labelNames().toArray(new String[0])
                    : hb.values(label, "", limit > 0 ? limit : Integer.MAX_VALUE)),
        k -> {
          String[] cached = labelCache.names(k, label);
          if (cached != null) {
            lists.add(cached);
          }
          return cached != null;
        },
        (snap, keys) -> {
          for (LabelCache.Key k : keys) {
            ctx.check();
            lists.add(
                labelCache.putNames(k, label, present(new KvPostings(snap, k.bucket()), label)));
          }
        });
    return Collections.unmodifiableList(Arrays.asList(mergeSorted(lists))); // may be a cached array
  }

  /** The label names ({@code label} null) or the values of {@code label} the source has. */
  private static List<String> present(PostingsSource src, String label) {
    if (label == null) {
      return src.labelNames();
    }
    List<String> values = new ArrayList<>();
    src.forEachPresentValue(label, values::add);
    return values;
  }

  /** The union of sorted (UTF-8 order), duplicate-free arrays, in that order. */
  static String[] mergeSorted(List<String[]> lists) {
    String[] acc = new String[0];
    for (String[] l : lists) {
      if (l.length == 0 || Arrays.equals(acc, l)) {
        continue; // buckets of one service mostly hold the same names
      }
      if (acc.length == 0) {
        acc = l;
        continue;
      }
      String[] out = new String[acc.length + l.length];
      int i = 0;
      int j = 0;
      int k = 0;
      while (i < acc.length && j < l.length) {
        String a = acc[i];
        String b = l[j];
        int c = a == b ? 0 : Labels.compareUtf8(a, b);
        if (c <= 0) {
          out[k++] = a;
          i++;
          if (c == 0) {
            j++;
          }
        } else {
          out[k++] = b;
          j++;
        }
      }
      while (i < acc.length) {
        out[k++] = acc[i++];
      }
      while (j < l.length) {
        out[k++] = l[j++];
      }
      acc = k == out.length ? out : Arrays.copyOf(out, k);
    }
    return acc;
  }

  /**
   * Hands each bucket overlapping the range to {@code action} with the series the matchers select
   * in it: head buckets under the read lock (matched as {@link #visitBuckets(long, long, List,
   * QueryContext, HeadVisitor, java.util.function.BiConsumer)} says), stored ones without it.
   */
  private void forEachPostingsSource(
      long minT,
      long maxT,
      List<LabelMatcher> matchers,
      QueryContext ctx,
      java.util.function.BiConsumer<PostingsSource, RoaringBitmap> action) {
    requireRange(minT, maxT);
    visitBuckets(
        minT,
        maxT,
        matchers,
        ctx,
        (hb, decided) -> action.accept(hb, PostingsSelector.select(hb, matchers, decided, ctx)),
        (snap, keys) -> {
          for (LabelCache.Key k : keys) {
            ctx.check();
            KvPostings src = new KvPostings(snap, k.bucket());
            action.accept(src, PostingsSelector.select(src, matchers, ctx));
          }
        });
  }

  /** What a read does with a head bucket, under the read lock. */
  private interface HeadVisitor {
    /**
     * @param decided per matcher, the values that decide it in this bucket ({@link
     *     PostingsSelector#decide}), matched before the lock was taken
     */
    void accept(HeadBucket hb, String[][] decided);
  }

  /**
   * The read path's way in for a read with matchers, so that no matcher runs under the engine's
   * lock (a regex over long or many label values must not delay appends):
   *
   * <ol>
   *   <li>under the read lock: notes which overlapping buckets are in the head (and copies, per
   *       head bucket, the label values each scanning matcher must look at: references only);
   *   <li>without a lock: matches the copied values, checking {@code ctx};
   *   <li>under the read lock again: if the head still holds the same buckets (else the whole read
   *       starts again: a bucket sealed, reopened or new in between), hands each head bucket to
   *       {@code head} with what step 2 decided (the postings are then only looked up by value),
   *       and notes the stored buckets with their {@link LabelCache} incarnations and takes a KV
   *       snapshot.
   * </ol>
   *
   * Then, without the lock, hands the stored buckets to {@code stored} with the snapshot. Every
   * append is thus seen entirely or not at all: the head's buckets and the snapshot of the others
   * are taken in one lock hold. (The snapshot must not come from step 1: a stored bucket may be
   * reopened, appended to and sealed again between the two holds, and still be stored in step 3;
   * the head would then show appends made after a snapshot that lacks earlier ones.)
   */
  private void visitBuckets(
      long minT,
      long maxT,
      List<LabelMatcher> matchers,
      QueryContext ctx,
      HeadVisitor head,
      java.util.function.BiConsumer<KvReader, List<LabelCache.Key>> stored) {
    visitBuckets(minT, maxT, matchers, ctx, head, () -> false, stored);
  }

  /**
   * {@link #visitBuckets(long, long, List, QueryContext, HeadVisitor,
   * java.util.function.BiConsumer)}, taking the snapshot also when {@code headNeedsStore} says so
   * after the head buckets were visited (captured head series with frozen parts in the store, which
   * {@code stored} then reads through it).
   */
  private void visitBuckets(
      long minT,
      long maxT,
      List<LabelMatcher> matchers,
      QueryContext ctx,
      HeadVisitor head,
      java.util.function.BooleanSupplier headNeedsStore,
      java.util.function.BiConsumer<KvReader, List<LabelCache.Key>> stored) {
    for (; ; ) {
      ctx.check();
      List<TimeBucket> seen = new ArrayList<>();
      List<HeadBucket> heads = new ArrayList<>();
      List<String[][]> values = new ArrayList<>();
      lock.readLock().lock();
      try {
        this.head.ensureOpen();
        for (TimeBucket b : overlapping(buckets, minT, maxT)) {
          seen.add(b);
          HeadBucket hb = this.head.headBucketLocked(b);
          if (hb != null) {
            heads.add(hb);
            values.add(PostingsSelector.copyValues(hb, matchers));
          }
        }
      } finally {
        lock.readLock().unlock();
      }
      String[][][] decided = new String[heads.size()][][];
      for (int i = 0; i < decided.length; i++) {
        decided[i] = PostingsSelector.decide(matchers, values.get(i), ctx);
      }
      List<LabelCache.Key> fromStore = new ArrayList<>();
      KvSnapshot snap = null;
      try {
        lock.readLock().lock();
        try {
          this.head.ensureOpen();
          if (!sameBuckets(minT, maxT, seen, heads)) {
            continue;
          }
          for (int i = 0; i < decided.length; i++) {
            head.accept(heads.get(i), decided[i]);
          }
          for (TimeBucket b : seen) {
            if (this.head.headBucketLocked(b) == null) {
              fromStore.add(new LabelCache.Key(b, labelCache.incarnation(b)));
            }
          }
          if (!fromStore.isEmpty() || headNeedsStore.getAsBoolean()) {
            snap = kv.snapshot();
          }
        } finally {
          lock.readLock().unlock();
        }
        stored.accept(snap, fromStore); // snap null: nothing to read, the list is empty
        return;
      } finally {
        if (snap != null) {
          snap.close();
        }
      }
    }
  }

  /**
   * Whether the buckets overlapping the range are still {@code seen}, with exactly {@code heads}
   * (the same instances, in order) in the head. Under the read lock.
   */
  private boolean sameBuckets(long minT, long maxT, List<TimeBucket> seen, List<HeadBucket> heads) {
    int i = 0;
    int h = 0;
    for (TimeBucket b : overlapping(buckets, minT, maxT)) {
      if (i == seen.size() || !seen.get(i++).equals(b)) {
        return false;
      }
      HeadBucket hb = this.head.headBucketLocked(b);
      if (hb != null && (h == heads.size() || heads.get(h++) != hb)) {
        return false;
      }
      if (hb == null && h < heads.size() && heads.get(h).bucket.equals(b)) {
        return false; // it left the head
      }
    }
    return i == seen.size() && h == heads.size();
  }

  /**
   * The read path's way in for a read without matchers: under the read lock, hands every head
   * bucket (open or sealing) overlapping the range to {@code head}, still under the lock (copy what
   * you need), and notes every other overlapping bucket with its {@link LabelCache} incarnation,
   * where {@code cached} may answer it from the cache under the lock (true: done, the bucket is not
   * handed to {@code stored}); then, without the lock, hands those left to {@code stored} with a KV
   * snapshot taken under the lock (only if some bucket is left, so an answer from the cache reads
   * nothing from the store). Every append is thus seen entirely or not at all, and a cached table
   * is used only for the records the snapshot shows.
   */
  private void visitBuckets(
      long minT,
      long maxT,
      java.util.function.Consumer<HeadBucket> head,
      java.util.function.Predicate<LabelCache.Key> cached,
      java.util.function.BiConsumer<KvReader, List<LabelCache.Key>> stored) {
    List<LabelCache.Key> fromStore = new ArrayList<>();
    KvSnapshot snap = null;
    lock.readLock().lock();
    try {
      this.head.ensureOpen();
      for (TimeBucket b : overlapping(buckets, minT, maxT)) {
        HeadBucket hb = this.head.headBucketLocked(b);
        if (hb != null) {
          head.accept(hb);
          continue;
        }
        LabelCache.Key k = new LabelCache.Key(b, labelCache.incarnation(b));
        if (!cached.test(k)) {
          fromStore.add(k);
        }
      }
      if (!fromStore.isEmpty()) {
        snap = kv.snapshot();
      }
    } finally {
      lock.readLock().unlock();
    }
    if (snap != null) {
      try (KvSnapshot s = snap) {
        stored.accept(s, fromStore);
      }
    } else {
      stored.accept(null, fromStore); // nothing to read: every caller handles an empty list
    }
  }
}
