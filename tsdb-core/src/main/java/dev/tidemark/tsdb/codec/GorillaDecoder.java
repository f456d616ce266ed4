package dev.tidemark.tsdb.codec;

import java.util.Arrays;
import java.util.Objects;

/**
 * A forward cursor over a Gorilla XOR stream written by {@link GorillaEncoder}; the layout is
 * specified in <a href="../../../../../../../../docs/format.md">docs/format.md</a>, section
 * "Gorilla XOR chunk".
 *
 * <h2>Usage</h2>
 *
 * <pre>{@code
 * decoder.reset(bytes, 0, bytes.length);
 * while (decoder.next()) {
 *   use(decoder.timestampMillis(), decoder.valueBits());
 * }
 * }</pre>
 *
 * <h2>Design note</h2>
 *
 * <p>{@link #reset} validates the header and copies the bit stream into an internal buffer with 32
 * zero bytes of padding ({@code PAD_BYTES}). The inner loop then reads whole big-endian longs at
 * any bit position ({@code peek()}: one unaligned load and one shift give at least 57 valid bits,
 * enough for a sample's control bits, delta-of-delta, value-changed bit and XOR window header
 * together) and checks the bounds once per sample instead of once per field: a sample reads at most
 * 147 bits and a read touches at most 9 bytes from its bit position, so a truncated stream is
 * noticed before any read leaves the padding. Whether a value reuses the XOR window or opens a new
 * one is unpredictable, so both cases are decoded with masks instead of a branch; the hot path of
 * {@link #next()} is kept small enough to be inlined into the caller's loop. The caller's array is
 * not retained. {@link #next()} and {@link #seek} never allocate.
 *
 * <h2>Corrupt input</h2>
 *
 * <p>Every malformed stream makes {@link #reset} or {@link #next()} throw {@link
 * CorruptRecordException}: a bad or non-minimal varint, a count that the stream cannot hold, bits
 * missing, a timestamp that does not increase or overflows, an XOR window wider than 64 bits,
 * trailing bytes or non-zero padding after the last sample. A stream that decodes is a sequence of
 * strictly increasing non-negative timestamps. A corrupt stream may also decode to different
 * samples without an error (the format has no checksum).
 *
 * <p>Not thread-safe; reusable across streams.
 */
public final class GorillaDecoder implements ChunkDecoder {
  /**
   * For the 3 bits after '11' (index 0..7, one byte each): the dod width of the class they start
   * ({@code 0xx} class 0, {@code 10x} class 1, {@code 110} class 2, {@code 111} class 3; class 4,
   * {@code 1111}, is checked first) and the bits the sample's timestamp part uses, '11' included. A
   * shift of a constant instead of a leading-zero count and a table load.
   */
  private static final long WIDTH_BY_TOP3 = byTop3(false);

  private static final long USED_BY_TOP3 = byTop3(true);

  private static long byTop3(boolean used) {
    long table = 0;
    for (int top3 = 0; top3 < 8; top3++) {
      int cls = Math.min(Integer.numberOfLeadingZeros(~(top3 << 29)), 3);
      int width = GorillaFormat.DOD_BITS[cls];
      int v = used ? 2 + GorillaFormat.DOD_PREFIX_BITS[cls] + width : width;
      table |= (long) v << (top3 << 3);
    }
    return table;
  }

  /** Zero bytes after the copied bit stream; more than a sample can over-read (147 bits + 8). */
  static final int PAD_BYTES = 32;

  /** Longest bit stream the int bit positions can address. */
  private static final int MAX_STREAM_BYTES = Integer.MAX_VALUE / 8 - PAD_BYTES - 8;

  private byte[] buf = new byte[64 + PAD_BYTES];

  /** The slot {@link Varints#readMinimal} reads the header into. */
  private final long[] varint = new long[1];

  /** Bit position of the next field in {@code buf}. */
  private int pos;

  /** Number of bits in the stream (excluding padding). */
  private int limitBits;

  /** Number of bytes of the bit stream (after the varint header). */
  private int streamBytes;

  private int count;

  /** Samples decoded so far, 0..count. */
  private int index;

  private boolean onSample;

  /** Set once the stream proved corrupt; every later {@link #next()} throws it again. */
  private CorruptRecordException failure;

  private long timestampMillis;
  private long delta;
  private long valueBits;
  private int windowTrailing;
  private int windowBits;

  public GorillaDecoder() {}

  /**
   * Points the decoder at the stream in {@code buf[offset, offset + length)}, which must hold
   * exactly one stream (as written by {@link GorillaEncoder#toByteArray()}). The bytes are copied;
   * the caller keeps ownership of {@code buf}. The cursor is then before the first sample.
   *
   * @throws CorruptRecordException if the header is malformed or announces more samples than the
   *     stream can hold
   * @throws IndexOutOfBoundsException if the range is not inside {@code buf}
   */
  @Override
  public void reset(byte[] buf, int offset, int length) {
    Objects.checkFromIndexSize(offset, length, buf.length);
    clearCursor();
    try {
      readHeader(buf, offset, length);
    } catch (CorruptRecordException e) {
      count = 0;
      failure = e;
      throw e;
    }
  }

  private void readHeader(byte[] buf, int offset, int length) {
    int end = offset + length;
    int p = offset;
    if (length == 0) {
      throw new CorruptRecordException("Gorilla stream is empty, expected the sample count");
    }
    long[] varint = this.varint;
    p = Varints.readMinimal(buf, p, end, 5, varint);
    switch (p) {
      case Varints.TRUNCATED ->
          throw new CorruptRecordException("Gorilla stream truncated in the sample count varint");
      case Varints.NOT_MINIMAL ->
          throw new CorruptRecordException("Gorilla sample count varint is not minimal");
      case Varints.TOO_LONG ->
          throw new CorruptRecordException("Gorilla sample count varint is longer than 5 bytes");
      default -> {}
    }
    long countLong = varint[0];
    if (countLong > Integer.MAX_VALUE) {
      throw new CorruptRecordException(
          "Gorilla sample count " + countLong + " exceeds " + Integer.MAX_VALUE);
    }
    int n = (int) countLong;
    if (n == 0) {
      if (p != end) {
        throw new CorruptRecordException(
            "Gorilla stream of 0 samples has " + (end - p) + " trailing bytes");
      }
      startEmpty();
      return;
    }
    p = Varints.readMinimal(buf, p, end, 9, varint);
    switch (p) {
      case Varints.TRUNCATED ->
          throw new CorruptRecordException(
              "Gorilla stream truncated in the first timestamp varint");
      case Varints.TOO_LONG ->
          throw new CorruptRecordException(
              "Gorilla first timestamp varint is longer than 9 bytes (exceeds Long.MAX_VALUE)");
      case Varints.NOT_MINIMAL ->
          throw new CorruptRecordException("Gorilla first timestamp varint is not minimal");
      default -> {}
    }
    long t0 = varint[0];
    int bytes = end - p;
    if (bytes < 8) {
      throw new CorruptRecordException(
          "Gorilla stream truncated: "
              + bytes
              + " bytes after the header, the first value needs 8");
    }
    if (bytes > MAX_STREAM_BYTES) {
      throw new CorruptRecordException("Gorilla stream too long: " + bytes + " bytes");
    }
    // every sample after the first takes at least one bit
    long minBits = 64L + (n - 1);
    if (minBits > (long) bytes * 8) {
      throw new CorruptRecordException(
          "Gorilla sample count " + n + " cannot fit in the " + bytes + " bytes after the header");
    }
    ensureCapacity(bytes);
    System.arraycopy(buf, p, this.buf, 0, bytes);
    start(n, t0, bytes);
  }

  /**
   * Points the decoder at a head stream as its encoder held it at {@code snapshot}, copying its
   * bytes straight into the decoder's buffer (no intermediate array; the snapshot's stream was
   * written by this codebase's encoder, so its header needs no checks). The cursor is then before
   * the first sample.
   */
  public void reset(GorillaEncoder.Snapshot snapshot) {
    clearCursor();
    int n = snapshot.count();
    if (n == 0) {
      startEmpty();
      return;
    }
    int bytes = snapshot.bitsByteCount();
    ensureCapacity(bytes);
    snapshot.copyBitsTo(this.buf, 0);
    start(n, snapshot.firstTimestampMillis(), bytes);
  }

  /** No stream yet: before {@link #readHeader} or {@link #start}. */
  private void clearCursor() {
    this.count = 0;
    this.index = 0;
    this.onSample = false;
    this.failure = null;
  }

  /** The state of a stream of 0 samples. */
  private void startEmpty() {
    this.streamBytes = 0;
    this.limitBits = 0;
    this.pos = 0;
  }

  private void ensureCapacity(int bytes) {
    if (this.buf.length < bytes + PAD_BYTES) {
      this.buf = new byte[Math.max(bytes + PAD_BYTES, this.buf.length * 2)];
    }
  }

  /** The state before the first sample of a stream of {@code n > 0} samples in {@code buf}. */
  private void start(int n, long t0, int bytes) {
    Arrays.fill(this.buf, bytes, bytes + PAD_BYTES, (byte) 0);
    this.streamBytes = bytes;
    this.limitBits = bytes * 8;
    this.count = n;
    this.timestampMillis = t0;
    this.delta = 0;
    this.valueBits = Bytes.getLongBe(this.buf, 0);
    this.pos = 64;
    this.windowTrailing = 0;
    this.windowBits = 64;
  }

  /** Number of samples in the stream, from its header. */
  @Override
  public int count() {
    return count;
  }

  /**
   * Advances to the next sample.
   *
   * @return false when there is no further sample (and on every later call)
   * @throws CorruptRecordException if the stream is truncated or corrupt
   */
  @Override
  public boolean next() {
    int i = index;
    if (i == 0 || i >= count) {
      return firstOrEnd();
    }
    // The hot path stays small (under C2's FreqInlineSize of 325 bytecodes) so that it inlines
    // into the caller's loop; everything rare lives in separate methods.
    long t = timestampMillis;
    // One load serves the control bits, the delta-of-delta (at most 30 bits with its prefixes),
    // the value-changed bit and the 12-bit header of the value: 43 of the >= 57 bits of peek().
    long w = peek();
    if (w >= 0) { // '0': dod 0, value unchanged
      pos += 1;
    } else if ((w << 1) >= 0) { // '10': dod 0, value changed
      pos += 2;
      readChangedValue(w << 2);
    } else { // '11': dod class, dod, value-changed bit
      long x = w << 2;
      if ((x >>> 60) != 0xF) { // classes 0..3, told apart by the top 3 bits of x
        int k = (int) (x >>> 61) << 3;
        int used = (int) (USED_BY_TOP3 >>> k) & 0xFF; // '11' + class prefix + dod, <= 30
        int width = (int) (WIDTH_BY_TOP3 >>> k) & 0xFF;
        delta += (w << (used - width)) >> (64 - width);
        long y = w << used; // the value-changed bit on top
        pos += used + 1;
        if (y < 0) {
          readChangedValue(y << 1);
        }
      } else {
        readWideDod();
      }
    }
    if (pos > limitBits) {
      throw truncated(i);
    }
    long nt = t + delta;
    if (nt <= t) {
      throw notIncreasing(i, t);
    }
    timestampMillis = nt;
    index = ++i;
    if (i == count) {
      checkEnd();
    }
    return true;
  }

  /** {@link #next()} before the first sample (which the header holds) and at the end. */
  private boolean firstOrEnd() {
    if (index >= count) {
      onSample = false;
      if (failure != null) {
        throw failure;
      }
      return false;
    }
    index = 1;
    onSample = true;
    if (count == 1) {
      checkEnd();
    }
    return true;
  }

  /** Class 4 after '11': '1111', a 64-bit delta-of-delta, the value-changed bit, the value. */
  private void readWideDod() {
    pos += 6;
    delta += readBits(64);
    long y = peek();
    pos += 1;
    if (y < 0) {
      readChangedValue(peek());
    }
  }

  private CorruptRecordException notIncreasing(int sample, long previous) {
    return fail(
        "Gorilla stream corrupt: sample "
            + sample
            + " has timestamp delta "
            + delta
            + " after "
            + previous
            + ", timestamps must increase");
  }

  /**
   * Reads a changed value: '0' + the bits of the current window, or '1' + 5 bits leading zeros, 6
   * bits significant-1 and the bits of a new window. Which of the two comes is data-dependent and
   * unpredictable, so both are decoded without a branch, by masking with the control bit.
   *
   * @param w the stream from {@code pos} on, at least the top 12 bits valid
   */
  private void readChangedValue(long w) {
    int isNew = (int) (w >> 63); // -1 for a new window, 0 to reuse the current one
    int leading = (int) (w >>> 58) & 0x1F;
    int significant = (((int) (w >>> 52) & 0x3F) + 1) & isNew | windowBits & ~isNew;
    int trailing = (64 - leading - significant) & isNew | windowTrailing & ~isNew;
    if (trailing < 0) {
      throw windowTooWide(leading, significant);
    }
    pos += 1 + (11 & isNew);
    windowTrailing = trailing;
    windowBits = significant;
    valueBits ^= readBits(significant) << trailing;
  }

  private CorruptRecordException windowTooWide(int leading, int significant) {
    return fail(
        "Gorilla stream corrupt: sample "
            + index
            + " has an XOR window of "
            + leading
            + " leading zeros and "
            + significant
            + " significant bits (more than 64)");
  }

  /** The next 64 bits from {@code pos}; at least the top 57 are stream (or padding) bits. */
  private long peek() {
    int p = pos;
    return Bytes.getLongBe(buf, p >>> 3) << (p & 7);
  }

  /** Reads {@code n} bits, 1..64, without a branch: 8 bytes plus the next byte give 64 bits. */
  private long readBits(int n) {
    int p = pos;
    int i = p >>> 3;
    int shift = p & 7;
    long word = (Bytes.getLongBe(buf, i) << shift) | ((buf[i + 8] & 0xFFL) >>> (8 - shift));
    pos = p + n;
    return word >>> (64 - n);
  }

  private CorruptRecordException truncated(int sample) {
    return fail(
        "Gorilla stream truncated: sample "
            + sample
            + " of "
            + count
            + " needs bits beyond the "
            + streamBytes
            + "-byte bit stream");
  }

  /** Makes the cursor sticky: no current sample, and every later {@link #next()} throws. */
  private CorruptRecordException fail(String message) {
    failure = new CorruptRecordException(message);
    index = count;
    onSample = false;
    return failure;
  }

  /** After the last sample: nothing but zero padding bits may follow. */
  private void checkEnd() {
    int usedBytes = (pos + 7) >>> 3;
    if (usedBytes != streamBytes) {
      throw fail(
          "Gorilla stream corrupt: "
              + (streamBytes - usedBytes)
              + " trailing bytes after the last of "
              + count
              + " samples");
    }
    int padBits = usedBytes * 8 - pos;
    if (padBits > 0 && (buf[usedBytes - 1] & ((1 << padBits) - 1)) != 0) {
      throw fail("Gorilla stream corrupt: non-zero padding bits after the last sample");
    }
  }

  /**
   * The current sample's timestamp.
   *
   * @throws IllegalStateException unless the last {@link #next()} or {@link #seek} returned true
   */
  @Override
  public long timestampMillis() {
    if (!onSample) {
      throw notOnSample();
    }
    return timestampMillis;
  }

  /**
   * The current sample's value as raw IEEE-754 bits, exactly as appended.
   *
   * @throws IllegalStateException unless the last {@link #next()} or {@link #seek} returned true
   */
  @Override
  public long valueBits() {
    if (!onSample) {
      throw notOnSample();
    }
    return valueBits;
  }

  @Override
  public boolean onSample() {
    return onSample;
  }

  /** {@code Double.longBitsToDouble(valueBits())}. */
  public double value() {
    return Double.longBitsToDouble(valueBits());
  }

  /**
   * Positions on the first sample whose timestamp is {@code >= timestampMillis}, starting at the
   * current sample (which is kept if it qualifies). Only moves forward.
   *
   * @return false if no sample at or after the cursor qualifies (the cursor is then at the end)
   * @throws CorruptRecordException if the stream is truncated or corrupt
   */
  @Override
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

  private IllegalStateException notOnSample() {
    return new IllegalStateException(
        index == 0 ? "call next() first" : "no current sample: the cursor is past the end");
  }
}
