package dev.tidemark.translator;

import dev.tidemark.tsdb.append.SampleBatch;
import dev.tidemark.tsdb.model.CounterResetHint;
import dev.tidemark.tsdb.model.HistogramLayout;
import dev.tidemark.tsdb.model.IntegerHistogram;
import dev.tidemark.tsdb.model.Labels;
import java.util.ArrayList;
import java.util.List;

/**
 * Exponential histogram data points (§3.4): validated, delta ones accumulated (downscaling to stay
 * within the bucket limit), then written either as {@code _count}/{@code _sum} only, as a classic
 * histogram with a stable bucket layout per stream ({@link ExpHistogram} does the bucket
 * arithmetic), or, in mode {@link TranslatorConfig.ExponentialHistogramMode#NATIVE}, as one native
 * histogram sample of the series named after the family ({@link NativeHistogramConversion}). The
 * Prometheus counterpart is {@code histograms.go}. Thread-safe; a stream's layout lives in its
 * {@link SeriesEntry}, under its lock.
 */
final class ExponentialHistogramPoints {
  private final SeriesResolver resolver;
  private final TranslatorConfig config;

  ExponentialHistogramPoints(SeriesResolver resolver, TranslatorConfig config) {
    this.resolver = resolver;
    this.config = config;
  }

  void point(RequestState rs, MetricCtx mc, Pt p) {
    long ts = resolver.timestampMillis(rs, mc, p.timeNanos);
    if (ts < 0) {
      return;
    }
    boolean stale = (p.flags & 1) != 0;
    ExpHistogram h = rs.exp;
    if (!stale) {
      h.setFrom(p.exp);
      if (h.scale < HistogramLayout.MIN_EXPONENTIAL_SCHEMA
          && config.exponentialHistogramMode()
              == TranslatorConfig.ExponentialHistogramMode.NATIVE) {
        // Prometheus' refusal and words (the conversion's), before any delta state is kept
        NativeHistogramConversion.Result r = NativeHistogramConversion.convert(h, false, false, 0);
        rs.reject(r.reason(), mc.family, r.detail());
        return;
      }
      String invalid = validateExponential(h);
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
      SeriesEntry.Composite c = e.composite;
      List<Labels> all;
      boolean sum;
      synchronized (e) {
        all = c.buckets == null ? new ArrayList<>() : new ArrayList<>(c.buckets.values());
        sum = c.sumEmitted || p.hasSum;
      }
      if (config.exponentialHistogramMode() == TranslatorConfig.ExponentialHistogramMode.NATIVE) {
        rs.emitHistogram(nativeSeries(e), STALE);
        rs.commit(mc, ts, -1);
        return;
      }
      for (Labels l : all) {
        rs.emitStale(l);
      }
      if (config.exponentialHistogramMode() == TranslatorConfig.ExponentialHistogramMode.CLASSIC) {
        rs.emitStale(c.inf);
      }
      if (sum) {
        rs.emitStale(c.sum);
      }
      rs.emitStale(c.count);
      rs.commit(mc, ts, -1);
      return;
    }
    long startNanos = p.startNanos;
    if (mc.delta) {
      int maxBuckets = config.exponentialHistogramMaxBuckets();
      RejectionReason r =
          resolver.accumulateDelta(
              rs,
              startNanos,
              SeriesResolver.timeNanos(p.timeNanos, ts),
              (st, fresh) -> {
                if (fresh || st.exp == null) {
                  st.exp = h.copy();
                  int need =
                      Math.max(
                          ExpHistogram.downscaleNeeded(st.exp.posOffset, st.exp.posLen, maxBuckets),
                          ExpHistogram.downscaleNeeded(
                              st.exp.negOffset, st.exp.negLen, maxBuckets));
                  st.exp.downscale(need);
                } else {
                  st.exp.add(h, maxBuckets);
                }
                h.setFrom(st.exp);
                rs.accStartNanos = st.startNanos;
                return null;
              });
      if (r != null) {
        rs.reject(r, mc.family, null);
        return;
      }
      startNanos = rs.accStartNanos;
    }
    if (config.exponentialHistogramMode() == TranslatorConfig.ExponentialHistogramMode.NATIVE) {
      // Converted after the delta accumulation, with the unknown hint (Prometheus' choice for
      // accumulated deltas too); one point of one sample, with no start-time zero point.
      NativeHistogramConversion.Result r =
          NativeHistogramConversion.convert(
              h, false, false, config.exponentialHistogramMaxBuckets());
      if (!r.accepted()) {
        rs.reject(r.reason(), mc.family, r.detail());
        return;
      }
      if (r.warning() != null) {
        rs.warn(r.warning());
      }
      rs.emitHistogram(nativeSeries(e), r.histogram());
      rs.commit(mc, ts, -1);
      return;
    }
    if (config.exponentialHistogramMode()
        == TranslatorConfig.ExponentialHistogramMode.COUNT_SUM_ONLY) {
      SeriesEntry.Composite c = e.composite;
      if (h.hasSum) {
        synchronized (e) {
          c.sumEmitted = true;
        }
        rs.emit(c.sum, h.sum, true);
      }
      rs.emit(c.count, (double) h.count, true);
    } else {
      emitExponential(rs, e, h);
    }
    rs.commit(mc, ts, resolver.injectionMillis(startNanos, ts));
  }

  /**
   * The staleness marker of a native histogram series, as Prometheus' OTLP endpoint writes it for a
   * point flagged "no recorded value": sum and count StaleNaN, no buckets.
   */
  static final IntegerHistogram STALE =
      IntegerHistogram.ofBits(
          HistogramLayout.exponential(
              0, NativeHistogramConversion.DEFAULT_ZERO_THRESHOLD, null, null),
          CounterResetHint.UNKNOWN,
          SampleBatch.STALE_NAN_BITS,
          0,
          SampleBatch.STALE_NAN_BITS,
          new long[0],
          new long[0]);

  /** The stream's native histogram series: the family's name on its base labels, made once. */
  private static Labels nativeSeries(SeriesEntry entry) {
    SeriesEntry.Composite c = entry.composite;
    synchronized (entry) {
      if (c.nativeSeries == null) {
        c.nativeSeries = c.base.toBuilder().set(Labels.METRIC_NAME, c.family).build();
      }
      return c.nativeSeries;
    }
  }

  private static String validateExponential(ExpHistogram h) {
    if (h.scale < TranslatorConfig.MIN_SCALE) {
      return "scale " + h.scale + " is below " + TranslatorConfig.MIN_SCALE;
    }
    if (h.scale > 20) {
      return "scale " + h.scale + " is above 20";
    }
    if (!(h.zeroThreshold >= 0) || Double.isInfinite(h.zeroThreshold)) {
      return "zero_threshold " + h.zeroThreshold + " is invalid";
    }
    long total = h.bucketTotal();
    if (total < 0 || h.count < 0) {
      return "bucket count out of range";
    }
    boolean nanSum = h.hasSum && Double.isNaN(h.sum);
    if (nanSum ? h.count < total : h.count != total) {
      return "count " + h.count + " does not match zero_count + buckets = " + total;
    }
    return null;
  }

  /**
   * Classic conversion (§3.4 b): downscale to min(point scale, target, stream scale), widen the
   * stream's stable index range, then emit ascending cumulative buckets over the whole range:
   * negative buckets from the highest index down ({@code le = -base^k}), the zero bucket ({@code le
   * = zero_threshold}), positive buckets ({@code le = base^(k+1)}), {@code +Inf} = count.
   */
  private void emitExponential(RequestState rs, SeriesEntry entry, ExpHistogram h) {
    SeriesEntry.Composite e = entry.composite;
    int maxBuckets = config.exponentialHistogramMaxBuckets();
    int n;
    Labels[] labels;
    long[] values;
    synchronized (entry) {
      int eff = Math.min(h.scale, config.exponentialHistogramScale());
      if (e.expInit) {
        if (eff < e.expScale) {
          shiftRanges(e, e.expScale - eff);
          e.expScale = eff;
        }
        eff = e.expScale;
      } else {
        e.expInit = true;
        e.expScale = eff;
      }
      h.downscale(h.scale - eff);
      for (int i = 0; i < h.posLen; i++) {
        if (h.pos[i] != 0) {
          long k = (long) h.posOffset + i;
          e.posMin = Math.min(e.posMin, k);
          e.posMax = Math.max(e.posMax, k);
        }
      }
      for (int i = 0; i < h.negLen; i++) {
        if (h.neg[i] != 0) {
          long k = (long) h.negOffset + i;
          e.negMin = Math.min(e.negMin, k);
          e.negMax = Math.max(e.negMax, k);
        }
      }
      while (span(e.posMin, e.posMax) > maxBuckets || span(e.negMin, e.negMax) > maxBuckets) {
        shiftRanges(e, 1);
        e.expScale--;
        h.downscale(1);
      }
      double zt = h.zeroThreshold;
      if (e.layoutScale != e.expScale
          || e.layoutNegMin != e.negMin
          || e.layoutNegMax != e.negMax
          || e.layoutPosMin != e.posMin
          || e.layoutPosMax != e.posMax
          || e.layoutZeroBits != Double.doubleToRawLongBits(zt)
          || e.layoutZero == null) {
        buildLayout(e, zt);
      }
      int cap = (int) (span(e.posMin, e.posMax) + span(e.negMin, e.negMax) + 1);
      labels = rs.expLabels(cap);
      values = rs.expValues(cap);
      n = 0;
      long cum = 0;
      Labels[] neg = e.layoutNeg;
      for (int i = 0; i < neg.length; i++) {
        cum += bucket(h.neg, h.negOffset, h.negLen, e.negMax - i);
        if (neg[i] != null) {
          labels[n] = neg[i];
          values[n++] = cum;
        }
      }
      cum += h.zeroCount;
      Labels[] pos = e.layoutPos;
      int i = 0;
      // Positive buckets inside the zero bucket ([0, zt]) count there.
      while (i < pos.length
          && pos[i] == null
          && ExpHistogram.lowerBound(e.posMin + i + 1, e.expScale) <= zt) {
        cum += bucket(h.pos, h.posOffset, h.posLen, e.posMin + i);
        i++;
      }
      labels[n] = e.layoutZero;
      values[n++] = cum;
      for (; i < pos.length; i++) {
        cum += bucket(h.pos, h.posOffset, h.posLen, e.posMin + i);
        if (pos[i] != null) {
          labels[n] = pos[i];
          values[n++] = cum;
        }
      }
      if (h.hasSum) {
        e.sumEmitted = true;
      }
    }
    for (int i = 0; i < n; i++) {
      rs.emit(labels[i], (double) values[i], true);
    }
    rs.emit(e.inf, (double) h.count, true);
    if (h.hasSum) {
      rs.emit(e.sum, h.sum, true);
    }
    rs.emit(e.count, (double) h.count, true);
  }

  /** Computes the bucket series of the entry's current layout; caller holds the entry's lock. */
  private void buildLayout(SeriesEntry.Composite e, double zt) {
    int s = e.expScale;
    Labels[] neg = new Labels[(int) span(e.negMin, e.negMax)];
    for (int i = 0; i < neg.length; i++) {
      double le = -ExpHistogram.lowerBound(e.negMax - i, s);
      // Outside double range, or overlapping the zero bucket: counts flow into the next bound.
      neg[i] = Double.isInfinite(le) || le >= -zt ? null : resolver.bucketSeries(e, le);
    }
    Labels[] pos = new Labels[(int) span(e.posMin, e.posMax)];
    for (int i = 0; i < pos.length; i++) {
      double le = ExpHistogram.lowerBound(e.posMin + i + 1, s);
      pos[i] = Double.isInfinite(le) || le <= zt ? null : resolver.bucketSeries(e, le);
    }
    e.layoutNeg = neg;
    e.layoutPos = pos;
    e.layoutZero = resolver.bucketSeries(e, zt == 0 ? 0.0 : zt);
    e.layoutScale = s;
    e.layoutNegMin = e.negMin;
    e.layoutNegMax = e.negMax;
    e.layoutPosMin = e.posMin;
    e.layoutPosMax = e.posMax;
    e.layoutZeroBits = Double.doubleToRawLongBits(zt);
  }

  private static long span(long min, long max) {
    return max == Long.MIN_VALUE ? 0 : max - min + 1;
  }

  private static void shiftRanges(SeriesEntry.Composite e, int by) {
    if (e.posMax != Long.MIN_VALUE) {
      e.posMin >>= by;
      e.posMax >>= by;
    }
    if (e.negMax != Long.MIN_VALUE) {
      e.negMin >>= by;
      e.negMax >>= by;
    }
  }

  private static long bucket(long[] a, int off, int len, long k) {
    long i = k - off;
    return i >= 0 && i < len ? a[(int) i] : 0;
  }
}
