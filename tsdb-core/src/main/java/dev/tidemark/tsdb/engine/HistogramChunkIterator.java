package dev.tidemark.tsdb.engine;

import dev.tidemark.tsdb.codec.HistogramDecoder;
import dev.tidemark.tsdb.codec.TimeSeriesValue;
import dev.tidemark.tsdb.model.NativeHistogram;
import dev.tidemark.tsdb.query.HistogramIterator;
import java.util.List;

/**
 * Walks the histogram chunks ({@link TimeSeriesValue#ENCODING_HISTOGRAM}) of a series' chunks in
 * bucket order, keeping samples in {@code [minT, maxT]}; float chunks are skipped ({@link
 * ChunkIterator} walks those, and skips these). A head series' histogram chunk is merged when
 * captured, so every chunk here is one sorted stream. One decoder, reused.
 */
final class HistogramChunkIterator implements HistogramIterator {

  private final List<ChunkSource> chunks;
  private final long minT;
  private final long maxT;
  private final HistogramDecoder decoder = new HistogramDecoder();
  private int chunk = -1;
  private boolean open;
  private boolean done;
  private boolean onSample;

  HistogramChunkIterator(List<ChunkSource> chunks, long minT, long maxT) {
    this.chunks = chunks;
    this.minT = minT;
    this.maxT = maxT;
  }

  /** Whether some chunk of {@code chunks} holds histogram samples. */
  static boolean hasHistogramChunk(List<ChunkSource> chunks) {
    for (ChunkSource c : chunks) {
      if (c.encoding() == TimeSeriesValue.ENCODING_HISTOGRAM) {
        return true;
      }
    }
    return false;
  }

  @Override
  public boolean next() {
    onSample = false;
    if (done) {
      return false;
    }
    if (!(open && decoder.next()) && !openNext(minT)) {
      done = true;
      return false;
    }
    return settle();
  }

  @Override
  public boolean seek(long timestampMillis) {
    if (onSample && decoder.timestampMillis() >= timestampMillis) {
      return true;
    }
    onSample = false;
    if (done) {
      return false;
    }
    if (!(open && decoder.seek(timestampMillis)) && !openNext(timestampMillis)) {
      done = true;
      return false;
    }
    return settle();
  }

  /** The decoder stands on a sample at or after minT: hands it out unless it is after maxT. */
  private boolean settle() {
    if (decoder.timestampMillis() > maxT) {
      done = true;
      return false;
    }
    onSample = true;
    return true;
  }

  /**
   * Opens the next histogram chunk with a sample at or after {@code from} and {@code minT}, the
   * decoder standing on it; false if there is none.
   */
  private boolean openNext(long from) {
    open = false;
    long target = Math.max(from, minT);
    while (++chunk < chunks.size()) {
      ChunkSource c = chunks.get(chunk);
      if (c.encoding() != TimeSeriesValue.ENCODING_HISTOGRAM || c.bucket().endMillis() <= target) {
        continue;
      }
      decoder.reset(c.bytes(), c.offset(), c.bytes().length - c.offset());
      if (decoder.seek(target)) {
        open = true;
        return true;
      }
    }
    return false;
  }

  @Override
  public long timestampMillis() {
    checkOnSample();
    return decoder.timestampMillis();
  }

  @Override
  public NativeHistogram histogram() {
    checkOnSample();
    return decoder.histogram();
  }

  private void checkOnSample() {
    if (!onSample) {
      throw new IllegalStateException("no current sample");
    }
  }
}
