package dev.tidemark.tsdb.engine;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Interner;
import dev.tidemark.tsdb.codec.TimeBucket;
import dev.tidemark.tsdb.model.Labels;
import dev.tidemark.tsdb.model.MetricMetadata;
import java.util.HashMap;
import java.util.List;

/**
 * The decoded ForwardIndex of sealed buckets: per bucket a table {@code series id → (labels,
 * metadata)}, so that a select over a sealed bucket does not decode the same records again; and per
 * bucket the label names and each label's values present in it (from InvertedIndex keys and
 * posting-list headers), so that label name and value lookups without matchers read no record
 * again. Bounded by {@link EngineConfig#labelCacheBytes()} (Caffeine, weighed by an estimate of
 * each table's bytes); zero disables it.
 *
 * <h2>Design note: when a table is valid</h2>
 *
 * <p>A table is keyed by the bucket's full identity (start and size code, so an hour bucket and the
 * coarser bucket that replaces it never share an entry) and by the bucket's <em>incarnation</em>: a
 * number this cache hands out afresh every time a part of the engine tells it, under the engine's
 * write lock, that the bucket's stored records may change or have changed ({@link #invalidate}):
 * when the bucket is created, enters or leaves the head (reopened, sealed), or has records deleted,
 * dropped by retention or replaced by compaction. Readers read the incarnation under the read lock,
 * together with their KV snapshot, so the incarnation they hold describes exactly the records their
 * snapshot shows; a table built from that snapshot is stored under that incarnation, and one built
 * from an older snapshot, stored after a change, sits under a number no reader asks for again (it
 * is evicted like any other entry). Ids are dense per bucket and an id is only ever reused after
 * its records were deleted and the bucket was sealed again, both of which change the incarnation.
 * The cache belongs to one engine, hence to one store instance: a store reopened by another engine
 * (after {@code tidemark verify --repair}, say) starts with an empty cache.
 *
 * <p>Labels are interned through a weak interner while a table is built, so one series has one
 * {@link Labels} instance in every bucket it lives in: the cross-bucket join of a select then
 * compares references ({@link Labels#equals} checks identity first) instead of strings, and the
 * cache holds each label set once. Their names and values are interned too, so sorting label sets
 * compares references until the values that differ.
 *
 * <p>Thread-safe: tables are immutable once built; {@link #incarnation} is called under the
 * engine's read lock, {@link #invalidate} under its write lock.
 */
final class LabelCache {

  /** A table's key: the bucket and the incarnation its records had. */
  record Key(TimeBucket bucket, long incarnation) {}

  /**
   * A {@link Names} entry's key: the label names of a bucket ({@code label} null) or the values of
   * one label.
   */
  private record NamesKey(Key key, String label) {}

  /** What the cache holds, with its estimated heap bytes. */
  private interface Entry {
    int weightBytes();
  }

  /** Sorted (UTF-8 order), interned label names or values present in a bucket. Immutable. */
  private record Names(String[] names, int weightBytes) implements Entry {}

  /**
   * The ForwardIndex of one bucket, by series id: {@code labels[id]} is null for an id without a
   * readable record. Immutable.
   */
  static final class Table implements Entry {
    final Labels[] labels;
    final MetricMetadata[] metadata;
    final int weightBytes;

    Table(Labels[] labels, MetricMetadata[] metadata, long weightBytes) {
      this.labels = labels;
      this.metadata = metadata;
      this.weightBytes = (int) Math.min(Integer.MAX_VALUE, weightBytes);
    }

    @Override
    public int weightBytes() {
      return weightBytes;
    }

    /** The labels of {@code id}, or null if the bucket has no readable record for it. */
    Labels labels(int id) {
      return id < labels.length ? labels[id] : null;
    }
  }

  private final Cache<Object, Entry> tables;
  private final Interner<Labels> interner = Interner.newWeakInterner();
  private final Interner<String> strings = Interner.newWeakInterner();
  // Guarded by the engine's lock: written under the write lock, read under the read lock.
  private final HashMap<TimeBucket, Long> incarnations = new HashMap<>();
  private long lastIncarnation;

  LabelCache(long maxBytes) {
    this.tables =
        maxBytes == 0
            ? null
            : Caffeine.newBuilder()
                // Maintenance (eviction, the read buffers' replay) on the calling thread: a small
                // query otherwise woke a common-pool thread every few reads on a 2-core box.
                .executor(Runnable::run)
                .maximumWeight(maxBytes)
                .weigher((Object k, Entry e) -> e.weightBytes())
                .build();
  }

  boolean enabled() {
    return tables != null;
  }

  /** The bucket's current incarnation; under the engine's read (or write) lock. */
  long incarnation(TimeBucket b) {
    Long i = incarnations.get(b);
    return i == null ? 0 : i;
  }

  /**
   * The bucket's stored records may change or have changed: tables built before are never used
   * again. Under the engine's write lock, after the store write (or before it, and again after).
   */
  void invalidate(TimeBucket b) {
    incarnations.put(b, ++lastIncarnation);
    if (tables != null) {
      tables
          .asMap()
          .keySet()
          .removeIf(k -> (k instanceof Key key ? key : ((NamesKey) k).key()).bucket().equals(b));
    }
  }

  /** The table stored under {@code key}, or null. */
  Table get(Key key) {
    return tables == null ? null : (Table) tables.getIfPresent(key);
  }

  /**
   * The label names ({@code label} null) or the values of {@code label} present in the bucket, as
   * {@link #putNames} stored them for this key, or null.
   */
  String[] names(Key key, String label) {
    Entry e = tables == null ? null : tables.getIfPresent(new NamesKey(key, label));
    return e == null ? null : ((Names) e).names();
  }

  /**
   * Keeps the label names ({@code label} null) or values of {@code label} present in the bucket
   * (sorted in UTF-8 order) for readers of this key; interns them and returns the kept array.
   */
  String[] putNames(Key key, String label, List<String> names) {
    String[] a = new String[names.size()];
    long bytes = 64 + 16 + 8L * a.length;
    for (int i = 0; i < a.length; i++) {
      a[i] = intern(names.get(i));
      bytes += 40 + a[i].length();
    }
    if (tables != null) {
      tables.put(new NamesKey(key, label), new Names(a, (int) Math.min(Integer.MAX_VALUE, bytes)));
    }
    return a;
  }

  void put(Key key, Table table) {
    if (tables != null) {
      tables.put(key, table);
    }
  }

  /**
   * The one instance of this label name or value among the tables: sorting label sets then mostly
   * compares references ({@link Labels#compareUtf8} checks identity first).
   */
  String intern(String s) {
    return strings.intern(s);
  }

  /** The one instance of these labels among the tables (and the selects using them). */
  Labels intern(Labels labels) {
    return interner.intern(labels);
  }

  /**
   * Estimated heap bytes of one label set held alone (object headers, the pairs array, each string
   * with its byte array); an upper bound once the set is interned and shared.
   */
  static long estimateBytes(Labels l) {
    long bytes = 48 + 16 + 8L * l.size(); // Labels, its pairs array
    for (int i = 0; i < l.size(); i++) {
      bytes += 2 * (24 + 16) + l.name(i).length() + l.value(i).length();
    }
    return bytes;
  }
}
