package dev.tidemark.tsdb.codec;

import java.util.Arrays;

/**
 * Appends bit fields most-significant-bit first into a growable byte array, 64 bits at a time.
 *
 * <p>Bits collect in the left-aligned accumulator {@code acc}; when it is full it is stored as one
 * big-endian long. The bytes written so far are {@code buf[0, pos)} followed by the top {@code 64 -
 * free} bits of {@code acc}; bits after the last field are zero. Not thread-safe.
 *
 * <p>{@link GorillaEncoder} extends it rather than holding one, so that a head series' encoder and
 * its bits are one object: one header and one dependent load less for every sample appended at a
 * million series (docs/architecture.md, "Memory at a million active series").
 */
class BitWriter {
  private static final int INITIAL_CAPACITY = 64;

  /** The buffer after a {@link #detach()}: never written, replaced at the first flush. */
  private static final byte[] DETACHED = new byte[0];

  private byte[] buf = new byte[INITIAL_CAPACITY];

  /** Bytes of {@code buf} that hold flushed words; always a multiple of 8. */
  private int pos;

  /** Pending bits, left-aligned. */
  private long acc;

  /** Free bits left in {@code acc}, 1..64. */
  private int free = 64;

  void clearBits() {
    pos = 0;
    acc = 0;
    free = 64;
  }

  /**
   * {@link #clearBits()} onto a new buffer: the old one is never written again, so a {@link View}
   * taken before stays valid. The new buffer is made at the first flush (64 bits written), so an
   * encoder restarted and not written again (a head series frozen as it moved on to the next hour)
   * holds no buffer.
   */
  final void detach() {
    buf = DETACHED;
    clearBits();
  }

  /**
   * The bits written so far as a view for a reader on another thread: the buffer's flushed bytes
   * (never rewritten: a flush only writes after them, growth copies to a new array, and only {@link
   * #clearBits()} rewinds) and a copy of the pending bits. Valid until the next {@link
   * #clearBits()} on the same buffer; a {@link #detach()} first leaves it valid.
   */
  View view() {
    return new View(buf, pos, acc, free);
  }

  /** What {@link #view()} captured; {@link #byteCount()} and {@link #copyTo} as the writer's. */
  record View(byte[] buf, int pos, long acc, int free) {
    int byteCount() {
      return BitWriter.byteCount(pos, free);
    }

    void copyTo(byte[] dst, int offset) {
      copy(buf, pos, acc, free, dst, offset);
    }
  }

  /**
   * Appends the low {@code n} bits of {@code bits}, most significant first.
   *
   * @param n 1..64; bits above the low {@code n} must be zero
   */
  void write(long bits, int n) {
    if (n < free) {
      free -= n;
      acc |= bits << free;
    } else {
      int rem = n - free; // 0..63 bits that do not fit
      acc |= bits >>> rem;
      flush();
      acc = (bits << (63 - rem)) << 1; // == bits << (64 - rem), and 0 when rem == 0
      free = 64 - rem;
    }
  }

  private void flush() {
    if (pos + 8 > buf.length) {
      if (buf.length > Integer.MAX_VALUE / 2 - 16) {
        throw new IllegalStateException("Gorilla chunk too large: " + buf.length + " bytes");
      }
      buf = Arrays.copyOf(buf, grownCapacity(buf.length));
    }
    Bytes.putLongBe(buf, pos, acc);
    pos += 8;
  }

  /**
   * The capacity after {@code length}: 64 bytes more up to {@link #LINEAR_GROWTH_LIMIT}, then twice
   * as much. A head stream lives in this range (up to {@code --head-freeze-samples} samples, a few
   * hundred bytes) a million times over, and doubling left it a third of its bytes unused on
   * average, up to half (a 257-byte stream in a 512-byte array); steps of 64 leave at most 63. The
   * copies this adds below the limit are a few hundred bytes per stream; beyond it (sealed chunks,
   * compaction) growth stays geometric.
   */
  static int grownCapacity(int length) {
    return length < LINEAR_GROWTH_LIMIT
        ? Math.max(INITIAL_CAPACITY, length + INITIAL_CAPACITY)
        : length * 2;
  }

  /** Below this capacity a buffer grows by {@link #INITIAL_CAPACITY} bytes at a time. */
  static final int LINEAR_GROWTH_LIMIT = 1024;

  /** Number of bits written since the last reset. */
  long bitCount() {
    return (long) pos * 8 + (64 - free);
  }

  /** Number of bytes the written bits occupy, the last one zero-padded. */
  int byteCount() {
    return byteCount(pos, free);
  }

  /** Copies the {@link #byteCount()} bytes to {@code dst} at {@code offset}. */
  void copyTo(byte[] dst, int offset) {
    copy(buf, pos, acc, free, dst, offset);
  }

  private static int byteCount(int pos, int free) {
    return pos + ((64 - free + 7) >>> 3);
  }

  /** The flushed bytes {@code buf[0, pos)}, then the pending bits of {@code acc}, zero-padded. */
  private static void copy(byte[] buf, int pos, long acc, int free, byte[] dst, int offset) {
    System.arraycopy(buf, 0, dst, offset, pos);
    int tail = (64 - free + 7) >>> 3;
    long a = acc;
    for (int i = 0; i < tail; i++) {
      dst[offset + pos + i] = (byte) (a >>> 56);
      a <<= 8;
    }
  }
}
