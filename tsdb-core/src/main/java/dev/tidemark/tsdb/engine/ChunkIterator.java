package dev.tidemark.tsdb.engine;

import dev.tidemark.tsdb.codec.ChunkDecoder;
import dev.tidemark.tsdb.codec.TimeSeriesValue;
import dev.tidemark.tsdb.query.SampleIterator;
import java.util.List;

/**
 * Walks a series' chunks in bucket order (buckets don't overlap in time; a head series may give two
 * chunks of one bucket, its frozen part and its stream, which don't overlap either), keeping
 * samples in {@code [minT, maxT]}. Inside a head chunk the in-order stream and the late samples are
 * merged by timestamp. One decoder per encoding is reused ({@link TimeSeriesValue.Decoders}): no
 * allocation per sample, and none per series when the iterator is reused ({@link #reset}). Float
 * samples only: chunks of native histograms ({@link TimeSeriesValue#ENCODING_HISTOGRAM}) are
 * skipped, as if absent ({@link HistogramChunkIterator} walks them).
 */
final class ChunkIterator implements SampleIterator {

  private List<ChunkSource> chunks;
  private long minT;
  private long maxT;
  private final TimeSeriesValue.Decoders decoders = new TimeSeriesValue.Decoders();
  private ChunkDecoder decoder;

  private int chunk = -1;
  private ChunkSource current;
  private boolean decoderHas;
  private int late;
  private boolean done;
  private long t;
  private long bits;

  /** Whether the last next() or seek() returned true. */
  private boolean onSample;

  ChunkIterator(List<ChunkSource> chunks, long minT, long maxT) {
    reset(chunks, minT, maxT);
  }

  /** Starts over on other chunks, keeping the decoders. */
  ChunkIterator reset(List<ChunkSource> chunks, long minT, long maxT) {
    this.chunks = chunks;
    this.minT = minT;
    this.maxT = maxT;
    chunk = -1;
    current = null;
    decoder = null;
    decoderHas = false;
    late = 0;
    done = false;
    onSample = false;
    return this;
  }

  /**
   * Inside a chunk without late samples (every sealed chunk), copies straight from the decoder
   * ({@link ChunkDecoder#copyUpTo}); elsewhere (late samples to merge, chunk boundaries) it is
   * {@link #next()}.
   */
  @Override
  public int next(long[] timestamps, long[] valueBits, int offset, int max) {
    int n = 0;
    while (n < max) {
      if (!done && decoderHas && current.lateCount() == 0) {
        // Every sample of such a chunk from the decoder's position on is >= minT (openNext seeks).
        n += decoder.copyUpTo(timestamps, valueBits, offset + n, max - n, maxT);
        decoderHas = decoder.onSample();
        if (decoderHas && n < max) { // stopped at a sample after maxT
          done = true;
          onSample = false;
          return n;
        }
        if (n > 0) {
          t = timestamps[offset + n - 1];
          bits = valueBits[offset + n - 1];
          onSample = true;
        }
        continue;
      }
      if (!next()) {
        return n;
      }
      timestamps[offset + n] = t;
      valueBits[offset + n++] = bits;
    }
    return n;
  }

  @Override
  public boolean next() {
    onSample = false;
    while (!done) {
      if (current == null && !openNext(Long.MIN_VALUE)) {
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
        onSample = true;
        return true;
      }
    }
    return false;
  }

  /**
   * Chunks whose bucket ends at or before {@code timestampMillis} are skipped without decoding;
   * inside the chunk that may hold it the decoder seeks (a decimal decoder reads past whole
   * mini-blocks before the target without computing their values), unless the chunk has late
   * samples to merge, which are walked.
   */
  @Override
  public boolean seek(long timestampMillis) {
    if (onSample && t >= timestampMillis) {
      return true;
    }
    if (done) {
      return false;
    }
    if (current == null || current.bucket().endMillis() <= timestampMillis) {
      current = null;
      while (chunk + 1 < chunks.size()
          && chunks.get(chunk + 1).bucket().endMillis() <= timestampMillis) {
        chunk++;
      }
      if (!openNext(timestampMillis)) {
        done = true;
        onSample = false;
        return false;
      }
    } else if (decoderHas
        && current.lateCount() == 0
        && decoder.timestampMillis() < timestampMillis) {
      decoderHas = decoder.seek(timestampMillis); // the decoder is one sample ahead of us
    }
    while (next()) {
      if (t >= timestampMillis) {
        return true;
      }
    }
    return false;
  }

  /**
   * From the newest chunk back: the first chunk (newest first) whose bucket overlaps {@code [lo,
   * hi]} and holds a sample there answers, so older chunks are never decoded (an instant selector's
   * lookback window usually ends in the newest bucket).
   */
  @Override
  public boolean newestIn(long lo, long hi, long[] out) {
    long from = Math.max(lo, minT);
    long to = Math.min(hi, maxT);
    done = true; // used for nothing else afterwards
    onSample = false;
    for (int c = chunks.size() - 1; c >= 0 && from <= to; c--) {
      ChunkSource cs = chunks.get(c);
      if (cs.bucket().startMillis() > to || cs.encoding() == TimeSeriesValue.ENCODING_HISTOGRAM) {
        continue;
      }
      if (cs.bucket().endMillis() <= from) {
        return false; // this chunk and every older one end before the window
      }
      boolean found = false;
      if (cs.lateCount() == 0) {
        ChunkDecoder d = cs.open(decoders);
        if (d.seek(from)) {
          do {
            long ts = d.timestampMillis();
            if (ts > to) {
              break;
            }
            out[0] = ts;
            out[1] = d.valueBits();
            found = true;
          } while (d.next());
        }
      } else { // in-order stream and late samples, merged
        ChunkIterator one = new ChunkIterator(List.of(cs), from, to);
        while (one.next()) {
          out[0] = one.t;
          out[1] = one.bits;
          found = true;
        }
      }
      if (found) {
        return true;
      }
    }
    return false;
  }

  /**
   * Opens the next chunk, positioned at its first sample at or after {@code minT} and {@code from}
   * (a chunk with late samples only at its first sample: its samples are merged and filtered one by
   * one); false if there is none.
   */
  private boolean openNext(long from) {
    do {
      if (++chunk >= chunks.size()) {
        return false;
      }
      current = chunks.get(chunk);
    } while (current.encoding() == TimeSeriesValue.ENCODING_HISTOGRAM);
    decoder = current.open(decoders);
    decoderHas = current.lateCount() > 0 ? decoder.next() : decoder.seek(Math.max(minT, from));
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
