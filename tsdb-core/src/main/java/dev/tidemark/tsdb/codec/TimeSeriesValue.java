package dev.tidemark.tsdb.codec;

/**
 * The value of an RFC 0001 TimeSeries record: one {@code u8} encoding id, then the samples of one
 * series in one bucket in that encoding: {@link #ENCODING_GORILLA} (the stream of {@link
 * GorillaEncoder}) or {@link #ENCODING_DECIMAL} (the stream of {@link DecimalEncoder}) for float
 * samples, {@link #ENCODING_HISTOGRAM} (the stream of {@link HistogramEncoder}) for native
 * histogram samples; see <a href="../../../../../../../../docs/format.md">docs/format.md</a>.
 * Encoding ids are persisted and never reused. Stateless and thread-safe; {@link Decoders} is the
 * reusable read side.
 */
public final class TimeSeriesValue {
  /** Encoding id of the Gorilla XOR stream ({@link GorillaEncoder}, {@link GorillaDecoder}). */
  public static final int ENCODING_GORILLA = 0x01;

  /** Encoding id of the decimal stream ({@link DecimalEncoder}, {@link DecimalDecoder}). */
  public static final int ENCODING_DECIMAL = 0x02;

  /**
   * Encoding id of the native histogram stream ({@link HistogramEncoder}, {@link
   * HistogramDecoder}): histogram samples, not floats, so {@link Decoders} does not open it.
   */
  public static final int ENCODING_HISTOGRAM = 0x03;

  private TimeSeriesValue() {}

  /**
   * Whether {@code id} is an encoding of float samples this version reads ({@link Decoders});
   * {@link #ENCODING_HISTOGRAM} is not one: {@link HistogramDecoder} reads it.
   */
  public static boolean isKnownEncoding(int id) {
    return id == ENCODING_GORILLA || id == ENCODING_DECIMAL;
  }

  /** Whether {@code id} is the encoding of histogram samples, {@link #ENCODING_HISTOGRAM}. */
  public static boolean isHistogramEncoding(int id) {
    return id == ENCODING_HISTOGRAM;
  }

  /** A new array: {@link #ENCODING_HISTOGRAM} followed by the encoder's stream. */
  public static byte[] encode(HistogramEncoder encoder) {
    byte[] value = new byte[1 + encoder.encodedSizeBytes()];
    value[0] = (byte) ENCODING_HISTOGRAM;
    encoder.writeTo(value, 1);
    return value;
  }

  /**
   * A histogram decoder for a whole TimeSeries value of encoding {@link #ENCODING_HISTOGRAM},
   * positioned before the first sample.
   *
   * @throws CorruptRecordException if the value is empty, of another encoding or malformed
   */
  public static HistogramDecoder openHistogram(HistogramDecoder decoder, byte[] value) {
    if (value.length == 0 || (value[0] & 0xFF) != ENCODING_HISTOGRAM) {
      throw new CorruptRecordException(
          value.length == 0
              ? "TimeSeries value is empty, expected an encoding id"
              : String.format(
                  "TimeSeries value has encoding id 0x%02x, not the histogram chunk 0x%02x",
                  value[0] & 0xFF, ENCODING_HISTOGRAM));
    }
    decoder.reset(value, 1, value.length - 1);
    return decoder;
  }

  /** A new array: {@link #ENCODING_GORILLA} followed by the encoder's stream. */
  public static byte[] encode(GorillaEncoder encoder) {
    byte[] value = new byte[1 + encoder.encodedSizeBytes()];
    value[0] = (byte) ENCODING_GORILLA;
    encoder.writeTo(value, 1);
    return value;
  }

  /** A new array: {@link #ENCODING_DECIMAL} followed by the encoder's stream. */
  public static byte[] encode(DecimalEncoder encoder) {
    byte[] value = new byte[1 + encoder.encodedSizeBytes()];
    value[0] = (byte) ENCODING_DECIMAL;
    encoder.writeTo(value, 1);
    return value;
  }

  /**
   * The smaller of two encoders that hold the same samples, Gorilla on a tie (the sealing rule of
   * {@link #encodeSmallest(byte[], DecimalEncoder)}, for a caller that fed both in one pass).
   */
  public static byte[] smallest(GorillaEncoder gorilla, DecimalEncoder decimal) {
    return decimal.encodedSizeBytes() < gorilla.encodedSizeBytes()
        ? encode(decimal)
        : encode(gorilla);
  }

  /**
   * The chunk's samples in whichever encoding is smaller, Gorilla on a tie (the sealing rule).
   * {@code scratch} is reset and refilled with the chunk's samples; {@code chunk} is not changed.
   */
  public static byte[] encodeSmallest(GorillaEncoder chunk, DecimalEncoder scratch) {
    return encodeSmallest(chunk.toByteArray(), scratch);
  }

  /**
   * {@link #encodeSmallest(GorillaEncoder, DecimalEncoder)} of a chunk given as its Gorilla stream
   * ({@link GorillaEncoder#toByteArray()}), which is not changed.
   */
  public static byte[] encodeSmallest(byte[] gorilla, DecimalEncoder scratch) {
    scratch.reset();
    GorillaDecoder d = new GorillaDecoder();
    d.reset(gorilla, 0, gorilla.length);
    while (d.next()) {
      scratch.append(d.timestampMillis(), d.valueBits());
    }
    if (scratch.encodedSizeBytes() < gorilla.length) {
      return encode(scratch);
    }
    byte[] value = new byte[1 + gorilla.length];
    value[0] = (byte) ENCODING_GORILLA;
    System.arraycopy(gorilla, 0, value, 1, gorilla.length);
    return value;
  }

  /**
   * Reusable decoders of TimeSeries values, one per encoding: {@link #open} checks the encoding id
   * and hands out the decoder for it, pointed at the stream. A decoder handed out stays valid until
   * the next {@code open}. Not thread-safe; no allocation per value or sample.
   */
  public static final class Decoders {
    // Made on first use: a reader of one series usually meets one encoding only.
    private GorillaDecoder gorilla;
    private DecimalDecoder decimal;

    public Decoders() {}

    /**
     * The decoder for a whole TimeSeries value (encoding id, then the stream), positioned before
     * the first sample.
     *
     * @throws CorruptRecordException if {@code value} is empty, its encoding id is unknown (the
     *     message names the id) or the stream is malformed
     */
    public ChunkDecoder open(byte[] value) {
      if (value.length == 0) {
        throw new CorruptRecordException("TimeSeries value is empty, expected an encoding id");
      }
      return open(value[0] & 0xFF, value, 1, value.length - 1);
    }

    /**
     * The decoder for a head stream captured by {@link GorillaEncoder#snapshot()}, positioned
     * before the first sample; its bytes go straight into the decoder's buffer.
     */
    public ChunkDecoder open(GorillaEncoder.Snapshot stream) {
      GorillaDecoder d = gorilla != null ? gorilla : (gorilla = new GorillaDecoder());
      d.reset(stream);
      return d;
    }

    /**
     * The decoder for a stream of encoding {@code encoding} in {@code bytes[offset, offset +
     * length)} (without the encoding id), positioned before the first sample.
     *
     * @throws CorruptRecordException if the encoding id is unknown or the stream is malformed
     */
    public ChunkDecoder open(int encoding, byte[] bytes, int offset, int length) {
      ChunkDecoder d =
          switch (encoding) {
            case ENCODING_GORILLA -> gorilla != null ? gorilla : (gorilla = new GorillaDecoder());
            case ENCODING_DECIMAL -> decimal != null ? decimal : (decimal = new DecimalDecoder());
            case ENCODING_HISTOGRAM ->
                throw new CorruptRecordException(
                    "TimeSeries value is a histogram chunk (encoding id 0x03), not float samples:"
                        + " read it with HistogramDecoder");
            default ->
                throw new CorruptRecordException(
                    String.format(
                        "TimeSeries value has unknown encoding id 0x%02x (known: 0x%02x Gorilla, 0x%02x decimal)",
                        encoding, ENCODING_GORILLA, ENCODING_DECIMAL));
          };
      d.reset(bytes, offset, length);
      return d;
    }
  }
}
