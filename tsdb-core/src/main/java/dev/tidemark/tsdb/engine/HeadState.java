package dev.tidemark.tsdb.engine;

import dev.tidemark.tsdb.append.StorageUnavailableException;
import dev.tidemark.tsdb.codec.DecimalEncoder;
import dev.tidemark.tsdb.codec.RecordType;
import dev.tidemark.tsdb.codec.TimeBucket;
import dev.tidemark.tsdb.kv.KvStore;
import dev.tidemark.tsdb.model.Labels;
import it.unimi.dsi.fastutil.objects.Object2ObjectOpenHashMap;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.Predicate;

/**
 * The head's shared state: what every part of the {@link Engine} ({@link Appends}, {@link Reads},
 * {@link Sealer}, {@link Retention}, {@link Deletion}, {@link Recovery}) reads and changes, with
 * the lock that guards it. Holds state and the few lookups every part needs; no behaviour of its
 * own.
 */
final class HeadState {

  static final System.Logger LOG = System.getLogger(Engine.class.getName());
  static final int CODE = EngineConfig.BUCKET_SIZE_CODE;

  final KvStore kv;
  final EngineConfig config;

  /** Told of every seal and compaction ({@link #tell}). */
  private final EngineEvents events;

  /** Scratch for freezing head series ({@link HeadSeries#freeze}); under the write lock. */
  final DecimalEncoder freezeScratch = new DecimalEncoder();

  final long oooMillis;

  /**
   * The retention in force: starts as the configured one, changed by {@link
   * Retention#setRetention}.
   */
  volatile long retentionMillis;

  final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();

  /**
   * Decoded ForwardIndex tables of sealed buckets. Whoever changes a bucket's stored records, or
   * moves it into or out of the head, calls {@link LabelCache#invalidate} under the write lock.
   */
  final LabelCache labelCache;

  // Guarded by lock.
  final TreeMap<TimeBucket, HeadBucket> open = new TreeMap<>();

  /**
   * The buckets whose seal is in progress; each is also in {@link #open} (docs/architecture.md,
   * Sealing).
   */
  final TreeMap<TimeBucket, HeadBucket> sealing = new TreeMap<>();

  /** Every bucket with data, open or sealed: the BucketList. */
  final TreeSet<TimeBucket> buckets = new TreeSet<>();

  /**
   * The head's series by label set. Open addressing (fastutil: a key array and a value array, no
   * node per entry): at a million series a {@code HashMap} node was 32 bytes of each series' head
   * cost (docs/benchmarks.md, session 12).
   */
  final Object2ObjectOpenHashMap<Labels, SeriesRef> refs = new Object2ObjectOpenHashMap<>();

  long headMaxT;
  boolean hasHeadMaxT;
  long logSeq;

  /** Series of the open buckets, a series once per bucket it is in. */
  long headSeries;

  /**
   * Distinct series in the open buckets: a series in two open buckets counts once. What {@link
   * EngineConfig#maxActiveSeries()} limits. Kept by every change of an open bucket's series and of
   * the open set ({@link #seriesAddedLocked}, {@link #seriesRemovedLocked}, {@link
   * #bucketEnteredLocked}, {@link #bucketLeftLocked}), through the ring of each series' copies in
   * the open buckets ({@link HeadSeries#otherCopy}).
   */
  long activeSeries;

  long headSampleBytes;
  boolean closed;

  final LongAdder samplesAccepted = new LongAdder();
  final LongAdder samplesRejected = new LongAdder();
  final LongAdder unreadableRecords = new LongAdder();

  /**
   * Bit {@code n} set: the BucketList may hold buckets of size code {@code n > 1} (a compaction
   * made one, or recovery found one). Only ever grows, so it may be a superset. Guarded by lock.
   */
  int coarseCodes;

  // The compactor's counters (Compactor; Engine.Stats).
  final LongAdder compactions = new LongAdder();
  final LongAdder compactedBuckets = new LongAdder();
  final LongAdder compactionBytesWritten = new LongAdder();
  final LongAdder compactionNanos = new LongAdder();
  final LongAdder compactionsAbandoned = new LongAdder();
  final LongAdder compactionFailures = new LongAdder();

  /**
   * What the engine knows of a series across buckets: its newest timestamp, exactly. Also hung on
   * the series' {@link Labels#storageHint()}; a hint is trusted only if it is of this head and not
   * {@link #dropped} (see {@link HeadState#forgetRefs}).
   */
  static final class SeriesRef {
    final HeadState owner;
    long maxT;
    HeadSeries latest;

    /** Set when the ref left {@link HeadState#refs}; under the write lock. */
    boolean dropped;

    SeriesRef(HeadState owner, long maxT, HeadSeries latest) {
      this.owner = owner;
      this.maxT = maxT;
      this.latest = latest;
    }
  }

  /**
   * The series' ref: the label set's {@link Labels#storageHint() hint} if it is a live ref of this
   * head, else the map's, which then becomes the hint. Under the write lock.
   */
  SeriesRef refLocked(Labels labels) {
    if (labels.storageHint() instanceof SeriesRef r && r.owner == this && !r.dropped) {
      return r;
    }
    SeriesRef r = refs.get(labels);
    if (r != null) {
      labels.storageHint(r);
    }
    return r;
  }

  /** Adds a new ref and hangs it on the label set. Under the write lock. */
  SeriesRef putRefLocked(Labels labels, long maxT, HeadSeries latest) {
    SeriesRef r = new SeriesRef(this, maxT, latest);
    SeriesRef old = refs.put(labels, r);
    if (old != null) {
      old.dropped = true;
    }
    labels.storageHint(r);
    return r;
  }

  /** Forgets the ref of a label set (it is looked up again on next use). Under the write lock. */
  void forgetRefLocked(Labels labels) {
    SeriesRef r = refs.remove(labels);
    if (r != null) {
      r.dropped = true;
    }
  }

  /**
   * Forgets every ref that matches (they are looked up again on next use); a forgotten ref is never
   * trusted as a hint again. Under the write lock.
   */
  void forgetRefs(Predicate<SeriesRef> which) {
    refs.values()
        .removeIf(
            r -> {
              if (which.test(r)) {
                r.dropped = true;
                return true;
              }
              return false;
            });
  }

  /** Runs {@code call} on the events listener; what it throws is logged and dropped. */
  void tell(java.util.function.Consumer<EngineEvents> call) {
    try {
      call.accept(events);
    } catch (RuntimeException e) {
      System.getLogger(Engine.class.getName())
          .log(System.Logger.Level.WARNING, "the engine's events listener failed: " + e);
    }
  }

  HeadState(KvStore kv, EngineConfig config) {
    this(kv, config, EngineEvents.NONE);
  }

  HeadState(KvStore kv, EngineConfig config, EngineEvents events) {
    this.kv = kv;
    this.config = config;
    this.events = events;
    this.oooMillis = config.outOfOrderWindow().toMillis();
    this.retentionMillis = config.retention().toMillis();
    this.labelCache = new LabelCache(config.labelCacheBytes());
  }

  /** Whether an open bucket has a series with these labels: one hash lookup per open bucket. */
  boolean inOpenBucket(Labels labels) {
    return copyElsewhere(labels, null) != null;
  }

  /** Counts a series just created in its open bucket. Under the write lock. */
  void seriesAddedLocked(HeadSeries hs) {
    link(hs, copyElsewhere(hs.labels, hs.bucket));
  }

  /** Uncounts a series being removed from its open bucket (a rollback). Under the write lock. */
  void seriesRemovedLocked(HeadSeries hs) {
    unlink(hs);
  }

  /**
   * Counts the series of a bucket entering the open set (a reopen, recovery): one hash lookup per
   * series and open bucket. Under the write lock.
   */
  void bucketEnteredLocked(HeadBucket hb) {
    for (HeadSeries hs : hb.series()) {
      link(hs, copyElsewhere(hs.labels, hb));
    }
  }

  /**
   * Uncounts the series of a bucket that left the open set (a seal, retention): those with no copy
   * in another open bucket. No hash lookup: each series leaves its ring of copies. Under the write
   * lock.
   */
  void bucketLeftLocked(HeadBucket hb) {
    for (HeadSeries hs : hb.series()) {
      unlink(hs);
    }
  }

  /** The series with these labels in an open bucket other than {@code except}, or null. */
  private HeadSeries copyElsewhere(Labels labels, HeadBucket except) {
    for (HeadBucket hb : open.values()) {
      if (hb != except) {
        HeadSeries copy = hb.get(labels);
        if (copy != null) {
          return copy;
        }
      }
    }
    return null;
  }

  /** Joins {@code hs} to the ring of {@code copy} (null: it is the series' only open copy). */
  private void link(HeadSeries hs, HeadSeries copy) {
    if (copy == null) {
      hs.otherCopy = null;
      activeSeries++;
    } else if (copy.otherCopy == null) {
      copy.otherCopy = hs;
      hs.otherCopy = copy;
    } else {
      hs.otherCopy = copy.otherCopy;
      copy.otherCopy = hs;
    }
  }

  /** Takes {@code hs} out of its ring; the series leaves the count with its last open copy. */
  private void unlink(HeadSeries hs) {
    HeadSeries next = hs.otherCopy;
    if (next == null) {
      activeSeries--;
      return;
    }
    HeadSeries before = next;
    while (before.otherCopy != hs) {
      before = before.otherCopy;
    }
    before.otherCopy = before == next ? null : next;
    hs.otherCopy = null;
  }

  /** The head's copy of a bucket (open, perhaps being sealed), or null. Under the lock. */
  HeadBucket headBucketLocked(TimeBucket b) {
    return open.get(b);
  }

  /**
   * The bucket a sample at {@code t} belongs to: the listed coarse bucket covering it (made by the
   * compactor; a late sample reopens it), else the one-hour bucket. Under the lock.
   */
  TimeBucket bucketFor(long t) {
    for (int codes = coarseCodes; codes != 0; codes &= codes - 1) {
      TimeBucket c = TimeBucket.containing(t, Integer.numberOfTrailingZeros(codes));
      if (buckets.contains(c)) {
        return c;
      }
    }
    return TimeBucket.containing(t, CODE);
  }

  /**
   * Notes that a bucket of {@code b}'s size code may be listed ({@link #coarseCodes}). Under the
   * write lock.
   */
  void noteSize(TimeBucket b) {
    if (b.sizeCode() != CODE) {
      coarseCodes |= 1 << b.sizeCode();
    }
  }

  void ensureOpen() {
    if (closed) {
      throw new StorageUnavailableException("engine is closed");
    }
  }

  static void requireRange(long minT, long maxT) {
    if (minT > maxT) {
      throw new IllegalArgumentException("minT " + minT + " is after maxT " + maxT);
    }
  }

  static Collection<TimeBucket> overlapping(TreeSet<TimeBucket> all, long minT, long maxT) {
    List<TimeBucket> out = new ArrayList<>();
    for (TimeBucket b : all) {
      if (b.startMillis() <= maxT && b.endMillis() > minT) {
        out.add(b);
      }
    }
    return out;
  }

  static final RecordType[] BUCKET_RECORD_TYPES = {
    RecordType.SERIES_DICTIONARY,
    RecordType.FORWARD_INDEX,
    RecordType.INVERTED_INDEX,
    RecordType.TIME_SERIES,
    RecordType.HEAD_LOG,
    RecordType.HEAD_CHUNK
  };
}
