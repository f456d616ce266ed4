package dev.tidemark.server.api;

import java.util.Arrays;

/**
 * Prometheus' XOR chunk ({@code tsdb/chunkenc/xor.go}), written for remote read's streamed answer:
 * the sample count as a big-endian {@code u16}, then a bit stream (most significant bit first): the
 * first timestamp as a zigzag varint and its value's 64 bits; the second timestamp's delta as a
 * uvarint; every later timestamp as a delta of deltas in a prefix code ({@code 0}; {@code 10} and
 * 14 bits; {@code 110} and 17; {@code 1110} and 20; {@code 1111} and 64); every value after the
 * first XORed with the one before ({@code 0} for equal; {@code 10} and the meaningful bits in the
 * previous window; {@code 11}, 5 bits of leading zeros (at most 31), 6 bits of length (64 written
 * as 0) and the bits). Prometheus cuts chunks at 120 samples; so does {@link RemoteRead}.
 *
 * <p>Reusable after {@link #reset()}; not thread-safe.
 */
final class XorChunk {
  private byte[] buf = new byte[256];
  private int bitLen = 16; // the count's two bytes
  private int count;
  private long t;
  private long tDelta;
  private long vBits;
  private int leading = 0xff;
  private int trailing;
  private long minT;

  void reset() {
    Arrays.fill(buf, 0, (bitLen + 7) >>> 3, (byte) 0);
    bitLen = 16;
    count = 0;
    leading = 0xff;
    trailing = 0;
  }

  int count() {
    return count;
  }

  long minTime() {
    return minT;
  }

  long maxTime() {
    return t;
  }

  void append(long timestamp, long valueBits) {
    if (count == 0) {
      minT = timestamp;
      long zz = (timestamp << 1) ^ (timestamp >> 63);
      writeVarintBytes(zz);
      writeBits(valueBits, 64);
    } else if (count == 1) {
      long d = timestamp - t;
      writeVarintBytes(d);
      writeValue(valueBits);
      tDelta = d;
    } else {
      long d = timestamp - t;
      long dod = d - tDelta;
      if (dod == 0) {
        writeBits(0, 1);
      } else if (inRange(dod, 14)) {
        writeBits(0b10, 2);
        writeBits(dod, 14);
      } else if (inRange(dod, 17)) {
        writeBits(0b110, 3);
        writeBits(dod, 17);
      } else if (inRange(dod, 20)) {
        writeBits(0b1110, 4);
        writeBits(dod, 20);
      } else {
        writeBits(0b1111, 4);
        writeBits(dod, 64);
      }
      writeValue(valueBits);
      tDelta = d;
    }
    t = timestamp;
    vBits = valueBits;
    count++;
  }

  /** The chunk's bytes: the count, then the bit stream padded to a byte. */
  byte[] bytes() {
    buf[0] = (byte) (count >>> 8);
    buf[1] = (byte) count;
    return Arrays.copyOf(buf, (bitLen + 7) >>> 3);
  }

  /** Prometheus' {@code bitRange}: -(2^(n-1) - 1) <= x <= 2^(n-1). */
  private static boolean inRange(long x, int n) {
    long half = 1L << (n - 1);
    return -(half - 1) <= x && x <= half;
  }

  private void writeValue(long bits) {
    long delta = bits ^ vBits;
    if (delta == 0) {
      writeBits(0, 1);
      return;
    }
    writeBits(1, 1);
    int newLeading = Math.min(Long.numberOfLeadingZeros(delta), 31);
    int newTrailing = Long.numberOfTrailingZeros(delta);
    if (leading != 0xff && newLeading >= leading && newTrailing >= trailing) {
      writeBits(0, 1);
      writeBits(delta >>> trailing, 64 - leading - trailing);
      return;
    }
    leading = newLeading;
    trailing = newTrailing;
    writeBits(1, 1);
    writeBits(newLeading, 5);
    int sig = 64 - newLeading - newTrailing;
    writeBits(sig, 6); // 64 wraps to 0, as Prometheus writes it
    writeBits(delta >>> newTrailing, sig);
  }

  /** Go's binary.PutUvarint bytes of {@code v}, each written as 8 bits. */
  private void writeVarintBytes(long v) {
    while ((v & ~0x7FL) != 0) {
      writeBits((v & 0x7F) | 0x80, 8);
      v >>>= 7;
    }
    writeBits(v, 8);
  }

  /** The low {@code n} bits of {@code v}, most significant first. */
  private void writeBits(long v, int n) {
    if (bitLen + n > buf.length * 8L) {
      buf = Arrays.copyOf(buf, Math.max(buf.length * 2, (bitLen + n + 7) / 8 + 16));
    }
    for (int i = n - 1; i >= 0; i--) {
      if (((v >>> i) & 1) != 0) {
        buf[bitLen >>> 3] |= (byte) (0x80 >>> (bitLen & 7));
      }
      bitLen++;
    }
  }
}
