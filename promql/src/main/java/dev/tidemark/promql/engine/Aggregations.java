package dev.tidemark.promql.engine;

import com.dynatrace.hash4j.hashing.Hasher64;
import com.dynatrace.hash4j.hashing.Hashing;
import dev.tidemark.promql.engine.Evaluator.Scal;
import dev.tidemark.promql.engine.Evaluator.StepSeries;
import dev.tidemark.promql.engine.Evaluator.Str;
import dev.tidemark.promql.engine.Evaluator.Vec;
import dev.tidemark.promql.parser.AggregateExpr;
import dev.tidemark.promql.parser.AggregateOp;
import dev.tidemark.tsdb.model.Labels;
import dev.tidemark.tsdb.model.PromText;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Aggregation operators. Groups depend on labels only, so each input series is assigned to its
 * group once; then every step aggregates the present members of each group.
 */
final class Aggregations {
  private Aggregations() {}

  static Labels groupLabels(Labels l, List<String> grouping, boolean without) {
    Labels.Builder b = Labels.builder();
    if (without) {
      Set<String> drop = new HashSet<>(grouping);
      drop.add(Labels.METRIC_NAME);
      for (int i = 0; i < l.size(); i++) {
        if (!drop.contains(l.name(i))) {
          b.add(l.name(i), l.value(i));
        }
      }
    } else {
      for (String g : new HashSet<>(grouping)) {
        String v = l.get(g);
        if (v != null) {
          b.add(g, v);
        }
      }
    }
    return b.build();
  }

  /**
   * Assigns series to the groups of {@code by}/{@code without}, numbering groups in the order their
   * first member is seen. With {@code by}, series with the same values of the grouping labels share
   * a group: its labels are built once per group, not once per series.
   */
  static final class Grouper {
    private final List<String> grouping;
    private final boolean without;
    private final String[] byNames;
    private final Map<Labels, Integer> index = new HashMap<>();
    private final Map<List<String>, Integer> byValues = new HashMap<>();

    /** The groups' labels, by group number. */
    final List<Labels> labels = new ArrayList<>();

    Grouper(List<String> grouping, boolean without) {
      this.grouping = grouping;
      this.without = without;
      this.byNames = without ? null : new java.util.TreeSet<>(grouping).toArray(new String[0]);
    }

    /** The group of a series with labels {@code l}: a number up to {@code labels.size()}. */
    int groupOf(Labels l) {
      List<String> key = null;
      if (byNames != null) {
        String[] values = new String[byNames.length];
        for (int k = 0; k < values.length; k++) {
          values[k] = l.get(byNames[k]);
        }
        key = Arrays.asList(values);
        Integer known = byValues.get(key);
        if (known != null) {
          return known;
        }
      }
      Labels g = groupLabels(l, grouping, without);
      Integer gi = index.get(g);
      if (gi == null) {
        gi = labels.size();
        index.put(g, gi);
        labels.add(g);
      }
      if (key != null) {
        byValues.put(key, gi);
      }
      return gi;
    }

    Labels labels(int group) {
      return labels.get(group);
    }
  }

  static Object aggregate(Evaluator ev, AggregateExpr a) {
    AggregateOp op = a.op();
    Scal param = null;
    String label = null;
    if (op == AggregateOp.COUNT_VALUES) {
      label = ((Str) ev.eval(a.param())).s();
      if (!Functions.validLabelName(label)) {
        throw QueryException.execution("invalid label name " + PromText.quote(label));
      }
    } else if (op.hasParam()) {
      param = ev.evalScalar(a.param());
    }
    Grouper grouper = new Grouper(a.grouping(), a.without());
    if (AggregationFold.folds(op)) {
      AggregationFold fold = new AggregationFold(ev, op, grouper);
      long counted = ev.stream(a.expr(), fold);
      ev.release(counted);
      return ev.track(new Vec(fold.result()));
    }
    Vec in = ev.evalVector(a.expr());
    int n = ev.n;
    List<StepSeries> input = in.series();
    int[] groupOf = new int[input.size()];
    for (int s = 0; s < input.size(); s++) {
      groupOf[s] = grouper.groupOf(input.get(s).labels);
    }
    List<Labels> groupLabels = grouper.labels;
    int groups = groupLabels.size();
    List<List<Integer>> members = new ArrayList<>();
    for (int g = 0; g < groups; g++) {
      members.add(new ArrayList<>());
    }
    for (int s = 0; s < input.size(); s++) {
      members.get(groupOf[s]).add(s);
    }
    Object result;
    switch (op) {
      case TOPK, BOTTOMK, LIMITK, LIMIT_RATIO -> result = selectK(ev, a, param, input, members);
      case COUNT_VALUES -> result = countValues(ev, label, input, groupLabels, groupOf);
      case QUANTILE -> {
        boolean nan = false;
        double max = Double.NEGATIVE_INFINITY;
        double min = Double.POSITIVE_INFINITY;
        for (double q : param.v()) {
          nan |= Double.isNaN(q);
          max = Math.max(max, q);
          min = Math.min(min, q);
        }
        if (nan) {
          ev.warn("quantile value should be between 0 and 1, got NaN", a.param().positionRange());
        }
        if (!nan && max > 1) {
          ev.warn(
              "quantile value should be between 0 and 1, got " + PromText.formatFloat(max),
              a.param().positionRange());
        }
        if (!nan && min < 0) {
          ev.warn(
              "quantile value should be between 0 and 1, got " + PromText.formatFloat(min),
              a.param().positionRange());
        }
        List<StepSeries> out = new ArrayList<>();
        double[] buf = new double[input.size()];
        for (int g = 0; g < groups; g++) {
          StepSeries r = new StepSeries(groupLabels.get(g), n);
          List<Integer> ms = members.get(g);
          for (int m : ms) {
            r.dropName |= input.get(m).dropName;
          }
          for (int i = 0; i < n; i++) {
            ev.tick();
            int cnt = 0;
            for (int m : ms) {
              StepSeries s = input.get(m);
              if (s.has[i]) {
                buf[cnt++] = s.v[i];
              }
            }
            if (cnt == 0) {
              continue;
            }
            r.set(i, Functions.quantile(param.v()[i], Arrays.copyOf(buf, cnt)));
          }
          if (r.count() > 0) {
            out.add(r);
          }
        }
        result = new Vec(out);
      }
      default -> throw new IllegalStateException(op + " is folded (AggregationFold)");
    }
    ev.done(in);
    return ev.track((Vec) result);
  }

  static Vec countValues(
      Evaluator ev, String label, List<StepSeries> input, List<Labels> groupLabels, int[] groupOf) {
    Map<Labels, StepSeries> out = new LinkedHashMap<>();
    for (int i = 0; i < ev.n; i++) {
      for (int s = 0; s < input.size(); s++) {
        StepSeries in = input.get(s);
        if (!in.has[i]) {
          continue;
        }
        Labels l =
            groupLabels.get(groupOf[s]).toBuilder()
                .set(label, PromText.formatPlain(in.v[i]))
                .build();
        StepSeries r = out.computeIfAbsent(l, k -> new StepSeries(k, ev.n));
        r.set(i, (r.has[i] ? r.v[i] : 0) + 1);
      }
    }
    return new Vec(new ArrayList<>(out.values()));
  }

  static Vec selectK(
      Evaluator ev,
      AggregateExpr a,
      Scal param,
      List<StepSeries> input,
      List<List<Integer>> members) {
    AggregateOp op = a.op();
    int n = ev.n;
    double max = Double.NEGATIVE_INFINITY;
    double min = Double.POSITIVE_INFINITY;
    boolean nan = false;
    for (double p : param.v()) {
      max = Math.max(max, p);
      min = Math.min(min, p);
      nan |= Double.isNaN(p);
    }
    if (op == AggregateOp.LIMIT_RATIO) {
      if (max == 0 && min == 0) {
        return new Vec(List.of());
      }
      if (nan) {
        throw QueryException.execution("Ratio value is NaN");
      }
      if (max > 1.0) {
        ev.warn(
            "ratio value should be between -1 and 1, got "
                + PromText.formatFloat(max)
                + ", capping to 1",
            a.param().positionRange());
      }
      if (min < -1.0) {
        ev.warn(
            "ratio value should be between -1 and 1, got "
                + PromText.formatFloat(min)
                + ", capping to -1",
            a.param().positionRange());
      }
    } else {
      if (max < 1) {
        return new Vec(List.of());
      }
      if (nan) {
        throw QueryException.execution("Parameter value is NaN");
      }
      if (min <= -9.223372036854775808E18) {
        throw QueryException.execution(
            "Scalar value " + PromText.formatFloat(min) + " underflows int64");
      }
      if (max >= 9.223372036854775807E18) {
        throw QueryException.execution(
            "Scalar value " + PromText.formatFloat(max) + " overflows int64");
      }
    }
    List<StepSeries> out = new ArrayList<>();
    Map<Integer, StepSeries> outOf = new HashMap<>();
    // rank at the first step, for the order of an instant result
    Map<StepSeries, Integer> rank0 = new HashMap<>();
    boolean bottom = op == AggregateOp.BOTTOMK;
    for (int i = 0; i < n; i++) {
      ev.tick();
      double p = param.v()[i];
      for (List<Integer> ms : members) {
        List<Integer> present = new ArrayList<>();
        for (int m : ms) {
          if (input.get(m).has[i]) {
            present.add(m);
          }
        }
        List<Integer> chosen;
        if (op == AggregateOp.LIMIT_RATIO) {
          double r = Math.max(-1, Math.min(1, p));
          chosen = new ArrayList<>();
          for (int m : present) {
            double off = ratioOffset(input.get(m).labels);
            if (r >= 0 ? off < r : off >= 1 + r) {
              chosen.add(m);
            }
          }
        } else {
          long k = Math.min((long) p, (long) input.size());
          if (k < 1) {
            continue;
          }
          if (op == AggregateOp.LIMITK) {
            chosen = present.subList(0, (int) Math.min(k, present.size()));
          } else {
            final int step = i;
            List<Integer> sorted = new ArrayList<>(present);
            sorted.sort(
                (x, y) -> {
                  double vx = input.get(x).v[step];
                  double vy = input.get(y).v[step];
                  boolean nx = Double.isNaN(vx);
                  boolean ny = Double.isNaN(vy);
                  if (nx || ny) {
                    return Boolean.compare(nx, ny);
                  }
                  return bottom ? Double.compare(vx, vy) : Double.compare(vy, vx);
                });
            chosen = sorted.subList(0, (int) Math.min(k, sorted.size()));
          }
        }
        for (int idx = 0; idx < chosen.size(); idx++) {
          int m = chosen.get(idx);
          StepSeries src = input.get(m);
          StepSeries r = outOf.get(m);
          if (r == null) {
            r = new StepSeries(src.labels, n);
            r.dropName = src.dropName;
            outOf.put(m, r);
            out.add(r);
          }
          r.set(i, src.v[i]);
          if (i == 0) {
            rank0.put(r, idx);
          }
        }
      }
    }
    if (n == 1) {
      // Instant result: groups in order of appearance, each by rank.
      List<StepSeries> ordered = new ArrayList<>();
      for (List<Integer> ms : members) {
        List<StepSeries> g = new ArrayList<>();
        for (int m : ms) {
          StepSeries r = outOf.get(m);
          if (r != null) {
            g.add(r);
          }
        }
        g.sort((x, y) -> Integer.compare(rank0.getOrDefault(x, 0), rank0.getOrDefault(y, 0)));
        ordered.addAll(g);
      }
      return new Vec(ordered);
    }
    return new Vec(out);
  }

  /**
   * Where a series falls in [0, 1] for limit_ratio: Prometheus' {@code Hash(labels) / MaxUint64},
   * its hash being XXH64 (seed 0) over {@code name 0xFF value 0xFF ...}, i.e. {@link
   * Labels#canonicalBytes()}.
   */
  static double ratioOffset(Labels l) {
    return unsignedToDouble(XXH64.hashBytesToLong(l.canonicalBytes())) / 18446744073709551615.0;
  }

  private static final Hasher64 XXH64 = Hashing.xxh64();

  /** An unsigned 64-bit value as the nearest double, as Go's {@code float64(uint64)}. */
  static double unsignedToDouble(long h) {
    return h >= 0 ? (double) h : ((double) ((h >>> 1) | (h & 1))) * 2.0;
  }
}
