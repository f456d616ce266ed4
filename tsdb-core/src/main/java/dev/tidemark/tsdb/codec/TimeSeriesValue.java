package dev.tidemark.tsdb.codec;

/**
 * The value of an RFC 0001 TimeSeries record: one {@code u8} encoding id, then the samples of one
 * series in one bucket in that encoding. The only encoding so far is {@link #ENCODING_GORILLA}
 * (the stream of {@link GorillaEncoder}); see <a
 * href="../../../../../../../../docs/format.md">docs/format.md</a>. Encoding ids are persisted and
 * never reused. Stateless and thread-safe.
 */
public final class TimeSeriesValue {
  /** Encoding id of the Gorilla XOR stream ({@link GorillaEncoder}, {@link GorillaDecoder}). */
  public static final int ENCODING_GORILLA = 0x01;

  private TimeSeriesValue() {}

  /** A new array: {@link #ENCODING_GORILLA} followed by the encoder's stream. */
  public static byte[] encode(GorillaEncoder encoder) {
    byte[] value = new byte[1 + encoder.encodedSizeBytes()];
    value[0] = (byte) ENCODING_GORILLA;
    encoder.writeTo(value, 1);
    return value;
  }

  /**
   * Checks the encoding id and points {@code decoder} at the stream that follows it (see {@link
   * GorillaDecoder#reset}).
   *
   * @throws CorruptRecordException if {@code value} is empty, its encoding id is unknown (the
   *     message names the id) or the stream header is malformed
   */
  public static void decodeInto(byte[] value, GorillaDecoder decoder) {
    if (value.length == 0) {
      throw new CorruptRecordException("TimeSeries value is empty, expected an encoding id");
    }
    int id = value[0] & 0xFF;
    if (id != ENCODING_GORILLA) {
      throw new CorruptRecordException(
          String.format(
              "TimeSeries value has unknown encoding id 0x%02x (known: 0x%02x Gorilla)",
              id, ENCODING_GORILLA));
    }
    decoder.reset(value, 1, value.length - 1);
  }
}
