package dev.tidemark.translator;

import dev.tidemark.tsdb.model.Labels;
import java.util.ArrayList;
import java.util.List;

/**
 * Summary data points (§3.5): one series per quantile, {@code _sum} and {@code _count}; stale
 * markers on every quantile the stream ever had. Thread-safe; a stream's quantile series live in
 * its {@link SeriesEntry}, under its lock.
 */
final class SummaryPoints {
  private final SeriesResolver resolver;

  SummaryPoints(SeriesResolver resolver) {
    this.resolver = resolver;
  }

  void point(RequestState rs, MetricCtx mc, Pt p) {
    long ts = resolver.timestampMillis(rs, mc, p.timeNanos);
    if (ts < 0) {
      return;
    }
    SeriesEntry e = resolver.entry(rs, mc, p);
    if (e == null) {
      return;
    }
    rs.begin(mc, ts);
    SeriesEntry.Composite c = e.composite;
    int nq = p.nq;
    if ((p.flags & 1) != 0) {
      List<Labels> all;
      synchronized (e) {
        for (int i = 0; i < nq; i++) {
          resolver.quantileSeries(c, p.qs[i]);
        }
        all = c.quantiles == null ? new ArrayList<>() : new ArrayList<>(c.quantiles.values());
      }
      for (Labels l : all) {
        rs.emitStale(l);
      }
      rs.emitStale(c.sum);
      rs.emitStale(c.count);
      rs.commit(mc, ts, -1);
      return;
    }
    Labels[] ql;
    synchronized (e) {
      ql = c.lastQuantileSeries;
      if (ql == null || ql.length != nq || !sameQuantiles(c.lastQuantiles, p)) {
        ql = new Labels[nq];
        double[] qs = new double[nq];
        for (int i = 0; i < nq; i++) {
          qs[i] = p.qs[i];
          ql[i] = resolver.quantileSeries(c, qs[i]);
        }
        c.lastQuantiles = qs;
        c.lastQuantileSeries = ql;
      }
    }
    for (int i = 0; i < nq; i++) {
      rs.emit(ql[i], p.qv[i], false);
    }
    rs.emit(c.sum, p.sum, true);
    rs.emit(c.count, (double) p.count, true);
    rs.commit(mc, ts, resolver.injectionMillis(p.startNanos, ts));
  }

  private static boolean sameQuantiles(double[] qs, Pt p) {
    if (qs == null || qs.length != p.nq) {
      return false;
    }
    for (int i = 0; i < qs.length; i++) {
      if (Double.doubleToRawLongBits(qs[i]) != Double.doubleToRawLongBits(p.qs[i])) {
        return false;
      }
    }
    return true;
  }
}
