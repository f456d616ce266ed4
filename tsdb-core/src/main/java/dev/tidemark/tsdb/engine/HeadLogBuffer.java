package dev.tidemark.tsdb.engine;

import dev.tidemark.tsdb.codec.CorruptRecordException;
import java.util.Arrays;

/**
 * Builds and reads HeadLog values ({@code docs/format.md}, engine records): a format byte {@code
 * 0x01}, then per sample {@code series_id u32 LE, timestamp i64 LE, value bits u64 LE} (20 bytes).
 * The buffer is reused across appends.
 */
final class HeadLogBuffer {

  static final int FORMAT = 0x01;
  static final int ENTRY_BYTES = 20;

  private byte[] buf = new byte[1 + ENTRY_BYTES * 64];
  private int len;

  boolean isEmpty() {
    return len == 0;
  }

  void add(int seriesId, long timestampMillis, long valueBits) {
    if (len == 0) {
      buf[0] = FORMAT;
      len = 1;
    }
    if (len + ENTRY_BYTES > buf.length) {
      buf = Arrays.copyOf(buf, buf.length * 2);
    }
    putInt(buf, len, seriesId);
    putLong(buf, len + 4, timestampMillis);
    putLong(buf, len + 12, valueBits);
    len += ENTRY_BYTES;
  }

  /** The value built so far; clears the buffer. */
  byte[] take() {
    byte[] v = Arrays.copyOf(buf, len);
    len = 0;
    return v;
  }

  void clear() {
    len = 0;
  }

  /** Receives decoded entries. */
  interface EntryConsumer {
    void accept(int seriesId, long timestampMillis, long valueBits);
  }

  /** Decodes a HeadLog value. */
  static void decode(byte[] value, EntryConsumer consumer) {
    if (value.length < 1) {
      throw new CorruptRecordException("HeadLog value is empty");
    }
    if ((value[0] & 0xFF) != FORMAT) {
      throw new CorruptRecordException("unknown HeadLog format 0x" + Integer.toHexString(value[0] & 0xFF));
    }
    if ((value.length - 1) % ENTRY_BYTES != 0) {
      throw new CorruptRecordException(
          "HeadLog value length " + value.length + " is not 1 + a multiple of " + ENTRY_BYTES);
    }
    for (int p = 1; p < value.length; p += ENTRY_BYTES) {
      consumer.accept(getInt(value, p), getLong(value, p + 4), getLong(value, p + 12));
    }
  }

  private static void putInt(byte[] b, int p, int v) {
    b[p] = (byte) v;
    b[p + 1] = (byte) (v >>> 8);
    b[p + 2] = (byte) (v >>> 16);
    b[p + 3] = (byte) (v >>> 24);
  }

  private static void putLong(byte[] b, int p, long v) {
    for (int i = 0; i < 8; i++) {
      b[p + i] = (byte) (v >>> (8 * i));
    }
  }

  private static int getInt(byte[] b, int p) {
    return (b[p] & 0xFF) | (b[p + 1] & 0xFF) << 8 | (b[p + 2] & 0xFF) << 16 | (b[p + 3] & 0xFF) << 24;
  }

  private static long getLong(byte[] b, int p) {
    long v = 0;
    for (int i = 7; i >= 0; i--) {
      v = (v << 8) | (b[p + i] & 0xFF);
    }
    return v;
  }
}
