package dev.tidemark.tsdb.engine;

import dev.tidemark.tsdb.codec.GorillaEncoder;
import dev.tidemark.tsdb.codec.TimeBucket;
import dev.tidemark.tsdb.codec.TimeSeriesValue;

/**
 * The samples of one series in one bucket, as a reader captured them: a stream in TimeSeries
 * encoding {@code encoding} ({@link TimeSeriesValue#ENCODING_GORILLA} for head data) starting at
 * {@code offset} of {@link #data()} (a stored TimeSeries value's stream starts after its encoding
 * id), plus, for head data, sorted late samples not yet merged into it. Immutable.
 *
 * <p>A head series' open stream is held as its encoder's {@link GorillaEncoder.Snapshot} ({@code
 * bytes} null, {@code offset} 0) and copied into a byte array only when a reader opens it, each
 * time: a select over a million head series then holds no copy of a million streams while the query
 * walks them one by one (the copy of the series being read is young garbage).
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

  /** The bytes the stream is read from, starting at {@link #offset()}. */
  byte[] data() {
    return bytes != null ? bytes : stream.toByteArray();
  }
}
