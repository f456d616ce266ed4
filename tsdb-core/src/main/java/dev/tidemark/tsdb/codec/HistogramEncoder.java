package dev.tidemark.tsdb.codec;

import static dev.tidemark.tsdb.codec.HistogramFormat.MAX_LEADING_ZEROS;
import static dev.tidemark.tsdb.codec.HistogramFormat.NEW_WINDOW_HEADER_BITS;

import dev.tidemark.tsdb.model.CounterResetHint;
import dev.tidemark.tsdb.model.FloatHistogram;
import dev.tidemark.tsdb.model.HistogramLayout;
import dev.tidemark.tsdb.model.IntegerHistogram;
import dev.tidemark.tsdb.model.NativeHistogram;
import java.util.Objects;

/**
 * Encodes one chunk of native histogram samples {@code (timestamp ms, NativeHistogram)} into the
 * histogram stream (TimeSeries encoding id {@code 0x03}); {@link HistogramDecoder} reads it back.
 * The bit layout is specified in <a
 * href="../../../../../../../../docs/format.md">docs/format.md</a>, section "Histogram chunk".
 *
 * <h2>Design note</h2>
 *
 * <p>After Prometheus' {@code tsdb/chunkenc/histogram.go} and {@code float_histogram.go}: the
 * bucket layout (schema, zero threshold, spans, custom bounds) is written once, and every later
 * sample with the same layout stores each field against the previous sample: timestamps, counts,
 * the zero count and each integer bucket as a delta of delta in prefix classes, the sum and every
 * float count as an XOR window. Where this codec departs from Prometheus:
 *
 * <ul>
 *   <li><b>Runs instead of chunk cuts.</b> A TimeSeries record is the one chunk of a series in a
 *       bucket, so a chunk must hold any sequence: a layout change (a bucket appears, the schema is
 *       reduced), a switch between integer and float counts, a stale marker. One bit per sample
 *       says whether a new <em>run</em> header (kind and layout) follows; its first sample stores
 *       its values whole. Prometheus instead cuts a new chunk, or recodes the chunk to the union of
 *       both layouts; recoding could come later as an encoder policy, the format allows it.
 *   <li><b>Counter reset hint per sample</b> (Prometheus keeps one per chunk, in the header): one
 *       bit when it is the previous sample's, three otherwise.
 *   <li><b>One integer class set</b> for every field: {@code 0}; 4, 7, 12, 20 or 64 bits of two's
 *       complement behind a unary prefix. Regular timestamps and unchanged buckets cost 1 bit.
 *   <li>The XOR window policy of {@link GorillaEncoder}: reuse the window only if the value fits
 *       and the window is at most 11 bits wider than a new one; the initial window is all 64 bits.
 * </ul>
 *
 * <p>Every double is stored bit-exact (the staleness marker {@code 0x7ff0000000000002} as the sum,
 * NaN payloads, {@code -0.0}); integer fields wrap as Go's {@code uint64} and {@code int64} do.
 *
 * <p>Not thread-safe. {@link #toByteArray()} may be called at any time. No allocation per sample
 * whose layout and kind equal the previous sample's, other than buffer growth.
 */
public final class HistogramEncoder {
  private final BitWriter bits = new BitWriter();

  private int count;
  private long firstTimestampMillis;
  private long lastTimestampMillis;
  private long lastDelta;
  private CounterResetHint lastHint = CounterResetHint.UNKNOWN;

  // The current run.
  private boolean runFloat;
  private HistogramLayout runLayout;
  private long lastThresholdBits;
  private HistogramLayout lastCustomLayout;

  /** Integer fields (integer runs): count, zero count, positive deltas, negative deltas. */
  private long[] intPrev = new long[0];

  private long[] intDelta = new long[0];

  /** XOR fields: the sum (integer runs); count, zero count, sum, buckets (float runs). */
  private long[] xorPrev = new long[0];

  private int[] xorLeading = new int[0];
  private int[] xorWidth = new int[0];

  public HistogramEncoder() {}

  /**
   * Appends one sample.
   *
   * @param timestampMillis milliseconds since the Unix epoch, {@code >= 0} and greater than the
   *     previous timestamp of this chunk
   * @throws IllegalArgumentException if the timestamp is negative, a duplicate or out of order
   * @throws IllegalStateException if the chunk already holds {@link Integer#MAX_VALUE} samples
   */
  public void append(long timestampMillis, NativeHistogram h) {
    Objects.requireNonNull(h, "histogram");
    if (timestampMillis < 0) {
      throw new IllegalArgumentException("timestamp must be >= 0, was " + timestampMillis);
    }
    if (count > 0 && timestampMillis <= lastTimestampMillis) {
      throw new IllegalArgumentException(
          (timestampMillis == lastTimestampMillis ? "duplicate" : "out of order")
              + " timestamp "
              + timestampMillis
              + " after "
              + lastTimestampMillis);
    }
    if (count == Integer.MAX_VALUE) {
      throw new IllegalStateException("histogram chunk is full: " + count + " samples");
    }
    boolean newRun;
    if (count == 0) {
      firstTimestampMillis = timestampMillis;
      lastDelta = 0;
      newRun = true;
    } else {
      newRun = h.isFloat() != runFloat || !h.layout().equals(runLayout);
      bits.write(newRun ? 1 : 0, 1);
      long delta = timestampMillis - lastTimestampMillis;
      putVarbit(delta - lastDelta);
      lastDelta = delta;
    }
    lastTimestampMillis = timestampMillis;
    if (h.hint() == lastHint) {
      bits.write(0, 1);
    } else {
      bits.write(4 | h.hint().id(), 3);
      lastHint = h.hint();
    }
    if (newRun) {
      startRun(h);
    }
    if (h instanceof IntegerHistogram ih) {
      putInt(0, ih.count(), newRun);
      putInt(1, ih.zeroCount(), newRun);
      putXor(0, ih.sumBits());
      HistogramLayout l = ih.layout();
      int p = l.positiveBucketCount();
      for (int i = 0; i < p; i++) {
        putInt(2 + i, ih.positiveDelta(i), newRun);
      }
      for (int i = 0, n = l.negativeBucketCount(); i < n; i++) {
        putInt(2 + p + i, ih.negativeDelta(i), newRun);
      }
    } else {
      FloatHistogram fh = (FloatHistogram) h;
      putXor(0, fh.countBits());
      putXor(1, fh.zeroCountBits());
      putXor(2, fh.sumBits());
      HistogramLayout l = fh.layout();
      int p = l.positiveBucketCount();
      for (int i = 0; i < p; i++) {
        putXor(3 + i, fh.positiveBits(i));
      }
      for (int i = 0, n = l.negativeBucketCount(); i < n; i++) {
        putXor(3 + p + i, fh.negativeBits(i));
      }
    }
    count++;
  }

  /** Writes the run header and resets the per-field state for the run's layout. */
  private void startRun(NativeHistogram h) {
    HistogramLayout l = h.layout();
    runFloat = h.isFloat();
    runLayout = l;
    bits.write(runFloat ? HistogramFormat.KIND_FLOAT : HistogramFormat.KIND_INTEGER, 1);
    bits.write(l.schema() & 0xFF, 8);
    long threshold = Double.doubleToRawLongBits(l.zeroThreshold());
    if (threshold == lastThresholdBits) {
      bits.write(0, 1);
    } else {
      bits.write(1, 1);
      bits.write(threshold, 64);
      lastThresholdBits = threshold;
    }
    putVarbit(l.positiveSpanCount());
    for (int i = 0; i < l.positiveSpanCount(); i++) {
      putVarbit(l.positiveSpanOffset(i));
      putVarbit(l.positiveSpanLength(i));
    }
    putVarbit(l.negativeSpanCount());
    for (int i = 0; i < l.negativeSpanCount(); i++) {
      putVarbit(l.negativeSpanOffset(i));
      putVarbit(l.negativeSpanLength(i));
    }
    if (l.usesCustomBuckets()) {
      if (lastCustomLayout != null && l.sameCustomValues(lastCustomLayout)
          || lastCustomLayout == null && l.customValueCount() == 0) {
        bits.write(0, 1);
      } else {
        bits.write(1, 1);
        putVarbit(l.customValueCount());
        for (int i = 0; i < l.customValueCount(); i++) {
          bits.write(Double.doubleToRawLongBits(l.customValue(i)), 64);
        }
      }
      lastCustomLayout = l;
    }
    int buckets = l.positiveBucketCount() + l.negativeBucketCount();
    int ints = runFloat ? 0 : 2 + buckets;
    int xors = runFloat ? 3 + buckets : 1;
    if (intPrev.length < ints) {
      intPrev = new long[ints];
      intDelta = new long[ints];
    }
    if (xorPrev.length < xors) {
      xorPrev = new long[xors];
      xorLeading = new int[xors];
      xorWidth = new int[xors];
    }
    for (int i = 0; i < xors; i++) {
      xorPrev[i] = 0;
      xorLeading[i] = 0;
      xorWidth[i] = 64;
    }
  }

  /** An integer field: whole on a run's first sample, else the delta of its delta. */
  private void putInt(int field, long v, boolean first) {
    if (first) {
      putVarbit(v);
      intDelta[field] = 0;
    } else {
      long delta = v - intPrev[field];
      putVarbit(delta - intDelta[field]);
      intDelta[field] = delta;
    }
    intPrev[field] = v;
  }

  /** An XOR field against the previous value of the run (0 before its first sample). */
  private void putXor(int field, long v) {
    long x = v ^ xorPrev[field];
    xorPrev[field] = v;
    if (x == 0) {
      bits.write(0, 1);
      return;
    }
    int leading = Math.min(Long.numberOfLeadingZeros(x), MAX_LEADING_ZEROS);
    int trailing = Long.numberOfTrailingZeros(x);
    int significant = 64 - leading - trailing;
    int wl = xorLeading[field];
    int ww = xorWidth[field];
    int wt = 64 - wl - ww;
    if (leading >= wl && trailing >= wt && ww <= significant + NEW_WINDOW_HEADER_BITS) {
      bits.write(0b10, 2);
      bits.write(x >>> wt, ww);
    } else {
      bits.write(0b11, 2);
      bits.write(leading, 5);
      bits.write(significant - 1, 6);
      bits.write(x >>> trailing, significant);
      xorLeading[field] = leading;
      xorWidth[field] = significant;
    }
  }

  /** The signed varbit integer of {@code docs/format.md}. */
  private void putVarbit(long v) {
    if (v == 0) {
      bits.write(0, 1);
    } else if (v >= -8 && v <= 7) {
      bits.write(0b10, 2);
      bits.write(v & 0xFL, 4);
    } else if (v >= -64 && v <= 63) {
      bits.write(0b110, 3);
      bits.write(v & 0x7FL, 7);
    } else if (v >= -2048 && v <= 2047) {
      bits.write(0b1110, 4);
      bits.write(v & 0xFFFL, 12);
    } else if (v >= -524288 && v <= 524287) {
      bits.write(0b11110, 5);
      bits.write(v & 0xFFFFFL, 20);
    } else {
      bits.write(0b11111, 5);
      bits.write(v, 64);
    }
  }

  /** Samples appended since the last {@link #reset()}. */
  public int count() {
    return count;
  }

  /** Size of the stream {@link #writeTo} writes (without the TimeSeries encoding id). */
  public int encodedSizeBytes() {
    if (count == 0) {
      return 1;
    }
    return Varints.size(count) + Varints.size(firstTimestampMillis) + bits.byteCount();
  }

  /**
   * Writes the stream (header and bit stream) at {@code offset}; the caller makes room for {@link
   * #encodedSizeBytes()} bytes.
   *
   * @return the offset after it
   */
  public int writeTo(byte[] dst, int offset) {
    int p = Varints.put(dst, offset, count);
    if (count == 0) {
      return p;
    }
    p = Varints.put(dst, p, firstTimestampMillis);
    bits.copyTo(dst, p);
    return p + bits.byteCount();
  }

  /** The stream as a new array. */
  public byte[] toByteArray() {
    byte[] out = new byte[encodedSizeBytes()];
    writeTo(out, 0);
    return out;
  }

  /** Starts a new, empty chunk. */
  public void reset() {
    bits.clearBits();
    count = 0;
    lastHint = CounterResetHint.UNKNOWN;
    runLayout = null;
    lastThresholdBits = 0;
    lastCustomLayout = null;
  }
}
