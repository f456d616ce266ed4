package dev.tidemark.tsdb.query;

/**
 * Walks the samples of one series in timestamp order, without allocating per sample. Not
 * thread-safe. Values are raw IEEE-754 bits: staleness markers and NaN payloads are exact.
 */
public interface SampleIterator {

  /** Moves to the next sample; false at the end. */
  boolean next();

  /**
   * Moves to the first sample at or after {@code timestampMillis}, or stays on the current one if
   * it is already there (never moves backwards); false if there is none. Implementations skip whole
   * chunks without decoding them where they can.
   */
  boolean seek(long timestampMillis);

  long timestampMillis();

  long valueBits();

  /**
   * Reads the next samples into {@code timestamps[offset..]} and {@code valueBits[offset..]}, as
   * calls of {@link #next()} would: up to {@code max}, fewer only when the samples end. After
   * {@code max} samples the iterator stands on the last one read; after fewer it is at the end, as
   * after {@link #next()} returned false. Implementations decode in bulk where they can.
   *
   * @return the number of samples read, 0 at the end
   */
  default int next(long[] timestamps, long[] valueBits, int offset, int max) {
    int n = 0;
    while (n < max && next()) {
      timestamps[offset + n] = timestampMillis();
      valueBits[offset + n] = valueBits();
      n++;
    }
    return n;
  }

  /**
   * The newest sample with {@code minT <= timestamp <= maxT} (stale markers included), for a reader
   * that needs only that one (an instant selector at one time): its timestamp goes to {@code
   * out[0]}, its value bits to {@code out[1]}. Use the iterator for nothing else afterwards.
   * Implementations look at the newest chunks first where they can, so that older ones are never
   * decoded.
   *
   * @return false if there is no such sample
   */
  default boolean newestIn(long minT, long maxT, long[] out) {
    if (!seek(minT)) {
      return false;
    }
    boolean found = false;
    do {
      long t = timestampMillis();
      if (t > maxT) {
        break;
      }
      out[0] = t;
      out[1] = valueBits();
      found = true;
    } while (next());
    return found;
  }

  default double value() {
    return Double.longBitsToDouble(valueBits());
  }

  /** An iterator with no samples. */
  SampleIterator EMPTY =
      new SampleIterator() {
        @Override
        public boolean next() {
          return false;
        }

        @Override
        public boolean seek(long timestampMillis) {
          return false;
        }

        @Override
        public long timestampMillis() {
          throw new IllegalStateException("no sample");
        }

        @Override
        public long valueBits() {
          throw new IllegalStateException("no sample");
        }
      };
}
