package dev.tidemark.tsdb.engine;

import dev.tidemark.tsdb.codec.GorillaDecoder;
import dev.tidemark.tsdb.codec.GorillaEncoder;
import dev.tidemark.tsdb.codec.TimeSeriesValue;
import dev.tidemark.tsdb.model.Labels;
import dev.tidemark.tsdb.model.MetricMetadata;
import java.util.Arrays;

/**
 * The samples of one series in one open bucket: a Gorilla encoder for samples that arrive in order,
 * and a small sorted side buffer for late ones (inside the out-of-order window). Sealing merges the
 * two into the bucket's chunk.
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
    return inOrder.count() + lateCount;
  }

  boolean isEmpty() {
    return count() == 0;
  }

  /** Newest timestamp; only when not empty. */
  long maxTimestamp() {
    return inOrder.lastTimestampMillis();
  }

  /** Whether a sample at {@code t} with {@code bits} is new, already stored, or in conflict. */
  int check(long t, long bits) {
    if (inOrder.count() == 0 || t > inOrder.lastTimestampMillis()) {
      return NEW;
    }
    if (t == inOrder.lastTimestampMillis()) {
      return bits == lastBits ? SAME : CONFLICT;
    }
    if (lateCount > 0) {
      int i = Arrays.binarySearch(lateTimestamps, 0, lateCount, t);
      if (i >= 0) {
        return lateBits[i] == bits ? SAME : CONFLICT;
      }
    }
    if (t < inOrder.firstTimestampMillis()) {
      return NEW;
    }
    // Rare path: look inside the in-order chunk.
    GorillaDecoder d = new GorillaDecoder();
    byte[] bytes = inOrder.toByteArray();
    d.reset(bytes, 0, bytes.length);
    if (d.seek(t) && d.timestampMillis() == t) {
      return d.valueBits() == bits ? SAME : CONFLICT;
    }
    return NEW;
  }

  /**
   * Stores a sample that {@link #check} called {@link #NEW}. Returns the change in encoded bytes.
   */
  int insert(long t, long bits) {
    if (inOrder.count() == 0 || t > inOrder.lastTimestampMillis()) {
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
   * Samples in the in-order encoder (the late buffer aside); what {@link #truncateInOrder} takes.
   */
  int inOrderCount() {
    return inOrder.count();
  }

  /**
   * Undoes in-order inserts: keeps the first {@code count} samples of the in-order encoder (an
   * append's rollback; re-encodes them, so it costs a decode and an encode of the chunk).
   */
  void truncateInOrder(int count) {
    if (count >= inOrder.count()) {
      return;
    }
    byte[] bytes = inOrder.toByteArray();
    GorillaDecoder d = new GorillaDecoder();
    d.reset(bytes, 0, bytes.length);
    inOrder.reset();
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

  /** Inserts during recovery: anything not already there; a conflicting sample keeps the first. */
  int insertRecovered(long t, long bits) {
    return check(t, bits) == NEW ? insert(t, bits) : 0;
  }

  /** A copy of the current samples for a reader. */
  ChunkSource capture() {
    byte[] bytes = inOrder.toByteArray();
    if (lateCount == 0) {
      return new ChunkSource(
          bucket.bucket, TimeSeriesValue.ENCODING_GORILLA, bytes, 0, null, null, 0);
    }
    return new ChunkSource(
        bucket.bucket,
        TimeSeriesValue.ENCODING_GORILLA,
        bytes,
        0,
        Arrays.copyOf(lateTimestamps, lateCount),
        Arrays.copyOf(lateBits, lateCount),
        lateCount);
  }

  /** The final chunk: in-order and late samples merged into one encoder. */
  GorillaEncoder sealedChunk() {
    if (lateCount == 0) {
      return inOrder;
    }
    GorillaEncoder merged = new GorillaEncoder();
    GorillaDecoder d = new GorillaDecoder();
    byte[] bytes = inOrder.toByteArray();
    d.reset(bytes, 0, bytes.length);
    boolean more = d.next();
    int j = 0;
    while (more || j < lateCount) {
      if (!more || (j < lateCount && lateTimestamps[j] < d.timestampMillis())) {
        merged.append(lateTimestamps[j], lateBits[j]);
        j++;
      } else {
        merged.append(d.timestampMillis(), d.valueBits());
        more = d.next();
      }
    }
    return merged;
  }

  /** Approximate heap bytes of the samples (encoded stream and late buffer). */
  long sampleBytes() {
    return inOrder.encodedSizeBytes() + 16L * lateCount;
  }
}
