package dev.tidemark.promql.engine;

import dev.tidemark.promql.engine.Evaluator.Kernel;
import dev.tidemark.promql.engine.Evaluator.Window;
import dev.tidemark.promql.parser.ExtendedRange;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * The {@code anchored} and {@code smoothed} selector modifiers in evaluation, as Prometheus 3.14
 * evaluates them (its {@code extendedRate}, {@code extendFloats}, {@code pickFirstSampleIndices}
 * and {@code smoothSeries}), for float samples.
 *
 * <p><b>The window.</b> A range selector {@code x[r]} at step time {@code t} (less its offset)
 * covers {@code (t - r, t]}. Anchored, the window the kernels see reaches back a lookback delta
 * further, {@code (t - r - lookback, t]}, so that it holds the newest sample at or before the range
 * start, the <i>anchor</i>; smoothed, it also reaches a lookback delta ahead, {@code (t - r -
 * lookback, t + lookback]}, so that the range end can be interpolated from the samples either side
 * of it. {@link Window#rangeStart} and {@link Window#rangeEnd} keep the range itself. Stale markers
 * are dropped as for any window, so neither modifier sees a series end at one.
 *
 * <p><b>The edges.</b> The left value is the anchor's (the first sample in the window when there is
 * none); smoothed, when the anchor lies before the range start, the value interpolated linearly at
 * the range start between it and the next sample. The right value is the newest sample at or before
 * the range end; smoothed, the first sample at or after the range end, interpolated at the end with
 * the sample before it when it lies after. For {@code rate} and {@code increase} an interpolation
 * across a decrease treats the counter as restarted from zero.
 *
 * <p><b>The functions.</b> {@code rate}, {@code increase} and {@code delta} take {@code right -
 * left} (plus, for counters, the value before each decrease among the samples strictly inside the
 * range and at the edges), with no extrapolation, and {@code rate} divides by the range. {@code
 * changes} and {@code resets} accept {@code anchored} only: they count over the anchor and the
 * samples after the range start. Every other function refuses the modifiers with Prometheus' error.
 * A series with no sample after the range start has no value.
 */
final class ExtendedRanges {
  private ExtendedRanges() {}

  /** The functions that take an anchored range selector (Prometheus' AnchoredSafeFunctions). */
  static final Set<String> ANCHORED_FUNCTIONS =
      new TreeSet<>(Set.of("changes", "delta", "increase", "rate", "resets"));

  /** The functions that take a smoothed range selector (Prometheus' SmoothedSafeFunctions). */
  static final Set<String> SMOOTHED_FUNCTIONS = new TreeSet<>(Set.of("delta", "increase", "rate"));

  /** Kernels by function name for an anchored or smoothed range argument. */
  static final Map<String, Kernel> KERNELS =
      Map.of(
          "rate", w -> rate(w, true, true),
          "increase", w -> rate(w, true, false),
          "delta", w -> rate(w, false, false),
          "changes", ExtendedRanges::changes,
          "resets", ExtendedRanges::resets);

  /**
   * Fails the query when {@code function} does not take a range selector with modifier {@code m},
   * with Prometheus' message, which names the functions that do in alphabetical order.
   */
  static void check(String function, ExtendedRange m) {
    Set<String> allowed =
        switch (m) {
          case NONE -> null;
          case ANCHORED -> ANCHORED_FUNCTIONS;
          case SMOOTHED -> SMOOTHED_FUNCTIONS;
        };
    if (allowed != null && !allowed.contains(function)) {
      throw QueryException.execution(
          m.keyword
              + " modifier can only be used with: "
              + String.join(", ", allowed)
              + " - not with "
              + function);
    }
  }

  // ---------------------------------------------------------------- rate, increase, delta

  /**
   * {@code rate}/{@code increase}/{@code delta} over an extended window: {@code right - left} with
   * counter-reset corrections when {@code isCounter}, per second of the range when {@code isRate}.
   */
  static boolean rate(Window w, boolean isCounter, boolean isRate) {
    long[] t = w.t;
    double[] v = w.v;
    boolean smoothed = w.ext == ExtendedRange.SMOOTHED;
    long rangeStart = w.rangeStart;
    long rangeEnd = w.rangeEnd;
    int last = w.hi - 1;
    // The anchor: the newest sample at or before the range start, searched among all but the last.
    int first = Math.max(w.lo, firstAbove(t, w.lo, last, rangeStart) - 1);
    if (smoothed) {
      last = firstAtOrAbove(t, w.lo, last, rangeEnd);
    }
    if (t[last] <= rangeStart) {
      return false;
    }
    if (smoothed && t[first] > rangeEnd) {
      return false;
    }
    double left =
        smoothed && t[first] < rangeStart
            ? interpolate(t[first], v[first], t[first + 1], v[first + 1], rangeStart, isCounter)
            : v[first];
    double right =
        smoothed && last > w.lo && t[last] > rangeEnd
            ? interpolate(t[last - 1], v[last - 1], t[last], v[last], rangeEnd, isCounter)
            : v[last];
    double result = right - left;
    if (isCounter) {
      // The edges handled a decrease across them; the samples strictly inside the range remain.
      int from = t[first] <= rangeStart ? first + 1 : first;
      int to = t[last] >= rangeEnd ? last - 1 : last;
      double correction = 0;
      double prev = left;
      for (int i = from; i <= to; i++) {
        if (v[i] < prev) {
          correction += prev;
        }
        prev = v[i];
      }
      if (right < prev) {
        correction += prev;
      }
      result += correction;
    }
    if (isRate) {
      result /= w.rangeMs / 1000.0;
    }
    w.out = result;
    return true;
  }

  /**
   * The value at {@code t} on the line through {@code (t1, y1)} and {@code (t2, y2)}; for a counter
   * that decreased between them, on the line from zero at {@code t1} (it restarted).
   */
  static double interpolate(long t1, double y1, long t2, double y2, long t, boolean isCounter) {
    if (isCounter && y2 < y1) {
      y1 = 0;
    }
    return y1 + (y2 - y1) * (double) (t - t1) / (double) (t2 - t1);
  }

  /** The first index in {@code [from, to)} whose time is above {@code x}, else {@code to}. */
  static int firstAbove(long[] t, int from, int to, long x) {
    int lo = from;
    int hi = to;
    while (lo < hi) {
      int mid = (lo + hi) >>> 1;
      if (t[mid] > x) {
        hi = mid;
      } else {
        lo = mid + 1;
      }
    }
    return lo;
  }

  /** The first index in {@code [from, to)} whose time is at or above {@code x}, else {@code to}. */
  static int firstAtOrAbove(long[] t, int from, int to, long x) {
    return firstAbove(t, from, to, x - 1);
  }

  // ---------------------------------------------------------------- changes, resets

  /**
   * Where an anchored count starts: the anchor (the newest sample at or before the range start), or
   * the window's first sample when there is none; -1 when no sample lies after the range start.
   */
  private static int anchoredStart(Window w) {
    int after = firstAbove(w.t, w.lo, w.hi, w.rangeStart);
    if (after >= w.hi) {
      return -1;
    }
    return after > w.lo ? after - 1 : w.lo;
  }

  static boolean changes(Window w) {
    int from = anchoredStart(w);
    if (from < 0) {
      return false;
    }
    int r = 0;
    for (int i = from + 1; i < w.hi; i++) {
      double a = w.v[i - 1];
      double b = w.v[i];
      if (a != b && !(Double.isNaN(a) && Double.isNaN(b))) {
        r++;
      }
    }
    w.out = r;
    return true;
  }

  static boolean resets(Window w) {
    int from = anchoredStart(w);
    if (from < 0) {
      return false;
    }
    int r = 0;
    for (int i = from + 1; i < w.hi; i++) {
      if (w.v[i] < w.v[i - 1]) {
        r++;
      }
    }
    w.out = r;
    return true;
  }

  // ---------------------------------------------------------------- range-vector results

  /**
   * The points an anchored or smoothed range selector yields as a query's result at one time (its
   * window in {@code w}): the left value at the range start, the samples strictly inside the range,
   * and the right value at the range end, as Prometheus' {@code extendFloats} (a sample inside the
   * range that also gives an edge value appears twice). Null when no sample lies after the range
   * start, or, smoothed, none at or before the range end.
   */
  static Value.Series extend(Window w, dev.tidemark.tsdb.model.Labels labels) {
    long[] t = w.t;
    double[] v = w.v;
    boolean smoothed = w.ext == ExtendedRange.SMOOTHED;
    long rangeStart = w.rangeStart;
    long rangeEnd = w.rangeEnd;
    if (w.hi <= w.lo) {
      return null;
    }
    int last = w.hi - 1;
    int first = Math.max(w.lo, firstAbove(t, w.lo, last, rangeStart) - 1);
    if (smoothed) {
      last = firstAtOrAbove(t, w.lo, last, rangeEnd);
    }
    if (t[last] <= rangeStart) {
      return null;
    }
    double left =
        smoothed && t[first] < rangeStart
            ? interpolate(t[first], v[first], t[first + 1], v[first + 1], rangeStart, false)
            : v[first];
    double right =
        smoothed && last > w.lo && t[last] > rangeEnd
            ? interpolate(t[last - 1], v[last - 1], t[last], v[last], rangeEnd, false)
            : v[last];
    int from = t[first] <= rangeStart ? first + 1 : first;
    int to = t[last] >= rangeEnd ? last - 1 : last;
    int inner = Math.max(to - from + 1, 0);
    long[] ts = new long[inner + 2];
    double[] vs = new double[inner + 2];
    ts[0] = rangeStart;
    vs[0] = left;
    if (inner > 0) {
      System.arraycopy(t, from, ts, 1, inner);
      System.arraycopy(v, from, vs, 1, inner);
    }
    ts[inner + 1] = rangeEnd;
    vs[inner + 1] = right;
    return new Value.Series(labels, ts, vs);
  }

  // ---------------------------------------------------------------- smoothed instant selectors

  /**
   * A smoothed instant selector's value at data time {@code at}, its window {@code (at - lookback,
   * at + lookback]} in {@code w}: the sample at {@code at}, else the value interpolated between the
   * samples either side of it, else the newest sample before it (none after it yet); no value
   * (false) when every sample lies after {@code at}. Not counter-aware, as in Prometheus.
   */
  static boolean smoothedAt(Window w, long at) {
    int i = firstAtOrAbove(w.t, w.lo, w.hi, at);
    if (i < w.hi && w.t[i] == at) {
      w.out = w.v[i];
    } else if (i > w.lo && i < w.hi) {
      w.out = interpolate(w.t[i - 1], w.v[i - 1], w.t[i], w.v[i], at, false);
    } else if (i > w.lo) {
      w.out = w.v[i - 1];
    } else {
      return false;
    }
    return true;
  }
}
