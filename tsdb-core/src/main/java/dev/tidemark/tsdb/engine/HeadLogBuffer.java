package dev.tidemark.tsdb.engine;

import dev.tidemark.tsdb.codec.Bytes;
import dev.tidemark.tsdb.codec.CorruptRecordException;
import dev.tidemark.tsdb.codec.Varints;
import java.util.Arrays;

/**
 * Builds and reads HeadLog values ({@code docs/format.md}, engine records). Writes format {@code
 * 0x02}: the format byte, the first entry's timestamp as {@code i64 LE}, then per sample {@code
 * series_id} as an unsigned LEB128 varint, the timestamp minus the first one as a zigzag LEB128
 * varint, and the value bits as {@code u64 LE} (about 12 bytes a sample instead of 20: the log is
 * most of what ingestion writes to RocksDB). Reads format {@code 0x01} too (fixed 20-byte entries).
 * The buffer is reused across appends.
 */
final class HeadLogBuffer {

  static final int FORMAT_FIXED = 0x01;
  static final int FORMAT_VARINT = 0x02;
  static final int FIXED_ENTRY_BYTES = 20;

  /** Largest entry of format 2: 5-byte id varint, 10-byte delta varint, 8-byte value. */
  private static final int MAX_VARINT_ENTRY_BYTES = 23;

  private byte[] buf = new byte[9 + MAX_VARINT_ENTRY_BYTES * 64];
  private int len;
  private long base;

  boolean isEmpty() {
    return len == 0;
  }

  void add(int seriesId, long timestampMillis, long valueBits) {
    if (len == 0) {
      buf[0] = FORMAT_VARINT;
      Bytes.putLongLe(buf, 1, timestampMillis);
      base = timestampMillis;
      len = 9;
    }
    if (len + MAX_VARINT_ENTRY_BYTES > buf.length) {
      buf = Arrays.copyOf(buf, buf.length * 2);
    }
    len = Varints.put(buf, len, seriesId & 0xFFFF_FFFFL);
    len = Varints.put(buf, len, Varints.encodeZigZag(timestampMillis - base));
    Bytes.putLongLe(buf, len, valueBits);
    len += 8;
  }

  /** The value built so far, a copy; the buffer keeps it until {@link #clear()}. */
  byte[] toByteArray() {
    return Arrays.copyOf(buf, len);
  }

  void clear() {
    len = 0;
  }

  /** Receives decoded entries. */
  interface EntryConsumer {
    void accept(int seriesId, long timestampMillis, long valueBits);
  }

  /** Decodes a HeadLog value of either format. */
  static void decode(byte[] value, EntryConsumer consumer) {
    if (value.length < 1) {
      throw new CorruptRecordException("HeadLog value is empty");
    }
    int format = value[0] & 0xFF;
    if (format == FORMAT_FIXED) {
      decodeFixed(value, consumer);
    } else if (format == FORMAT_VARINT) {
      decodeVarint(value, consumer);
    } else {
      throw new CorruptRecordException("unknown HeadLog format 0x" + Integer.toHexString(format));
    }
  }

  private static void decodeFixed(byte[] value, EntryConsumer consumer) {
    if ((value.length - 1) % FIXED_ENTRY_BYTES != 0) {
      throw new CorruptRecordException(
          "HeadLog value length "
              + value.length
              + " is not 1 + a multiple of "
              + FIXED_ENTRY_BYTES);
    }
    for (int p = 1; p < value.length; p += FIXED_ENTRY_BYTES) {
      consumer.accept(
          Bytes.getIntLe(value, p), Bytes.getLongLe(value, p + 4), Bytes.getLongLe(value, p + 12));
    }
  }

  private static void decodeVarint(byte[] value, EntryConsumer consumer) {
    if (value.length < 9) {
      throw new CorruptRecordException(
          "HeadLog value of format 2 is " + value.length + " bytes, shorter than its header");
    }
    long base = Bytes.getLongLe(value, 1);
    long[] out = new long[1];
    int p = 9;
    while (p < value.length) {
      p = getVarint(value, p, out);
      long id = out[0];
      if (id > 0xFFFF_FFFFL) {
        throw new CorruptRecordException("HeadLog series id " + id + " does not fit in u32");
      }
      p = getVarint(value, p, out);
      long delta = Varints.decodeZigZag(out[0]);
      if (p + 8 > value.length) {
        throw new CorruptRecordException("HeadLog value truncated in a value at offset " + p);
      }
      consumer.accept((int) id, base + delta, Bytes.getLongLe(value, p));
      p += 8;
    }
  }

  /** Reads a varint as protobuf does (any form, at most 10 bytes) into {@code out[0]}. */
  private static int getVarint(byte[] b, int p, long[] out) {
    int next = Varints.read(b, p, b.length, out);
    if (next == Varints.TRUNCATED) {
      throw new CorruptRecordException("HeadLog value truncated in a varint at offset " + b.length);
    }
    if (next == Varints.TOO_LONG) {
      throw new CorruptRecordException(
          "HeadLog varint longer than 10 bytes at offset " + (p + Varints.MAX_BYTES));
    }
    return next;
  }
}
