package dev.tidemark.tsdb.engine;

import dev.tidemark.tsdb.codec.TimeBucket;

/**
 * The samples of one series in one bucket, as a reader captured them: a Gorilla stream starting
 * at {@code offset} of {@code bytes} (a TimeSeries value's stream starts after its encoding id),
 * plus, for head data, sorted late samples not yet merged into it. Immutable.
 */
record ChunkSource(
    TimeBucket bucket,
    byte[] bytes,
    int offset,
    long[] lateTimestamps,
    long[] lateBits,
    int lateCount) {}
