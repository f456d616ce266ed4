package dev.tidemark.tsdb.engine;

import dev.tidemark.tsdb.codec.CorruptRecordException;
import dev.tidemark.tsdb.codec.HistogramDecoder;
import dev.tidemark.tsdb.codec.HistogramEncoder;
import dev.tidemark.tsdb.codec.Varints;
import dev.tidemark.tsdb.model.NativeHistogram;
import java.util.Arrays;

/**
 * Builds and reads HeadLog values of format {@code 0x03}, the native histogram samples of one
 * append in one bucket ({@code docs/format.md}, HeadLog; issue #25): the format byte, then per
 * sample its {@code series_id} as an unsigned LEB128 varint, the length of the next field as an
 * unsigned LEB128 varint, and a histogram stream ({@code docs/format.md}, histogram chunk, without
 * the TimeSeries encoding id) holding that one sample, its timestamp included. An append's float
 * samples go to a record of format {@code 0x02} ({@link HeadLogBuffer}) beside it, under its own
 * sequence number. The buffer is reused across appends; a histogram sample is rare enough that its
 * entry may allocate (an encoder).
 */
final class HeadLogHistograms {

  static final int FORMAT_HISTOGRAM = 0x03;

  private byte[] buf = new byte[64];
  private int len;
  private final HistogramEncoder encoder = new HistogramEncoder();

  boolean isEmpty() {
    return len == 0;
  }

  void add(int seriesId, long timestampMillis, NativeHistogram h) {
    encoder.reset();
    encoder.append(timestampMillis, h);
    int size = encoder.encodedSizeBytes();
    if (len == 0) {
      buf[0] = FORMAT_HISTOGRAM;
      len = 1;
    }
    if (len + 10 + size > buf.length) {
      buf = Arrays.copyOf(buf, Math.max(buf.length * 2, len + 10 + size));
    }
    len = Varints.put(buf, len, seriesId & 0xFFFF_FFFFL);
    len = Varints.put(buf, len, size);
    len = encoder.writeTo(buf, len);
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
    void accept(int seriesId, long timestampMillis, NativeHistogram histogram);
  }

  /** Whether {@code value} is a HeadLog value of this format (else {@link HeadLogBuffer}'s). */
  static boolean isHistogramFormat(byte[] value) {
    return value.length > 0 && (value[0] & 0xFF) == FORMAT_HISTOGRAM;
  }

  /**
   * Decodes a value of format {@code 0x03}.
   *
   * @throws CorruptRecordException if it is of another format, truncated, or an entry's stream is
   *     malformed or does not hold exactly one sample
   */
  static void decode(byte[] value, EntryConsumer consumer) {
    if (!isHistogramFormat(value)) {
      throw new CorruptRecordException("HeadLog value is not of the histogram format 0x03");
    }
    long[] out = new long[1];
    HistogramDecoder d = new HistogramDecoder();
    int p = 1;
    while (p < value.length) {
      p = getVarint(value, p, out);
      long id = out[0];
      if (id > 0xFFFF_FFFFL) {
        throw new CorruptRecordException("HeadLog series id " + id + " does not fit in u32");
      }
      p = getVarint(value, p, out);
      long size = out[0];
      if (size > value.length - p) {
        throw new CorruptRecordException(
            "HeadLog histogram entry of " + size + " bytes at offset " + p + " is truncated");
      }
      d.reset(value, p, (int) size);
      if (d.count() != 1 || !d.next()) {
        throw new CorruptRecordException(
            "HeadLog histogram entry at offset " + p + " holds " + d.count() + " samples, not 1");
      }
      consumer.accept((int) id, d.timestampMillis(), d.histogram());
      p += (int) size;
    }
  }

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
