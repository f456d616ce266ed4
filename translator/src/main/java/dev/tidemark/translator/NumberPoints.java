package dev.tidemark.translator;

import dev.tidemark.tsdb.model.Labels;

/**
 * Gauge and sum data points (§3.1, §3.2): one sample per point, a counter's start-time zero, delta
 * sums accumulated into cumulative ones. The Prometheus counterpart is {@code
 * number_data_points.go}. Stateless beyond the shared {@link SeriesResolver}; thread-safe.
 */
final class NumberPoints {
  private final SeriesResolver resolver;

  NumberPoints(SeriesResolver resolver) {
    this.resolver = resolver;
  }

  void point(RequestState rs, MetricCtx mc, Pt p, boolean counter) {
    long ts = resolver.timestampMillis(rs, mc, p.timeNanos);
    if (ts < 0) {
      return;
    }
    SeriesEntry e = resolver.entry(rs, mc, p);
    if (e == null) {
      return;
    }
    Labels s = e.series;
    rs.begin(mc, ts);
    boolean stale = (p.flags & 1) != 0;
    if (stale) {
      if (mc.delta) {
        resolver.forgetDelta(rs);
      }
      rs.emitStale(s);
      rs.commit(mc, ts, -1);
      return;
    }
    double v;
    switch (p.valueCase) {
      case Pt.AS_DOUBLE -> v = p.asDouble;
      case Pt.AS_INT -> v = (double) p.asInt;
      default -> {
        // metrics.proto: a point without a value is invalid. Prometheus writes 0; we invent no
        // data.
        rs.reject(RejectionReason.MISSING_VALUE, mc.family, null);
        return;
      }
    }
    if (mc.delta) {
      final double dv = v;
      RejectionReason r =
          resolver.accumulateDelta(
              rs,
              p.startNanos,
              SeriesResolver.timeNanos(p.timeNanos, ts),
              (st, fresh) -> {
                st.value = fresh ? dv : st.value + dv;
                rs.accValue = st.value;
                rs.accStartNanos = st.startNanos;
                return null;
              });
      if (r != null) {
        rs.reject(r, mc.family, null);
        return;
      }
      v = rs.accValue;
      rs.emit(s, v, counter);
      rs.commit(mc, ts, counter ? resolver.injectionMillis(rs.accStartNanos, ts) : -1);
      return;
    }
    rs.emit(s, v, counter);
    rs.commit(mc, ts, counter ? resolver.injectionMillis(p.startNanos, ts) : -1);
  }
}
