package dev.tidemark.tsdb.codec;

/**
 * Unsigned LEB128 varints and zig-zag, the one set every codec uses (chunk headers, the decimal
 * chunk's blocks, the head log, the translator's protobuf walk). A varint stores 7 bits a byte,
 * least significant group first, with the high bit set on every byte but the last; a {@code long}
 * takes 1 to {@link #MAX_BYTES} bytes ({@code docs/format.md}).
 *
 * <p><b>Two ways to read.</b> Codecs differ in what they accept, so the reader states it:
 *
 * <ul>
 *   <li>{@link #read} is protobuf's rule ({@code CodedInputStream.readRawVarint64}): up to 10
 *       bytes, non-minimal forms accepted, bits past the 64th dropped.
 *   <li>{@link #readMinimal} is the rule of our own persisted formats: the shortest form only, at
 *       most {@code maxBytes} bytes, and with 10 bytes the last may hold only bit 63.
 * </ul>
 *
 * Both return the offset after the varint and put its value in {@code out[0]} (a slot the caller
 * keeps, so reading allocates nothing), or return a negative code ({@link #TRUNCATED}, {@link
 * #TOO_LONG}, {@link #NOT_MINIMAL}) and leave {@code out} alone: each codec throws its own
 * exception, with its own message. Neither reads past {@code limit}.
 *
 * <p>Stateless and thread-safe. Fixed-width integers are in {@link Bytes}.
 */
public final class Varints {
  private Varints() {}

  /** The longest varint of a {@code long}: 64 bits in groups of 7. */
  public static final int MAX_BYTES = 10;

  /** Read result: {@code limit} came before the last byte. */
  public static final int TRUNCATED = -1;

  /** Read result: no last byte within the allowed length, or (10 bytes) bits past the 64th. */
  public static final int TOO_LONG = -2;

  /** Read result ({@link #readMinimal} only): a shorter form of the value exists. */
  public static final int NOT_MINIMAL = -3;

  /** Length in bytes of the varint of {@code v} (taken as unsigned), 1..10. */
  public static int size(long v) {
    int bits = 64 - Long.numberOfLeadingZeros(v | 1);
    return (bits + 6) / 7;
  }

  /**
   * Writes {@code v} (taken as unsigned) as a minimal varint at {@code offset}; the caller makes
   * room for {@link #size(long)} bytes.
   *
   * @return the offset after it
   */
  public static int put(byte[] dst, int offset, long v) {
    while ((v & ~0x7FL) != 0) {
      dst[offset++] = (byte) ((v & 0x7F) | 0x80);
      v >>>= 7;
    }
    dst[offset++] = (byte) v;
    return offset;
  }

  /**
   * Reads a varint as protobuf does: at most 10 bytes, any form, bits past the 64th dropped.
   *
   * @return the offset after the varint, or {@link #TRUNCATED} or {@link #TOO_LONG} (10 bytes all
   *     with the continuation bit)
   */
  public static int read(byte[] src, int offset, int limit, long[] out) {
    long v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (offset >= limit) {
        return TRUNCATED;
      }
      byte b = src[offset++];
      v |= (long) (b & 0x7F) << shift;
      if (b >= 0) {
        out[0] = v;
        return offset;
      }
    }
    return TOO_LONG;
  }

  /**
   * Reads a minimal varint of at most {@code maxBytes} bytes. The checks come byte by byte, in this
   * order: {@link #TRUNCATED} at {@code limit}; {@link #TOO_LONG} for a 10th byte above 1 (bits
   * past the 64th) or for a {@code maxBytes}-th byte that is not the last; {@link #NOT_MINIMAL} for
   * a last byte of 0 after others.
   *
   * @param maxBytes 1..10 (5 bounds an {@code int} count, 9 a non-negative {@code long})
   * @return the offset after the varint, or a negative code
   */
  public static int readMinimal(byte[] src, int offset, int limit, int maxBytes, long[] out) {
    if (maxBytes < 1 || maxBytes > MAX_BYTES) {
      throw new IllegalArgumentException("maxBytes must be 1..10, was " + maxBytes);
    }
    long v = 0;
    for (int i = 0, shift = 0; i < maxBytes; i++, shift += 7) {
      if (offset >= limit) {
        return TRUNCATED;
      }
      int b = src[offset++] & 0xFF;
      if (shift == 63 && b > 1) {
        return TOO_LONG;
      }
      v |= (long) (b & 0x7F) << shift;
      if (b < 0x80) {
        if (b == 0 && shift > 0) {
          return NOT_MINIMAL;
        }
        out[0] = v;
        return offset;
      }
    }
    return TOO_LONG;
  }

  /** Zig-zag: small magnitudes of either sign become small unsigned values (0, -1, 1 → 0, 1, 2). */
  public static long encodeZigZag(long v) {
    return (v << 1) ^ (v >> 63);
  }

  /** The inverse of {@link #encodeZigZag(long)}. */
  public static long decodeZigZag(long u) {
    return (u >>> 1) ^ -(u & 1);
  }

  /** Zig-zag of an {@code int} (protobuf's {@code sint32}). */
  public static int encodeZigZag32(int v) {
    return (v << 1) ^ (v >> 31);
  }

  /** The inverse of {@link #encodeZigZag32(int)}. */
  public static int decodeZigZag32(int u) {
    return (u >>> 1) ^ -(u & 1);
  }
}
