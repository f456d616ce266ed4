package dev.tidemark.tsdb.engine;

import dev.tidemark.tsdb.codec.ChunkDecoder;
import dev.tidemark.tsdb.codec.DecimalEncoder;
import dev.tidemark.tsdb.codec.GorillaDecoder;
import dev.tidemark.tsdb.codec.GorillaEncoder;
import dev.tidemark.tsdb.codec.TimeSeriesValue;
import dev.tidemark.tsdb.model.Labels;
import dev.tidemark.tsdb.model.MetricMetadata;
import java.util.Arrays;

/**
 * The samples of one series in one open bucket: an optional <i>frozen part</i> (older in-order
 * samples, re-encoded in the smaller of the sealed encodings), a Gorilla encoder for the in-order
 * samples after it, and a small sorted side buffer for late ones (inside the out-of-order window).
 * Sealing merges the three into the bucket's chunk.
 *
 * <p><b>Freezing</b> ({@code docs/architecture.md}, The head): once the Gorilla stream holds {@code
 * EngineConfig.headFreezeSamples} samples, the next append that reaches this series first merges
 * the frozen part, the stream and the late buffer into a new frozen part ({@link
 * TimeSeriesValue#encodeSmallest}: the decimal chunk is 2 to 7 times smaller for decimal-looking
 * values) and starts an empty stream. Only an append's first touch of the series freezes ({@link
 * #freezeEpoch}), so a frozen sample is always one of an earlier, successful append: an undo only
 * ever cuts the stream and the late buffer, never the frozen part.
 *
 * <p>Guarded by the engine lock: mutated under the write lock, read (copied) under the read lock.
 */
final class HeadSeries {

  /** Outcome of {@link #check}. */
  static final int NEW = 0;

  static final int SAME = 1;
  static final int CONFLICT = 2;

  /** Rough fixed cost of a series in the head: this object, its map entries, the encoder. */
  static final int OVERHEAD_BYTES = 160;

  final HeadBucket bucket;
  final Labels labels;
  final MetricMetadata metadata;
  final int id;

  /** A TimeSeries value (encoding id, stream) of the frozen samples, or null. */
  private byte[] frozen;

  private int frozenCount;
  private long frozenFirstT;
  private long frozenLastT;
  private long frozenLastBits;

  /** The append epoch ({@link AppendUndo#epoch()}) that last touched this series. */
  long freezeEpoch = -1;

  private final GorillaEncoder inOrder = new GorillaEncoder();
  private long lastBits;
  private long[] lateTimestamps;
  private long[] lateBits;
  private int lateCount;

  HeadSeries(HeadBucket bucket, Labels labels, MetricMetadata metadata, int id) {
    this.bucket = bucket;
    this.labels = labels;
    this.metadata = metadata;
    this.id = id;
  }

  int count() {
    return frozenCount + inOrder.count() + lateCount;
  }

  boolean isEmpty() {
    return count() == 0;
  }

  /** Newest timestamp; only when not empty. */
  long maxTimestamp() {
    return lastInOrderT();
  }

  private boolean hasInOrder() {
    return frozenCount > 0 || inOrder.count() > 0;
  }

  /** Newest in-order timestamp (frozen part or stream); only when {@link #hasInOrder()}. */
  private long lastInOrderT() {
    return inOrder.count() > 0 ? inOrder.lastTimestampMillis() : frozenLastT;
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
    if (t < (frozenCount > 0 ? frozenFirstT : inOrder.firstTimestampMillis())) {
      return NEW;
    }
    // Rare path: look inside the frozen part or the in-order stream.
    ChunkDecoder d;
    if (frozenCount > 0 && t <= frozenLastT) {
      d = new TimeSeriesValue.Decoders().open(frozen);
    } else {
      byte[] bytes = inOrder.toByteArray();
      d = new GorillaDecoder();
      d.reset(bytes, 0, bytes.length);
    }
    if (d.seek(t) && d.timestampMillis() == t) {
      return d.valueBits() == bits ? SAME : CONFLICT;
    }
    return NEW;
  }

  /**
   * Freezes, if due, before an append's first insert into this series ({@code epoch} is the
   * append's): everything held so far comes from earlier appends. Returns the change in bytes.
   */
  int freezeIfDue(long epoch, int freezeSamples, DecimalEncoder scratch) {
    if (freezeSamples == 0 || freezeEpoch == epoch) {
      return 0;
    }
    freezeEpoch = epoch;
    return due(freezeSamples) ? freeze(scratch) : 0;
  }

  /**
   * Whether the stream is long enough to freeze: {@code freezeSamples} (0: never) give or take a
   * sixth, spread by series id, so that series written together (one exporter's request holds
   * thousands) do not all re-encode in the same append: that made one request in a few hundred wait
   * 100 ms.
   */
  private boolean due(int freezeSamples) {
    return freezeSamples > 0
        && inOrder.count() >= freezeSamples - freezeSamples / 6 + id % (freezeSamples / 3 + 1);
  }

  /**
   * Merges the frozen part, the in-order stream and the late samples into a new frozen part in the
   * smaller sealed encoding; the stream and the late buffer are empty afterwards. Returns the
   * change in bytes.
   */
  int freeze(DecimalEncoder scratch) {
    long before = sampleBytes();
    GorillaEncoder all = sealedChunk();
    int n = all.count();
    if (n == 0) {
      return 0;
    }
    frozen = TimeSeriesValue.encodeSmallest(all, scratch);
    frozenCount = n;
    frozenFirstT = all.firstTimestampMillis();
    frozenLastT = all.lastTimestampMillis();
    frozenLastBits = lastBits;
    inOrder.reset();
    lateCount = 0;
    if (lateTimestamps != null && lateTimestamps.length > 4) {
      lateTimestamps = null;
      lateBits = null;
    }
    return (int) (sampleBytes() - before);
  }

  /**
   * Stores a sample that {@link #check} called {@link #NEW}. Returns the change in encoded bytes.
   */
  int insert(long t, long bits) {
    if (!hasInOrder() || t > lastInOrderT()) {
      int before = inOrder.encodedSizeBytes();
      inOrder.append(t, bits);
      lastBits = bits;
      return inOrder.encodedSizeBytes() - before;
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
    return inOrder.count();
  }

  /**
   * Undoes in-order inserts: keeps the first {@code count} samples of the in-order stream (an
   * append's rollback; re-encodes them, so it costs a decode and an encode of the stream). The
   * frozen part holds no sample of the append being undone.
   */
  void truncateInOrder(int count) {
    if (count >= inOrder.count()) {
      return;
    }
    byte[] bytes = inOrder.toByteArray();
    GorillaDecoder d = new GorillaDecoder();
    d.reset(bytes, 0, bytes.length);
    inOrder.reset();
    lastBits = frozenLastBits;
    for (int i = 0; i < count && d.next(); i++) {
      inOrder.append(d.timestampMillis(), d.valueBits());
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
   * other.
   */
  ChunkSource[] capture() {
    if (frozenCount == 0) {
      return new ChunkSource[] {live(0)};
    }
    // Late samples before the stream's first sample (all of them when it is empty) go with the
    // frozen part, the others with the stream, so that the two chunks do not overlap in time.
    int split =
        inOrder.count() == 0
            ? lateCount
            : lateCount == 0
                ? 0
                : insertionPoint(lateTimestamps, lateCount, inOrder.firstTimestampMillis());
    ChunkSource f =
        new ChunkSource(
            bucket.bucket,
            frozen[0] & 0xFF,
            frozen,
            1,
            split == 0 ? null : Arrays.copyOf(lateTimestamps, split),
            split == 0 ? null : Arrays.copyOf(lateBits, split),
            split);
    if (inOrder.count() == 0) {
      return new ChunkSource[] {f};
    }
    return new ChunkSource[] {f, live(split)};
  }

  private static int insertionPoint(long[] sorted, int n, long t) {
    int i = Arrays.binarySearch(sorted, 0, n, t);
    return i >= 0 ? i : -i - 1;
  }

  /** The stream with the late samples from index {@code from} on. */
  private ChunkSource live(int from) {
    byte[] bytes = inOrder.toByteArray();
    int n = lateCount - from;
    if (n == 0) {
      return new ChunkSource(
          bucket.bucket, TimeSeriesValue.ENCODING_GORILLA, bytes, 0, null, null, 0);
    }
    return new ChunkSource(
        bucket.bucket,
        TimeSeriesValue.ENCODING_GORILLA,
        bytes,
        0,
        Arrays.copyOfRange(lateTimestamps, from, lateCount),
        Arrays.copyOfRange(lateBits, from, lateCount),
        n);
  }

  /**
   * The final chunk: frozen, in-order and late samples merged into one Gorilla encoder (the stream
   * itself when there is nothing to merge).
   */
  GorillaEncoder sealedChunk() {
    if (lateCount == 0 && frozenCount == 0) {
      return inOrder;
    }
    GorillaEncoder out = new GorillaEncoder();
    int late = 0;
    if (frozenCount > 0) {
      late = mergeInto(out, new TimeSeriesValue.Decoders().open(frozen), late);
    }
    GorillaDecoder d = new GorillaDecoder();
    byte[] bytes = inOrder.toByteArray();
    d.reset(bytes, 0, bytes.length);
    late = mergeInto(out, d, late);
    for (; late < lateCount; late++) {
      out.append(lateTimestamps[late], lateBits[late]);
    }
    return out;
  }

  /**
   * Appends the decoder's samples to {@code out}, with the late samples from index {@code late} on
   * that come before each; returns the index of the first late sample not appended.
   */
  private int mergeInto(GorillaEncoder out, ChunkDecoder d, int late) {
    while (d.next()) {
      long t = d.timestampMillis();
      while (late < lateCount && lateTimestamps[late] < t) {
        out.append(lateTimestamps[late], lateBits[late]);
        late++;
      }
      out.append(t, d.valueBits());
    }
    return late;
  }

  /** Approximate heap bytes of the samples (frozen part, encoded stream and late buffer). */
  long sampleBytes() {
    return (frozen == null ? 0 : frozen.length) + inOrder.encodedSizeBytes() + 16L * lateCount;
  }
}
