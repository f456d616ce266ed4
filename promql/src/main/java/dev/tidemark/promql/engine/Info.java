package dev.tidemark.promql.engine;

import dev.tidemark.promql.engine.Evaluator.StepSeries;
import dev.tidemark.promql.engine.Evaluator.Vec;
import dev.tidemark.promql.parser.AggregateExpr;
import dev.tidemark.promql.parser.AtModifier;
import dev.tidemark.promql.parser.BinaryExpr;
import dev.tidemark.promql.parser.Call;
import dev.tidemark.promql.parser.Expr;
import dev.tidemark.promql.parser.MatrixSelector;
import dev.tidemark.promql.parser.ParenExpr;
import dev.tidemark.promql.parser.PositionRange;
import dev.tidemark.promql.parser.SubqueryExpr;
import dev.tidemark.promql.parser.UnaryExpr;
import dev.tidemark.promql.parser.VectorSelector;
import dev.tidemark.tsdb.model.Labels;
import dev.tidemark.tsdb.model.PromText;
import dev.tidemark.tsdb.query.LabelMatcher;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * The experimental {@code info(v [, {data-label selector}])} function, as Prometheus 3.14's {@code
 * promql/info.go} defines it: every series of {@code v} gains the labels of the info series (by
 * default {@code target_info}) that share its identifying labels ({@code instance}, {@code job}).
 *
 * <p>Design: the info series are selected once, with the {@code __name__} matchers of the second
 * argument (or {@code target_info}; only negative ones get {@code .+_info} added), its other
 * matchers, and only values of the identifying labels that the (non-info) input series carry. They
 * are read like an instant selector at every step, shifted by the {@code @} and {@code offset} that
 * govern the first selector of {@code v}, keeping each sample's own timestamp: per step and per
 * identifying signature the newest info sample wins, and two equally new ones are an error. Input
 * series that are themselves info series (their name matches the name matchers) pass unchanged.
 */
final class Info {

  private static final String TARGET_INFO = "target_info";
  private static final List<String> IDENTIFYING = List.of("instance", "job");

  private Info() {}

  static Object eval(Evaluator ev, Call c) {
    List<Expr> args = c.args();
    Shift shift = selectTimeAndOffset(ev, args.get(0));
    Vec base = ev.evalVector(args.get(0));

    // Data label matchers by label name; __name__ matchers choose the info metrics.
    Map<String, List<LabelMatcher>> dataMatchers = new LinkedHashMap<>();
    List<LabelMatcher> nameMatchers = new ArrayList<>();
    if (args.size() > 1) {
      for (LabelMatcher m : ((VectorSelector) args.get(1)).matchers()) {
        if (m.name().equals(Labels.METRIC_NAME)) {
          nameMatchers.add(m);
        } else {
          dataMatchers.computeIfAbsent(m.name(), k -> new ArrayList<>()).add(m);
        }
      }
    } else {
      nameMatchers.add(LabelMatcher.equal(Labels.METRIC_NAME, TARGET_INFO));
    }
    List<LabelMatcher> effectiveName = effectiveNameMatchers(nameMatchers);

    Set<StepSeries> ignored = new HashSet<>();
    Map<String, Set<String>> idValues = new HashMap<>();
    for (StepSeries s : base.series()) {
      String name = s.labels.get(Labels.METRIC_NAME);
      if (effectiveName.stream().allMatch(m -> m.matches(name))) {
        ignored.add(s);
        continue;
      }
      for (String l : IDENTIFYING) {
        String v = s.labels.get(l);
        if (v != null && !v.isEmpty()) {
          idValues.computeIfAbsent(l, k -> new HashSet<>()).add(v);
        }
      }
    }

    Vec info = new Vec(List.of());
    if (!idValues.isEmpty()) {
      List<LabelMatcher> ms = new ArrayList<>(effectiveName);
      dataMatchers.values().forEach(ms::addAll);
      VectorSelector select =
          new VectorSelector(
              "", ms, Duration.ofMillis(shift.offsetMillis()), shift.at(), new PositionRange(0, 0));
      // Values are the samples' own timestamps, in seconds.
      List<StepSeries> found = new ArrayList<>();
      ev.selectVector(
          select,
          true,
          s -> {
            if (hasIdentifyingValues(s.labels, idValues)) {
              found.add(s);
            } else {
              ev.release(s.count());
            }
          });
      info = new Vec(found);
    }
    Vec out = combine(ev, base, info, ignored, dataMatchers);
    ev.done(base);
    ev.done(info);
    return ev.track(out);
  }

  /** Only info series whose identifying labels take values some input series has. */
  private static boolean hasIdentifyingValues(Labels l, Map<String, Set<String>> idValues) {
    for (Map.Entry<String, Set<String>> e : idValues.entrySet()) {
      String v = l.get(e.getKey());
      if (v == null || !e.getValue().contains(v)) {
        return false;
      }
    }
    return true;
  }

  /**
   * The name matchers that choose info series: as given when one is positive, with {@code .+_info}
   * first when all are negative, {@code target_info} when there are none.
   */
  static List<LabelMatcher> effectiveNameMatchers(List<LabelMatcher> ms) {
    for (LabelMatcher m : ms) {
      if (m.op() == LabelMatcher.Op.EQUAL || m.op() == LabelMatcher.Op.REGEX) {
        return ms;
      }
    }
    if (!ms.isEmpty()) {
      List<LabelMatcher> out = new ArrayList<>();
      out.add(LabelMatcher.regex(Labels.METRIC_NAME, ".+_info"));
      out.addAll(ms);
      return out;
    }
    return List.of(LabelMatcher.equal(Labels.METRIC_NAME, TARGET_INFO));
  }

  /** Where the info series are read: a fixed {@code @} time (or null) and an offset. */
  private record Shift(AtModifier at, long offsetMillis) {}

  /**
   * The {@code @} and offset that govern the first selector of {@code e} in pre-order: the
   * selector's own {@code @}, else that of the nearest enclosing subquery, with the offsets of the
   * selector and of the subqueries passed on the way.
   */
  private static Shift selectTimeAndOffset(Evaluator ev, Expr e) {
    List<SubqueryExpr> path = new ArrayList<>();
    VectorSelector vs = firstSelector(e, path);
    if (vs == null) {
      return new Shift(null, 0);
    }
    AtModifier at = vs.at();
    long offset = vs.offset().toMillis();
    for (int i = path.size() - 1; at == null && i >= 0; i--) {
      offset += path.get(i).offset().toMillis();
      at = path.get(i).at();
    }
    return new Shift(at == null ? null : AtModifier.timestamp(ev.atTime(at)), offset);
  }

  private static VectorSelector firstSelector(Expr e, List<SubqueryExpr> path) {
    if (e instanceof VectorSelector vs) {
      return vs;
    }
    List<Expr> children = new ArrayList<>();
    boolean sub = false;
    if (e instanceof MatrixSelector ms) {
      children.add(ms.selector());
    } else if (e instanceof SubqueryExpr sq) {
      children.add(sq.expr());
      path.add(sq);
      sub = true;
    } else if (e instanceof ParenExpr p) {
      children.add(p.expr());
    } else if (e instanceof UnaryExpr u) {
      children.add(u.expr());
    } else if (e instanceof BinaryExpr b) {
      children.add(b.lhs());
      children.add(b.rhs());
    } else if (e instanceof AggregateExpr a) {
      children.add(a.expr());
      if (a.param() != null) {
        children.add(a.param());
      }
    } else if (e instanceof Call c) {
      children.addAll(c.args());
    }
    for (Expr child : children) {
      VectorSelector found = firstSelector(child, path);
      if (found != null) {
        return found;
      }
    }
    if (sub) {
      path.remove(path.size() - 1);
    }
    return null;
  }

  /** The identifying signature of a series for the info metric {@code infoName}. */
  private static Labels signature(String infoName, Labels l) {
    Labels.Builder b = Labels.builder();
    b.add(Labels.METRIC_NAME, infoName);
    for (String id : IDENTIFYING) {
      String v = l.get(id);
      if (v != null) {
        b.add(id, v);
      }
    }
    return b.build();
  }

  private static Vec combine(
      Evaluator ev,
      Vec base,
      Vec info,
      Set<StepSeries> ignored,
      Map<String, List<LabelMatcher>> dataMatchers) {
    int n = ev.n;
    Set<String> infoNames = new TreeSet<>();
    List<Labels> infoSigs = new ArrayList<>();
    for (StepSeries s : info.series()) {
      String name = s.labels.get(Labels.METRIC_NAME);
      infoNames.add(name);
      infoSigs.add(signature(name, s.labels));
    }
    List<Map<String, Labels>> baseSigs = new ArrayList<>();
    for (StepSeries s : base.series()) {
      Map<String, Labels> sigs = new LinkedHashMap<>();
      for (String name : infoNames) {
        sigs.put(name, signature(name, s.labels));
      }
      baseSigs.add(sigs);
    }
    boolean allMatchEmpty =
        dataMatchers.values().stream().flatMap(List::stream).allMatch(LabelMatcher::matchesEmpty);

    Map<Labels, StepSeries> out = new LinkedHashMap<>();
    for (int i = 0; i < n; i++) {
      ev.tick();
      Map<Labels, Integer> newest = new HashMap<>();
      for (int k = 0; k < info.series().size(); k++) {
        StepSeries s = info.series().get(k);
        if (!s.has[i]) {
          continue;
        }
        Labels sig = infoSigs.get(k);
        Integer existing = newest.get(sig);
        if (existing == null) {
          newest.put(sig, k);
          continue;
        }
        long existingT = Math.round(info.series().get(existing).v[i] * 1000);
        long t = Math.round(s.v[i] * 1000);
        if (t > existingT) {
          newest.put(sig, k);
        } else if (t == existingT) {
          throw QueryException.execution(
              "found duplicate series for info metric: existing "
                  + PromText.formatLabels(info.series().get(existing).labels)
                  + " @ "
                  + existingT
                  + ", new "
                  + PromText.formatLabels(s.labels)
                  + " @ "
                  + t);
        }
      }
      for (int b = 0; b < base.series().size(); b++) {
        StepSeries bs = base.series().get(b);
        if (!bs.has[i]) {
          continue;
        }
        Labels result;
        if (ignored.contains(bs)) {
          result = bs.labels;
        } else {
          Map<String, String> added = new HashMap<>();
          boolean seen = false;
          for (Labels sig : baseSigs.get(b).values()) {
            Integer k = newest.get(sig);
            if (k == null) {
              continue;
            }
            seen = true;
            Labels il = info.series().get(k).labels;
            for (int j = 0; j < il.size(); j++) {
              String name = il.name(j);
              if (name.equals(Labels.METRIC_NAME)
                  || (!dataMatchers.isEmpty() && !dataMatchers.containsKey(name))) {
                continue;
              }
              String prev = added.get(name);
              if (prev != null && !prev.isEmpty() && !prev.equals(il.value(j))) {
                throw QueryException.execution("conflicting label: " + name);
              }
              if (bs.labels.get(name) != null) {
                continue;
              }
              added.put(name, il.value(j));
            }
          }
          if (!seen && !allMatchEmpty) {
            continue;
          }
          Labels.Builder lb = bs.labels.toBuilder();
          added.forEach(lb::set);
          result = lb.build();
        }
        StepSeries o = out.get(result);
        if (o == null) {
          o = new StepSeries(result, n);
          o.dropName = bs.dropName;
          out.put(result, o);
        } else if (o.has[i]) {
          throw QueryException.execution("vector cannot contain metrics with the same labelset");
        }
        o.set(i, bs.v[i]);
      }
    }
    return new Vec(new ArrayList<>(out.values()));
  }
}
