package dev.tidemark.tsdb.engine;

import static dev.tidemark.tsdb.engine.HeadState.BUCKET_RECORD_TYPES;
import static dev.tidemark.tsdb.engine.HeadState.LOG;

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
import dev.tidemark.tsdb.kv.KeyRanges;
import dev.tidemark.tsdb.kv.KvCursor;
import dev.tidemark.tsdb.kv.KvReader;
import dev.tidemark.tsdb.kv.KvSnapshot;
import dev.tidemark.tsdb.kv.KvStore;
import dev.tidemark.tsdb.kv.WriteBatch;
import dev.tidemark.tsdb.model.Labels;
import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.TreeSet;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import org.roaringbitmap.IntIterator;
import org.roaringbitmap.RoaringBitmap;

/**
 * Compaction into coarser buckets ({@code docs/architecture.md}, Compaction): merges the sealed
 * buckets of one aligned coarse range (a <em>group</em>) into one bucket of the coarse size, with
 * one SeriesDictionary, ForwardIndex and InvertedIndex and one TimeSeries record per series,
 * re-encoded in whichever encoding is smaller.
 *
 * <p>Runs on the engine's one background thread (so never beside a seal, retention or delete), one
 * group per task. It reads the group through a KV snapshot without any lock and writes the coarse
 * records under the coarse bucket's own key prefix, which no listed bucket uses: until the switch
 * they are invisible. The switch is one write batch under the write lock: the BucketList names the
 * coarse bucket instead of its members, and the members' records are range deleted. A member
 * reopened by a late sample meanwhile (it is then open) or a bucket new in the range abandons the
 * group: its coarse records are deleted. A crash before the switch leaves coarse records of an
 * unlisted bucket, which {@link Recovery} deletes on open.
 *
 * <p>Memory: the merge walks the members' SeriesDictionary records in fingerprint order (one cursor
 * per member, a k-way merge), so it holds one series' samples at a time, the writes of one batch
 * ({@link #BATCH_BYTES}), and a map from each member's series ids to the coarse ids (4 bytes per
 * member series) for the postings, which are merged the same way, key by key.
 */
final class Compactor {

  /** Coarse records are written in batches of about this many payload bytes. */
  static final long BATCH_BYTES = 4L << 20;

  /** At most this many groups per {@link #compactNow()}; a guard, never reached in practice. */
  private static final int MAX_GROUPS_PER_CALL = 100_000;

  private final HeadState head;
  private final Sealer sealer;
  private final KvStore kv;
  private final EngineConfig config;
  private final ReentrantReadWriteLock lock;
  private final TreeSet<TimeBucket> buckets;
  private final int[] codes;

  /**
   * Groups whose merge met a record that does not decode: skipped until the next start (their
   * buckets stay as they are and read as before; {@code tidemark verify --repair} mends them). Only
   * the background thread touches it.
   */
  private final java.util.Set<TimeBucket> unmergeable = new java.util.HashSet<>();

  /** Set by {@link Engine#close()}: a merge in progress gives up at its next series. */
  volatile boolean stopping;

  /** Thrown inside a merge when the engine closes; the group is abandoned. */
  private static final class Stopping extends RuntimeException {
    Stopping() {
      super("engine closing", null, false, false);
    }
  }

  /**
   * Thrown inside a merge when a series holds float samples in one member and native histogram
   * samples in another: one TimeSeries record holds one kind, so the group is not merged (its
   * buckets stay as they are and read as before; {@code docs/architecture.md}, Native histograms).
   */
  static final class MixedKinds extends RuntimeException {
    MixedKinds(Labels labels) {
      super(
          "series "
              + labels
              + " holds float samples in one bucket and native histograms in another",
          null,
          false,
          false);
    }
  }

  /** Test hook: called before each write of a compaction (null in production). */
  volatile Runnable beforeWrite;

  Compactor(HeadState head, Sealer sealer) {
    this.head = head;
    this.sealer = sealer;
    this.kv = head.kv;
    this.config = head.config;
    this.lock = head.lock;
    this.buckets = head.buckets;
    this.codes = config.compactionSizeCodes();
  }

  /** Whether any coarser level is configured. */
  boolean enabled() {
    return codes.length > 1;
  }

  /** A group: the coarse bucket and the finer buckets it replaces, oldest first. */
  record Plan(TimeBucket target, List<TimeBucket> members) {}

  /** Compacts every due group now, on the background thread; returns how many were switched. */
  int compactNow() {
    int[] n = {0};
    sealer.runOnBackground(
        () -> {
          for (int i = 0; i < MAX_GROUPS_PER_CALL; i++) {
            Plan p = nextPlan();
            if (p == null) {
              return;
            }
            if (compact(p)) {
              n[0]++;
            }
          }
        });
    return n[0];
  }

  /**
   * The background task: compacts one due group and, if it found one, queues itself again behind
   * whatever else waits for the background thread (a seal, a delete), so groups never hold those up
   * for longer than one group.
   */
  void compactOneQuietly() {
    Plan p;
    try {
      p = nextPlan();
      if (p == null) {
        return;
      }
      compact(p);
    } catch (RuntimeException e) {
      LOG.log(Level.WARNING, "compaction failed; will retry", e);
      return;
    }
    sealer.submit(this::compactOneQuietly);
  }

  /** The next due group, coarsest level first, oldest first; null if none. */
  Plan nextPlan() {
    if (!enabled() || stopping) {
      return null;
    }
    lock.readLock().lock();
    try {
      if (head.closed) {
        return null;
      }
      long horizon = config.clock().millis();
      if (head.hasHeadMaxT) {
        horizon = Math.max(horizon, head.headMaxT);
      }
      horizon -= Math.max(head.oooMillis, config.compactionDelay().toMillis());
      long expired = config.clock().millis() - head.retentionMillis;
      for (int level = codes.length - 1; level >= 1; level--) {
        int code = codes[level];
        TimeBucket last = null;
        for (TimeBucket b : buckets) {
          if (b.sizeCode() >= code) {
            continue;
          }
          TimeBucket target = TimeBucket.containing(b.startMillis(), code);
          if (target.equals(last)) {
            continue;
          }
          last = target;
          if (target.endMillis() > horizon) {
            break; // later buckets' groups end later still
          }
          if (target.endMillis() <= expired) {
            continue; // retention drops it whole anyway
          }
          List<TimeBucket> members = membersLocked(target);
          if (members.size() >= 2 && quietLocked(members) && !unmergeable.contains(target)) {
            return new Plan(target, members);
          }
        }
      }
      return null;
    } finally {
      lock.readLock().unlock();
    }
  }

  /**
   * The listed buckets inside {@code target}, all finer than it; empty if a listed bucket as coarse
   * as the target lies there (nothing to do). Under the lock.
   */
  private List<TimeBucket> membersLocked(TimeBucket target) {
    List<TimeBucket> out = new ArrayList<>();
    for (TimeBucket b :
        buckets.tailSet(new TimeBucket(TimeBucket.ONE_HOUR, target.startMinutes()), true)) {
      if (b.startMillis() >= target.endMillis()) {
        break;
      }
      if (b.sizeCode() >= target.sizeCode()) {
        return List.of();
      }
      out.add(b);
    }
    return out;
  }

  private boolean quietLocked(List<TimeBucket> members) {
    for (TimeBucket b : members) {
      if (head.open.containsKey(b) || head.sealing.containsKey(b)) {
        return false;
      }
    }
    return true;
  }

  /**
   * Whether the plan still holds: its members are what the range lists, all sealed. Under the lock.
   */
  private boolean stillValidLocked(Plan p) {
    return !head.closed
        && !stopping
        && !buckets.contains(p.target)
        && membersLocked(p.target).equals(p.members)
        && quietLocked(p.members);
  }

  /**
   * Merges one group and switches the BucketList to it. Returns whether it switched; false if the
   * group changed meanwhile (abandoned, its coarse records deleted).
   */
  boolean compact(Plan p) {
    long started = System.nanoTime();
    TimeBucket target = p.target;
    KvSnapshot snap;
    lock.readLock().lock();
    try {
      if (!stillValidLocked(p)) {
        return false;
      }
      snap = kv.snapshot();
    } finally {
      lock.readLock().unlock();
    }
    LOG.log(Level.INFO, "compacting {0} buckets into {1}", p.members.size(), target);
    long written;
    try (snap) {
      written = new Merge(snap, target, p.members).run();
    } catch (Stopping e) {
      head.compactionsAbandoned.increment();
      dropQuietly(target);
      LOG.log(Level.INFO, "compaction into {0} abandoned: the engine is closing", target);
      return false;
    } catch (MixedKinds e) {
      head.compactionsAbandoned.increment();
      dropQuietly(target);
      unmergeable.add(target);
      LOG.log(
          Level.INFO,
          "compaction into {0} skipped until the next start: {1}",
          target,
          e.getMessage());
      return false;
    } catch (CorruptRecordException e) {
      head.compactionFailures.increment();
      dropQuietly(target);
      unmergeable.add(target);
      LOG.log(
          Level.WARNING,
          "compaction into "
              + target
              + " met a record that does not decode; its buckets"
              + " stay as they are until the next start (run tidemark verify)",
          e);
      return false;
    } catch (RuntimeException | Error e) {
      head.compactionFailures.increment();
      dropQuietly(target);
      throw e;
    }
    boolean switched;
    lock.writeLock().lock();
    try {
      switched = stillValidLocked(p) && switchLocked(p);
    } catch (RuntimeException | Error e) {
      head.compactionFailures.increment();
      throw e;
    } finally {
      lock.writeLock().unlock();
    }
    if (!switched) {
      head.compactionsAbandoned.increment();
      dropQuietly(target);
      LOG.log(
          Level.INFO,
          "compaction into {0} abandoned: {1}",
          target,
          stopping ? "the engine is closing" : "a bucket of the group changed");
      return false;
    }
    if (config.fsync()) {
      kv.sync();
    }
    compactRanges(p.members);
    long nanos = System.nanoTime() - started;
    head.compactions.increment();
    head.compactedBuckets.add(p.members.size());
    head.compactionBytesWritten.add(written);
    head.compactionNanos.add(nanos);
    int merged = p.members.size();
    head.tell(e -> e.compacted(target, merged, nanos));
    LOG.log(
        Level.INFO,
        "compacted {0} buckets into {1} in {2} ms ({3} bytes)",
        p.members.size(),
        target,
        nanos / 1_000_000,
        written);
    return true;
  }

  /**
   * The switch: one batch names the coarse bucket in the BucketList instead of its members and
   * range-deletes the members' records. If the write throws, the stored BucketList decides whether
   * it landed. Under the write lock.
   */
  private boolean switchLocked(Plan p) {
    TreeSet<TimeBucket> next = new TreeSet<>(buckets);
    next.removeAll(p.members);
    next.add(p.target);
    WriteBatch wb = new WriteBatch();
    for (TimeBucket b : p.members) {
      for (RecordType type : BUCKET_RECORD_TYPES) {
        byte[] prefix = Keys.bucketPrefix(type, b);
        wb.deleteRange(prefix, KeyRanges.prefixEnd(prefix));
      }
    }
    wb.put(Keys.bucketList(), BucketListValue.encode(next));
    hook();
    try {
      kv.write(wb);
    } catch (RuntimeException e) {
      byte[] stored;
      try {
        stored = kv.get(Keys.bucketList());
      } catch (RuntimeException again) {
        e.addSuppressed(again);
        throw e;
      }
      if (stored == null || !BucketListValue.decode(stored).contains(p.target)) {
        throw e; // not written: the coarse records are orphans (deleted by the caller or on open)
      }
      LOG.log(
          Level.WARNING,
          "the compaction switch to " + p.target + " reported a failure but landed",
          e);
    }
    buckets.removeAll(p.members);
    buckets.add(p.target);
    head.noteSize(p.target);
    // the members' records are gone and the target's are new: no table built before may be used
    for (TimeBucket b : p.members) {
      head.labelCache.invalidate(b);
    }
    head.labelCache.invalidate(p.target);
    return true;
  }

  private void hook() {
    Runnable r = beforeWrite;
    if (r != null) {
      r.run();
    }
  }

  /** Deletes the records of an unlisted coarse bucket; a failure is left to recovery. */
  private void dropQuietly(TimeBucket target) {
    try {
      WriteBatch wb = new WriteBatch();
      for (RecordType type : BUCKET_RECORD_TYPES) {
        byte[] prefix = Keys.bucketPrefix(type, target);
        wb.deleteRange(prefix, KeyRanges.prefixEnd(prefix));
      }
      kv.write(wb);
    } catch (RuntimeException e) {
      LOG.log(
          Level.WARNING,
          "could not delete the records of unfinished compaction "
              + target
              + "; the next open does",
          e);
    }
  }

  private void compactRanges(List<TimeBucket> members) {
    try {
      for (RecordType type : BUCKET_RECORD_TYPES) {
        kv.compactRange(
            Keys.bucketPrefix(type, members.get(0)),
            KeyRanges.prefixEnd(Keys.bucketPrefix(type, members.get(members.size() - 1))));
      }
    } catch (RuntimeException e) {
      LOG.log(Level.WARNING, "compacting the store's ranges after a compaction failed", e);
    }
  }

  /**
   * Deletes the records of buckets of a coarse size code that the BucketList does not name: what a
   * compaction interrupted before its switch leaves. Only codes above one hour: ingestion never
   * writes them, so such records are never data. One short scan per bucket and record type
   * (skipping from one bucket prefix to the next). Runs on open, under the write lock. Returns how
   * many buckets' records it deleted.
   */
  static int dropOrphans(KvStore kv, TreeSet<TimeBucket> listed) {
    TreeSet<TimeBucket> orphans = new TreeSet<>();
    WriteBatch wb = new WriteBatch();
    for (RecordType type : BUCKET_RECORD_TYPES) {
      for (int code = TimeBucket.ONE_HOUR + 1; code <= TimeBucket.MAX_SIZE_CODE; code++) {
        byte[] from = {(byte) Keys.VERSION, (byte) (type.id() << 4 | code)};
        byte[] end = KeyRanges.prefixEnd(from);
        while (true) {
          byte[] key;
          try (KvCursor c = kv.scan(from, end)) {
            if (!c.next()) {
              break;
            }
            key = c.key();
          }
          if (key.length < Keys.BUCKET_PREFIX_LENGTH) {
            from = Arrays.copyOf(key, key.length + 1); // stray: tidemark verify reports it
            continue;
          }
          byte[] prefix = Arrays.copyOf(key, Keys.BUCKET_PREFIX_LENGTH);
          from = KeyRanges.prefixEnd(prefix);
          TimeBucket b;
          try {
            b = Keys.timeBucket(key);
          } catch (CorruptRecordException | IllegalArgumentException stray) {
            continue;
          }
          if (!listed.contains(b)) {
            orphans.add(b);
            wb.deleteRange(prefix, from);
          }
        }
      }
    }
    if (!wb.isEmpty()) {
      kv.write(wb);
      LOG.log(
          Level.INFO,
          "deleted the records of {0} unfinished compactions: {1}",
          orphans.size(),
          orphans);
    }
    return orphans.size();
  }

  /** One group's merge, streaming; {@link #run} returns the bytes written. */
  private final class Merge {
    private final KvReader snap;
    private final TimeBucket target;
    private final List<TimeBucket> members;
    private final IdMap[] maps;
    private WriteBatch wb = new WriteBatch();
    private long written;

    Merge(KvReader snap, TimeBucket target, List<TimeBucket> members) {
      this.snap = snap;
      this.target = target;
      this.members = members;
      this.maps = new IdMap[members.size()];
      for (int i = 0; i < maps.length; i++) {
        maps[i] = new IdMap();
      }
    }

    long run() {
      series();
      postings();
      flush();
      return written;
    }

    private void put(byte[] key, byte[] value) {
      wb.put(key, value);
      written += key.length + value.length;
      if (wb.payloadBytes() > BATCH_BYTES) {
        flush();
      }
    }

    private void flush() {
      if (!wb.isEmpty()) {
        hook();
        kv.write(wb);
        wb = new WriteBatch();
      }
    }

    /**
     * Member indexes ordered by their current key ({@code keys[i]}) after the bucket prefix, the
     * oldest member first among equal keys: the order of a k-way merge of the members' records.
     */
    private static PriorityQueue<Integer> byKeyAfterBucket(byte[][] keys) {
      return new PriorityQueue<>(
          (a, b) -> {
            int c =
                Arrays.compareUnsigned(
                    keys[a],
                    Keys.BUCKET_PREFIX_LENGTH,
                    keys[a].length,
                    keys[b],
                    Keys.BUCKET_PREFIX_LENGTH,
                    keys[b].length);
            return c != 0 ? c : Integer.compare(a, b);
          });
    }

    /**
     * Series: the members' SeriesDictionary records merged in fingerprint order; per label set one
     * coarse id (dense, in fingerprint order), the newest member's ForwardIndex value, and the
     * members' chunks concatenated (members are disjoint in time and oldest first).
     */
    private void series() {
      int k = members.size();
      KvCursor[] cursors = new KvCursor[k];
      byte[][] keys = new byte[k][];
      byte[][] values = new byte[k][];
      PriorityQueue<Integer> queue = byKeyAfterBucket(keys);
      try {
        for (int i = 0; i < k; i++) {
          cursors[i] =
              snap.scanPrefix(Keys.bucketPrefix(RecordType.SERIES_DICTIONARY, members.get(i)));
          if (advance(cursors[i], keys, values, i)) {
            queue.add(i);
          }
        }
        GorillaEncoder chunk = new GorillaEncoder();
        DecimalEncoder scratch = new DecimalEncoder();
        TimeSeriesValue.Decoders decoders = new TimeSeriesValue.Decoders();
        HistogramEncoder histograms = new HistogramEncoder();
        HistogramDecoder histogramDecoder = new HistogramDecoder();
        int nextId = 0;
        List<int[]> entries = new ArrayList<>();
        while (!queue.isEmpty()) {
          if (stopping) {
            throw new Stopping();
          }
          int first = queue.poll();
          byte[] fingerprintKey = keys[first];
          entries.clear();
          take(first, entries, values);
          if (advance(cursors[first], keys, values, first)) {
            queue.add(first);
          }
          while (!queue.isEmpty() && sameSuffix(keys[queue.peek()], fingerprintKey)) {
            int i = queue.poll();
            take(i, entries, values);
            if (advance(cursors[i], keys, values, i)) {
              queue.add(i);
            }
          }
          // Usually one label set; several only after an XXH3-128 collision.
          Map<Labels, List<int[]>> byLabels = new LinkedHashMap<>();
          Map<Labels, byte[]> newestForward = new LinkedHashMap<>();
          for (int[] e : entries) {
            byte[] fwd = snap.get(Keys.forwardIndex(members.get(e[0]), e[1]));
            if (fwd == null) {
              continue; // a dictionary entry without series: reads never see it either
            }
            Labels labels;
            try {
              labels = ForwardIndexValue.decode(fwd).labels();
            } catch (CorruptRecordException unreadable) {
              continue;
            }
            byLabels.computeIfAbsent(labels, l -> new ArrayList<>()).add(e);
            newestForward.put(labels, fwd); // members ascend in time: the last one is the newest
          }
          if (byLabels.isEmpty()) {
            continue;
          }
          List<Labels> sets = new ArrayList<>(byLabels.keySet());
          sets.sort(null);
          int[] ids = new int[sets.size()];
          for (int s = 0; s < sets.size(); s++) {
            Labels labels = sets.get(s);
            int id = nextId++;
            ids[s] = id;
            chunk.reset();
            scratch.reset();
            histograms.reset();
            for (int[] e : byLabels.get(labels)) {
              maps[e[0]].put(e[1], id);
              appendChunk(
                  chunk, scratch, histograms, decoders, histogramDecoder, members.get(e[0]), e[1]);
            }
            put(Keys.forwardIndex(target, id), newestForward.get(labels));
            if (chunk.count() > 0 && histograms.count() > 0) {
              throw new MixedKinds(labels);
            }
            if (chunk.count() > 0) {
              // The seal's rule, both encoders fed in one pass.
              put(Keys.timeSeries(target, id), TimeSeriesValue.smallest(chunk, scratch));
            } else if (histograms.count() > 0) {
              put(Keys.timeSeries(target, id), TimeSeriesValue.encode(histograms));
            }
          }
          put(
              Keys.seriesDictionary(
                  target,
                  Keys.fingerprintHigh(fingerprintKey),
                  Keys.fingerprintLow(fingerprintKey)),
              SeriesDictionaryValue.encode(ids));
        }
      } finally {
        for (KvCursor c : cursors) {
          if (c != null) {
            c.close();
          }
        }
      }
    }

    private void take(int member, List<int[]> entries, byte[][] values) {
      for (int id : SeriesDictionaryValue.decode(values[member])) {
        entries.add(new int[] {member, id});
      }
    }

    /**
     * Appends a member's chunk of series {@code id}; samples not after the last one are dropped.
     */
    private void appendChunk(
        GorillaEncoder chunk,
        DecimalEncoder decimal,
        HistogramEncoder histograms,
        TimeSeriesValue.Decoders decoders,
        HistogramDecoder histogramDecoder,
        TimeBucket b,
        int id) {
      byte[] v = snap.get(Keys.timeSeries(b, id));
      if (v == null) {
        return;
      }
      if (v.length > 0 && TimeSeriesValue.isHistogramEncoding(v[0] & 0xFF)) {
        HistogramDecoder d = TimeSeriesValue.openHistogram(histogramDecoder, v);
        while (d.next()) {
          long t = d.timestampMillis();
          if (histograms.count() > 0 && t <= lastHistogramT) {
            continue;
          }
          histograms.append(t, d.histogram());
          lastHistogramT = t;
        }
        return;
      }
      ChunkDecoder d = decoders.open(v);
      while (d.next()) {
        long t = d.timestampMillis();
        if (chunk.count() > 0 && t <= chunk.lastTimestampMillis()) {
          continue;
        }
        chunk.append(t, d.valueBits());
        decimal.append(t, d.valueBits());
      }
    }

    /** The newest timestamp appended to the histogram chunk of the series being merged. */
    private long lastHistogramT;

    /** Postings: the members' InvertedIndex records merged key by key, ids mapped to coarse ids. */
    private void postings() {
      int k = members.size();
      KvCursor[] cursors = new KvCursor[k];
      byte[][] keys = new byte[k][];
      byte[][] values = new byte[k][];
      PriorityQueue<Integer> queue = byKeyAfterBucket(keys);
      byte[] prefix = Keys.bucketPrefix(RecordType.INVERTED_INDEX, target);
      try {
        for (int i = 0; i < k; i++) {
          cursors[i] =
              snap.scanPrefix(Keys.bucketPrefix(RecordType.INVERTED_INDEX, members.get(i)));
          if (advance(cursors[i], keys, values, i)) {
            queue.add(i);
          }
        }
        while (!queue.isEmpty()) {
          int first = queue.poll();
          byte[] key = keys[first];
          RoaringBitmap merged = new RoaringBitmap();
          remap(first, values[first], merged);
          if (advance(cursors[first], keys, values, first)) {
            queue.add(first);
          }
          while (!queue.isEmpty() && sameSuffix(keys[queue.peek()], key)) {
            int i = queue.poll();
            remap(i, values[i], merged);
            if (advance(cursors[i], keys, values, i)) {
              queue.add(i);
            }
          }
          if (merged.isEmpty()) {
            continue;
          }
          merged.runOptimize();
          byte[] coarseKey = Arrays.copyOf(prefix, key.length);
          System.arraycopy(
              key,
              Keys.BUCKET_PREFIX_LENGTH,
              coarseKey,
              Keys.BUCKET_PREFIX_LENGTH,
              key.length - Keys.BUCKET_PREFIX_LENGTH);
          put(coarseKey, InvertedIndexValue.encode(merged));
        }
      } finally {
        for (KvCursor c : cursors) {
          if (c != null) {
            c.close();
          }
        }
      }
    }

    private void remap(int member, byte[] value, RoaringBitmap into) {
      RoaringBitmap ids;
      try {
        ids = InvertedIndexValue.decode(value);
      } catch (CorruptRecordException unreadable) {
        return;
      }
      IdMap map = maps[member];
      for (IntIterator it = ids.getIntIterator(); it.hasNext(); ) {
        int id = map.get(it.next());
        if (id >= 0) {
          into.add(id);
        }
      }
    }
  }

  private static boolean advance(KvCursor c, byte[][] keys, byte[][] values, int i) {
    if (!c.next()) {
      keys[i] = null;
      values[i] = null;
      return false;
    }
    keys[i] = c.key();
    values[i] = c.value();
    return true;
  }

  private static boolean sameSuffix(byte[] a, byte[] b) {
    return Arrays.equals(
        a, Keys.BUCKET_PREFIX_LENGTH, a.length, b, Keys.BUCKET_PREFIX_LENGTH, b.length);
  }

  /** Member series id → coarse id, -1 for none; grows with the largest id. */
  private static final class IdMap {
    private int[] ids = new int[0];

    void put(int from, int to) {
      if (from < 0) {
        return;
      }
      if (from >= ids.length) {
        int old = ids.length;
        ids = Arrays.copyOf(ids, Math.max(from + 1, old * 2));
        Arrays.fill(ids, old, ids.length, -1);
      }
      ids[from] = to;
    }

    int get(int from) {
      return from >= 0 && from < ids.length ? ids[from] : -1;
    }
  }

  /** For the stats: buckets coarser than one hour in {@code all}. */
  static int coarseCount(TreeSet<TimeBucket> all) {
    int n = 0;
    for (TimeBucket b : all) {
      if (b.sizeCode() != TimeBucket.ONE_HOUR) {
        n++;
      }
    }
    return n;
  }
}
