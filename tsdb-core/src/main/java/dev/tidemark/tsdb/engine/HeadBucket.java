package dev.tidemark.tsdb.engine;

import dev.tidemark.tsdb.codec.TimeBucket;
import dev.tidemark.tsdb.kv.KvReader;
import dev.tidemark.tsdb.model.Labels;
import dev.tidemark.tsdb.model.MetricMetadata;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.function.BiConsumer;
import org.roaringbitmap.RoaringBitmap;

/**
 * One open bucket in the head: its series dictionary (id → series, fingerprint → ids), in-memory
 * postings in the same shape as the InvertedIndex records, and the head-log bytes of the append in
 * progress.
 *
 * <p>Guarded by the engine lock. A bucket being sealed stays open and appendable; once it leaves
 * the open set nothing mutates it.
 */
final class HeadBucket implements PostingsSource {

  enum State {
    OPEN,
    SEALED
  }

  final TimeBucket bucket;
  private final long startMillis;
  private final long endMillis;
  volatile State state = State.OPEN;

  /** Series by id; null for an id not in the head (a reopened bucket loads only some). */
  private final ArrayList<HeadSeries> byId = new ArrayList<>();

  private int seriesCount;

  /**
   * Ids by fingerprint: the lookup by labels (no map entry per series) and the collision-safe
   * SeriesDictionary value.
   */
  private final FingerprintIndex byFingerprint = new FingerprintIndex();

  /**
   * Per label name, its values' postings and the value {@link #add} found last: series come in runs
   * that share values (a resource's series, one after another, in an append and in the order
   * recovery reloads them), and a value equal to the last one skips the sorted map's search (string
   * comparisons down a tree of up to a million values).
   */
  private final HashMap<String, NamePostings> postings = new HashMap<>();

  private static final class NamePostings {
    final TreeMap<String, RoaringBitmap> values;
    String lastValue;
    RoaringBitmap lastBitmap;

    NamePostings(TreeMap<String, RoaringBitmap> values) {
      this.values = values;
    }
  }

  private final RoaringBitmap all = new RoaringBitmap();

  /** Head-log bytes of the append in progress (series id, timestamp, value bits per sample). */
  final HeadLogBuffer pendingLog = new HeadLogBuffer();

  /** Head-log bytes of the append in progress' histogram samples (format 0x03, issue #25). */
  final HeadLogHistograms pendingHistogramLog = new HeadLogHistograms();

  long minTimestamp = Long.MAX_VALUE;
  long maxTimestamp = Long.MIN_VALUE;

  /** The append that last noted this bucket in its undo journal ({@link AppendUndo}). */
  long undoEpoch;

  /** Sequence number of the newest head-log record written for this bucket (or attempted). */
  long lastLogSeq;

  /**
   * {@link #lastLogSeq} at the previous idle check ({@link Sealer#sealIdleBuckets}); its thread.
   */
  long idleCheckSeq = -1;

  /** Idle checks in a row that found no append ({@link Sealer#sealIdleBuckets}); its thread. */
  int idleChecks;

  /**
   * The newest head-log sequence number when the seal in progress started ({@link Sealer#seal}).
   */
  long sealPoint;

  record Fingerprint(long high, long low) {
    static Fingerprint of(Labels l) {
      return new Fingerprint(l.fingerprintHigh(), l.fingerprintLow());
    }
  }

  /**
   * The store the {@link Freezer} writes this bucket's frozen parts to (HeadChunk records), read by
   * {@link HeadSeries#check} for a late sample inside them; null for a bucket without one (tests).
   */
  final KvReader store;

  /**
   * Whether the {@link Freezer} wrote (or tried to write) HeadChunk records of this bucket: the
   * seal then deletes them as the bucket leaves the head. Under the write lock.
   */
  boolean partsWritten;

  HeadBucket(TimeBucket bucket) {
    this(bucket, null);
  }

  HeadBucket(TimeBucket bucket, KvReader store) {
    this.store = store;
    this.bucket = bucket;
    this.startMillis = bucket.startMillis();
    this.endMillis = bucket.endMillis();
  }

  boolean contains(long timestampMillis) {
    return timestampMillis >= startMillis && timestampMillis < endMillis;
  }

  HeadSeries get(Labels labels) {
    long high = labels.fingerprintHigh();
    int id = byFingerprint.first(high);
    if (id < 0) {
      return null;
    }
    HeadSeries s = byId.get(id);
    if (s.labels.equals(labels)) {
      return s;
    }
    for (int other : byFingerprint.more(high)) {
      s = byId.get(other);
      if (s.labels.equals(labels)) {
        return s;
      }
    }
    return null;
  }

  HeadSeries byId(int id) {
    return id < byId.size() ? byId.get(id) : null;
  }

  int seriesCount() {
    return seriesCount;
  }

  /** The series in id order. */
  Iterable<HeadSeries> series() {
    return () -> byId.stream().filter(Objects::nonNull).iterator();
  }

  int nextId() {
    return byId.size();
  }

  /**
   * Adds a series with the given id (new: {@link #nextId()}; loaded: its stored id). Returns the
   * ids now sharing its fingerprint (normally just this one).
   */
  int[] add(Labels labels, MetricMetadata metadata, int id) {
    HeadSeries s = new HeadSeries(this, labels, metadata, id);
    while (byId.size() <= id) {
      byId.add(null);
    }
    if (byId.set(id, s) != null) {
      throw new IllegalStateException("series " + id + " of bucket " + bucket + " added twice");
    }
    seriesCount++;
    all.add(id);
    for (int i = 0; i < labels.size(); i++) {
      String name = labels.name(i);
      String value = labels.value(i);
      NamePostings np = postings.get(name);
      if (np == null) {
        np = new NamePostings(new TreeMap<>(Labels.UTF8_ORDER));
        postings.put(name, np);
      }
      RoaringBitmap bm;
      if (value.equals(np.lastValue)) {
        bm = np.lastBitmap;
      } else {
        bm = np.values.computeIfAbsent(value, k -> new RoaringBitmap());
        np.lastValue = value;
        np.lastBitmap = bm;
      }
      bm.add(id);
    }
    return byFingerprint.add(
        labels.fingerprintHigh(),
        labels.fingerprintLow(),
        id,
        other -> byId.get(other).labels.fingerprintLow());
  }

  /**
   * Removes the series added last (an append's rollback): its id, dictionary entry and postings.
   *
   * @throws IllegalStateException if {@code s} is not the series with the highest id
   */
  void removeLast(HeadSeries s) {
    int id = s.id;
    if (id != byId.size() - 1 || byId.get(id) != s) {
      throw new IllegalStateException(
          "series " + id + " of bucket " + bucket + " is not the last added");
    }
    byId.remove(id);
    seriesCount--;
    all.remove(id);
    Labels labels = s.labels;
    for (int i = 0; i < labels.size(); i++) {
      NamePostings np = postings.get(labels.name(i));
      RoaringBitmap bm = np.values.get(labels.value(i));
      bm.remove(id);
      if (bm.isEmpty()) {
        np.values.remove(labels.value(i));
        if (np.lastBitmap == bm) {
          np.lastValue = null; // the bitmap left the map: the next add of the value makes another
          np.lastBitmap = null;
        }
        if (np.values.isEmpty()) {
          postings.remove(labels.name(i));
        }
      }
    }
    byFingerprint.removeLast(labels.fingerprintHigh());
  }

  void noteTimestamp(long t) {
    if (t < minTimestamp) {
      minTimestamp = t;
    }
    if (t > maxTimestamp) {
      maxTimestamp = t;
    }
  }

  /** The postings of {@code name}'s values, or null. */
  private TreeMap<String, RoaringBitmap> values(String name) {
    NamePostings np = postings.get(name);
    return np == null ? null : np.values;
  }

  /** Every (label name, value, posting) in key order; for sealing. */
  void forEachPosting(PostingConsumer consumer) {
    TreeMap<String, NamePostings> sorted = new TreeMap<>(Labels.UTF8_ORDER);
    sorted.putAll(postings);
    sorted.forEach(
        (name, np) -> np.values.forEach((value, bm) -> consumer.accept(name, value, bm)));
  }

  interface PostingConsumer {
    void accept(String name, String value, RoaringBitmap posting);
  }

  // PostingsSource

  @Override
  public RoaringBitmap all() {
    return all;
  }

  @Override
  public RoaringBitmap posting(String name, String value) {
    TreeMap<String, RoaringBitmap> values = values(name);
    RoaringBitmap bm = values == null ? null : values.get(value);
    return bm == null ? new RoaringBitmap() : bm;
  }

  @Override
  public void forEachValue(String name, String prefix, BiConsumer<String, RoaringBitmap> consumer) {
    TreeMap<String, RoaringBitmap> values = values(name);
    if (values == null) {
      return;
    }
    Map<String, RoaringBitmap> view = prefix.isEmpty() ? values : values.tailMap(prefix, true);
    for (Map.Entry<String, RoaringBitmap> e : view.entrySet()) {
      if (!e.getKey().startsWith(prefix)) {
        break;
      }
      consumer.accept(e.getKey(), e.getValue());
    }
  }

  /**
   * At most {@code max} values of label {@code name} starting with {@code prefix}, in UTF-8 order:
   * a copy of references, so that matchers can run on them after the lock is released.
   */
  String[] values(String name, String prefix, int max) {
    TreeMap<String, RoaringBitmap> values = values(name);
    if (values == null || max <= 0) {
      return new String[0];
    }
    if (prefix.isEmpty() && values.size() <= max) {
      return values.keySet().toArray(new String[0]);
    }
    List<String> out = new ArrayList<>();
    for (String v : values.tailMap(prefix, true).keySet()) {
      if (!v.startsWith(prefix) || out.size() == max) {
        break;
      }
      out.add(v);
    }
    return out.toArray(new String[0]);
  }

  @Override
  public List<String> labelNames() {
    List<String> names = new ArrayList<>(postings.keySet());
    names.sort(Labels.UTF8_ORDER);
    return names;
  }
}
