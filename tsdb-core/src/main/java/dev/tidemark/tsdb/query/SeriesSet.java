package dev.tidemark.tsdb.query;

import java.util.ArrayList;
import java.util.List;

/**
 * The answer of {@link Querier#select}: series in label order, walked once with {@link #next()} and
 * {@link #at()}. Not thread-safe; each {@link Series} it hands out may be iterated on any thread,
 * more than once.
 */
public interface SeriesSet {

  /** Moves to the next series; false at the end. */
  boolean next();

  /**
   * The current series.
   *
   * @throws IllegalStateException unless the last {@link #next()} returned true
   */
  Series at();

  /** The series not walked yet, as a list (for callers that need them all at once). */
  default List<Series> toList() {
    List<Series> out = new ArrayList<>();
    while (next()) {
      out.add(at());
    }
    return out;
  }

  /** A set over series already in label order. */
  static SeriesSet of(List<? extends Series> sorted) {
    return new SeriesSet() {
      private int i = -1;

      @Override
      public boolean next() {
        if (i < sorted.size()) {
          i++;
        }
        return i < sorted.size();
      }

      @Override
      public Series at() {
        if (i < 0 || i >= sorted.size()) {
          throw new IllegalStateException("no current series");
        }
        return sorted.get(i);
      }
    };
  }
}
