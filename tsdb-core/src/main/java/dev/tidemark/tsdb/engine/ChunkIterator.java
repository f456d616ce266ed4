package dev.tidemark.tsdb.engine;

import dev.tidemark.tsdb.codec.GorillaDecoder;
import dev.tidemark.tsdb.query.SampleIterator;
import java.util.List;

/**
 * Walks a series' chunks, one per bucket in bucket order (buckets don't overlap in time), keeping
 * samples in {@code [minT, maxT]}. Inside a head chunk the in-order stream and the late samples are
 * merged by timestamp. One decoder is reused: no allocation per sample.
 */
final class ChunkIterator implements SampleIterator {

  private final List<ChunkSource> chunks;
  private final long minT;
  private final long maxT;
  private final GorillaDecoder decoder = new GorillaDecoder();

  private int chunk = -1;
  private ChunkSource current;
  private boolean decoderHas;
  private int late;
  private boolean done;
  private long t;
  private long bits;

  ChunkIterator(List<ChunkSource> chunks, long minT, long maxT) {
    this.chunks = chunks;
    this.minT = minT;
    this.maxT = maxT;
  }

  @Override
  public boolean next() {
    while (!done) {
      if (current == null && !openNext()) {
        done = true;
        return false;
      }
      boolean haveLate = late < current.lateCount();
      if (!decoderHas && !haveLate) {
        current = null;
        continue;
      }
      if (decoderHas && (!haveLate || decoder.timestampMillis() < current.lateTimestamps()[late])) {
        t = decoder.timestampMillis();
        bits = decoder.valueBits();
        decoderHas = decoder.next();
      } else {
        t = current.lateTimestamps()[late];
        bits = current.lateBits()[late];
        late++;
      }
      if (t > maxT) {
        done = true;
        return false;
      }
      if (t >= minT) {
        return true;
      }
    }
    return false;
  }

  private boolean openNext() {
    if (++chunk >= chunks.size()) {
      return false;
    }
    current = chunks.get(chunk);
    decoder.reset(current.bytes(), current.offset(), current.bytes().length - current.offset());
    decoderHas = decoder.next() && (current.lateCount() > 0 || decoder.seek(minT));
    late = 0;
    return true;
  }

  @Override
  public long timestampMillis() {
    return t;
  }

  @Override
  public long valueBits() {
    return bits;
  }
}
