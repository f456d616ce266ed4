package dev.tidemark.tsdb.codec;

import static dev.tidemark.tsdb.codec.DecimalFormat.BLOCK;
import static dev.tidemark.tsdb.codec.DecimalFormat.FLAG_REGULAR;
import static dev.tidemark.tsdb.codec.DecimalFormat.FLAG_TS_GRID;
import static dev.tidemark.tsdb.codec.DecimalFormat.FLAG_VALUE_DOD;
import static dev.tidemark.tsdb.codec.DecimalFormat.KNOWN_FLAGS;
import static dev.tidemark.tsdb.codec.DecimalFormat.MAX_EXPONENT;
import static dev.tidemark.tsdb.codec.DecimalFormat.POW10;
import static dev.tidemark.tsdb.codec.Varints.decodeZigZag;

import java.util.Arrays;
import java.util.Objects;

/**
 * A forward cursor over a decimal stream written by {@link DecimalEncoder} (TimeSeries encoding
 * {@code 0x02}); the layout is specified in <a
 * href="../../../../../../../../docs/format.md">docs/format.md</a>, section "Decimal chunk
 * (TimeSeries encoding 0x02)".
 *
 * <h2>Design note</h2>
 *
 * <p>{@link #reset} copies the stream into an internal buffer with {@code PAD_BYTES} zero bytes
 * after it, parses and checks the header and the exception list, and checks that the stream can
 * hold the mini-blocks the sample count implies. Samples are then decoded one mini-block ({@value
 * DecimalFormat#BLOCK} samples) at a time into two fixed arrays: a tight, branch-poor unpacking
 * loop (one unaligned big-endian long load per packed value, thanks to the padding) instead of a
 * bit-by-bit state machine; {@link #next()} itself only steps through the arrays. Every block's
 * length is checked against the stream before it is read, so no read leaves the padding. Memory is
 * bounded by the input: the two block arrays are fixed, the exception arrays grow only with
 * exceptions actually present (9 bytes of input each). {@link #next()} and {@link #seek} never
 * allocate.
 *
 * <h2>Corrupt input</h2>
 *
 * <p>Every malformed stream makes {@link #reset} or {@link #next()} throw {@link
 * CorruptRecordException}: a bad or non-minimal varint, unknown flags, an exponent above 18, a
 * divisor of 0, exception positions not strictly increasing or not below the count, a bit width
 * above 64, bytes missing, non-zero padding bits, a timestamp delta below 1, a timestamp overflow
 * (in grid mode: a timestamp not after the previous one), trailing bytes. A stream that decodes is
 * a sequence of strictly increasing non-negative timestamps. A failure is sticky. A corrupt stream
 * may also decode to different samples without an error (the format has no checksum).
 *
 * <p>Not thread-safe; reusable across streams.
 */
public final class DecimalDecoder implements ChunkDecoder {
  /** The slot {@link Varints#readMinimal} reads into. */
  private final long[] varint = new long[1];

  /** Zero bytes after the copied stream: an 8-byte load plus one byte at the last bit. */
  static final int PAD_BYTES = 16;

  private byte[] buf = new byte[64 + PAD_BYTES];

  /** Next unread byte of {@code buf}. */
  private int pos;

  /** End of the stream in {@code buf}. */
  private int end;

  private int count;

  /** Samples handed out so far. */
  private int index;

  private boolean onSample;
  private CorruptRecordException failure;

  private int flags;
  private int exponent;
  private long divisor;
  private long t0;
  private long timestamp;
  private long delta;
  private long scaled;
  private long valueDelta;

  private int[] excPos = new int[8];
  private long[] excBits = new long[8];
  private int excCount;

  /** Next exception not yet applied. */
  private int excNext;

  private final long[] blockTimestamps = new long[BLOCK];
  private final long[] blockBits = new long[BLOCK];
  private final long[] residuals = new long[BLOCK];

  /** Minimum and bit width of the mini-block half read last. */
  private long blockMin;

  private int blockWidth;

  /** Samples in the block arrays, and the next one to hand out. */
  private int blockLen;

  private int blockNext;
  private int current;

  public DecimalDecoder() {}

  @Override
  public void reset(byte[] in, int offset, int length) {
    Objects.checkFromIndexSize(offset, length, in.length);
    count = 0;
    index = 0;
    onSample = false;
    failure = null;
    blockLen = 0;
    blockNext = 0;
    excCount = 0;
    excNext = 0;
    if (buf.length < length + PAD_BYTES) {
      buf = new byte[Math.max(length + PAD_BYTES, buf.length * 2)];
    }
    System.arraycopy(in, offset, buf, 0, length);
    Arrays.fill(buf, length, length + PAD_BYTES, (byte) 0);
    pos = 0;
    end = length;
    try {
      readHeader();
    } catch (CorruptRecordException e) {
      count = 0;
      failure = e;
      throw e;
    }
  }

  private void readHeader() {
    if (end == 0) {
      throw new CorruptRecordException("decimal stream is empty, expected the sample count");
    }
    long n = readVarint("sample count");
    if (n > Integer.MAX_VALUE) {
      throw new CorruptRecordException(
          "decimal sample count " + n + " exceeds " + Integer.MAX_VALUE);
    }
    if (n == 0) {
      if (pos != end) {
        throw new CorruptRecordException(
            "decimal stream of 0 samples has " + (end - pos) + " trailing bytes");
      }
      return;
    }
    long t0 = readVarint("first timestamp");
    if (t0 < 0) {
      throw new CorruptRecordException(
          "decimal first timestamp " + Long.toUnsignedString(t0) + " exceeds 2^63-1");
    }
    flags = readByte("flags");
    if ((flags & ~KNOWN_FLAGS) != 0
        || (flags & (FLAG_REGULAR | FLAG_TS_GRID)) == (FLAG_REGULAR | FLAG_TS_GRID)) {
      throw new CorruptRecordException(
          String.format("decimal stream has unknown flags 0x%02x", flags));
    }
    exponent = readByte("exponent");
    if (exponent > MAX_EXPONENT) {
      throw new CorruptRecordException("decimal exponent " + exponent + " exceeds " + MAX_EXPONENT);
    }
    long m0 = decodeZigZag(readVarint("first scaled value"));
    divisor = 1;
    delta = 0;
    valueDelta = 0;
    if (n >= 2) {
      delta = readVarint("base timestamp delta");
      if (delta < 1) {
        throw new CorruptRecordException(
            "decimal base timestamp delta "
                + Long.toUnsignedString(delta)
                + " is not in 1..2^63-1");
      }
      if ((flags & FLAG_VALUE_DOD) != 0) {
        valueDelta = decodeZigZag(readVarint("base value delta"));
      }
      divisor = readVarint("divisor");
      if (divisor == 0) {
        throw new CorruptRecordException("decimal divisor is 0");
      }
    }
    long exc = readVarint("exception count");
    if (exc > n) {
      throw new CorruptRecordException(
          "decimal exception count " + exc + " exceeds the sample count " + n);
    }
    if (exc * 9 > end - pos) {
      throw new CorruptRecordException(
          "decimal stream truncated: "
              + exc
              + " exceptions need at least "
              + exc * 9
              + " bytes, "
              + (end - pos)
              + " left");
    }
    int e = (int) exc;
    if (excPos.length < e) {
      excPos = new int[Math.max(e, 2 * excPos.length)];
      excBits = new long[excPos.length];
    }
    long previous = -1;
    for (int i = 0; i < e; i++) {
      long p = readVarint("exception position");
      if (p >= n || p <= previous) {
        throw new CorruptRecordException(
            "decimal exception "
                + i
                + " has position "
                + Long.toUnsignedString(p)
                + (p >= n
                    ? ", beyond the last sample " + (n - 1)
                    : ", not after the previous " + previous));
      }
      if (end - pos < 8) {
        throw new CorruptRecordException("decimal stream truncated in the bits of exception " + i);
      }
      excPos[i] = (int) p;
      excBits[i] = Bytes.getLongLe(buf, pos);
      pos += 8;
      previous = p;
    }
    excCount = e;
    long blocks = (n - 1 + BLOCK - 1) / BLOCK;
    long minBytes = blocks * ((flags & FLAG_REGULAR) != 0 ? 2 : 4);
    if (minBytes > end - pos) {
      throw new CorruptRecordException(
          "decimal sample count "
              + n
              + " needs "
              + blocks
              + " mini-blocks of at least "
              + minBytes
              + " bytes, "
              + (end - pos)
              + " left");
    }
    if (n == 1 && pos != end) {
      throw trailing(end - pos);
    }
    count = (int) n;
    this.t0 = t0;
    timestamp = t0;
    scaled = m0;
    blockTimestamps[0] = t0;
    blockBits[0] = DecimalFormat.valueBits(m0, exponent);
    if (excCount > 0 && excPos[0] == 0) {
      blockBits[0] = excBits[0];
      excNext = 1;
    }
    blockLen = 1;
  }

  @Override
  public int count() {
    return count;
  }

  @Override
  public boolean next() {
    int b = blockNext;
    if (b < blockLen) {
      current = b;
      blockNext = b + 1;
      index++;
      onSample = true;
      return true;
    }
    return nextBlock();
  }

  private boolean nextBlock() {
    if (index >= count) {
      onSample = false;
      if (failure != null) {
        throw failure;
      }
      return false;
    }
    try {
      readBlock(Long.MIN_VALUE);
    } catch (CorruptRecordException e) {
      throw fail(e);
    }
    return next();
  }

  /** A corrupt stream: the cursor ends here, and every later call throws {@code e} again. */
  private CorruptRecordException fail(CorruptRecordException e) {
    failure = e;
    index = count;
    onSample = false;
    blockLen = 0;
    blockNext = 0;
    return e;
  }

  /**
   * Decodes the samples {@code index .. index + len - 1} (a mini-block) into the block arrays; or,
   * when its last timestamp is before {@code skipBefore}, only reads past it (its values are
   * accumulated but not turned into doubles, which is most of a block's cost) and returns true: the
   * block's samples then count as handed out. Inside the block that holds {@code skipBefore}, the
   * samples before it are skipped the same way and the cursor stands before the first one at or
   * after it.
   */
  private boolean readBlock(long skipBefore) {
    int first = index;
    int len = Math.min(BLOCK, count - first);
    long[] ts = blockTimestamps;
    if ((flags & FLAG_REGULAR) == 0) {
      readResiduals(len, true);
    }
    long t = timestamp;
    long d = delta;
    if ((flags & FLAG_TS_GRID) != 0) {
      long[] r = residuals;
      long origin = t0;
      for (int j = 0; j < len; j++) {
        long nt = origin + (first + j) * d + r[j]; // wraps; the check below keeps t increasing
        if (nt <= t) {
          throw badTimestamp(first + j, t, nt - t);
        }
        t = nt;
        ts[j] = t;
      }
    } else if ((flags & FLAG_REGULAR) == 0) {
      long[] r = residuals;
      for (int j = 0; j < len; j++) {
        d += r[j];
        if (d < 1 || t > Long.MAX_VALUE - d) {
          throw badTimestamp(first + j, t, d);
        }
        t += d;
        ts[j] = t;
      }
    } else {
      if (d > (Long.MAX_VALUE - t) / len) { // t >= 0, d >= 1: the last of len steps would overflow
        throw badTimestamp(first, t, d);
      }
      for (int j = 0; j < len; j++) {
        t += d;
        ts[j] = t;
      }
    }
    timestamp = t;
    delta = d;

    readResiduals(len, false);
    long[] bits = blockBits;
    long[] r = residuals;
    long g = divisor;
    long m = scaled;
    // Samples before the target (a seek's) are accumulated but not turned into doubles; a block
    // wholly before it (from == len) is only read past.
    int from = 0;
    if (t < skipBefore) {
      from = len;
    } else if (skipBefore != Long.MIN_VALUE) {
      long[] ts0 = blockTimestamps;
      while (ts0[from] < skipBefore) {
        from++; // stops inside the block: its last timestamp is >= skipBefore
      }
    }
    double pow = POW10[exponent];
    if (blockWidth == 0
        && blockMin * g == 0
        && ((flags & FLAG_VALUE_DOD) == 0 || valueDelta == 0)) {
      // nothing changes in this block (a constant or a regular counter that stopped)
      Arrays.fill(bits, from, len, DecimalFormat.valueBits(m, exponent));
    } else if ((flags & FLAG_VALUE_DOD) != 0) {
      long vd = valueDelta;
      for (int j = 0; j < from; j++) {
        vd += r[j] * g;
        m += vd;
      }
      for (int j = from; j < len; j++) {
        vd += r[j] * g;
        m += vd;
        bits[j] = Double.doubleToRawLongBits(m / pow);
      }
      valueDelta = vd;
    } else {
      long before = 0; // the sum of the products is the product of the sum, modulo 2^64
      for (int j = 0; j < from; j++) {
        before += r[j];
      }
      m += before * g;
      if (exponent == 0) { // m / 1.0 == (double) m: skip the division
        for (int j = from; j < len; j++) {
          m += r[j] * g;
          bits[j] = Double.doubleToRawLongBits((double) m);
        }
      } else {
        for (int j = from; j < len; j++) {
          m += r[j] * g;
          bits[j] = Double.doubleToRawLongBits(m / pow);
        }
      }
    }
    scaled = m;
    int x = excNext;
    int last = first + len;
    while (x < excCount && excPos[x] < last) {
      bits[excPos[x] - first] = excBits[x];
      x++;
    }
    excNext = x;
    boolean skipped = from == len;
    blockLen = skipped ? 0 : len;
    blockNext = skipped ? 0 : from; // the samples before count as handed out
    index = first + from;
    if (skipped) {
      onSample = false;
    }
    if (last == count && pos != end) {
      throw trailing(end - pos);
    }
    return skipped;
  }

  private static CorruptRecordException badTimestamp(int sample, long previous, long d) {
    return new CorruptRecordException(
        "decimal stream corrupt: sample "
            + sample
            + " has timestamp delta "
            + d
            + " after "
            + previous
            + (d < 1 ? ", timestamps must increase" : ", beyond 2^63-1"));
  }

  /** Reads one mini-block header and its packed bits into {@code residuals[0, len)}. */
  private void readResiduals(int len, boolean timestamps) {
    int width = readByte(timestamps ? "timestamp bit width" : "value bit width");
    if (width > 64) {
      String what = timestamps ? "timestamp" : "value";
      throw new CorruptRecordException(
          "decimal stream corrupt: "
              + what
              + " mini-block at sample "
              + index
              + " has bit width "
              + width
              + " (at most 64)");
    }
    long min =
        decodeZigZag(readVarint(timestamps ? "timestamp block minimum" : "value block minimum"));
    long[] r = residuals;
    blockMin = min;
    blockWidth = width;
    if (width == 0) {
      Arrays.fill(r, 0, len, min);
      return;
    }
    int bytes = (int) (((long) len * width + 7) >>> 3);
    if (bytes > end - pos) {
      String what = timestamps ? "timestamp" : "value";
      throw new CorruptRecordException(
          "decimal stream truncated: "
              + what
              + " mini-block at sample "
              + index
              + " needs "
              + bytes
              + " bytes, "
              + (end - pos)
              + " left");
    }
    byte[] b = buf;
    long bit = (long) pos << 3;
    if (width <= 56) {
      int shift = 64 - width;
      for (int j = 0; j < len; j++) {
        int p = (int) bit;
        r[j] = min + ((Bytes.getLongBe(b, p >>> 3) << (p & 7)) >>> shift);
        bit += width;
      }
    } else {
      for (int j = 0; j < len; j++) {
        int p = (int) bit;
        int i = p >>> 3;
        int s = p & 7;
        long word = (Bytes.getLongBe(b, i) << s) | ((b[i + 8] & 0xFFL) >>> (8 - s));
        r[j] = min + (word >>> (64 - width));
        bit += width;
      }
    }
    int padBits = bytes * 8 - len * width;
    if (padBits > 0 && (b[pos + bytes - 1] & ((1 << padBits) - 1)) != 0) {
      String what = timestamps ? "timestamp" : "value";
      throw new CorruptRecordException(
          "decimal stream corrupt: non-zero padding bits after the "
              + what
              + " mini-block at sample "
              + index);
    }
    pos += bytes;
  }

  private int readByte(String what) {
    if (pos >= end) {
      throw new CorruptRecordException("decimal stream truncated in the " + what);
    }
    return buf[pos++] & 0xFF;
  }

  /** Reads a minimal unsigned LEB128 varint of at most 10 bytes (64 bits). */
  private long readVarint(String what) {
    int p = Varints.readMinimal(buf, pos, end, Varints.MAX_BYTES, varint);
    switch (p) {
      case Varints.TRUNCATED ->
          throw new CorruptRecordException("decimal stream truncated in the " + what + " varint");
      case Varints.TOO_LONG ->
          throw new CorruptRecordException("decimal " + what + " varint exceeds 64 bits");
      case Varints.NOT_MINIMAL ->
          throw new CorruptRecordException("decimal " + what + " varint is not minimal");
      default -> pos = p;
    }
    return varint[0];
  }

  private CorruptRecordException trailing(int bytes) {
    return new CorruptRecordException(
        "decimal stream corrupt: "
            + bytes
            + " trailing bytes after the last of "
            + count
            + " samples");
  }

  @Override
  public long timestampMillis() {
    if (!onSample) {
      throw notOnSample();
    }
    return blockTimestamps[current];
  }

  @Override
  public long valueBits() {
    if (!onSample) {
      throw notOnSample();
    }
    return blockBits[current];
  }

  @Override
  public boolean onSample() {
    return onSample;
  }

  /** Copies runs of the decoded mini-block with {@code System.arraycopy}. */
  @Override
  public int copyUpTo(
      long[] timestamps, long[] valueBits, int offset, int max, long maxTimestampMillis) {
    int n = 0;
    while (n < max && onSample) {
      int b = current;
      int end = Math.min(blockLen, b + (max - n));
      long[] bt = blockTimestamps;
      int j = b;
      while (j < end && bt[j] <= maxTimestampMillis) {
        j++;
      }
      int c = j - b;
      System.arraycopy(bt, b, timestamps, offset + n, c);
      System.arraycopy(blockBits, b, valueBits, offset + n, c);
      n += c;
      if (j < blockLen) { // stopped inside the block, by the time or by max: stand on sample j
        current = j;
        blockNext = j + 1;
        index += c;
        return n;
      }
      // the rest of the block was copied: stand on its last sample, then step past it
      current = blockLen - 1;
      blockNext = blockLen;
      index += c - 1;
      next();
    }
    return n;
  }

  /** {@code Double.longBitsToDouble(valueBits())}. */
  public double value() {
    return Double.longBitsToDouble(valueBits());
  }

  /**
   * Mini-blocks that lie wholly before the target are read past without computing their values
   * ({@link #readBlock}); the block holding the target is decoded and stepped through.
   */
  @Override
  public boolean seek(long timestampMillis) {
    if (onSample && blockTimestamps[current] >= timestampMillis) {
      return true;
    }
    while (blockNext < blockLen) {
      next();
      if (blockTimestamps[current] >= timestampMillis) {
        return true;
      }
    }
    try {
      while (index < count && failure == null && readBlock(timestampMillis)) {
        // skipped a block
      }
    } catch (CorruptRecordException e) {
      throw fail(e);
    }
    while (next()) {
      if (blockTimestamps[current] >= timestampMillis) {
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
