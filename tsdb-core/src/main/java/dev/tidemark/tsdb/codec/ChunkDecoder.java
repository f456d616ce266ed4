package dev.tidemark.tsdb.codec;

/**
 * A forward cursor over the samples of one chunk, whatever its TimeSeries encoding ({@link
 * GorillaDecoder} for {@code 0x01}, {@link DecimalDecoder} for {@code 0x02}); {@link
 * TimeSeriesValue.Decoders} hands out the one a stored value needs.
 *
 * <pre>{@code
 * decoder.reset(bytes, offset, length);
 * while (decoder.next()) {
 *   use(decoder.timestampMillis(), decoder.valueBits());
 * }
 * }</pre>
 *
 * <p>Timestamps are strictly increasing; values are raw IEEE-754 bits, exactly as appended.
 * Implementations copy what they need from the caller's array in {@link #reset} (the caller keeps
 * it), never allocate per sample, and are not thread-safe.
 */
public interface ChunkDecoder {

  /**
   * Points the decoder at the stream in {@code buf[offset, offset + length)} (exactly one stream,
   * without the TimeSeries encoding id). The cursor is then before the first sample.
   *
   * @throws CorruptRecordException if the stream is malformed (a decoder may also report corruption
   *     only later, from {@link #next()})
   * @throws IndexOutOfBoundsException if the range is not inside {@code buf}
   */
  void reset(byte[] buf, int offset, int length);

  /** Number of samples in the stream, from its header. */
  int count();

  /**
   * Advances to the next sample.
   *
   * @return false when there is no further sample (and on every later call)
   * @throws CorruptRecordException if the stream is truncated or corrupt; the cursor stays failed
   */
  boolean next();

  /**
   * The current sample's timestamp, milliseconds since the Unix epoch.
   *
   * @throws IllegalStateException unless the last {@link #next()} or {@link #seek} returned true
   */
  long timestampMillis();

  /**
   * The current sample's value as raw IEEE-754 bits.
   *
   * @throws IllegalStateException unless the last {@link #next()} or {@link #seek} returned true
   */
  long valueBits();

  /**
   * Positions on the first sample whose timestamp is {@code >= timestampMillis}, starting at the
   * current sample (kept if it qualifies). Only moves forward.
   *
   * @return false if no sample at or after the cursor qualifies (the cursor is then at the end)
   * @throws CorruptRecordException if the stream is truncated or corrupt
   */
  boolean seek(long timestampMillis);

  /**
   * Whether the decoder stands on a sample (the last {@link #next()} or {@link #seek} returned
   * true).
   */
  boolean onSample();

  /**
   * Copies samples into {@code timestamps[offset..]} and {@code valueBits[offset..]}, from the
   * current one on, while their timestamp is at most {@code maxTimestampMillis}, up to {@code max}
   * of them; the decoder then stands on the first sample not copied, or is at the end ({@link
   * #onSample()} false). The same as
   *
   * <pre>{@code
   * while (n < max && onSample() && timestampMillis() <= maxTimestampMillis) {
   *   timestamps[offset + n] = timestampMillis();
   *   valueBits[offset + n++] = valueBits();
   *   next();
   * }
   * }</pre>
   *
   * which is what this default does; a decoder that decodes in blocks copies whole runs.
   *
   * @return the number of samples copied
   * @throws CorruptRecordException as {@link #next()}
   */
  default int copyUpTo(
      long[] timestamps, long[] valueBits, int offset, int max, long maxTimestampMillis) {
    int n = 0;
    while (n < max && onSample() && timestampMillis() <= maxTimestampMillis) {
      timestamps[offset + n] = timestampMillis();
      valueBits[offset + n++] = valueBits();
      next();
    }
    return n;
  }
}
