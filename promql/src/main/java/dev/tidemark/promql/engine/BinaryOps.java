package dev.tidemark.promql.engine;

import dev.tidemark.promql.engine.Evaluator.Scal;
import dev.tidemark.promql.engine.Evaluator.StepSeries;
import dev.tidemark.promql.engine.Evaluator.Vec;
import dev.tidemark.promql.parser.BinaryExpr;
import dev.tidemark.promql.parser.BinaryOp;
import dev.tidemark.promql.parser.VectorMatching;
import dev.tidemark.promql.parser.VectorMatching.Cardinality;
import dev.tidemark.tsdb.model.Labels;
import dev.tidemark.tsdb.model.PromText;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** Binary operators: scalar/scalar, vector/scalar and vector/vector with matching. */
final class BinaryOps {
  private BinaryOps() {}

  static Object binary(Evaluator ev, BinaryExpr b) {
    Object l = ev.eval(b.lhs());
    Object r = ev.eval(b.rhs());
    BinaryOp op = b.op();
    int n = ev.n;
    if (l instanceof Scal ls && r instanceof Scal rs) {
      double[] out = new double[n];
      for (int i = 0; i < n; i++) {
        out[i] = scalarOp(op, ls.v()[i], rs.v()[i]);
      }
      return new Scal(out);
    }
    if (l instanceof Vec lv && r instanceof Scal rs) {
      return vectorScalar(ev, op, lv, rs.v(), false, b.returnBool());
    }
    if (l instanceof Scal ls && r instanceof Vec rv) {
      return vectorScalar(ev, op, rv, ls.v(), true, b.returnBool());
    }
    Vec lv = (Vec) l;
    Vec rv = (Vec) r;
    VectorMatching m = b.matching();
    if (m == null) {
      m =
          new VectorMatching(
              op.isSetOperator() ? Cardinality.MANY_TO_MANY : Cardinality.ONE_TO_ONE,
              List.of(),
              false,
              List.of());
    }
    Object res;
    if (op.isSetOperator()) {
      res = setOp(ev, op, lv, rv, m);
    } else {
      res = vectorVector(ev, op, lv, rv, m, b.returnBool());
    }
    ev.done(lv);
    ev.done(rv);
    return ev.track((Vec) res);
  }

  static double scalarOp(BinaryOp op, double a, double b) {
    return switch (op) {
      case ADD -> a + b;
      case SUB -> a - b;
      case MUL -> a * b;
      case DIV -> a / b;
      case POW -> Math.pow(a, b);
      case MOD -> goMod(a, b);
      case ATAN2 -> Math.atan2(a, b);
      case EQLC -> a == b ? 1 : 0;
      case NEQ -> a != b ? 1 : 0;
      case GTR -> a > b ? 1 : 0;
      case LSS -> a < b ? 1 : 0;
      case GTE -> a >= b ? 1 : 0;
      case LTE -> a <= b ? 1 : 0;
      default ->
          throw QueryException.execution(
              "operator \"" + op.symbol() + "\" not allowed for Scalar operations");
    };
  }

  /** Go's math.Mod: result has the sign of {@code a}; Java's % agrees. */
  static double goMod(double a, double b) {
    return a % b;
  }

  static boolean compare(BinaryOp op, double a, double b) {
    return switch (op) {
      case EQLC -> a == b;
      case NEQ -> a != b;
      case GTR -> a > b;
      case LSS -> a < b;
      case GTE -> a >= b;
      case LTE -> a <= b;
      default -> throw new IllegalStateException();
    };
  }

  static Vec vectorScalar(
      Evaluator ev, BinaryOp op, Vec v, double[] s, boolean swap, boolean bool) {
    int n = ev.n;
    for (StepSeries ss : v.series()) {
      for (int i = 0; i < n; i++) {
        if (!ss.has[i]) {
          continue;
        }
        double a = swap ? s[i] : ss.v[i];
        double b = swap ? ss.v[i] : s[i];
        if (op.isComparison()) {
          boolean keep = compare(op, a, b);
          if (bool) {
            ss.v[i] = keep ? 1 : 0;
          } else if (!keep) {
            ss.has[i] = false;
          }
          // value stays the vector's
        } else {
          ss.v[i] = scalarOp(op, a, b);
        }
      }
      if (!op.isComparison() || bool) {
        ss.dropName = true;
      }
    }
    List<StepSeries> out = new ArrayList<>();
    for (StepSeries ss : v.series()) {
      if (ss.count() > 0) {
        out.add(ss);
      }
    }
    return new Vec(out);
  }

  /**
   * The matching signature of a series: the {@code on} labels, or all but the ignored and the name.
   */
  static Labels signature(Labels l, VectorMatching m) {
    Labels.Builder b = Labels.builder();
    if (m.on()) {
      for (String name : new HashSet<>(m.matchingLabels())) {
        String v = l.get(name);
        if (v != null) {
          b.add(name, v);
        }
      }
    } else {
      Set<String> drop = new HashSet<>(m.matchingLabels());
      drop.add(Labels.METRIC_NAME);
      for (int i = 0; i < l.size(); i++) {
        if (!drop.contains(l.name(i))) {
          b.add(l.name(i), l.value(i));
        }
      }
    }
    return b.build();
  }

  static Vec setOp(Evaluator ev, BinaryOp op, Vec lv, Vec rv, VectorMatching m) {
    int n = ev.n;
    List<Labels> lsig = new ArrayList<>();
    for (StepSeries s : lv.series()) {
      lsig.add(signature(s.labels, m));
    }
    List<Labels> rsig = new ArrayList<>();
    for (StepSeries s : rv.series()) {
      rsig.add(signature(s.labels, m));
    }
    List<StepSeries> out = new ArrayList<>();
    switch (op) {
      case AND, UNLESS -> {
        Map<Labels, List<StepSeries>> rightBySig = new HashMap<>();
        for (int ri = 0; ri < rv.series().size(); ri++) {
          rightBySig.computeIfAbsent(rsig.get(ri), k -> new ArrayList<>()).add(rv.series().get(ri));
        }
        for (int li = 0; li < lv.series().size(); li++) {
          StepSeries s = lv.series().get(li);
          List<StepSeries> candidates = rightBySig.getOrDefault(lsig.get(li), List.of());
          for (int i = 0; i < n; i++) {
            if (!s.has[i]) {
              continue;
            }
            boolean found = false;
            for (int ri = 0; ri < candidates.size() && !found; ri++) {
              found = candidates.get(ri).has[i];
            }
            if (found != (op == BinaryOp.AND)) {
              s.has[i] = false;
            }
          }
          if (s.count() > 0) {
            out.add(s);
          }
        }
      }
      case OR -> {
        Map<Labels, boolean[]> leftPresent = new HashMap<>();
        for (int li = 0; li < lv.series().size(); li++) {
          StepSeries s = lv.series().get(li);
          boolean[] p = leftPresent.computeIfAbsent(lsig.get(li), k -> new boolean[n]);
          for (int i = 0; i < n; i++) {
            p[i] |= s.has[i];
          }
          out.add(s);
        }
        for (int ri = 0; ri < rv.series().size(); ri++) {
          StepSeries s = rv.series().get(ri);
          boolean[] p = leftPresent.get(rsig.get(ri));
          if (p != null) {
            for (int i = 0; i < n; i++) {
              if (p[i]) {
                s.has[i] = false;
              }
            }
          }
          if (s.count() > 0) {
            out.add(s);
          }
        }
      }
      default -> throw new IllegalStateException();
    }
    return new Vec(ev.mergeSameLabels(out, false));
  }

  static Vec vectorVector(
      Evaluator ev, BinaryOp op, Vec lv, Vec rv, VectorMatching m, boolean bool) {
    int n = ev.n;
    Cardinality card = m.card();
    List<StepSeries> many = lv.series();
    List<StepSeries> one = rv.series();
    if (card == Cardinality.ONE_TO_MANY) {
      many = rv.series();
      one = lv.series();
    }
    List<Labels> manySig = new ArrayList<>();
    for (StepSeries s : many) {
      manySig.add(signature(s.labels, m));
    }
    Map<Labels, List<Integer>> oneBySig = new HashMap<>();
    for (int j = 0; j < one.size(); j++) {
      oneBySig.computeIfAbsent(signature(one.get(j).labels, m), k -> new ArrayList<>()).add(j);
    }
    Map<Labels, StepSeries> out = new LinkedHashMap<>();
    Map<Long, Labels> resultLabelCache = new HashMap<>();
    boolean changes = !op.isComparison();
    for (int i = 0; i < n; i++) {
      ev.tick();
      Map<Labels, Integer> oneAt = new HashMap<>();
      for (Map.Entry<Labels, List<Integer>> e : oneBySig.entrySet()) {
        Integer found = null;
        for (int j : e.getValue()) {
          if (one.get(j).has[i]) {
            if (found != null) {
              String side = card == Cardinality.ONE_TO_MANY ? "left" : "right";
              String d1 = PromText.formatLabels(one.get(j).labels);
              String d2 = PromText.formatLabels(one.get(found).labels);
              if (d1.compareTo(d2) > 0) {
                String t = d1;
                d1 = d2;
                d2 = t;
              }
              throw QueryException.execution(
                  "found duplicate series for the match group "
                      + PromText.formatLabels(e.getKey())
                      + " on the "
                      + side
                      + " hand-side of the operation: ["
                      + d1
                      + ", "
                      + d2
                      + "];many-to-many matching not allowed: matching labels must be unique on one side");
            }
            found = j;
          }
        }
        if (found != null) {
          oneAt.put(e.getKey(), found);
        }
      }
      Set<Labels> matchedSigs = new HashSet<>();
      Map<Labels, Set<Labels>> insertedBySig = new HashMap<>();
      Step step = new Step(i, op, m, bool, changes, out, matchedSigs, insertedBySig, n);
      for (int k = 0; k < many.size(); k++) {
        StepSeries ms = many.get(k);
        if (!ms.has[i]) {
          continue;
        }
        Labels sig = manySig.get(k);
        Integer j = oneAt.get(sig);
        if (j != null) {
          StepSeries os = one.get(j);
          long cacheKey = ((long) k << 32) | j;
          Labels res = resultLabelCache.get(cacheKey);
          if (res == null) {
            res = resultLabels(ms.labels, os.labels, m, changes);
            resultLabelCache.put(cacheKey, res);
          }
          step.apply(ms.v[i], os.v[i], sig, res);
        } else if (m.fillRight() != null) {
          // No "one" sample: fill_right stands in for it (Prometheus fills the swapped right-hand
          // side here, so with group_right it stands in for the left operand), with the matching
          // labels only.
          step.apply(ms.v[i], m.fillRight(), sig, resultLabels(ms.labels, sig, m, changes));
        }
      }
      if (m.fillLeft() != null) {
        // Every "one" sample nothing matched meets fill_left in the "many" operand's place.
        for (Map.Entry<Labels, Integer> e : oneAt.entrySet()) {
          Labels sig = e.getKey();
          boolean matched =
              card == Cardinality.ONE_TO_ONE
                  ? matchedSigs.contains(sig)
                  : !insertedBySig.getOrDefault(sig, Set.of()).isEmpty();
          if (matched) {
            continue;
          }
          StepSeries os = one.get(e.getValue());
          step.apply(m.fillLeft(), os.v[i], sig, resultLabels(sig, os.labels, m, changes));
        }
      }
    }
    return new Vec(new ArrayList<>(out.values()));
  }

  /**
   * One step of a vector/vector operation: applies the operator to a matched (or filled) pair and
   * records the result, enforcing Prometheus' uniqueness rules for the match group.
   */
  private record Step(
      int i,
      BinaryOp op,
      VectorMatching m,
      boolean bool,
      boolean changes,
      Map<Labels, StepSeries> out,
      Set<Labels> matchedSigs,
      Map<Labels, Set<Labels>> insertedBySig,
      int n) {

    /**
     * @param manyValue the value of the "many" side (the left operand, the right one with
     *     group_right)
     * @param oneValue the value of the "one" side
     */
    void apply(double manyValue, double oneValue, Labels sig, Labels res) {
      double fl = manyValue;
      double fr = oneValue;
      if (m.card() == Cardinality.ONE_TO_MANY) {
        fl = oneValue;
        fr = manyValue;
      }
      double value;
      boolean keep;
      if (op.isComparison()) {
        keep = compare(op, fl, fr);
        value = bool ? (keep ? 1 : 0) : fl;
      } else {
        value = scalarOp(op, fl, fr);
        keep = true;
      }
      if (m.card() == Cardinality.ONE_TO_ONE) {
        if (!matchedSigs.add(sig)) {
          throw QueryException.execution(
              "multiple matches for labels: many-to-one matching must be explicit (group_left/group_right)");
        }
      } else {
        if (!insertedBySig.computeIfAbsent(sig, x -> new HashSet<>()).add(res)) {
          throw QueryException.execution(
              "multiple matches for labels: grouping labels must ensure unique matches");
        }
      }
      if (!keep && !bool) {
        return;
      }
      StepSeries o = out.computeIfAbsent(res, x -> new StepSeries(res, n));
      o.set(i, value);
      if (bool) {
        o.dropName = true;
      }
    }
  }

  static Labels resultLabels(Labels lhs, Labels rhs, VectorMatching m, boolean dropName) {
    Labels.Builder b = lhs.toBuilder();
    if (dropName) {
      b.remove(Labels.METRIC_NAME).remove(Evaluator.TYPE_LABEL).remove(Evaluator.UNIT_LABEL);
    }
    if (m.card() == Cardinality.ONE_TO_ONE) {
      if (m.on()) {
        Set<String> keep = new HashSet<>(m.matchingLabels());
        for (int i = 0; i < lhs.size(); i++) {
          if (!keep.contains(lhs.name(i))) {
            b.remove(lhs.name(i));
          }
        }
      } else {
        for (String name : m.matchingLabels()) {
          b.remove(name);
        }
      }
    }
    for (String ln : m.include()) {
      String v = rhs.get(ln);
      if (v != null && !v.isEmpty()) {
        b.set(ln, v);
      } else {
        b.remove(ln);
      }
    }
    return b.build();
  }
}
