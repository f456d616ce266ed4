package dev.tidemark.translator;

import dev.tidemark.tsdb.model.Labels;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Explicit-bucket histogram data points (§3.3): cumulative {@code _bucket{le}} series, {@code
 * +Inf}, {@code _sum} and {@code _count}; delta histograms accumulated per bucket; stale markers on
 * every bucket the stream ever had. The Prometheus counterpart is {@code addHistogramDataPoints}.
 * Thread-safe; a stream's bucket series live in its {@link SeriesEntry}, under its lock.
 */
final class HistogramPoints {
  private final SeriesResolver resolver;

  HistogramPoints(SeriesResolver resolver) {
    this.resolver = resolver;
  }

  void point(RequestState rs, MetricCtx mc, Pt p) {
    long ts = resolver.timestampMillis(rs, mc, p.timeNanos);
    if (ts < 0) {
      return;
    }
    boolean stale = (p.flags & 1) != 0;
    int nb = p.nb;
    int nc = p.nc;
    double[] bounds = p.bounds;
    long[] counts = p.counts;
    if (!stale) {
      String invalid = validateHistogram(bounds, nb, counts, nc, p.count);
      if (invalid != null) {
        rs.reject(RejectionReason.INVALID_HISTOGRAM, mc.family, invalid);
        return;
      }
    }
    SeriesEntry e = resolver.entry(rs, mc, p);
    if (e == null) {
      return;
    }
    rs.begin(mc, ts);
    if (stale) {
      if (mc.delta) {
        resolver.forgetDelta(rs);
      }
      staleHistogram(rs, e, bounds, nb, p.hasSum);
      rs.commit(mc, ts, -1);
      return;
    }
    long count = p.count;
    boolean hasSum = p.hasSum;
    double sum = p.sum;
    long startNanos = p.startNanos;
    long timeUnixNano = p.timeNanos;
    if (mc.delta) {
      RejectionReason r =
          resolver.accumulateDelta(
              rs,
              startNanos,
              SeriesResolver.timeNanos(timeUnixNano, ts),
              (st, fresh) -> {
                if (fresh
                    || !DeltaAccumulator.sameBounds(st.bounds, bounds, nb)
                    || st.counts == null) {
                  if (!fresh) {
                    st.startNanos =
                        startNanos != 0 ? startNanos : SeriesResolver.timeNanos(timeUnixNano, ts);
                  }
                  st.bounds = DeltaAccumulator.copyBounds(bounds, nb);
                  st.counts = Arrays.copyOf(counts, nc);
                  st.count = count;
                  st.hasSum = hasSum;
                  st.sum = sum;
                } else {
                  for (int i = 0; i < nc; i++) {
                    st.counts[i] += counts[i];
                  }
                  st.count += count;
                  st.hasSum = st.hasSum && hasSum;
                  st.sum += sum;
                }
                System.arraycopy(st.counts, 0, counts, 0, nc);
                rs.accCount = st.count;
                rs.accHasSum = st.hasSum;
                rs.accValue = st.sum;
                rs.accStartNanos = st.startNanos;
                return null;
              });
      if (r != null) {
        rs.reject(r, mc.family, null);
        return;
      }
      emitHistogram(rs, e, bounds, nb, counts, rs.accCount, rs.accHasSum, rs.accValue);
      rs.commit(mc, ts, resolver.injectionMillis(rs.accStartNanos, ts));
      return;
    }
    emitHistogram(rs, e, bounds, nb, counts, count, hasSum, sum);
    rs.commit(mc, ts, resolver.injectionMillis(startNanos, ts));
  }

  private static String validateHistogram(
      double[] bounds, int nb, long[] counts, int nc, long count) {
    if (!(nc == nb + 1 || (nc == 0 && nb == 0))) {
      return "bucket_counts has "
          + nc
          + " entries for "
          + nb
          + " explicit_bounds (want "
          + (nb + 1)
          + ")";
    }
    double prev = Double.NEGATIVE_INFINITY;
    for (int i = 0; i < nb; i++) {
      double b = bounds[i];
      if (Double.isNaN(b) || Double.isInfinite(b)) {
        return "explicit bound " + b + " is not finite";
      }
      if (i > 0 && !(b > prev)) {
        return "explicit_bounds not strictly increasing at index " + i;
      }
      prev = b;
    }
    long total = 0;
    for (int i = 0; i < nc; i++) {
      long c = counts[i];
      total += c;
      if (c < 0 || total < 0) {
        return "bucket count out of range";
      }
    }
    if (count < 0) {
      return "count out of range";
    }
    return null;
  }

  private void emitHistogram(
      RequestState rs,
      SeriesEntry e,
      double[] bounds,
      int nb,
      long[] counts,
      long count,
      boolean hasSum,
      double sum) {
    SeriesEntry.Composite c = e.composite;
    Labels[] bl;
    synchronized (e) {
      bl =
          c.lastBounds != null && DeltaAccumulator.sameBounds(c.lastBounds, bounds, nb)
              ? c.lastBucketSeries
              : null;
      if (bl == null) {
        bl = new Labels[nb];
        for (int i = 0; i < nb; i++) {
          bl[i] = resolver.bucketSeries(c, bounds[i]);
        }
        c.lastBounds = Arrays.copyOf(bounds, nb);
        c.lastBucketSeries = bl;
      }
      if (hasSum) {
        c.sumEmitted = true;
      }
    }
    long cum = 0;
    for (int i = 0; i < nb; i++) {
      cum += counts[i];
      rs.emit(bl[i], (double) cum, true);
    }
    rs.emit(c.inf, (double) count, true);
    if (hasSum) {
      rs.emit(c.sum, sum, true);
    }
    rs.emit(c.count, (double) count, true);
  }

  /** Stale markers on every bucket ever emitted for the stream plus those the point lists. */
  private void staleHistogram(
      RequestState rs, SeriesEntry e, double[] bounds, int nb, boolean hasSum) {
    SeriesEntry.Composite c = e.composite;
    List<Labels> all;
    boolean sum;
    synchronized (e) {
      for (int i = 0; i < nb; i++) {
        if (!Double.isNaN(bounds[i]) && !Double.isInfinite(bounds[i])) {
          resolver.bucketSeries(c, bounds[i]);
        }
      }
      all = c.buckets == null ? new ArrayList<>() : new ArrayList<>(c.buckets.values());
      sum = c.sumEmitted || hasSum;
    }
    for (Labels l : all) {
      rs.emitStale(l);
    }
    rs.emitStale(c.inf);
    if (sum) {
      rs.emitStale(c.sum);
    }
    rs.emitStale(c.count);
  }
}
