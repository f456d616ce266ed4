package dev.tidemark.tsdb.engine;

import dev.tidemark.tsdb.codec.HistogramDecoder;
import dev.tidemark.tsdb.codec.HistogramEncoder;
import dev.tidemark.tsdb.codec.TimeSeriesValue;
import dev.tidemark.tsdb.model.NativeHistogram;
import java.util.Arrays;

/**
 * The native histogram samples of one series in one open bucket (issue #25; {@code
 * docs/architecture.md}, Native histograms): a {@link HistogramEncoder} for the in-order samples,
 * made with this object on the series' first histogram sample, and a small sorted side buffer for
 * late ones (inside the out-of-order window), merged when the bucket is sealed into one TimeSeries
 * value of encoding {@link TimeSeriesValue#ENCODING_HISTOGRAM}. A {@link HeadSeries} refers to it
 * from one field, null for a float series, so a float series pays one reference.
 *
 * <p>The same rules as the float samples: a sample newer than the newest is appended, an older one
 * goes to the side buffer, the same timestamp with an equal (bit-exact) histogram is the same
 * sample (a retry), with another one a conflict. Unlike float streams, histogram streams are not
 * frozen or written out before the seal: the head holds them whole.
 *
 * <p>Guarded by the engine lock: mutated under the write lock, copied under the read lock.
 */
final class HeadHistograms {

  /** Heap bytes counted for a late sample: its slot and the histogram object (an estimate). */
  static final int LATE_SAMPLE_BYTES = 128;

  private final HistogramEncoder stream = new HistogramEncoder();
  private long firstT;
  private long lastT;
  private NativeHistogram last;

  private long[] lateTimestamps;
  private NativeHistogram[] late;
  private int lateCount;

  /** Samples held: the stream's and the late buffer's. */
  int count() {
    return stream.count() + lateCount;
  }

  boolean isEmpty() {
    return count() == 0;
  }

  /** Newest timestamp; only when not empty (the stream's last: late samples are older). */
  long maxTimestamp() {
    return lastT;
  }

  /** Whether a sample at {@code t} is new, already stored or in conflict ({@link HeadSeries}). */
  int check(long t, NativeHistogram h) {
    if (stream.count() == 0 || t > lastT) {
      return HeadSeries.NEW;
    }
    if (t == lastT) {
      return h.equals(last) ? HeadSeries.SAME : HeadSeries.CONFLICT;
    }
    if (lateCount > 0) {
      int i = Arrays.binarySearch(lateTimestamps, 0, lateCount, t);
      if (i >= 0) {
        return h.equals(late[i]) ? HeadSeries.SAME : HeadSeries.CONFLICT;
      }
    }
    if (t < firstT) {
      return HeadSeries.NEW;
    }
    HistogramDecoder d = new HistogramDecoder();
    byte[] bytes = stream.toByteArray();
    d.reset(bytes, 0, bytes.length);
    if (d.seek(t) && d.timestampMillis() == t) {
      return h.equals(d.histogram()) ? HeadSeries.SAME : HeadSeries.CONFLICT;
    }
    return HeadSeries.NEW;
  }

  /** Stores a sample {@link #check} called new. Returns the change in bytes. */
  int insert(long t, NativeHistogram h) {
    if (stream.count() == 0 || t > lastT) {
      int before = stream.encodedSizeBytes();
      if (stream.count() == 0) {
        firstT = t;
      }
      stream.append(t, h);
      lastT = t;
      last = h;
      return stream.encodedSizeBytes() - before;
    }
    if (lateTimestamps == null) {
      lateTimestamps = new long[4];
      late = new NativeHistogram[4];
    } else if (lateCount == lateTimestamps.length) {
      lateTimestamps = Arrays.copyOf(lateTimestamps, lateCount * 2);
      late = Arrays.copyOf(late, lateCount * 2);
    }
    int i = Arrays.binarySearch(lateTimestamps, 0, lateCount, t);
    int at = i >= 0 ? i : -i - 1;
    System.arraycopy(lateTimestamps, at, lateTimestamps, at + 1, lateCount - at);
    System.arraycopy(late, at, late, at + 1, lateCount - at);
    lateTimestamps[at] = t;
    late[at] = h;
    lateCount++;
    return LATE_SAMPLE_BYTES;
  }

  /** Samples of the in-order stream; what {@link #truncateInOrder} takes. */
  int inOrderCount() {
    return stream.count();
  }

  /** Undoes in-order inserts (an append's rollback): keeps the stream's first {@code count}. */
  void truncateInOrder(int count) {
    if (count >= stream.count()) {
      return;
    }
    byte[] bytes = stream.toByteArray();
    HistogramDecoder d = new HistogramDecoder();
    d.reset(bytes, 0, bytes.length);
    stream.reset();
    last = null;
    for (int i = 0; i < count && d.next(); i++) {
      NativeHistogram h = d.histogram();
      if (i == 0) {
        firstT = d.timestampMillis();
      }
      stream.append(d.timestampMillis(), h);
      lastT = d.timestampMillis();
      last = h;
    }
  }

  /** Undoes a late insert; false if no late sample has timestamp {@code t}. */
  boolean removeLate(long t) {
    int i = lateCount == 0 ? -1 : Arrays.binarySearch(lateTimestamps, 0, lateCount, t);
    if (i < 0) {
      return false;
    }
    System.arraycopy(lateTimestamps, i + 1, lateTimestamps, i, lateCount - i - 1);
    System.arraycopy(late, i + 1, late, i, lateCount - i - 1);
    late[--lateCount] = null;
    return true;
  }

  /** Approximate heap bytes of the samples: the encoded stream and the late buffer. */
  long sampleBytes() {
    return stream.encodedSizeBytes() + (long) LATE_SAMPLE_BYTES * lateCount;
  }

  /** A copy of the samples for a reader or a seal, merged without the lock. Under the read lock. */
  Copy copy() {
    return new Copy(
        stream.toByteArray(),
        lateCount == 0 ? null : Arrays.copyOf(lateTimestamps, lateCount),
        lateCount == 0 ? null : Arrays.copyOf(late, lateCount));
  }

  /** The samples as {@link #copy()} found them. Immutable. */
  static final class Copy {
    private final byte[] stream;
    private final long[] lateTimestamps;
    private final NativeHistogram[] late;

    private Copy(byte[] stream, long[] lateTimestamps, NativeHistogram[] late) {
      this.stream = stream;
      this.lateTimestamps = lateTimestamps;
      this.late = late;
    }

    /** Bytes copied. */
    int copiedBytes() {
      return stream.length + (late == null ? 0 : LATE_SAMPLE_BYTES * late.length);
    }

    /**
     * The samples merged by timestamp as a TimeSeries value of encoding {@link
     * TimeSeriesValue#ENCODING_HISTOGRAM}; without the lock.
     */
    byte[] encode() {
      if (late == null) {
        byte[] value = new byte[1 + stream.length];
        value[0] = (byte) TimeSeriesValue.ENCODING_HISTOGRAM;
        System.arraycopy(stream, 0, value, 1, stream.length);
        return value;
      }
      HistogramDecoder d = new HistogramDecoder();
      d.reset(stream, 0, stream.length);
      HistogramEncoder out = new HistogramEncoder();
      int l = 0;
      while (d.next()) {
        long t = d.timestampMillis();
        while (l < late.length && lateTimestamps[l] < t) {
          out.append(lateTimestamps[l], late[l]);
          l++;
        }
        out.append(t, d.histogram());
      }
      for (; l < late.length; l++) {
        out.append(lateTimestamps[l], late[l]);
      }
      return TimeSeriesValue.encode(out);
    }
  }
}
