package dev.tidemark.tsdb.codec;

import static dev.tidemark.tsdb.codec.HistogramFormat.VARBIT_BITS;

import dev.tidemark.tsdb.model.CounterResetHint;
import dev.tidemark.tsdb.model.FloatHistogram;
import dev.tidemark.tsdb.model.HistogramLayout;
import dev.tidemark.tsdb.model.IntegerHistogram;
import dev.tidemark.tsdb.model.InvalidHistogramException;
import dev.tidemark.tsdb.model.NativeHistogram;
import java.util.Arrays;
import java.util.Objects;

/**
 * Reads the histogram stream of {@link HistogramEncoder} (TimeSeries encoding {@code 0x03}, laid
 * out in <a href="../../../../../../../../docs/format.md">docs/format.md</a>, "Histogram chunk").
 *
 * <pre>{@code
 * decoder.reset(bytes, offset, length);
 * while (decoder.next()) {
 *   use(decoder.timestampMillis(), decoder.histogram());
 * }
 * }</pre>
 *
 * <p>Every sample {@link #next()} returns is a histogram Prometheus would accept: each run's layout
 * and each sample's counts are validated as {@link HistogramLayout}, {@link IntegerHistogram} and
 * {@link FloatHistogram} validate, and a stream that breaks a rule is corrupt. Timestamps are
 * strictly increasing and non-negative.
 *
 * <p>Anything wrong with the bytes throws {@link CorruptRecordException}, after which the cursor
 * stays failed (every later {@link #next()} throws it again). Allocation is bounded by the input:
 * spans, custom bounds and buckets are counted against the bits left before arrays are made. The
 * decoder copies the stream in {@link #reset}; it allocates per run (the layout and its arrays),
 * and per sample only in {@link #histogram()}. Not thread-safe.
 */
public final class HistogramDecoder {
  private static final long[] NO_LONGS = {};

  private final long[] varint = new long[1];
  private byte[] buf = new byte[16];
  private long streamBits;
  private long pos;

  private int count;
  private int index;
  private boolean onSample;
  private CorruptRecordException failure;

  private long timestampMillis;
  private long lastDelta;
  private CounterResetHint hint;

  private boolean runFloat;
  private HistogramLayout layout;
  private long lastThresholdBits;
  private double[] lastCustomValues;

  // Integer runs: count, zero count, then the bucket deltas (positive, negative).
  private long[] intPrev = NO_LONGS;
  private long[] intDelta = NO_LONGS;
  // XOR fields: integer runs the sum; float runs count, zero count, sum, buckets.
  private long[] xorPrev = NO_LONGS;
  private int[] xorLeading = new int[0];
  private int[] xorWidth = new int[0];
  // The current sample's buckets, exactly sized for the run (validation and histogram()).
  private long[] positive = NO_LONGS;
  private long[] negative = NO_LONGS;

  public HistogramDecoder() {}

  /**
   * Points the decoder at the stream in {@code src[offset, offset + length)} (without the
   * TimeSeries encoding id); the bytes are copied. The cursor is then before the first sample.
   *
   * @throws CorruptRecordException if the header is malformed
   * @throws IndexOutOfBoundsException if the range is not inside {@code src}
   */
  public void reset(byte[] src, int offset, int length) {
    Objects.checkFromIndexSize(offset, length, src.length);
    failure = null;
    onSample = false;
    index = 0;
    count = 0;
    hint = CounterResetHint.UNKNOWN;
    layout = null;
    lastThresholdBits = 0;
    lastCustomValues = new double[0];
    lastDelta = 0;
    try {
      readHeader(src, offset, length);
    } catch (CorruptRecordException e) {
      count = 0;
      failure = e;
      throw e;
    }
  }

  private void readHeader(byte[] src, int offset, int length) {
    int end = offset + length;
    if (length == 0) {
      throw new CorruptRecordException("histogram stream is empty, expected the sample count");
    }
    int p = Varints.readMinimal(src, offset, end, 5, varint);
    if (p < 0) {
      throw new CorruptRecordException("histogram sample count varint " + varintProblem(p));
    }
    if (varint[0] > Integer.MAX_VALUE) {
      throw new CorruptRecordException(
          "histogram sample count " + varint[0] + " exceeds " + Integer.MAX_VALUE);
    }
    int n = (int) varint[0];
    if (n == 0) {
      if (p != end) {
        throw new CorruptRecordException(
            "histogram stream of 0 samples has " + (end - p) + " trailing bytes");
      }
      streamBits = 0;
      return;
    }
    p = Varints.readMinimal(src, p, end, 9, varint);
    if (p < 0) {
      throw new CorruptRecordException("histogram first timestamp varint " + varintProblem(p));
    }
    int bytes = end - p;
    // Each sample takes at least 3 bits (run bit, timestamp, hint); the first at least 13.
    if (13 + 3L * (n - 1) > 8L * bytes) {
      throw new CorruptRecordException(
          "histogram stream announces " + n + " samples but has only " + bytes + " bytes of bits");
    }
    timestampMillis = varint[0];
    if (buf.length < bytes + 16) {
      buf = new byte[bytes + 16];
    } else {
      Arrays.fill(buf, bytes, bytes + 16, (byte) 0);
    }
    System.arraycopy(src, p, buf, 0, bytes);
    streamBits = 8L * bytes;
    pos = 0;
    count = n;
  }

  private static String varintProblem(int code) {
    return switch (code) {
      case Varints.TRUNCATED -> "is truncated";
      case Varints.NOT_MINIMAL -> "is not minimal";
      default -> "is too long";
    };
  }

  /** Number of samples in the stream, from its header. */
  public int count() {
    return count;
  }

  /**
   * Advances to the next sample.
   *
   * @return false when there is no further sample (and on every later call)
   * @throws CorruptRecordException if the stream is truncated or corrupt; the cursor stays failed
   */
  public boolean next() {
    if (failure != null) {
      throw failure;
    }
    if (index >= count) {
      onSample = false;
      return false;
    }
    try {
      readSample();
    } catch (CorruptRecordException e) {
      failure = e;
      onSample = false;
      index = count;
      throw e;
    }
    index++;
    onSample = true;
    if (index == count) {
      long usedBytes = (pos + 7) >>> 3;
      if (usedBytes != streamBits >>> 3) {
        throw fail(
            (streamBits / 8 - usedBytes)
                + " trailing bytes after the last of "
                + count
                + " samples");
      }
      if (pos < streamBits && readPadding() != 0) {
        throw fail("non-zero padding bits after the last sample");
      }
    }
    return true;
  }

  private long readPadding() {
    int n = (int) (streamBits - pos);
    return readBits(n);
  }

  private CorruptRecordException fail(String message) {
    failure = new CorruptRecordException("histogram stream corrupt: " + message);
    onSample = false;
    index = count;
    return failure;
  }

  private void readSample() {
    boolean newRun;
    if (index == 0) {
      newRun = true;
    } else {
      newRun = readBits(1) == 1;
      long dod = readVarbit();
      long delta = lastDelta + dod;
      if (delta < 1) {
        throw corrupt("sample " + index + " has timestamp delta " + delta + " (must be >= 1)");
      }
      if (timestampMillis > Long.MAX_VALUE - delta) {
        throw corrupt("sample " + index + " overflows the timestamp");
      }
      timestampMillis += delta;
      lastDelta = delta;
    }
    if (readBits(1) == 1) {
      hint = CounterResetHint.fromId((int) readBits(2));
    }
    if (newRun) {
      readRun();
    }
    if (runFloat) {
      readXor(0);
      readXor(1);
      readXor(2);
      for (int i = 0; i < positive.length; i++) {
        positive[i] = readXor(3 + i);
      }
      for (int i = 0; i < negative.length; i++) {
        negative[i] = readXor(3 + positive.length + i);
      }
      try {
        FloatHistogram.check(layout, xorPrev[0], xorPrev[1], positive, negative);
      } catch (InvalidHistogramException e) {
        throw corrupt("sample " + index + " is not a valid float histogram: " + e.getMessage());
      }
    } else {
      readInt(0, newRun);
      readInt(1, newRun);
      readXor(0);
      for (int i = 0; i < positive.length; i++) {
        positive[i] = readInt(2 + i, newRun);
      }
      for (int i = 0; i < negative.length; i++) {
        negative[i] = readInt(2 + positive.length + i, newRun);
      }
      try {
        IntegerHistogram.check(layout, intPrev[0], intPrev[1], xorPrev[0], positive, negative);
      } catch (InvalidHistogramException e) {
        throw corrupt("sample " + index + " is not a valid integer histogram: " + e.getMessage());
      }
    }
  }

  private void readRun() {
    runFloat = readBits(1) == HistogramFormat.KIND_FLOAT;
    int schema = (byte) readBits(8);
    if (readBits(1) == 1) {
      lastThresholdBits = readBits(64);
    }
    int[] pos = readSpans("positive");
    int[] neg = readSpans("negative");
    double[] custom = new double[0];
    if (schema == HistogramLayout.CUSTOM_BUCKETS_SCHEMA) {
      if (readBits(1) == 1) {
        long n = readVarbit();
        if (n < 0 || n > HistogramLayout.MAX_BUCKETS || n * 64 > bitsLeft()) {
          throw corrupt("sample " + index + " announces " + n + " custom bounds");
        }
        lastCustomValues = new double[(int) n];
        for (int i = 0; i < n; i++) {
          lastCustomValues[i] = Double.longBitsToDouble(readBits(64));
        }
      }
      custom = lastCustomValues;
    }
    try {
      layout =
          HistogramLayout.of(
              schema, Double.longBitsToDouble(lastThresholdBits), pos, neg, custom.clone());
    } catch (InvalidHistogramException e) {
      throw corrupt("sample " + index + " has an invalid layout: " + e.getMessage());
    }
    int p = layout.positiveBucketCount();
    int q = layout.negativeBucketCount();
    // every bucket costs at least one bit in this sample
    if ((long) p + q > bitsLeft()) {
      throw corrupt("sample " + index + " has " + (p + q) + " buckets, more than the bits left");
    }
    if (positive.length != p) {
      positive = p == 0 ? NO_LONGS : new long[p];
    }
    if (negative.length != q) {
      negative = q == 0 ? NO_LONGS : new long[q];
    }
    int ints = runFloat ? 0 : 2 + p + q;
    int xors = runFloat ? 3 + p + q : 1;
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

  private int[] readSpans(String side) {
    long n = readVarbit();
    if (n < 0 || n > HistogramLayout.MAX_BUCKETS || n * 2 > bitsLeft()) {
      throw corrupt("sample " + index + " announces " + n + " " + side + " spans");
    }
    int[] spans = new int[(int) (2 * n)];
    for (int i = 0; i < spans.length; i++) {
      long v = readVarbit();
      if (v < Integer.MIN_VALUE || v > Integer.MAX_VALUE) {
        throw corrupt("sample " + index + " has a " + side + " span field " + v + " beyond int32");
      }
      spans[i] = (int) v;
    }
    return spans;
  }

  private long readInt(int field, boolean first) {
    long v;
    if (first) {
      v = readVarbit();
      intDelta[field] = 0;
    } else {
      long delta = intDelta[field] + readVarbit();
      intDelta[field] = delta;
      v = intPrev[field] + delta;
    }
    intPrev[field] = v;
    return v;
  }

  private long readXor(int field) {
    if (readBits(1) == 0) {
      return xorPrev[field];
    }
    long x;
    if (readBits(1) == 0) {
      int width = xorWidth[field];
      int trailing = 64 - xorLeading[field] - width;
      x = readBits(width) << trailing;
    } else {
      int leading = (int) readBits(5);
      int significant = (int) readBits(6) + 1;
      if (leading + significant > 64) {
        throw corrupt(
            "sample "
                + index
                + " has an XOR window of "
                + leading
                + " leading zeros and "
                + significant
                + " significant bits");
      }
      x = readBits(significant) << (64 - leading - significant);
      xorLeading[field] = leading;
      xorWidth[field] = significant;
    }
    if (x == 0) {
      throw corrupt("sample " + index + " has a changed value with an XOR of 0");
    }
    return xorPrev[field] ^= x;
  }

  private long readVarbit() {
    int k = 0;
    while (k < VARBIT_BITS.length && readBits(1) == 1) {
      k++;
    }
    if (k == 0) {
      return 0;
    }
    int n = VARBIT_BITS[k - 1];
    long v = readBits(n);
    return n == 64 ? v : (v << (64 - n)) >> (64 - n);
  }

  private long bitsLeft() {
    return streamBits - pos;
  }

  /** Reads {@code n} bits, 1..64, most significant first. */
  private long readBits(int n) {
    if (pos + n > streamBits) {
      throw corrupt(
          "sample "
              + index
              + " of "
              + count
              + " needs bits beyond the "
              + (streamBits >>> 3)
              + "-byte bit stream");
    }
    int p = (int) pos;
    int i = p >>> 3;
    int shift = p & 7;
    long word = (Bytes.getLongBe(buf, i) << shift) | ((buf[i + 8] & 0xFFL) >>> (8 - shift));
    pos = p + n;
    return word >>> (64 - n);
  }

  private CorruptRecordException corrupt(String message) {
    return new CorruptRecordException("histogram stream corrupt: " + message);
  }

  /**
   * Positions on the first sample whose timestamp is {@code >= timestampMillis}, starting at the
   * current sample (kept if it qualifies). Only moves forward; every sample passed is decoded (a
   * chunk has no index).
   *
   * @return false if no sample at or after the cursor qualifies (the cursor is then at the end)
   * @throws CorruptRecordException if the stream is truncated or corrupt
   */
  public boolean seek(long timestampMillis) {
    if (onSample && this.timestampMillis >= timestampMillis) {
      return true;
    }
    while (next()) {
      if (this.timestampMillis >= timestampMillis) {
        return true;
      }
    }
    return false;
  }

  /**
   * Whether the decoder stands on a sample (the last {@link #next()} or {@link #seek} returned
   * true).
   */
  public boolean onSample() {
    return onSample;
  }

  /** The current sample's timestamp, milliseconds since the Unix epoch. */
  public long timestampMillis() {
    checkOnSample();
    return timestampMillis;
  }

  /** Whether the current sample has float counts. */
  public boolean isFloat() {
    checkOnSample();
    return runFloat;
  }

  /** The current sample's layout; the same instance for every sample of a run. */
  public HistogramLayout layout() {
    checkOnSample();
    return layout;
  }

  public CounterResetHint hint() {
    checkOnSample();
    return hint;
  }

  /** The current sample's sum, raw bits. */
  public long sumBits() {
    checkOnSample();
    return runFloat ? xorPrev[2] : xorPrev[0];
  }

  /** The current sample as a new, validated histogram. */
  public NativeHistogram histogram() {
    checkOnSample();
    if (runFloat) {
      return FloatHistogram.ofBits(
          layout, hint, xorPrev[0], xorPrev[1], xorPrev[2], positive.clone(), negative.clone());
    }
    return IntegerHistogram.ofBits(
        layout, hint, intPrev[0], intPrev[1], xorPrev[0], positive.clone(), negative.clone());
  }

  private void checkOnSample() {
    if (!onSample) {
      throw new IllegalStateException("no current sample");
    }
  }
}
