package dev.tidemark.tsdb.codec;

import static dev.tidemark.tsdb.codec.GorillaFormat.MAX_LEADING_ZEROS;
import static dev.tidemark.tsdb.codec.GorillaFormat.NEW_WINDOW_HEADER_BITS;

/**
 * Encodes one chunk of {@code (timestamp ms, f64)} samples into the Tidemark Gorilla XOR stream
 * (TimeSeries encoding id {@code 0x01}); {@link GorillaDecoder} reads it back. The byte layout is
 * specified in <a href="../../../../../../../../docs/format.md">docs/format.md</a>, section
 * "Gorilla XOR chunk".
 *
 * <h2>Design note</h2>
 *
 * <p>After Pelkonen et al., "Gorilla: A Fast, Scalable, In-Memory Time Series Database" (VLDB 2015)
 * and Prometheus' {@code tsdb/chunkenc/xor.go}: timestamps as delta-of-delta in prefix classes,
 * values as the XOR with the previous value stored as a window of meaningful bits. Where this codec
 * departs from both:
 *
 * <ul>
 *   <li>A byte header of unsigned LEB128 varints (sample count, first timestamp) instead of a fixed
 *       64-bit timestamp and padding-terminated stream, so the stream is self-delimiting.
 *   <li>One control bit {@code 0} means "delta-of-delta 0 and value unchanged" (the common case of
 *       a constant series on a regular interval), {@code 10} means "delta-of-delta 0, value
 *       changed", {@code 11} introduces a non-zero (or first) delta-of-delta. Gorilla needs 2 bits
 *       for the first case; this is how a constant 240-sample chunk stays near 0.2 bytes/sample.
 *   <li>Delta-of-delta classes of 7/9/16/24/64 bits for millisecond timestamps: 7 bits for the few
 *       ms of jitter a real scraper has, 9 bits for the ±200 ms a ±50 ms jitter produces, 16 bits
 *       (±32 s) for a missed 15 s or 30 s scrape (Prometheus' 14-bit class holds only ±8 s), 24
 *       bits (±2.3 h) for any gap inside a one-hour chunk, 64 bits for anything else.
 *   <li>The first delta is coded as a delta-of-delta against 0 (no separate varint).
 *   <li>The encoder reuses the previous XOR window only if it fits and is no more than 11 bits
 *       wider than a fresh window would be; the initial window is the full 64 bits (no sentinel).
 * </ul>
 *
 * <p>Values are handled as raw IEEE-754 bits and stored bit-exact: every NaN payload (including the
 * staleness marker {@code 0x7ff0000000000002}), {@code -0.0}, infinities, subnormals.
 *
 * <p>Not thread-safe. Reusable: {@link #reset()} starts a new chunk; {@link #toByteArray()} may be
 * called at any time and the encoder remains usable for further appends. No allocation per sample
 * other than the occasional growth of the internal buffer.
 *
 * <p>Not final so that the engine's head series can be its own stream's encoder (one object per
 * series instead of two); every method is final.
 */
public class GorillaEncoder extends BitWriter {
  private int count;
  private long firstTimestampMillis;
  private long lastTimestampMillis;
  private long lastDelta;
  private long lastValueBits;

  /** Current XOR window: trailing zeros and width in bits (the initial window is all 64 bits). */
  private int windowTrailing;

  private int windowLeading;
  private int windowBits = 64;

  public GorillaEncoder() {}

  /**
   * Appends one sample.
   *
   * @param timestampMillis milliseconds since the Unix epoch, {@code >= 0} and greater than the
   *     previous timestamp of this chunk
   * @param valueBits the raw IEEE-754 bits of the value ({@link Double#doubleToRawLongBits}),
   *     stored bit-exact
   * @throws IllegalArgumentException if the timestamp is negative, equal to the previous one
   *     (duplicate) or before it (out of order); the message names both timestamps
   * @throws IllegalStateException if the chunk already holds {@link Integer#MAX_VALUE} samples
   */
  public final void append(long timestampMillis, long valueBits) {
    // rare cases (the first sample, refusals) live in separate methods to keep this one small
    // enough to inline into the caller's loop
    if (count == 0 || timestampMillis <= lastTimestampMillis || count == Integer.MAX_VALUE) {
      appendFirstOrRefuse(timestampMillis, valueBits);
      return;
    }
    long delta = timestampMillis - lastTimestampMillis; // >= 1, no overflow: both are >= 0
    long dod = delta - lastDelta; // no overflow: both deltas are in [0, Long.MAX_VALUE]
    long xor = valueBits ^ lastValueBits;
    BitWriter w = this;
    if (dod == 0) {
      if (xor == 0) {
        w.write(0, 1); // '0'
      } else {
        w.write(0b10, 2); // '10'
        writeChangedValue(w, xor);
      }
    } else {
      writeDodAndValue(w, dod, xor);
    }
    lastTimestampMillis = timestampMillis;
    lastDelta = delta;
    lastValueBits = valueBits;
    count++;
  }

  /** '11', the delta-of-delta class and bits, the value-changed bit, the value if changed. */
  private void writeDodAndValue(BitWriter w, long dod, long xor) {
    int changed = xor == 0 ? 0 : 1;
    if (dod >= -64 && dod < 64) {
      w.write((((0b110L << 7) | (dod & 0x7FL)) << 1) | changed, 11);
    } else if (dod >= -256 && dod < 256) {
      w.write((((0b1110L << 9) | (dod & 0x1FFL)) << 1) | changed, 14);
    } else if (dod >= -32768 && dod < 32768) {
      w.write((((0b11110L << 16) | (dod & 0xFFFFL)) << 1) | changed, 22);
    } else if (dod >= -(1L << 23) && dod < (1L << 23)) {
      w.write((((0b111110L << 24) | (dod & 0xFFFFFFL)) << 1) | changed, 31);
    } else {
      w.write(0b111111, 6);
      w.write(dod, 64);
      w.write(changed, 1);
    }
    if (changed != 0) {
      writeChangedValue(w, xor);
    }
  }

  private void appendFirstOrRefuse(long timestampMillis, long valueBits) {
    if (timestampMillis < 0) {
      throw new IllegalArgumentException("timestampMillis must be >= 0, was " + timestampMillis);
    }
    if (count == 0) {
      firstTimestampMillis = timestampMillis;
      lastTimestampMillis = timestampMillis;
      lastDelta = 0;
      lastValueBits = valueBits;
      write(valueBits, 64);
      count = 1;
      return;
    }
    if (timestampMillis <= lastTimestampMillis) {
      throw new IllegalArgumentException(
          (timestampMillis == lastTimestampMillis ? "duplicate timestamp: " : "out of order: ")
              + "timestampMillis "
              + timestampMillis
              + " is not after the previous timestamp "
              + lastTimestampMillis
              + " of this chunk");
    }
    throw new IllegalStateException("Gorilla chunk is full: " + count + " samples");
  }

  /** Writes a non-zero XOR: '0' + bits in the current window, or '1' + a new window. */
  private void writeChangedValue(BitWriter w, long xor) {
    int leading = Math.min(Long.numberOfLeadingZeros(xor), MAX_LEADING_ZEROS);
    int trailing = Long.numberOfTrailingZeros(xor);
    int significant = 64 - leading - trailing;
    if (leading >= windowLeading
        && trailing >= windowTrailing
        && windowBits <= significant + NEW_WINDOW_HEADER_BITS) {
      // '0' then the window; the bits above the window are zero, so the '0' comes for free
      if (windowBits < 64) {
        w.write(xor >>> windowTrailing, windowBits + 1);
      } else {
        w.write(0, 1);
        w.write(xor, 64);
      }
    } else {
      long header = (1L << 11) | ((long) leading << 6) | (significant - 1);
      if (significant <= 52) {
        w.write((header << significant) | (xor >>> trailing), 12 + significant);
      } else {
        w.write(header, 12);
        w.write(xor >>> trailing, significant);
      }
      windowLeading = leading;
      windowTrailing = trailing;
      windowBits = significant;
    }
  }

  /** Number of samples appended since construction or the last {@link #reset()}. */
  public final int count() {
    return count;
  }

  /**
   * The timestamp of the last appended sample.
   *
   * @throws IllegalStateException if no sample has been appended
   */
  public final long lastTimestampMillis() {
    if (count == 0) {
      throw new IllegalStateException("no samples appended");
    }
    return lastTimestampMillis;
  }

  /**
   * The value bits of the last appended sample.
   *
   * @throws IllegalStateException if no sample has been appended
   */
  public final long lastValueBits() {
    if (count == 0) {
      throw new IllegalStateException("no samples appended");
    }
    return lastValueBits;
  }

  /**
   * The timestamp of the first appended sample.
   *
   * @throws IllegalStateException if no sample has been appended
   */
  public final long firstTimestampMillis() {
    if (count == 0) {
      throw new IllegalStateException("no samples appended");
    }
    return firstTimestampMillis;
  }

  /** Length of {@link #toByteArray()}, computed without copying. */
  public final int encodedSizeBytes() {
    int header = Varints.size(count);
    if (count > 0) {
      header += Varints.size(firstTimestampMillis);
    }
    return header + byteCount();
  }

  /**
   * Writes the encoded stream to {@code dst} at {@code offset}.
   *
   * @return the number of bytes written, {@link #encodedSizeBytes()}
   * @throws IndexOutOfBoundsException if {@code dst} has fewer than {@link #encodedSizeBytes()}
   *     bytes after {@code offset}
   */
  public final int writeTo(byte[] dst, int offset) {
    int size = encodedSizeBytes();
    java.util.Objects.checkFromIndexSize(offset, size, dst.length);
    int p = Varints.put(dst, offset, count);
    if (count > 0) {
      p = Varints.put(dst, p, firstTimestampMillis);
    }
    copyTo(dst, p);
    return size;
  }

  /**
   * The encoded stream: self-delimiting, without the TimeSeries encoding id byte (see {@link
   * TimeSeriesValue#encode}). A fresh array owned by the caller; the encoder stays usable.
   */
  public final byte[] toByteArray() {
    byte[] result = new byte[encodedSizeBytes()];
    writeTo(result, 0);
    return result;
  }

  /**
   * The stream as it is now, for a reader on another thread, without copying it: see {@link
   * Snapshot}. Call it where the encoder's writer cannot run (under the lock that guards it).
   */
  public final Snapshot snapshot() {
    return new Snapshot(count, firstTimestampMillis, view());
  }

  /**
   * The stream of an encoder at the moment of {@link #snapshot()}: the samples' count, the first
   * timestamp and a view of the encoder's buffer. Its bytes stay what they were while the encoder
   * is appended to or {@link #restart()}ed, but not across a {@link #reset()} (which rewrites the
   * buffer from its start).
   */
  public static final class Snapshot {
    private final int count;
    private final long firstTimestampMillis;
    private final BitWriter.View bits;

    private Snapshot(int count, long firstTimestampMillis, BitWriter.View bits) {
      this.count = count;
      this.firstTimestampMillis = firstTimestampMillis;
      this.bits = bits;
    }

    public int count() {
      return count;
    }

    /** Only when {@link #count()} is positive. */
    public long firstTimestampMillis() {
      return firstTimestampMillis;
    }

    /** Bytes after the header ({@link #copyBitsTo}). */
    int bitsByteCount() {
      return bits.byteCount();
    }

    /** Copies the stream's bytes after its header (count and first timestamp) to {@code dst}. */
    void copyBitsTo(byte[] dst, int offset) {
      bits.copyTo(dst, offset);
    }

    /** The stream's bytes as {@link GorillaEncoder#toByteArray()} gave them at the snapshot. */
    public byte[] toByteArray() {
      int header = Varints.size(count);
      if (count > 0) {
        header += Varints.size(firstTimestampMillis);
      }
      byte[] dst = new byte[header + bits.byteCount()];
      int p = Varints.put(dst, 0, count);
      if (count > 0) {
        p = Varints.put(dst, p, firstTimestampMillis);
      }
      bits.copyTo(dst, p);
      return dst;
    }
  }

  /**
   * {@link #reset()} onto a new buffer, so that every {@link #snapshot()} taken before stays valid
   * (the head's streams, which readers snapshot; a buffer of 64 bytes per restart, made at the
   * first flush).
   */
  public final void restart() {
    detach();
    reset();
  }

  /** Forgets all samples; the encoder then encodes a new chunk. Keeps its buffer. */
  public final void reset() {
    clearBits();
    count = 0;
    firstTimestampMillis = 0;
    lastTimestampMillis = 0;
    lastDelta = 0;
    lastValueBits = 0;
    windowLeading = 0;
    windowTrailing = 0;
    windowBits = 64;
  }
}
