package dev.tidemark.tsdb.engine;

import dev.tidemark.tsdb.codec.ChunkDecoder;
import dev.tidemark.tsdb.codec.DecimalEncoder;
import dev.tidemark.tsdb.codec.GorillaDecoder;
import dev.tidemark.tsdb.codec.GorillaEncoder;
import dev.tidemark.tsdb.codec.Keys;
import dev.tidemark.tsdb.codec.TimeBucket;
import dev.tidemark.tsdb.codec.TimeSeriesValue;
import dev.tidemark.tsdb.kv.KvReader;
import dev.tidemark.tsdb.model.Labels;
import dev.tidemark.tsdb.model.MetricMetadata;
import dev.tidemark.tsdb.model.NativeHistogram;
import java.util.Arrays;

/**
 * The samples of one series in one open bucket: an optional <i>frozen part</i> (older in-order
 * samples, re-encoded in a denser encoding), a Gorilla encoder for the in-order samples after it,
 * and a small sorted side buffer for late ones (inside the out-of-order window). Sealing merges the
 * three into the bucket's chunk ({@link #copyParts}, then {@link Parts#encode} with the sealing
 * rule).
 *
 * <p><b>Freezing</b> ({@code docs/architecture.md}, The head): once the Gorilla stream holds {@code
 * EngineConfig.headFreezeSamples} samples, the frozen part, the stream and the late buffer are
 * merged into a new frozen part ({@link Parts#encodeForHead}: the decimal chunk is 2 to 7 times
 * smaller for decimal-looking values). The {@link Freezer} does it off the append path in three
 * steps: {@link #copyParts} copies what is there (read lock), {@link Parts#encodeForHead} merges
 * and encodes it (no lock), {@link #completeFreeze} swaps it in (write lock) and keeps in the
 * stream whatever was appended in between. Every append runs wholly under the write lock, so what a
 * copy sees is committed: an undo only ever cuts samples appended after it.
 *
 * <p><b>Frozen parts in the store</b> (issue #22, item 5): the {@link Freezer} writes each part it
 * makes as a HeadChunk record ({@code docs/format.md}; part numbers 0, 1, ... in time order, parts
 * never overlap) and the series keeps only their summary: how many parts, their sample count, first
 * and last timestamp and last value bits. A freeze then merges only the stream and the late samples
 * after the stored parts; late samples older than the stored parts' last timestamp stay in the late
 * buffer until the seal. Readers and the seal read the parts through the KV seam ({@link
 * Capture#loadParts}, {@link Parts#loadStored}); a late sample inside the parts' time range is
 * checked against them with point reads ({@link #check}), the only reads an append of a known
 * series can make. A freeze done without the store (recovery and a reopen, which replay or load
 * whole buckets with nothing else running) keeps its part on the heap ({@link #frozen}), as before
 * item 5; the next freeze by the {@link Freezer} writes it out. Either the heap part or stored
 * parts, never both.
 *
 * <p>The series <i>is</i> its in-order stream's encoder ({@code extends GorillaEncoder}; the
 * encoder methods are called as {@code super.} methods here): at a million series that is one
 * object, 24 bytes and one dependent load per append less than holding the encoder in a field.
 *
 * <p><b>Native histogram samples</b> (issue #25) live in a {@link HeadHistograms} referenced from
 * one field ({@link #histograms}), made on the series' first histogram sample. A series holds one
 * kind of sample in a bucket: a sample of the other kind is refused ({@link #KIND_CONFLICT}; {@code
 * docs/architecture.md}, Native histograms), so the seal writes one TimeSeries record of either
 * kind.
 *
 * <p>Guarded by the engine lock: mutated under the write lock, read (copied) under the read lock.
 */
final class HeadSeries extends GorillaEncoder {

  /** Outcome of {@link #check}. */
  static final int NEW = 0;

  static final int SAME = 1;
  static final int CONFLICT = 2;

  /** A float sample for a series holding histograms in this bucket, or the other way round. */
  static final int KIND_CONFLICT = 3;

  /**
   * The fixed heap cost of a series in the head beside its {@link #sampleBytes()}: this object
   * (with its encoder, 152 bytes), its label set and the label set's array (94), the head's ref and
   * its slots in the refs map (48), and its share of the bucket's id list, fingerprint index and
   * postings (about 30). Measured with {@code jmap -histo:live} at a million series of 40 samples
   * each (docs/benchmarks.md, session 12): the head held about 540 MB, and the head's count with
   * this value comes to 543 MB (with 160, as until session 12, 407 MB). The sample part is counted
   * as encoded bytes, a little more than the buffers hold on average at 40 samples, which this
   * value absorbs.
   */
  static final int OVERHEAD_BYTES = 296;

  /**
   * The part of {@link #OVERHEAD_BYTES} a series has once however many open buckets hold a copy of
   * it: its label set (94), which every copy references, and the head's ref with its map slots
   * (48). A second copy (the hour boundary: both hours open for the out-of-order window) costs only
   * {@link #COPY_BYTES}; counted per copy, as until session 17, a million series across a boundary
   * were counted about 300 MB above what they hold (with the label references of {@code
   * Engine.stats}).
   */
  static final int SHARED_BYTES = 142;

  /** What each open copy of a series costs beside its samples: this object and its index shares. */
  static final int COPY_BYTES = OVERHEAD_BYTES - SHARED_BYTES;

  /**
   * The fixed heap cost of the head: {@link #COPY_BYTES} per copy, {@link #SHARED_BYTES} per series
   * however many copies it has (with one copy each, {@link #OVERHEAD_BYTES} a series).
   */
  static long fixedBytes(long copies, long series) {
    return copies * COPY_BYTES + series * SHARED_BYTES;
  }

  /**
   * Whether this is the copy that counts what the copies of a series share: the one in the newest
   * of their buckets (the ring is as long as the open buckets holding the series, two at a
   * boundary). Under the lock (either).
   */
  boolean countsShared() {
    for (HeadSeries c = otherCopy; c != null && c != this; c = c.otherCopy) {
      if (c.bucket.bucket.compareTo(bucket.bucket) > 0) {
        return false;
      }
    }
    return true;
  }

  final HeadBucket bucket;
  final Labels labels;

  /**
   * The same series in another open bucket, or null while this is its only open copy: the copies of
   * a series across the open buckets form a ring, which {@link HeadState} keeps so that a bucket
   * leaving the head adjusts {@link HeadState#activeSeries} without a hash lookup per series. Under
   * the write lock.
   */
  HeadSeries otherCopy;

  final MetricMetadata metadata;
  final int id;

  /**
   * A TimeSeries value (encoding id, stream) of the frozen samples held on the heap, or null; null
   * whenever {@link #storedParts} is not 0.
   */
  private byte[] frozen;

  /** HeadChunk records of this series in the store: parts {@code 0 .. storedParts - 1}. */
  private int storedParts;

  /** Samples of the frozen part or the stored parts; their first and last timestamp, last bits. */
  private int frozenCount;

  private long frozenFirstT;
  private long frozenLastT;
  private long frozenLastBits;

  // The newest in-order value bits are the stream's last ({@link #lastInOrderBits}): no field of
  // their own, which keeps this object at 152 bytes with the stored parts' count added.
  private long[] lateTimestamps;
  private long[] lateBits;
  private int lateCount;

  /** The native histogram samples, or null until the first one (issue #25). */
  private HeadHistograms histograms;

  HeadSeries(HeadBucket bucket, Labels labels, MetricMetadata metadata, int id) {
    this.bucket = bucket;
    this.labels = labels;
    this.metadata = MetricMetadata.intern(metadata);
    this.id = id;
  }

  /** Samples held: the frozen part's, the in-order stream's and the late buffer's. */
  int sampleCount() {
    return frozenCount + super.count() + lateCount;
  }

  boolean isEmpty() {
    return sampleCount() == 0 && !hasHistograms();
  }

  /** Newest timestamp; only when not empty. */
  long maxTimestamp() {
    return hasHistograms() ? histograms.maxTimestamp() : lastInOrderT();
  }

  /** Whether the series holds native histogram samples (then no float samples). */
  boolean hasHistograms() {
    return histograms != null && !histograms.isEmpty();
  }

  /** The histogram samples, or null if the series never had one in this bucket. */
  HeadHistograms histograms() {
    return histograms;
  }

  /** {@link #check} of a histogram sample. */
  int checkHistogram(long t, NativeHistogram h) {
    if (hasInOrder()) { // late samples exist only behind in-order ones
      return KIND_CONFLICT;
    }
    return histograms == null ? NEW : histograms.check(t, h);
  }

  /** Stores a histogram sample {@link #checkHistogram} called new; returns the change in bytes. */
  int insertHistogram(long t, NativeHistogram h) {
    int created = 0;
    if (histograms == null) {
      histograms = new HeadHistograms();
      created = (int) histograms.sampleBytes(); // an empty stream's header: 1 byte
    }
    return created + histograms.insert(t, h);
  }

  /** {@link #insertRecovered} of a histogram sample: anything new; a conflict keeps the first. */
  int insertHistogramRecovered(long t, NativeHistogram h) {
    return checkHistogram(t, h) == NEW ? insertHistogram(t, h) : 0;
  }

  private boolean hasInOrder() {
    return frozenCount > 0 || super.count() > 0;
  }

  /** Newest in-order timestamp (frozen part or stream); only when {@link #hasInOrder()}. */
  private long lastInOrderT() {
    return super.count() > 0 ? super.lastTimestampMillis() : frozenLastT;
  }

  /** Newest in-order value bits (frozen part or stream); only when {@link #hasInOrder()}. */
  private long lastInOrderBits() {
    return super.count() > 0 ? super.lastValueBits() : frozenLastBits;
  }

  /** Whether a sample at {@code t} with {@code bits} is new, already stored, or in conflict. */
  int check(long t, long bits) {
    if (histograms != null && !histograms.isEmpty()) {
      return KIND_CONFLICT;
    }
    if (!hasInOrder() || t > lastInOrderT()) {
      return NEW;
    }
    if (t == lastInOrderT()) {
      return bits == lastInOrderBits() ? SAME : CONFLICT;
    }
    if (lateCount > 0) {
      int i = Arrays.binarySearch(lateTimestamps, 0, lateCount, t);
      if (i >= 0) {
        return lateBits[i] == bits ? SAME : CONFLICT;
      }
    }
    if (t < (frozenCount > 0 ? frozenFirstT : super.firstTimestampMillis())) {
      return NEW;
    }
    // Rare path: look inside the frozen part or the in-order stream.
    ChunkDecoder d;
    if (frozenCount > 0 && t <= frozenLastT) {
      TimeSeriesValue.Decoders decoders = new TimeSeriesValue.Decoders();
      if (frozen == null) {
        return checkStored(t, bits, decoders);
      }
      d = decoders.open(frozen);
    } else {
      byte[] bytes = super.toByteArray();
      d = new GorillaDecoder();
      d.reset(bytes, 0, bytes.length);
    }
    if (d.seek(t) && d.timestampMillis() == t) {
      return d.valueBits() == bits ? SAME : CONFLICT;
    }
    return NEW;
  }

  /**
   * {@link #check} of a late sample inside the stored parts' time range: point reads of the parts,
   * oldest first, until one reaches {@code t}. Parts never overlap, so the first part with a sample
   * at or after {@code t} decides.
   */
  private int checkStored(long t, long bits, TimeSeriesValue.Decoders decoders) {
    for (int i = 0; i < storedParts; i++) {
      ChunkDecoder d = decoders.open(readPart(bucket.store, bucket.bucket, id, i));
      if (d.seek(t)) {
        return d.timestampMillis() != t ? NEW : d.valueBits() == bits ? SAME : CONFLICT;
      }
    }
    return NEW;
  }

  /**
   * Part {@code part} of series {@code id} in bucket {@code b}; a missing record is a bug (the
   * engine deletes a bucket's parts only when the bucket leaves the head).
   */
  static byte[] readPart(KvReader store, TimeBucket b, int id, int part) {
    byte[] v = store.get(Keys.headChunk(b, id, part));
    if (v == null) {
      throw new IllegalStateException(
          "HeadChunk record " + b + "/" + id + "/" + part + " is missing");
    }
    return v;
  }

  /**
   * Whether the stream holds {@code freezeSamples} samples or more (0: never freeze), or, once the
   * series has moved on to a newer open bucket (its other copy), at least {@link #movedOnSamples}:
   * at the hour boundary the old hour's streams are frozen and written out as their series move on,
   * so the old hour holds summaries rather than streams for its out-of-order window.
   */
  boolean due(int freezeSamples) {
    int n = super.count();
    return freezeSamples > 0
        && (n >= freezeSamples
            || (n >= movedOnSamples(freezeSamples)
                && otherCopy != null
                && otherCopy.bucket.bucket.compareTo(bucket.bucket) > 0));
  }

  /**
   * Samples a moved-on series' stream needs to be frozen: a sixteenth of {@code freezeSamples} (at
   * least one), so that late samples trickling into an old hour do not each make a part.
   */
  static int movedOnSamples(int freezeSamples) {
    return Math.max(1, freezeSamples >> 4);
  }

  /** Whether the stream holds {@code freezeSamples} samples or more (recovery's rule). */
  private boolean dueBySize(int freezeSamples) {
    return freezeSamples > 0 && super.count() >= freezeSamples;
  }

  /** HeadChunk records of this series (parts {@code 0 ..} this {@code - 1}). */
  int storedParts() {
    return storedParts;
  }

  /**
   * Freezes now, in one step (recovery: nothing else runs). Returns the change in bytes.
   *
   * @see Freezer
   */
  int freeze(DecimalEncoder scratch) {
    if (storedParts > 0) {
      throw new IllegalStateException("a series with stored parts is frozen by the Freezer only");
    }
    Parts f = copyParts();
    f.encodeForHead(scratch);
    return completeFreeze(f);
  }

  /**
   * Copies the series' parts (stream and late samples; the frozen part is immutable and shared),
   * for a freeze or a seal to merge without the lock. Under the read lock.
   */
  Parts copyParts() {
    int n = super.count();
    boolean empty = !hasInOrder(); // then the late buffer is empty too
    long first = empty ? 0 : frozenCount > 0 ? frozenFirstT : super.firstTimestampMillis();
    if (lateCount > 0) {
      first = Math.min(first, lateTimestamps[0]);
    }
    return new Parts(
        this,
        frozen,
        storedParts,
        storedParts == 0 || lateCount == 0
            ? 0
            : insertionPoint(lateTimestamps, lateCount, frozenLastT),
        super.toByteArray(),
        n,
        lateCount == 0 ? null : Arrays.copyOf(lateTimestamps, lateCount),
        lateCount == 0 ? null : Arrays.copyOf(lateBits, lateCount),
        lateCount,
        empty ? 0 : lastInOrderBits(),
        sampleCount(),
        first,
        empty ? 0 : lastInOrderT(),
        hasHistograms() ? histograms.copy() : null);
  }

  /**
   * Swaps in a freeze {@linkplain #copyParts captured} earlier: the merged samples become the
   * frozen part, and the stream keeps only the samples appended since the capture. Returns the
   * change in bytes; 0, changing nothing, if the capture no longer describes the start of this
   * series (a late sample arrived since, or another freeze came first). Under the write lock.
   */
  int completeFreeze(Parts f) {
    if (!freezeStillValid(f)) {
      return 0;
    }
    long before = sampleBytes();
    if (super.count() == f.streamCount) {
      super.restart();
    } else {
      byte[] bytes = super.toByteArray();
      GorillaDecoder d = new GorillaDecoder();
      d.reset(bytes, 0, bytes.length);
      super.restart();
      for (int i = 0; i < f.streamCount; i++) {
        d.next();
      }
      while (d.next()) {
        super.append(d.timestampMillis(), d.valueBits());
      }
    }
    if (f.toStore) {
      // Written as HeadChunk record number f.oldParts (the Freezer wrote it under this lock hold).
      frozenCount = f.oldParts == 0 ? f.mergedCount : frozenCount + f.mergedCount;
      frozenFirstT = f.oldParts == 0 ? f.mergedFirstT : frozenFirstT;
      frozen = null;
      storedParts = f.oldParts + 1;
    } else {
      frozen = f.encoded;
      frozenCount = f.count;
      frozenFirstT = f.firstT;
    }
    frozenLastT = f.lastT;
    frozenLastBits = f.lastBits;
    // The late samples older than the stored parts' end stay (f.retained, the first ones).
    lateCount = f.retained;
    if (lateCount == 0 && lateTimestamps != null && lateTimestamps.length > 4) {
      lateTimestamps = null;
      lateBits = null;
    }
    return (int) (sampleBytes() - before);
  }

  /**
   * Whether a freeze {@linkplain #copyParts captured} earlier still describes the start of this
   * series: the same frozen part or stored parts, the same late samples, at least the captured
   * stream. Under the write lock.
   */
  boolean freezeStillValid(Parts f) {
    return f.encoded != null
        && (f.toStore ? f.mergedCount > 0 : f.count > 0)
        && frozen == f.oldFrozen
        && storedParts == f.oldParts
        && lateCount == f.lateCount
        && super.count() >= f.streamCount;
  }

  /**
   * The parts {@link #copyParts} took, then all of them merged into one TimeSeries value: {@link
   * #encode} for a seal, {@link #encodeForHead} for a freeze ({@link #completeFreeze}).
   */
  static final class Parts {
    final HeadSeries series;
    private final byte[] oldFrozen;

    /** The series' stored parts at the capture; a freeze writes part number {@code oldParts}. */
    final int oldParts;

    /**
     * Late samples (the first ones) older than the stored parts' end: a freeze leaves them in the
     * late buffer, for the seal, so that stored parts never overlap.
     */
    private final int retained;

    private final byte[] stream;
    private final int streamCount;
    private final long[] lateTimestamps;
    private final long[] lateBits;
    private final int lateCount;
    private final long lastBits;
    private final int count;
    private final long firstT;
    private final long lastT;
    private byte[] encoded;

    /** The histogram samples, or null for a float series (then the float parts are empty). */
    private final HeadHistograms.Copy histograms;

    /** Whether {@link #encodeForHead} made a part for the store (else one for the heap). */
    private boolean toStore;

    /** The stored parts' values, for a seal ({@link #loadStored}). */
    private byte[][] stored;

    /** Samples merged by the last encode, and the first one's timestamp. */
    private int mergedCount;

    private long mergedFirstT;

    private Parts(
        HeadSeries series,
        byte[] oldFrozen,
        int oldParts,
        int retained,
        byte[] stream,
        int streamCount,
        long[] lateTimestamps,
        long[] lateBits,
        int lateCount,
        long lastBits,
        int count,
        long firstT,
        long lastT,
        HeadHistograms.Copy histograms) {
      this.histograms = histograms;
      this.series = series;
      this.oldFrozen = oldFrozen;
      this.oldParts = oldParts;
      this.retained = retained;
      this.stream = stream;
      this.streamCount = streamCount;
      this.lateTimestamps = lateTimestamps;
      this.lateBits = lateBits;
      this.lateCount = lateCount;
      this.lastBits = lastBits;
      this.count = count;
      this.firstT = firstT;
      this.lastT = lastT;
    }

    /** Bytes copied by the capture. */
    int copiedBytes() {
      return stream.length + 16 * lateCount + (histograms == null ? 0 : histograms.copiedBytes());
    }

    /** Whether the series had stored parts at the capture: a seal must {@link #loadStored} them. */
    boolean hasStored() {
      return oldParts > 0;
    }

    /**
     * Reads the stored parts the capture names, for {@link #encode}; without the lock (a seal runs
     * on the background thread, as the only writer of parts, the {@link Freezer}).
     */
    void loadStored(KvReader store) {
      stored = new byte[oldParts][];
      for (int i = 0; i < oldParts; i++) {
        stored[i] = readPart(store, series.bucket.bucket, series.id, i);
      }
    }

    /**
     * Merges and encodes, with the seal's rule ({@link TimeSeriesValue#smallest}); needs no lock
     * ({@code scratch} is the caller's). Stored parts must be {@linkplain #loadStored loaded}.
     */
    void encode(DecimalEncoder scratch) {
      if (oldParts > 0 && stored == null) {
        throw new IllegalStateException("stored parts not loaded");
      }
      if (histograms != null) {
        encoded = histograms.encode(); // a series holds one kind of sample in a bucket
        return;
      }
      if (oldFrozen == null && oldParts == 0 && lateCount == 0) {
        encoded = TimeSeriesValue.encodeSmallest(stream, scratch);
        return;
      }
      GorillaEncoder gorilla = new GorillaEncoder();
      scratch.reset();
      mergeInto(gorilla, scratch, false);
      encoded = TimeSeriesValue.smallest(gorilla, scratch);
    }

    /**
     * Merges and encodes for the head's frozen part, more cheaply than a seal: decimal at its
     * largest candidate exponent ({@link DecimalEncoder#largestExponentOnly}) when that leaves no
     * value an exception, else the smaller of that and Gorilla. Needs no lock. For the heap (as
     * recovery freezes) unless {@code toStore}: then, if the series has stored parts, only the
     * stream and the late samples after the parts are merged, into the next part.
     */
    void encodeForHead(DecimalEncoder scratch, boolean toStore) {
      this.toStore = toStore;
      boolean newOnly = toStore && oldParts > 0;
      scratch.largestExponentOnly(true);
      try {
        scratch.reset();
        mergeInto(null, scratch, newOnly);
        if (scratch.exceptionCount() == 0) {
          encoded = TimeSeriesValue.encode(scratch);
          return;
        }
        GorillaEncoder gorilla = new GorillaEncoder();
        scratch.reset();
        mergeInto(gorilla, scratch, newOnly);
        encoded = TimeSeriesValue.smallest(gorilla, scratch);
      } finally {
        scratch.largestExponentOnly(false);
      }
    }

    /** {@link #encodeForHead(DecimalEncoder, boolean)} for the heap. */
    void encodeForHead(DecimalEncoder scratch) {
      encodeForHead(scratch, false);
    }

    /**
     * Appends the captured samples, oldest first, to {@code decimal} and (if given) {@code
     * gorilla}; with {@code newOnly}, only the stream and the late samples from {@link #retained}
     * on (a freeze of a series with stored parts).
     */
    private void mergeInto(GorillaEncoder gorilla, DecimalEncoder decimal, boolean newOnly) {
      mergedCount = 0;
      int late = newOnly ? retained : 0;
      if (!newOnly) {
        if (oldFrozen != null) {
          late = merge(new TimeSeriesValue.Decoders().open(oldFrozen), late, gorilla, decimal);
        }
        if (stored != null) {
          TimeSeriesValue.Decoders decoders = new TimeSeriesValue.Decoders();
          for (byte[] part : stored) {
            late = merge(decoders.open(part), late, gorilla, decimal);
          }
        }
      }
      GorillaDecoder d = new GorillaDecoder();
      d.reset(stream, 0, stream.length);
      late = merge(d, late, gorilla, decimal);
      for (; late < lateCount; late++) {
        append(lateTimestamps[late], lateBits[late], gorilla, decimal);
      }
    }

    /**
     * Appends the decoder's samples, with the late samples from index {@code late} on that come
     * before each; returns the index of the first late sample not appended.
     */
    private int merge(ChunkDecoder d, int late, GorillaEncoder gorilla, DecimalEncoder decimal) {
      while (d.next()) {
        long t = d.timestampMillis();
        while (late < lateCount && lateTimestamps[late] < t) {
          append(lateTimestamps[late], lateBits[late], gorilla, decimal);
          late++;
        }
        append(t, d.valueBits(), gorilla, decimal);
      }
      return late;
    }

    private void append(long t, long bits, GorillaEncoder gorilla, DecimalEncoder decimal) {
      if (mergedCount++ == 0) {
        mergedFirstT = t;
      }
      if (gorilla != null) {
        gorilla.append(t, bits);
      }
      decimal.append(t, bits);
    }

    /** The series' samples at the capture as a TimeSeries value; after {@link #encode}. */
    byte[] encoded() {
      return encoded;
    }
  }

  /**
   * Stores a sample that {@link #check} called {@link #NEW}. Returns the change in encoded bytes.
   */
  int insert(long t, long bits) {
    if (!hasInOrder() || t > lastInOrderT()) {
      int before = super.encodedSizeBytes();
      super.append(t, bits);
      return super.encodedSizeBytes() - before;
    }
    if (lateTimestamps == null) {
      lateTimestamps = new long[4];
      lateBits = new long[4];
    } else if (lateCount == lateTimestamps.length) {
      lateTimestamps = Arrays.copyOf(lateTimestamps, lateCount * 2);
      lateBits = Arrays.copyOf(lateBits, lateCount * 2);
    }
    int i = Arrays.binarySearch(lateTimestamps, 0, lateCount, t);
    int at = i >= 0 ? i : -i - 1;
    System.arraycopy(lateTimestamps, at, lateTimestamps, at + 1, lateCount - at);
    System.arraycopy(lateBits, at, lateBits, at + 1, lateCount - at);
    lateTimestamps[at] = t;
    lateBits[at] = bits;
    lateCount++;
    return 16;
  }

  /**
   * Samples in the in-order Gorilla stream (the frozen part and the late buffer aside); what {@link
   * #truncateInOrder} takes.
   */
  int inOrderCount() {
    return super.count();
  }

  /**
   * Undoes in-order inserts: keeps the first {@code count} samples of the in-order stream (an
   * append's rollback; re-encodes them, so it costs a decode and an encode of the stream). The
   * frozen part holds no sample of the append being undone.
   */
  void truncateInOrder(int count) {
    if (count >= super.count()) {
      return;
    }
    byte[] bytes = super.toByteArray();
    GorillaDecoder d = new GorillaDecoder();
    d.reset(bytes, 0, bytes.length);
    super.restart();
    for (int i = 0; i < count && d.next(); i++) {
      super.append(d.timestampMillis(), d.valueBits());
    }
  }

  /**
   * Undoes a late insert (an append's rollback): removes the late sample at {@code t}. Returns
   * false if no late sample has that timestamp (then it went into the in-order encoder).
   */
  boolean removeLate(long t) {
    int i = lateCount == 0 ? -1 : Arrays.binarySearch(lateTimestamps, 0, lateCount, t);
    if (i < 0) {
      return false;
    }
    System.arraycopy(lateTimestamps, i + 1, lateTimestamps, i, lateCount - i - 1);
    System.arraycopy(lateBits, i + 1, lateBits, i, lateCount - i - 1);
    lateCount--;
    return true;
  }

  /**
   * Inserts during recovery: anything not already there; a conflicting sample keeps the first.
   * Freezes when due (recovery undoes nothing).
   */
  int insertRecovered(long t, long bits, int freezeSamples, DecimalEncoder scratch) {
    if (check(t, bits) != NEW) {
      return 0;
    }
    int bytes = dueBySize(freezeSamples) && storedParts == 0 ? freeze(scratch) : 0;
    return bytes + insert(t, bits);
  }

  /**
   * Copies of the current samples for a reader, oldest first: the frozen part (with the late
   * samples before the stream's first) and the stream (with the other late samples); one or two
   * chunks, never an empty one. Both belong to this bucket; a reader walks them one after the
   * other. Under the read lock; {@link #captureLocked()} then {@link Capture#chunks()} moves the
   * copying out of it.
   */
  ChunkSource[] capture() {
    return captureLocked().chunks();
  }

  /**
   * What {@link #capture()} needs, taken in constant time without copying the stream (the frozen
   * part is immutable; the stream is a {@link GorillaEncoder#snapshot() snapshot}, valid because
   * the head only ever {@link GorillaEncoder#restart() restarts} its streams; only the late buffer,
   * a few samples if any, is copied). Under the read lock; {@link Capture#chunks()} runs without
   * it.
   */
  Capture captureLocked() {
    return new Capture(
        this,
        frozenCount == 0 ? null : frozen,
        storedParts,
        super.snapshot(),
        lateCount == 0 ? null : Arrays.copyOf(lateTimestamps, lateCount),
        lateCount == 0 ? null : Arrays.copyOf(lateBits, lateCount),
        hasHistograms() ? histograms.copy() : null);
  }

  /** A series' samples as {@link #captureLocked()} found them. Immutable. */
  static final class Capture {
    /** The captured series: its labels, metadata and bucket are immutable. */
    final HeadSeries series;

    private final TimeBucket bucket;
    private final byte[] frozen;
    private final int storedParts;
    private final GorillaEncoder.Snapshot stream;
    private final long[] lateTimestamps;
    private final long[] lateBits;

    /** The stored parts' values once {@link #loadParts} read them. */
    private byte[][] parts;

    /** The histogram samples, or null for a float series (then the float parts are empty). */
    private final HeadHistograms.Copy histograms;

    private Capture(
        HeadSeries series,
        byte[] frozen,
        int storedParts,
        GorillaEncoder.Snapshot stream,
        long[] lateTimestamps,
        long[] lateBits,
        HeadHistograms.Copy histograms) {
      this.histograms = histograms;
      this.series = series;
      this.bucket = series.bucket.bucket;
      this.frozen = frozen;
      this.storedParts = storedParts;
      this.stream = stream;
      this.lateTimestamps = lateTimestamps;
      this.lateBits = lateBits;
    }

    /** Whether the series had stored parts: {@link #loadParts} must read them before chunks. */
    boolean hasStoredParts() {
      return storedParts > 0;
    }

    /**
     * Reads the stored parts the capture names through {@code store}, a snapshot taken in the same
     * read-lock hold as the capture (parts are written and their count changed under the write
     * lock, and a part number is never rewritten while its bucket is open). Without the lock.
     */
    void loadParts(KvReader store) {
      if (storedParts > 0 && parts == null) {
        byte[][] p = new byte[storedParts][];
        for (int i = 0; i < storedParts; i++) {
          p[i] = readPart(store, bucket, series.id, i);
        }
        parts = p;
      }
    }

    /** The chunks {@link HeadSeries#capture()} describes. */
    ChunkSource[] chunks() {
      if (histograms != null) { // one chunk of histogram samples, merged here, without the lock
        byte[] value = histograms.encode();
        return new ChunkSource[] {
          new ChunkSource(bucket, TimeSeriesValue.ENCODING_HISTOGRAM, value, 1, null, null, 0)
        };
      }
      int lateCount = lateTimestamps == null ? 0 : lateTimestamps.length;
      if (storedParts > 0) {
        return chunksWithParts(lateCount);
      }
      if (frozen == null) {
        return new ChunkSource[] {live(0, lateCount)};
      }
      // Late samples before the stream's first sample (all of them when it is empty) go with the
      // frozen part, the others with the stream, so that the two chunks do not overlap in time.
      int split =
          stream.count() == 0
              ? lateCount
              : lateCount == 0
                  ? 0
                  : insertionPoint(lateTimestamps, lateCount, stream.firstTimestampMillis());
      ChunkSource f =
          new ChunkSource(
              bucket,
              frozen[0] & 0xFF,
              frozen,
              1,
              split == 0 ? null : Arrays.copyOf(lateTimestamps, split),
              split == 0 ? null : Arrays.copyOf(lateBits, split),
              split);
      if (stream.count() == 0) {
        return new ChunkSource[] {f};
      }
      return new ChunkSource[] {f, live(split, lateCount)};
    }

    /**
     * The stored parts (oldest first), then the stream if it holds samples; each late sample goes
     * with the last chunk that starts at or before it (the first chunk when none does), so the
     * chunks do not overlap in time.
     */
    private ChunkSource[] chunksWithParts(int lateCount) {
      if (parts == null) {
        throw new IllegalStateException("stored parts of a head series read before loadParts");
      }
      int n = parts.length + (stream.count() > 0 ? 1 : 0);
      ChunkSource[] out = new ChunkSource[n];
      TimeSeriesValue.Decoders decoders = lateCount == 0 ? null : new TimeSeriesValue.Decoders();
      int from = 0;
      for (int i = 0; i < parts.length; i++) {
        int to = lateCount;
        if (lateCount > 0 && i + 1 < n) {
          long nextFirst;
          if (i + 1 < parts.length) {
            ChunkDecoder d = decoders.open(parts[i + 1]);
            d.next(); // a part is never empty
            nextFirst = d.timestampMillis();
          } else {
            nextFirst = stream.firstTimestampMillis();
          }
          to = Math.max(from, insertionPoint(lateTimestamps, lateCount, nextFirst));
        }
        byte[] p = parts[i];
        out[i] =
            new ChunkSource(
                bucket,
                p[0] & 0xFF,
                p,
                1,
                to == from ? null : Arrays.copyOfRange(lateTimestamps, from, to),
                to == from ? null : Arrays.copyOfRange(lateBits, from, to),
                to - from);
        from = to;
      }
      if (n > parts.length) {
        out[parts.length] = live(from, lateCount);
      }
      return out;
    }

    /** The stream, copied only when a reader opens it ({@link ChunkSource#live}). */
    private ChunkSource live(int from, int lateCount) {
      int n = lateCount - from;
      if (n == 0) {
        return ChunkSource.live(bucket, stream, null, null, 0);
      }
      return ChunkSource.live(
          bucket,
          stream,
          Arrays.copyOfRange(lateTimestamps, from, lateCount),
          Arrays.copyOfRange(lateBits, from, lateCount),
          n);
    }
  }

  private static int insertionPoint(long[] sorted, int n, long t) {
    int i = Arrays.binarySearch(sorted, 0, n, t);
    return i >= 0 ? i : -i - 1;
  }

  /** The stream with the late samples from index {@code from} on. */
  /** Approximate heap bytes of the samples (frozen part, encoded stream and late buffer). */
  long sampleBytes() {
    return (frozen == null ? 0 : frozen.length)
        + super.encodedSizeBytes()
        + 16L * lateCount
        + (histograms == null ? 0 : histograms.sampleBytes());
  }
}
