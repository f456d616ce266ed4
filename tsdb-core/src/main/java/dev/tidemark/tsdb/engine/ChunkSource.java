package dev.tidemark.tsdb.engine;

import dev.tidemark.tsdb.codec.ChunkDecoder;
import dev.tidemark.tsdb.codec.GorillaEncoder;
import dev.tidemark.tsdb.codec.TimeBucket;
import dev.tidemark.tsdb.codec.TimeSeriesValue;

/**
 * The samples of one series in one bucket, as a reader captured them: a stream in TimeSeries
 * encoding {@code encoding} ({@link TimeSeriesValue#ENCODING_GORILLA} for head data) starting at
 * {@code offset} of {@code bytes} (a stored TimeSeries value's stream starts after its encoding
 * id), plus, for head data, sorted late samples not yet merged into it. Immutable.
 *
 * <p>A head series' open stream is held as its encoder's {@link GorillaEncoder.Snapshot} ({@code
 * bytes} null, {@code offset} 0) and copied only when a reader opens it, each time, straight into
 * the decoder's reused buffer ({@link #open}): a select over a million head series then holds no
 * copy of a million streams while the query walks them one by one, and opening one makes no garbage
 * (until session 13 it went through an array made for each open, twice per series for an instant
 * selector's probe and read).
 */
record ChunkSource(
    TimeBucket bucket,
    int encoding,
    byte[] bytes,
    int offset,
    long[] lateTimestamps,
    long[] lateBits,
    int lateCount,
    GorillaEncoder.Snapshot stream) {

  ChunkSource(
      TimeBucket bucket,
      int encoding,
      byte[] bytes,
      int offset,
      long[] lateTimestamps,
      long[] lateBits,
      int lateCount) {
    this(bucket, encoding, bytes, offset, lateTimestamps, lateBits, lateCount, null);
  }

  /** A head series' open Gorilla stream, copied when opened. */
  static ChunkSource live(
      TimeBucket bucket,
      GorillaEncoder.Snapshot stream,
      long[] lateTimestamps,
      long[] lateBits,
      int lateCount) {
    return new ChunkSource(
        bucket,
        TimeSeriesValue.ENCODING_GORILLA,
        null,
        0,
        lateTimestamps,
        lateBits,
        lateCount,
        stream);
  }

  /**
   * A decoder of {@code decoders} on this stream, before its first sample; a live stream is copied
   * straight into the decoder's buffer.
   */
  ChunkDecoder open(TimeSeriesValue.Decoders decoders) {
    return stream != null
        ? decoders.open(stream)
        : decoders.open(encoding, bytes, offset, bytes.length - offset);
  }
}
