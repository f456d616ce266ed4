package dev.tidemark.promql.engine;

import dev.tidemark.promql.engine.Evaluator.StepSeries;
import dev.tidemark.promql.parser.AggregateOp;
import dev.tidemark.tsdb.model.Labels;
import java.util.ArrayList;
import java.util.List;

/**
 * An aggregation that folds its input series into its groups as they arrive ({@link
 * Evaluator#stream}), so that {@code sum(rate(x[5m]))} or {@code count by (job) (x)} over a wide
 * selection holds a few accumulators per group and step, not every series of the selection.
 *
 * <p>For {@link #folds(AggregateOp) the operators it takes} (the ones whose result at a step can be
 * built one member at a time: {@code sum}, {@code avg}, {@code count}, {@code group}, {@code min},
 * {@code max}, {@code stddev}, {@code stdvar}) each group keeps per step exactly the running state
 * of the step-by-step reduction over the group's present members (Prometheus' aggregation loop),
 * and members arrive in the input's order, so every result has the bits the step-by-step reduction
 * gives ({@code AggregationFoldTest}). Not thread-safe: one evaluator thread feeds it.
 */
final class AggregationFold implements Evaluator.SeriesSink {
  private final Evaluator ev;
  private final AggregateOp op;
  private final int n;
  private final Aggregations.Grouper grouper;
  private final List<Group> groups = new ArrayList<>();

  AggregationFold(Evaluator ev, AggregateOp op, Aggregations.Grouper grouper) {
    if (!folds(op)) {
      throw new IllegalArgumentException(op + " needs all of a group's members at once");
    }
    this.ev = ev;
    this.op = op;
    this.n = ev.n;
    this.grouper = grouper;
  }

  /** Whether {@code op}'s result can be built one member at a time. */
  static boolean folds(AggregateOp op) {
    return switch (op) {
      case SUM, AVG, COUNT, GROUP, MIN, MAX, STDDEV, STDVAR -> true;
      default -> false;
    };
  }

  @Override
  public void accept(StepSeries s) {
    ev.tick();
    int g = grouper.groupOf(s.labels);
    if (g == groups.size()) {
      groups.add(new Group(grouper.labels(g), n, op));
    }
    groups.get(g).add(s);
  }

  /** The groups with a value at some step, in the order their first member arrived. */
  List<StepSeries> result() {
    List<StepSeries> out = new ArrayList<>(groups.size());
    for (Group g : groups) {
      StepSeries r = g.finish();
      if (r.count() > 0) {
        out.add(r);
      }
    }
    return out;
  }

  /**
   * One group's running state per step. {@code r.v} is the running sum ({@code sum}, {@code avg}
   * before it turns incremental), count, extreme or Welford sum of squares; {@code c} is the Kahan
   * compensation, {@code mean} and {@code count} what {@code avg} and {@code stddev} keep besides.
   */
  private static final class Group {
    final AggregateOp op;
    final StepSeries r;
    final double[] c;
    final double[] mean;
    final double[] count;
    final boolean[] incremental;

    Group(Labels labels, int n, AggregateOp op) {
      this.op = op;
      this.r = new StepSeries(labels, n);
      boolean avg = op == AggregateOp.AVG;
      boolean welford = op == AggregateOp.STDDEV || op == AggregateOp.STDVAR;
      this.c = op == AggregateOp.SUM || avg ? new double[n] : null;
      this.mean = avg || welford ? new double[n] : null;
      this.count = avg || welford ? new double[n] : null;
      this.incremental = avg ? new boolean[n] : null;
    }

    void add(StepSeries s) {
      r.dropName |= s.dropName;
      double[] v = r.v;
      boolean[] has = r.has;
      double[] in = s.v;
      boolean[] present = s.has;
      for (int i = 0; i < in.length; i++) {
        if (!present[i]) {
          continue;
        }
        double f = in[i];
        if (!has[i]) {
          has[i] = true;
          first(i, f);
          continue;
        }
        switch (op) {
          case SUM -> v[i] = Functions.kahanInc(f, v[i], c, i);
          case AVG -> avg(i, f);
          case COUNT -> v[i] += 1;
          case GROUP -> {}
          case MIN -> {
            if (v[i] > f || Double.isNaN(v[i])) {
              v[i] = f;
            }
          }
          case MAX -> {
            if (v[i] < f || Double.isNaN(v[i])) {
              v[i] = f;
            }
          }
          case STDDEV, STDVAR -> {
            double cnt = ++count[i];
            double delta = f - mean[i];
            mean[i] += delta / cnt;
            v[i] += delta * (f - mean[i]);
          }
          default -> throw new IllegalStateException(op.toString());
        }
      }
    }

    private void first(int i, double f) {
      double[] v = r.v;
      switch (op) {
        case SUM, MIN, MAX -> v[i] = f;
        case COUNT, GROUP -> v[i] = 1;
        case AVG -> {
          v[i] = f;
          mean[i] = f;
          count[i] = 1;
        }
        case STDDEV, STDVAR -> {
          mean[i] = f;
          v[i] = (Double.isNaN(f) || Double.isInfinite(f)) ? Double.NaN : 0;
          count[i] = 1;
        }
        default -> throw new IllegalStateException(op.toString());
      }
    }

    /** One more member of {@code avg} at step {@code i}: the reduction's loop body. */
    private void avg(int i, double f) {
      double[] sum = r.v;
      double cnt = ++count[i];
      if (!incremental[i]) {
        double kept = c[i];
        double next = Functions.kahanInc(f, sum[i], c, i);
        if (!Double.isInfinite(next)) {
          sum[i] = next;
          return;
        }
        c[i] = kept;
        incremental[i] = true;
        mean[i] = sum[i] / (cnt - 1);
        c[i] /= cnt - 1;
      }
      double q = (cnt - 1) / cnt;
      c[i] = q * c[i];
      mean[i] = Functions.kahanInc(f / cnt, q * mean[i], c, i);
    }

    StepSeries finish() {
      double[] v = r.v;
      boolean[] has = r.has;
      for (int i = 0; i < v.length; i++) {
        if (!has[i]) {
          continue;
        }
        switch (op) {
          case SUM -> v[i] += c[i];
          case AVG -> v[i] = incremental[i] ? mean[i] + c[i] : v[i] / count[i] + c[i] / count[i];
          case STDDEV -> v[i] = Math.sqrt(v[i] / count[i]);
          case STDVAR -> v[i] = v[i] / count[i];
          default -> {}
        }
      }
      return r;
    }
  }
}
