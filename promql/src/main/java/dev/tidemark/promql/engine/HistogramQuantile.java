package dev.tidemark.promql.engine;

import dev.tidemark.promql.engine.Evaluator.Scal;
import dev.tidemark.promql.engine.Evaluator.StepSeries;
import dev.tidemark.promql.engine.Evaluator.Vec;
import dev.tidemark.promql.parser.Call;
import dev.tidemark.tsdb.model.Labels;
import dev.tidemark.tsdb.model.PromText;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** {@code histogram_quantile} over classic {@code le} buckets, as Prometheus' quantile.go. */
final class HistogramQuantile {
  private HistogramQuantile() {}

  static Object eval(Evaluator ev, Call c) {
    Scal q = ev.evalScalar(c.args().get(0));
    Vec in = ev.evalVector(c.args().get(1));
    Map<Labels, List<StepSeries>> groups = new LinkedHashMap<>();
    Map<StepSeries, Double> bounds = new java.util.HashMap<>();
    for (StepSeries s : in.series()) {
      String le = s.labels.get("le");
      double ub;
      try {
        ub = GoFloats.parse(le == null ? "" : le);
      } catch (NumberFormatException e) {
        String m = s.labels.get(Labels.METRIC_NAME);
        ev.warn(
            "bucket label \"le\" is missing or has a malformed value of "
                + PromText.quote(le == null ? "" : le)
                + (m == null ? "" : " for metric name " + PromText.quote(m)),
            c.args().get(1).positionRange());
        continue;
      }
      bounds.put(s, ub);
      groups
          .computeIfAbsent(s.labels.toBuilder().remove("le").build(), k -> new ArrayList<>())
          .add(s);
    }
    for (double qq : q.v()) {
      if (Double.isNaN(qq) || qq < 0 || qq > 1) {
        ev.warn(
            "quantile value should be between 0 and 1, got " + PromText.formatFloat(qq),
            c.args().get(0).positionRange());
      }
    }
    List<StepSeries> out = new ArrayList<>();
    for (Map.Entry<Labels, List<StepSeries>> g : groups.entrySet()) {
      StepSeries r = new StepSeries(g.getKey(), ev.n);
      r.dropName = true;
      List<StepSeries> members = g.getValue();
      double[] ubs = new double[members.size()];
      double[] counts = new double[members.size()];
      for (int i = 0; i < ev.n; i++) {
        int k = 0;
        for (StepSeries s : members) {
          if (s.has[i]) {
            ubs[k] = bounds.get(s);
            counts[k++] = s.v[i];
          }
        }
        if (k == 0) {
          continue;
        }
        boolean[] forced = {false};
        r.set(i, bucketQuantile(q.v()[i], Arrays.copyOf(ubs, k), Arrays.copyOf(counts, k), forced));
        if (forced[0]) {
          String m = g.getKey().get(Labels.METRIC_NAME);
          ev.info(
              "input to histogram_quantile needed to be fixed for monotonicity (see https://prometheus.io/docs/prometheus/latest/querying/functions/#histogram_quantile)"
                  + (m == null ? "" : " for metric name " + PromText.quote(m)),
              c.args().get(1).positionRange());
        }
      }
      if (r.count() > 0) {
        out.add(r);
      }
    }
    ev.done(in);
    return ev.track(new Vec(out));
  }

  static double bucketQuantile(double q, double[] ub, double[] cnt, boolean[] forced) {
    if (Double.isNaN(q)) {
      return Double.NaN;
    }
    if (q < 0) {
      return Double.NEGATIVE_INFINITY;
    }
    if (q > 1) {
      return Double.POSITIVE_INFINITY;
    }
    int n = ub.length;
    Integer[] idx = new Integer[n];
    for (int i = 0; i < n; i++) {
      idx[i] = i;
    }
    Arrays.sort(idx, (a, b) -> Double.compare(ub[a], ub[b]));
    double[] u = new double[n];
    double[] c = new double[n];
    for (int i = 0; i < n; i++) {
      u[i] = ub[idx[i]];
      c[i] = cnt[idx[i]];
    }
    if (u[n - 1] != Double.POSITIVE_INFINITY) {
      return Double.NaN;
    }
    // coalesce equal bounds
    int m = 0;
    for (int i = 1; i < n; i++) {
      if (u[i] == u[m]) {
        c[m] += c[i];
      } else {
        m++;
        u[m] = u[i];
        c[m] = c[i];
      }
    }
    n = m + 1;
    double prev = c[0];
    for (int i = 1; i < n; i++) {
      double curr = c[i];
      if (curr == prev) {
        continue;
      }
      if (almostEqual(prev, curr, 1e-12)) {
        c[i] = prev;
        continue;
      }
      if (curr < prev) {
        c[i] = prev;
        forced[0] = true;
        continue;
      }
      prev = curr;
    }
    if (n < 2) {
      return Double.NaN;
    }
    double observations = c[n - 1];
    if (observations == 0) {
      return Double.NaN;
    }
    double rank = q * observations;
    int b = 0;
    while (b < n - 1 && !(c[b] >= rank)) {
      b++;
    }
    if (b == n - 1) {
      return u[n - 2];
    }
    if (b == 0 && u[0] <= 0) {
      return u[0];
    }
    double bucketStart = 0;
    double bucketEnd = u[b];
    double count = c[b];
    if (b > 0) {
      bucketStart = u[b - 1];
      count -= c[b - 1];
      rank -= c[b - 1];
    }
    return bucketStart + (bucketEnd - bucketStart) * (rank / count);
  }

  static boolean almostEqual(double a, double b, double eps) {
    if (a == b) {
      return true;
    }
    double absSum = Math.abs(a) + Math.abs(b);
    double diff = Math.abs(a - b);
    if (a == 0 || b == 0 || absSum < Double.MIN_NORMAL) {
      return diff < eps * Double.MIN_NORMAL;
    }
    return diff / Math.min(absSum, Double.MAX_VALUE) < eps;
  }
}
