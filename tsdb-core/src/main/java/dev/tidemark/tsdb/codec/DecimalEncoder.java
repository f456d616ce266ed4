package dev.tidemark.tsdb.codec;

import static dev.tidemark.tsdb.codec.DecimalFormat.BLOCK;
import static dev.tidemark.tsdb.codec.DecimalFormat.FLAG_REGULAR;
import static dev.tidemark.tsdb.codec.DecimalFormat.FLAG_TS_GRID;
import static dev.tidemark.tsdb.codec.DecimalFormat.FLAG_VALUE_DOD;
import static dev.tidemark.tsdb.codec.DecimalFormat.MAX_EXPONENT;
import static dev.tidemark.tsdb.codec.DecimalFormat.POW10;
import static dev.tidemark.tsdb.codec.Varints.encodeZigZag;

import java.util.Arrays;

/**
 * Encodes one chunk of {@code (timestamp ms, f64)} samples into the Tidemark decimal stream
 * (TimeSeries encoding id {@code 0x02}); {@link DecimalDecoder} reads it back. The byte layout is
 * specified in <a href="../../../../../../../../docs/format.md">docs/format.md</a>, section
 * "Decimal chunk (TimeSeries encoding 0x02)". Lossless: every value comes back bit-exact.
 *
 * <h2>Design note</h2>
 *
 * <p>Most stored metrics are decimals with few digits (gauges with two decimals, integer counters)
 * that Gorilla's XOR spends many mantissa bits on. Values: one decimal exponent {@code e} per
 * chunk; a value {@code v} is stored as the integer {@code m = round(v * 10^e)} when {@code
 * (double) m / 10^e} gives back exactly the same bits ({@code doubleToRawLongBits}); every other
 * value (NaN payloads such as the staleness marker, ±Inf, {@code -0.0}, values with too many digits
 * or out of {@code long} range) is an <i>exception</i> stored as its raw 64 bits at its position.
 * The integers are then coded as deltas (gauges) or deltas of deltas (counters with a steady rate),
 * whichever is smaller for this chunk, divided by their greatest common divisor (counters growing
 * in multiples of 5), and bit-packed with frame of reference in mini-blocks of {@value
 * DecimalFormat#BLOCK}: each block stores its minimum and one bit width. Timestamps are
 * delta-of-delta in the same mini-blocks, with a chunk flag for perfectly regular intervals (0 bits
 * per sample), so a few ms of scrape jitter cost a few bits per sample; or, when smaller, as
 * offsets from the grid {@code t0 + i * step} (step = the mean interval): a jitter of ±j ms then
 * costs the bits of 2j + 1 values instead of the 8j + 1 its delta-of-delta spans.
 *
 * <p>The encoder tries every exponent that is the smallest exact one of some value of the chunk
 * (usually one to three) with both value modes and writes the smallest stream; the size of each is
 * computed exactly, not estimated. Arithmetic on the integers wraps (two's complement), so no delta
 * can overflow: the decoder undoes the same wrapping sums.
 *
 * <p>Where this departs from its sources:
 *
 * <ul>
 *   <li><b>ALP</b> (Afroozeh, Kuffo, Boncz, SIGMOD 2024) picks an exponent and a factor per vector
 *       by sampling and decodes with a multiplication by an inexact {@code 10^-e}; we decode with a
 *       division by the exact {@code 10^e} (one correctly rounded operation, the same in encoder
 *       and decoder), choose the exponent from all values of the chunk, have no factor (the common
 *       divisor and the delta coding take its place for trailing zeros), and code deltas, not the
 *       integers themselves (time series are smooth, ALP's columns need not be). ALP's fallback for
 *       non-decimal data (ALP_rd) is not needed: such chunks stay Gorilla at seal time.
 *   <li><b>Chimp</b> (Liakos, Papakonstantinopoulou, Kotidis, VLDB 2022) observes that the XOR of
 *       real consecutive values rarely has many trailing zeros, so Gorilla's window wastes bits,
 *       and improves the XOR coding (leading-zero classes, a reference among the previous 128
 *       values). We leave the XOR path alone: for decimal data the decimal view removes the cause
 *       (a short decimal's mantissa is a long binary fraction, so its XOR is dense), and other data
 *       stays Gorilla ({@code 0x01}); a Chimp-style fallback could come later as a new encoding id.
 *   <li><b>VictoriaMetrics</b> converts values to (int64 mantissa, decimal exponent), lossy beyond
 *       about 12 significant digits, codes NaN/Inf as reserved integers, uses delta or
 *       delta-of-delta ("nearest delta2" for counters) and compresses blocks with zstd. We are
 *       bit-exact with any number of digits (what does not round-trip is an exception, kept out of
 *       band with its raw bits), and bit-pack with frame of reference instead of a general-purpose
 *       compressor (tsdb-core has none, and decoding stays a tight loop).
 * </ul>
 *
 * <p>Not thread-safe. Reusable: {@link #reset()} starts a new chunk. Samples are buffered; the
 * stream is computed on the first {@link #encodedSizeBytes()}, {@link #writeTo} or {@link
 * #toByteArray()} after an append (O(n) per candidate exponent, at seal time, not per sample).
 */
public final class DecimalEncoder {
  private long[] timestamps = new long[256];
  private long[] values = new long[256];
  private int count;

  // scratch, sized to the chunk
  private int[] minExponent = new int[0];

  /** The integer of each value at its own smallest exponent. */
  private long[] ownScaled = new long[0];

  private long[] scaled = new long[0];
  private int exceptions;
  private boolean[] exception = new boolean[0];

  /** Value residuals of the delta mode and of the delta-of-delta mode. */
  private long[] deltaResiduals = new long[0];

  private long[] dodResiduals = new long[0];
  private long[] tsResiduals = new long[0];
  private long[] gridResiduals = new long[0];

  private byte[] encoded;

  /** Whether only the largest candidate exponent is tried ({@link #largestExponentOnly}). */
  private boolean largestExponentOnly;

  public DecimalEncoder() {}

  /**
   * Tries only the largest exponent that is some value's smallest exact one (none but NaN, ±Inf,
   * -0.0 and values with too many digits is then an exception) instead of every candidate: a third
   * of the search for data with values of one, two and three decimals, and a stream that may be a
   * little larger than the smallest. For copies that are not stored (the head's frozen parts); a
   * stored chunk is searched fully. Stays set across {@link #reset()}.
   */
  public void largestExponentOnly(boolean on) {
    if (largestExponentOnly != on) {
      largestExponentOnly = on;
      encoded = null;
    }
  }

  /** Number of values stored as exceptions (raw bits) in the stream. */
  public int exceptionCount() {
    if (count == 0) {
      return 0;
    }
    encode();
    return exceptions;
  }

  /** Forgets every sample: the encoder starts a new chunk. */
  public void reset() {
    count = 0;
    encoded = null;
  }

  /** Number of samples appended since the last {@link #reset()}. */
  public int count() {
    return count;
  }

  /**
   * Appends one sample.
   *
   * @param timestampMillis milliseconds since the Unix epoch, {@code >= 0} and greater than the
   *     previous timestamp of this chunk
   * @param valueBits the raw IEEE-754 bits of the value, stored bit-exact
   * @throws IllegalArgumentException if the timestamp is negative or not after the previous one
   * @throws IllegalStateException if the chunk already holds {@link Integer#MAX_VALUE} samples
   */
  public void append(long timestampMillis, long valueBits) {
    if (timestampMillis < 0) {
      throw new IllegalArgumentException("timestampMillis must be >= 0, was " + timestampMillis);
    }
    if (count > 0 && timestampMillis <= timestamps[count - 1]) {
      throw new IllegalArgumentException(
          "timestampMillis "
              + timestampMillis
              + (timestampMillis == timestamps[count - 1] ? " duplicates" : " is before")
              + " the previous timestamp "
              + timestamps[count - 1]);
    }
    if (count == timestamps.length) {
      if (count == Integer.MAX_VALUE - 8) {
        throw new IllegalStateException("decimal chunk is full: " + count + " samples");
      }
      int n = (int) Math.min(Integer.MAX_VALUE - 8L, 2L * count);
      timestamps = Arrays.copyOf(timestamps, n);
      values = Arrays.copyOf(values, n);
    }
    timestamps[count] = timestampMillis;
    values[count] = valueBits;
    count++;
    encoded = null;
  }

  /** Size of the stream in bytes (without the TimeSeries encoding id). */
  public int encodedSizeBytes() {
    return encode().length;
  }

  /** Writes the stream at {@code offset}; returns its length. */
  public int writeTo(byte[] dst, int offset) {
    byte[] e = encode();
    System.arraycopy(e, 0, dst, offset, e.length);
    return e.length;
  }

  /** A new array holding the stream. */
  public byte[] toByteArray() {
    return encode().clone();
  }

  /**
   * The smallest exponent {@code e} in 0..18 for which {@code bits} round-trips through the scaled
   * integer, or -1 if there is none (NaN, ±Inf, -0.0, too many digits, out of {@code long} range).
   */
  static int minExponent(long bits) {
    return minExponent(bits, null, 0);
  }

  /** {@link #minExponent(long)}; also stores the integer at that exponent in {@code out[at]}. */
  private static int minExponent(long bits, long[] out, int at) {
    double v = Double.longBitsToDouble(bits);
    if (bits == Long.MIN_VALUE || !Double.isFinite(v)) {
      return -1;
    }
    for (int e = 0; e <= MAX_EXPONENT; e++) {
      double x = v * POW10[e];
      if (!(Math.abs(x) < 0x1p63)) {
        return -1;
      }
      long m = (long) Math.rint(x);
      if (Double.doubleToRawLongBits(m / POW10[e]) == bits) {
        if (out != null) {
          out[at] = m;
        }
        return e;
      }
    }
    return -1;
  }

  private byte[] encode() {
    if (encoded != null) {
      return encoded;
    }
    int n = count;
    if (n == 0) {
      return encoded = new byte[] {0};
    }
    ensureScratch(n);
    // timestamps: residual i-1 is the delta-of-delta of sample i against the base delta t1 - t0
    boolean regular = true;
    long base = n >= 2 ? timestamps[1] - timestamps[0] : 0;
    long prevDelta = base;
    for (int i = 1; i < n; i++) {
      long d = timestamps[i] - timestamps[i - 1];
      long r = d - prevDelta;
      tsResiduals[i - 1] = r;
      regular &= r == 0;
      prevDelta = d;
    }
    int tsBlockBytes = regular ? 0 : blocksSize(tsResiduals, n - 1);
    boolean grid = false;
    if (!regular && n >= 3) {
      // offsets from the grid t0 + i * step, step the mean interval: jitter costs its own range
      // instead of the four-fold range of its delta-of-delta
      long step = Math.round((timestamps[n - 1] - timestamps[0]) / (double) (n - 1));
      for (int i = 1; i < n; i++) {
        gridResiduals[i - 1] = timestamps[i] - (timestamps[0] + i * step);
      }
      int gridBytes = blocksSize(gridResiduals, n - 1);
      if (gridBytes + Varints.size(step) < tsBlockBytes + Varints.size(base)) {
        grid = true;
        tsBlockBytes = gridBytes;
        base = step;
        long[] swap = tsResiduals;
        tsResiduals = gridResiduals;
        gridResiduals = swap;
      }
    }

    int candidates = 0;
    for (int i = 0; i < n; i++) {
      int e = minExponent(values[i], ownScaled, i);
      minExponent[i] = e;
      if (e >= 0) {
        candidates |= 1 << e;
      }
    }
    if (candidates == 0) {
      candidates = 1;
    } else if (largestExponentOnly) {
      candidates = Integer.highestOneBit(candidates);
    }
    int bestSize = Integer.MAX_VALUE;
    int bestE = 0;
    boolean bestDod = false;
    Prepared p = null;
    int lastE = -1;
    for (int e = 0; e <= MAX_EXPONENT; e++) {
      if ((candidates & (1 << e)) == 0) {
        continue;
      }
      int common = scale(e);
      lastE = e;
      for (int mode = 0; mode < 2; mode++) {
        boolean dod = mode == 1;
        if (dod && n < 3) {
          continue;
        }
        Prepared r = residuals(dod);
        int size = common + r.size;
        if (size < bestSize) {
          bestSize = size;
          bestE = e;
          bestDod = dod;
          p = r;
        }
      }
    }
    if (bestE != lastE) {
      // each mode has its own residual array, so only an earlier exponent needs computing again
      scale(bestE);
      p = residuals(bestDod);
    }
    long[] residuals = bestDod ? dodResiduals : deltaResiduals;
    int flags =
        (regular ? FLAG_REGULAR : 0) | (grid ? FLAG_TS_GRID : 0) | (bestDod ? FLAG_VALUE_DOD : 0);
    long t0 = timestamps[0];
    int size =
        Varints.size(n)
            + Varints.size(t0)
            + 2
            + (n >= 2 ? Varints.size(base) : 0)
            + tsBlockBytes
            + bestSize;
    byte[] out = new byte[size];
    int q = Varints.put(out, 0, n);
    q = Varints.put(out, q, t0);
    out[q++] = (byte) flags;
    out[q++] = (byte) bestE;
    q = Varints.put(out, q, encodeZigZag(scaled[0]));
    if (n >= 2) {
      q = Varints.put(out, q, base);
      if (bestDod) {
        q = Varints.put(out, q, encodeZigZag(p.baseDelta));
      }
      q = Varints.put(out, q, p.divisor);
    }
    q = Varints.put(out, q, exceptions);
    for (int i = 0; i < n; i++) {
      if (exception[i]) {
        q = Varints.put(out, q, i);
        long bits = values[i];
        for (int b = 0; b < 8; b++) {
          out[q++] = (byte) (bits >>> (8 * b));
        }
      }
    }
    for (int from = 0; from < n - 1; from += BLOCK) {
      int len = Math.min(BLOCK, n - 1 - from);
      if (!regular) {
        q = putBlock(out, q, tsResiduals, from, len);
      }
      q = putBlock(out, q, residuals, from, len);
    }
    if (q != size) {
      throw new AssertionError("decimal stream size " + q + " != computed " + size);
    }
    return encoded = out;
  }

  private void ensureScratch(int n) {
    if (scaled.length < n) {
      int c = Math.max(n, 2 * scaled.length);
      minExponent = new int[c];
      ownScaled = new long[c];
      scaled = new long[c];
      exception = new boolean[c];
      deltaResiduals = new long[c];
      dodResiduals = new long[c];
      tsResiduals = new long[c];
      gridResiduals = new long[c];
    }
  }

  /** Exact powers of ten as longs, 10^0 .. 10^18. */
  private static final long[] LONG_POW10 = new long[MAX_EXPONENT + 1];

  /** {@code 2^53 / 10^k}: the largest integer whose product with {@code 10^k} is exact. */
  private static final long[] EXACT_LIMIT = new long[MAX_EXPONENT + 1];

  static {
    long p = 1;
    for (int e = 0; e <= MAX_EXPONENT; e++) {
      LONG_POW10[e] = p;
      EXACT_LIMIT[e] = (1L << 53) / p;
      p *= 10;
    }
  }

  /**
   * Fills {@code scaled} and {@code exception} for exponent {@code e}; returns the bytes of m0, the
   * exception count and the exceptions. A value whose smallest exponent {@code e_i <= e} has the
   * integer {@code m_i · 10^(e - e_i)}; below 2^53 that product is an exact double and the division
   * gives the same correctly rounded quotient as at {@code e_i}; larger ones are computed and
   * checked as in {@link #minExponent(long)}. Exceptions get the filler {@code m_{i-1}} (the first
   * representable integer for leading ones), which costs nothing in delta mode.
   */
  private int scale(int e) {
    int n = count;
    double pow = POW10[e];
    int exc = 0;
    int excBytes = 0;
    int firstAt = -1;
    for (int i = 0; i < n; i++) {
      int own = minExponent[i];
      boolean ok = false;
      if (own >= 0 && own <= e) {
        long m = ownScaled[i];
        long abs = Math.abs(m);
        if (abs <= EXACT_LIMIT[e - own]) {
          scaled[i] = m * LONG_POW10[e - own];
          ok = true;
        } else {
          // above 2^53 the product may not round-trip while a neighbour of v * 10^e does
          double x = Double.longBitsToDouble(values[i]) * pow;
          if (Math.abs(x) < 0x1p63) {
            m = (long) Math.rint(x);
            if (Double.doubleToRawLongBits(m / pow) == values[i]) {
              scaled[i] = m;
              ok = true;
            }
          }
        }
      }
      exception[i] = !ok;
      if (ok) {
        if (firstAt < 0) {
          firstAt = i;
        }
      } else {
        exc++;
        excBytes += Varints.size(i) + 8;
      }
    }
    if (exc > 0) {
      long first = firstAt < 0 ? 0 : scaled[firstAt];
      for (int i = 0; i < n; i++) {
        if (exception[i]) {
          scaled[i] = i == 0 ? first : scaled[i - 1];
        }
      }
    }
    exceptions = exc;
    return Varints.size(encodeZigZag(scaled[0])) + Varints.size(exc) + excBytes;
  }

  private record Prepared(int size, long baseDelta, long divisor) {}

  /**
   * Fills the mode's residual array ({@link #dodResiduals} or {@link #deltaResiduals}) from {@code
   * scaled}, divided by their common divisor; returns the bytes of [base value delta], [divisor]
   * and the value mini-blocks.
   */
  private Prepared residuals(boolean dod) {
    long[] residuals = dod ? dodResiduals : deltaResiduals;
    int n = count;
    if (n < 2) {
      return new Prepared(0, 0, 1);
    }
    long baseDelta = scaled[1] - scaled[0];
    long prevDelta = baseDelta;
    long gcd = 0;
    for (int i = 1; i < n; i++) {
      long d = scaled[i] - scaled[i - 1];
      long r = dod ? d - prevDelta : d;
      prevDelta = d;
      residuals[i - 1] = r;
      gcd = gcd(gcd, r);
    }
    long divisor = gcd <= 1 ? 1 : gcd;
    if (divisor > 1) {
      for (int i = 0; i < n - 1; i++) {
        residuals[i] /= divisor;
      }
    }
    int size =
        (dod ? Varints.size(encodeZigZag(baseDelta)) : 0)
            + Varints.size(divisor)
            + blocksSize(residuals, n - 1);
    return new Prepared(size, baseDelta, divisor);
  }

  /**
   * Folds {@code r} into the running gcd {@code g} (0 before the first residual). -1 means "no
   * common divisor" and is sticky, as is 1; {@code Long.MIN_VALUE} has no positive absolute value
   * and gives -1.
   */
  private static long gcd(long g, long r) {
    if (g == 1 || g < 0) {
      return g;
    }
    if (r == Long.MIN_VALUE) {
      return -1;
    }
    r = Math.abs(r);
    while (r != 0) {
      long t = g % r;
      g = r;
      r = t;
    }
    return g;
  }

  /** Bytes of the mini-blocks of {@code r[0, n)}: width byte, zig-zag min, packed bits. */
  private static int blocksSize(long[] r, int n) {
    int size = 0;
    for (int from = 0; from < n; from += BLOCK) {
      int len = Math.min(BLOCK, n - from);
      long min = Long.MAX_VALUE;
      long max = Long.MIN_VALUE;
      for (int i = from; i < from + len; i++) {
        min = Math.min(min, r[i]);
        max = Math.max(max, r[i]);
      }
      int width = 64 - Long.numberOfLeadingZeros(max - min);
      size += 1 + Varints.size(encodeZigZag(min)) + (int) (((long) len * width + 7) >>> 3);
    }
    return size;
  }

  private static int putBlock(byte[] out, int q, long[] r, int from, int len) {
    long min = Long.MAX_VALUE;
    long max = Long.MIN_VALUE;
    for (int i = from; i < from + len; i++) {
      min = Math.min(min, r[i]);
      max = Math.max(max, r[i]);
    }
    int width = 64 - Long.numberOfLeadingZeros(max - min);
    out[q++] = (byte) width;
    q = Varints.put(out, q, encodeZigZag(min));
    if (width == 0) {
      return q;
    }
    long acc = 0;
    int bits = 0; // pending bits in the low end of acc, 0..7 between values
    for (int i = from; i < from + len; i++) {
      long x = r[i] - min;
      if (width > 56) {
        acc = (acc << (width - 32)) | (x >>> 32);
        bits += width - 32;
        while (bits >= 8) {
          bits -= 8;
          out[q++] = (byte) (acc >>> bits);
        }
        x &= 0xFFFFFFFFL;
        acc = (acc << 32) | x;
        bits += 32;
      } else {
        acc = (acc << width) | x;
        bits += width;
      }
      while (bits >= 8) {
        bits -= 8;
        out[q++] = (byte) (acc >>> bits);
      }
    }
    if (bits > 0) {
      out[q++] = (byte) (acc << (8 - bits));
    }
    return q;
  }
}
