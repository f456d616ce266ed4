package dev.tidemark.tsdb.engine;

import dev.tidemark.tsdb.codec.TimeBucket;
import dev.tidemark.tsdb.codec.TimeSeriesValue;

/**
 * The samples of one series in one bucket, as a reader captured them: a stream in TimeSeries
 * encoding {@code encoding} ({@link TimeSeriesValue#ENCODING_GORILLA} for head data) starting at
 * {@code offset} of {@code bytes} (a stored TimeSeries value's stream starts after its encoding
 * id), plus, for head data, sorted late samples not yet merged into it. Immutable.
 */
record ChunkSource(
    TimeBucket bucket,
    int encoding,
    byte[] bytes,
    int offset,
    long[] lateTimestamps,
    long[] lateBits,
    int lateCount) {}
