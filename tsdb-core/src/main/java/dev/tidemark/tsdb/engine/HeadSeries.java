package dev.tidemark.tsdb.engine;

import dev.tidemark.tsdb.codec.ChunkDecoder;
import dev.tidemark.tsdb.codec.DecimalEncoder;
import dev.tidemark.tsdb.codec.GorillaDecoder;
import dev.tidemark.tsdb.codec.GorillaEncoder;
import dev.tidemark.tsdb.codec.TimeBucket;
import dev.tidemark.tsdb.codec.TimeSeriesValue;
import dev.tidemark.tsdb.model.Labels;
import dev.tidemark.tsdb.model.MetricMetadata;
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
 * <p>The series <i>is</i> its in-order stream's encoder ({@code extends GorillaEncoder}; the
 * encoder methods are called as {@code super.} methods here): at a million series that is one
 * object, 24 bytes and one dependent load per append less than holding the encoder in a field.
 *
 * <p>Guarded by the engine lock: mutated under the write lock, read (copied) under the read lock.
 */
final class HeadSeries extends GorillaEncoder {

  /** Outcome of {@link #check}. */
  static final int NEW = 0;

  static final int SAME = 1;
  static final int CONFLICT = 2;

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

  /** A TimeSeries value (encoding id, stream) of the frozen samples, or null. */
  private byte[] frozen;

  private int frozenCount;
  private long frozenFirstT;
  private long frozenLastT;
  private long frozenLastBits;

  private long lastBits;
  private long[] lateTimestamps;
  private long[] lateBits;
  private int lateCount;

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
    return sampleCount() == 0;
  }

  /** Newest timestamp; only when not empty. */
  long maxTimestamp() {
    return lastInOrderT();
  }

  private boolean hasInOrder() {
    return frozenCount > 0 || super.count() > 0;
  }

  /** Newest in-order timestamp (frozen part or stream); only when {@link #hasInOrder()}. */
  private long lastInOrderT() {
    return super.count() > 0 ? super.lastTimestampMillis() : frozenLastT;
  }

  /** Whether a sample at {@code t} with {@code bits} is new, already stored, or in conflict. */
  int check(long t, long bits) {
    if (!hasInOrder() || t > lastInOrderT()) {
      return NEW;
    }
    if (t == lastInOrderT()) {
      return bits == lastBits ? SAME : CONFLICT;
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
      d = new TimeSeriesValue.Decoders().open(frozen);
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

  /** Whether the stream holds {@code freezeSamples} samples or more (0: never freeze). */
  boolean due(int freezeSamples) {
    return freezeSamples > 0 && super.count() >= freezeSamples;
  }

  /**
   * Freezes now, in one step (recovery: nothing else runs). Returns the change in bytes.
   *
   * @see Freezer
   */
  int freeze(DecimalEncoder scratch) {
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
    long first = empty ? 0 : frozen != null ? frozenFirstT : super.firstTimestampMillis();
    if (lateCount > 0) {
      first = Math.min(first, lateTimestamps[0]);
    }
    return new Parts(
        this,
        frozen,
        super.toByteArray(),
        n,
        lateCount == 0 ? null : Arrays.copyOf(lateTimestamps, lateCount),
        lateCount == 0 ? null : Arrays.copyOf(lateBits, lateCount),
        lateCount,
        lastBits,
        sampleCount(),
        first,
        empty ? 0 : lastInOrderT());
  }

  /**
   * Swaps in a freeze {@linkplain #copyParts captured} earlier: the merged samples become the
   * frozen part, and the stream keeps only the samples appended since the capture. Returns the
   * change in bytes; 0, changing nothing, if the capture no longer describes the start of this
   * series (a late sample arrived since, or another freeze came first). Under the write lock.
   */
  int completeFreeze(Parts f) {
    if (f.encoded == null
        || f.count == 0
        || frozen != f.oldFrozen
        || lateCount != f.lateCount
        || super.count() < f.streamCount) {
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
    frozen = f.encoded;
    frozenCount = f.count;
    frozenFirstT = f.firstT;
    frozenLastT = f.lastT;
    frozenLastBits = f.lastBits;
    lateCount = 0;
    if (lateTimestamps != null && lateTimestamps.length > 4) {
      lateTimestamps = null;
      lateBits = null;
    }
    return (int) (sampleBytes() - before);
  }

  /**
   * The parts {@link #copyParts} took, then all of them merged into one TimeSeries value: {@link
   * #encode} for a seal, {@link #encodeForHead} for a freeze ({@link #completeFreeze}).
   */
  static final class Parts {
    final HeadSeries series;
    private final byte[] oldFrozen;
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

    private Parts(
        HeadSeries series,
        byte[] oldFrozen,
        byte[] stream,
        int streamCount,
        long[] lateTimestamps,
        long[] lateBits,
        int lateCount,
        long lastBits,
        int count,
        long firstT,
        long lastT) {
      this.series = series;
      this.oldFrozen = oldFrozen;
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
      return stream.length + 16 * lateCount;
    }

    /**
     * Merges and encodes, with the seal's rule ({@link TimeSeriesValue#smallest}); needs no lock
     * ({@code scratch} is the caller's).
     */
    void encode(DecimalEncoder scratch) {
      if (oldFrozen == null && lateCount == 0) {
        encoded = TimeSeriesValue.encodeSmallest(stream, scratch);
        return;
      }
      GorillaEncoder gorilla = new GorillaEncoder();
      scratch.reset();
      mergeInto(gorilla, scratch);
      encoded = TimeSeriesValue.smallest(gorilla, scratch);
    }

    /**
     * Merges and encodes for the head's frozen part, more cheaply than a seal: decimal at its
     * largest candidate exponent ({@link DecimalEncoder#largestExponentOnly}) when that leaves no
     * value an exception, else the smaller of that and Gorilla. Needs no lock.
     */
    void encodeForHead(DecimalEncoder scratch) {
      scratch.largestExponentOnly(true);
      try {
        scratch.reset();
        mergeInto(null, scratch);
        if (scratch.exceptionCount() == 0) {
          encoded = TimeSeriesValue.encode(scratch);
          return;
        }
        GorillaEncoder gorilla = new GorillaEncoder();
        scratch.reset();
        mergeInto(gorilla, scratch);
        encoded = TimeSeriesValue.smallest(gorilla, scratch);
      } finally {
        scratch.largestExponentOnly(false);
      }
    }

    /**
     * Appends the captured samples, oldest first, to {@code decimal} and (if given) {@code
     * gorilla}.
     */
    private void mergeInto(GorillaEncoder gorilla, DecimalEncoder decimal) {
      int late = 0;
      if (oldFrozen != null) {
        late = merge(new TimeSeriesValue.Decoders().open(oldFrozen), late, gorilla, decimal);
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

    private static void append(long t, long bits, GorillaEncoder gorilla, DecimalEncoder decimal) {
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
      lastBits = bits;
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
    lastBits = frozenLastBits;
    for (int i = 0; i < count && d.next(); i++) {
      super.append(d.timestampMillis(), d.valueBits());
      lastBits = d.valueBits();
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
    int bytes = due(freezeSamples) ? freeze(scratch) : 0;
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
        super.snapshot(),
        lateCount == 0 ? null : Arrays.copyOf(lateTimestamps, lateCount),
        lateCount == 0 ? null : Arrays.copyOf(lateBits, lateCount));
  }

  /** A series' samples as {@link #captureLocked()} found them. Immutable. */
  static final class Capture {
    /** The captured series: its labels, metadata and bucket are immutable. */
    final HeadSeries series;

    private final TimeBucket bucket;
    private final byte[] frozen;
    private final GorillaEncoder.Snapshot stream;
    private final long[] lateTimestamps;
    private final long[] lateBits;

    private Capture(
        HeadSeries series,
        byte[] frozen,
        GorillaEncoder.Snapshot stream,
        long[] lateTimestamps,
        long[] lateBits) {
      this.series = series;
      this.bucket = series.bucket.bucket;
      this.frozen = frozen;
      this.stream = stream;
      this.lateTimestamps = lateTimestamps;
      this.lateBits = lateBits;
    }

    /** The chunks {@link HeadSeries#capture()} describes. */
    ChunkSource[] chunks() {
      int lateCount = lateTimestamps == null ? 0 : lateTimestamps.length;
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
    return (frozen == null ? 0 : frozen.length) + super.encodedSizeBytes() + 16L * lateCount;
  }
}
