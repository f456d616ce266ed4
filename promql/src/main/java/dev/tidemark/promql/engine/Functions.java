package dev.tidemark.promql.engine;

import com.google.re2j.Matcher;
import com.google.re2j.Pattern;
import dev.tidemark.promql.engine.Evaluator.Kernel;
import dev.tidemark.promql.engine.Evaluator.Scal;
import dev.tidemark.promql.engine.Evaluator.StepSeries;
import dev.tidemark.promql.engine.Evaluator.Vec;
import dev.tidemark.promql.engine.Evaluator.Window;
import dev.tidemark.promql.parser.Call;
import dev.tidemark.promql.parser.Expr;
import dev.tidemark.promql.parser.ExtendedRange;
import dev.tidemark.promql.parser.MatrixSelector;
import dev.tidemark.promql.parser.StringLiteral;
import dev.tidemark.promql.parser.VectorSelector;
import dev.tidemark.tsdb.model.Labels;
import dev.tidemark.tsdb.model.PromText;
import dev.tidemark.tsdb.query.LabelMatcher;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.DoubleUnaryOperator;
import java.util.function.ToDoubleFunction;

/**
 * The implementations of PromQL's functions, by name: range functions are {@link Kernel}s over a
 * window (see {@link Evaluator#rangeCall}), the rest work on whole step vectors.
 */
final class Functions {
  private Functions() {}

  /** Range functions: name → (index of the range argument, kernel, whether the name is dropped). */
  record RangeFn(int matrixArg, Kernel kernel, boolean dropName) {}

  static final Map<String, RangeFn> RANGE =
      Map.ofEntries(
          Map.entry("rate", new RangeFn(0, w -> extrapolatedRate(w, true, true), true)),
          Map.entry("increase", new RangeFn(0, w -> extrapolatedRate(w, true, false), true)),
          Map.entry("delta", new RangeFn(0, w -> extrapolatedRate(w, false, false), true)),
          Map.entry("irate", new RangeFn(0, w -> instantValue(w, true), true)),
          Map.entry("idelta", new RangeFn(0, w -> instantValue(w, false), true)),
          Map.entry("deriv", new RangeFn(0, Functions::deriv, true)),
          Map.entry("predict_linear", new RangeFn(0, Functions::predictLinear, true)),
          Map.entry("resets", new RangeFn(0, Functions::resets, true)),
          Map.entry("changes", new RangeFn(0, Functions::changes, true)),
          Map.entry("avg_over_time", new RangeFn(0, Functions::avgOverTime, true)),
          Map.entry("sum_over_time", new RangeFn(0, Functions::sumOverTime, true)),
          Map.entry("count_over_time", new RangeFn(0, w -> out(w, w.size()), true)),
          Map.entry("min_over_time", new RangeFn(0, w -> compareOverTime(w, false, false), true)),
          Map.entry("max_over_time", new RangeFn(0, w -> compareOverTime(w, true, false), true)),
          Map.entry(
              "ts_of_min_over_time", new RangeFn(0, w -> compareOverTime(w, false, true), true)),
          Map.entry(
              "ts_of_max_over_time", new RangeFn(0, w -> compareOverTime(w, true, true), true)),
          Map.entry("last_over_time", new RangeFn(0, w -> out(w, w.v[w.hi - 1]), false)),
          Map.entry("first_over_time", new RangeFn(0, w -> out(w, w.v[w.lo]), false)),
          Map.entry(
              "ts_of_last_over_time", new RangeFn(0, w -> out(w, w.t[w.hi - 1] / 1000.0), true)),
          Map.entry("ts_of_first_over_time", new RangeFn(0, w -> out(w, w.t[w.lo] / 1000.0), true)),
          Map.entry("present_over_time", new RangeFn(0, w -> out(w, 1), true)),
          Map.entry("stddev_over_time", new RangeFn(0, w -> out(w, Math.sqrt(variance(w))), true)),
          Map.entry("stdvar_over_time", new RangeFn(0, w -> out(w, variance(w)), true)),
          Map.entry("mad_over_time", new RangeFn(0, Functions::madOverTime, true)),
          Map.entry(
              "quantile_over_time", new RangeFn(1, w -> out(w, quantile(w.p0, window(w))), true)),
          Map.entry(
              "double_exponential_smoothing", new RangeFn(0, Functions::doubleExpSmoothing, true)));

  static final Map<String, DoubleUnaryOperator> MATH =
      Map.ofEntries(
          Map.entry("abs", Math::abs),
          Map.entry("ceil", Math::ceil),
          Map.entry("floor", Math::floor),
          Map.entry("exp", Math::exp),
          Map.entry("sqrt", Math::sqrt),
          Map.entry("ln", Math::log),
          Map.entry("log2", Functions::log2),
          Map.entry("log10", Math::log10),
          Map.entry("sin", Math::sin),
          Map.entry("cos", Math::cos),
          Map.entry("tan", Math::tan),
          Map.entry("asin", Math::asin),
          Map.entry("acos", Math::acos),
          Map.entry("atan", Math::atan),
          Map.entry("sinh", Math::sinh),
          Map.entry("cosh", Math::cosh),
          Map.entry("tanh", Math::tanh),
          Map.entry("asinh", Functions::asinh),
          Map.entry("acosh", x -> Math.log(x + Math.sqrt(x * x - 1))),
          Map.entry("atanh", x -> 0.5 * Math.log((1 + x) / (1 - x))),
          Map.entry("rad", x -> x * Math.PI / 180),
          Map.entry("deg", x -> x * 180 / Math.PI),
          Map.entry("sgn", Math::signum));

  static final Map<String, ToDoubleFunction<ZonedDateTime>> DATE =
      Map.of(
          "day_of_month", ZonedDateTime::getDayOfMonth,
          "day_of_week", d -> d.getDayOfWeek().getValue() % 7,
          "day_of_year", ZonedDateTime::getDayOfYear,
          "days_in_month", d -> d.toLocalDate().lengthOfMonth(),
          "hour", ZonedDateTime::getHour,
          "minute", ZonedDateTime::getMinute,
          "month", ZonedDateTime::getMonthValue,
          "year", ZonedDateTime::getYear);

  /**
   * A range function ({@link #RANGE}) into {@code sink}, series by series in the selection's order:
   * its scalar arguments are checked first, and {@code rate}/{@code increase} note a metric name
   * that does not look like a counter's as its series pass.
   */
  static void callRange(Evaluator ev, Call c, Evaluator.SeriesSink sink) {
    String name = c.function().name();
    List<Expr> args = c.args();
    RangeFn rf = RANGE.get(name);
    Scal p0 = null;
    Scal p1 = null;
    List<Expr> others = new ArrayList<>();
    for (int i = 0; i < args.size(); i++) {
      if (i != rf.matrixArg()) {
        others.add(args.get(i));
      }
    }
    if (others.size() > 0) {
      p0 = ev.evalScalar(others.get(0));
    }
    if (others.size() > 1) {
      p1 = ev.evalScalar(others.get(1));
    }
    if (name.equals("quantile_over_time")) {
      for (double q : p0.v()) {
        if (Double.isNaN(q) || q < 0 || q > 1) {
          ev.warn(
              "quantile value should be between 0 and 1, got " + PromText.formatFloat(q),
              args.get(0).positionRange());
        }
      }
    }
    if (name.equals("double_exponential_smoothing")) {
      for (int i = 0; i < ev.n; i++) {
        double sf = p0.v()[i];
        double tf = p1.v()[i];
        if (sf <= 0 || sf >= 1) {
          throw QueryException.execution(
              "invalid smoothing factor. Expected: 0 < sf < 1, got: "
                  + PromText.formatFixed(sf, 6));
        }
        if (tf <= 0 || tf >= 1) {
          throw QueryException.execution(
              "invalid trend factor. Expected: 0 < tf < 1, got: " + PromText.formatFixed(tf, 6));
        }
      }
    }
    Evaluator.SeriesSink out = sink;
    if ((name.equals("rate") || name.equals("increase")) && ev.sh.options.typeAndUnitLabels()) {
      // Prometheus' EnableTypeAndUnitLabels: the type label decides, whatever the name.
      Set<String> seen = new HashSet<>();
      out =
          s -> {
            String m = s.labels.get(Labels.METRIC_NAME);
            String type = s.labels.get(Evaluator.TYPE_LABEL);
            String t = type == null ? "" : type;
            if (m != null
                && !t.equals("counter")
                && !t.equals("histogram")
                && seen.add(m + "\0" + t)) {
              ev.info(
                  "metric might not be a counter, __type__ label is not set to \"counter\" or"
                      + " \"histogram\", got "
                      + PromText.quote(t)
                      + ": "
                      + PromText.quote(m),
                  args.get(0).positionRange());
            }
            sink.accept(s);
          };
    } else if (name.equals("rate") || name.equals("increase")) {
      Set<String> seen = new HashSet<>();
      out =
          s -> {
            String m = s.labels.get(Labels.METRIC_NAME);
            if (m != null
                && !m.endsWith("_total")
                && !m.endsWith("_sum")
                && !m.endsWith("_count")
                && !m.endsWith("_bucket")
                && seen.add(m)) {
              ev.info(
                  "metric might not be a counter, name does not end in _total/_sum/_count/_bucket: "
                      + PromText.quote(m),
                  args.get(0).positionRange());
            }
            sink.accept(s);
          };
    }
    Kernel kernel = rf.kernel();
    if (Evaluator.unwrap(args.get(rf.matrixArg())) instanceof MatrixSelector ms
        && ms.selector().extendedRange() != ExtendedRange.NONE) {
      kernel = ExtendedRanges.KERNELS.get(name); // null for the others: rangeCall refuses them
    }
    ev.rangeCall(
        c, rf.matrixArg(), kernel, rf.dropName(), p0, p1, name.equals("predict_linear"), out);
  }

  static Object call(Evaluator ev, Call c) {
    String name = c.function().name();
    List<Expr> args = c.args();
    if (RANGE.containsKey(name)) {
      List<StepSeries> out = new ArrayList<>();
      callRange(ev, c, out::add);
      return new Vec(out); // counted series by series as they were computed
    }
    DoubleUnaryOperator math = MATH.get(name);
    if (math != null) {
      return map(ev, ev.evalVector(args.get(0)), math);
    }
    ToDoubleFunction<ZonedDateTime> date = DATE.get(name);
    if (date != null) {
      if (args.isEmpty()) {
        StepSeries s = new StepSeries(Labels.empty(), ev.n);
        for (int i = 0; i < ev.n; i++) {
          s.set(i, date.applyAsDouble(toTime(Math.floorDiv(ev.times[i], 1000L))));
        }
        return ev.track(new Vec(List.of(s)));
      }
      return map(ev, ev.evalVector(args.get(0)), v -> date.applyAsDouble(toTime((long) v)));
    }
    switch (name) {
      case "time":
        return scal(ev, i -> ev.times[i] / 1000.0);
      case "pi":
        return scal(ev, i -> Math.PI);
      case "start":
        return scal(ev, i -> ev.sh.queryStart / 1000.0);
      case "end":
        return scal(ev, i -> ev.sh.queryEnd / 1000.0);
      case "range":
        return scal(ev, i -> (ev.sh.queryEnd - ev.sh.queryStart) / 1000.0);
      case "step":
        return scal(ev, i -> ev.sh.queryStep / 1000.0);
      case "min_of":
      case "max_of":
        {
          // Experimental: the smaller / larger of two scalars, NaN when either is (Go's math.Min
          // and math.Max, which order -0 before +0 as Java's Math.min and Math.max do).
          double[] a = ev.evalScalar(args.get(0)).v();
          double[] b = ev.evalScalar(args.get(1)).v();
          boolean min = name.equals("min_of");
          return scal(ev, i -> min ? Math.min(a[i], b[i]) : Math.max(a[i], b[i]));
        }
      case "vector":
        {
          Scal s = ev.evalScalar(args.get(0));
          StepSeries r = new StepSeries(Labels.empty(), ev.n);
          for (int i = 0; i < ev.n; i++) {
            r.set(i, s.v()[i]);
          }
          return ev.track(new Vec(List.of(r)));
        }
      case "scalar":
        {
          Vec v = ev.evalVector(args.get(0));
          double[] out = new double[ev.n];
          for (int i = 0; i < ev.n; i++) {
            int cnt = 0;
            double val = Double.NaN;
            for (StepSeries s : v.series()) {
              if (s.has[i]) {
                cnt++;
                val = s.v[i];
              }
            }
            out[i] = cnt == 1 ? val : Double.NaN;
          }
          ev.done(v);
          return new Scal(out);
        }
      case "timestamp":
        {
          Expr a = Evaluator.unwrap(args.get(0));
          Vec v;
          if (a instanceof VectorSelector vs) {
            v = ev.selectVector(vs, true); // counted as it is read
          } else {
            v = ev.evalVector(a);
            for (StepSeries s : v.series()) {
              for (int i = 0; i < ev.n; i++) {
                s.v[i] = ev.times[i] / 1000.0;
              }
            }
          }
          for (StepSeries s : v.series()) {
            s.dropName = true;
          }
          return v;
        }
      case "round":
        {
          Scal to = args.size() > 1 ? ev.evalScalar(args.get(1)) : null;
          Vec v = ev.evalVector(args.get(0));
          for (StepSeries s : v.series()) {
            s.dropName = true;
            for (int i = 0; i < ev.n; i++) {
              double inv = 1.0 / (to == null ? 1.0 : to.v()[i]);
              s.v[i] = Math.floor(s.v[i] * inv + 0.5) / inv;
            }
          }
          return v;
        }
      case "clamp":
      case "clamp_min":
      case "clamp_max":
        {
          Vec v = ev.evalVector(args.get(0));
          Scal a1 = ev.evalScalar(args.get(1));
          Scal a2 = name.equals("clamp") ? ev.evalScalar(args.get(2)) : null;
          for (StepSeries s : v.series()) {
            s.dropName = true;
            for (int i = 0; i < ev.n; i++) {
              double lo = name.equals("clamp_max") ? Double.NEGATIVE_INFINITY : a1.v()[i];
              double hi =
                  name.equals("clamp")
                      ? a2.v()[i]
                      : name.equals("clamp_max") ? a1.v()[i] : Double.POSITIVE_INFINITY;
              if (name.equals("clamp") && hi < lo) {
                s.has[i] = false;
                continue;
              }
              double x = s.v[i];
              if (name.equals("clamp_max")) {
                s.v[i] = Math.min(hi, x);
              } else if (name.equals("clamp_min")) {
                s.v[i] = Math.max(lo, x);
              } else {
                s.v[i] = Math.max(lo, Math.min(hi, x));
              }
            }
          }
          return v;
        }
      case "absent":
        {
          Vec v = ev.evalVector(args.get(0));
          StepSeries r = new StepSeries(absentLabels(args.get(0)), ev.n);
          for (int i = 0; i < ev.n; i++) {
            boolean any = false;
            for (StepSeries s : v.series()) {
              any |= s.has[i];
            }
            if (!any) {
              r.set(i, 1);
            }
          }
          ev.done(v);
          return ev.track(new Vec(r.count() > 0 ? List.of(r) : List.of()));
        }
      case "absent_over_time":
        {
          Vec v = ev.rangeCall(c, 0, w -> out(w, 1), true, null, null);
          StepSeries r = new StepSeries(absentLabels(args.get(0)), ev.n);
          for (int i = 0; i < ev.n; i++) {
            boolean any = false;
            for (StepSeries s : v.series()) {
              any |= s.has[i];
            }
            if (!any) {
              r.set(i, 1);
            }
          }
          ev.done(v);
          return ev.track(new Vec(r.count() > 0 ? List.of(r) : List.of()));
        }
      case "sort":
      case "sort_desc":
        {
          Vec v = ev.evalVector(args.get(0));
          boolean desc = name.equals("sort_desc");
          List<StepSeries> l = new ArrayList<>(v.series());
          // NaN last in both directions, as Prometheus.
          l.sort(
              (a, b) -> {
                double x = a.v[0];
                double y = b.v[0];
                if (Double.isNaN(x) || Double.isNaN(y)) {
                  return Boolean.compare(Double.isNaN(x), Double.isNaN(y));
                }
                return desc ? Double.compare(y, x) : Double.compare(x, y);
              });
          return new Vec(l);
        }
      case "sort_by_label":
      case "sort_by_label_desc":
        {
          Vec v = ev.evalVector(args.get(0));
          List<String> names = new ArrayList<>();
          for (int i = 1; i < args.size(); i++) {
            names.add(((StringLiteral) Evaluator.unwrap(args.get(i))).value());
          }
          Comparator<StepSeries> cmp =
              (a, b) -> {
                for (String ln : names) {
                  String x = a.labels.get(ln);
                  String y = b.labels.get(ln);
                  int r = NaturalSort.compare(x == null ? "" : x, y == null ? "" : y);
                  if (r != 0) {
                    return r;
                  }
                }
                return a.labels.compareTo(b.labels);
              };
          List<StepSeries> l = new ArrayList<>(v.series());
          l.sort(name.endsWith("_desc") ? cmp.reversed() : cmp);
          return new Vec(l);
        }
      case "label_replace":
        return labelReplace(ev, c);
      case "label_join":
        return labelJoin(ev, c);
      case "info":
        return Info.eval(ev, c);
      case "histogram_quantile":
        return HistogramQuantile.eval(ev, c);
      case "histogram_count":
      case "histogram_sum":
      case "histogram_avg":
      case "histogram_stddev":
      case "histogram_stdvar":
      case "histogram_fraction":
        {
          // These functions read native histograms, which Tidemark does not store: no float sample
          // has a result.
          Object o = ev.eval(args.get(args.size() - 1));
          ev.done(o);
          return new Vec(List.of());
        }
      default:
        throw QueryException.execution("function " + name + "() is not supported by this engine");
    }
  }

  static Object scal(Evaluator ev, java.util.function.IntToDoubleFunction f) {
    double[] v = new double[ev.n];
    for (int i = 0; i < ev.n; i++) {
      v[i] = f.applyAsDouble(i);
    }
    return new Scal(v);
  }

  static Vec map(Evaluator ev, Vec v, DoubleUnaryOperator f) {
    for (StepSeries s : v.series()) {
      s.dropName = true;
      for (int i = 0; i < ev.n; i++) {
        if (s.has[i]) {
          s.v[i] = f.applyAsDouble(s.v[i]);
        }
      }
    }
    return v;
  }

  static ZonedDateTime toTime(long epochSeconds) {
    return Instant.ofEpochSecond(epochSeconds).atZone(ZoneOffset.UTC);
  }

  static double log2(double x) {
    if (x > 0 && !Double.isInfinite(x)) {
      int e = Math.getExponent(x);
      if (e >= Double.MIN_EXPONENT) {
        double frac = x / Math.scalb(1.0, e + 1);
        if (frac == 0.5) {
          return e;
        }
        return Math.log(frac) * (1 / Math.log(2)) + (e + 1);
      }
    }
    return Math.log(x) / Math.log(2);
  }

  static double asinh(double x) {
    if (Double.isInfinite(x)) {
      return x;
    }
    double r = Math.log(Math.abs(x) + Math.sqrt(x * x + 1));
    return x < 0 ? -r : r;
  }

  static Labels absentLabels(Expr e) {
    List<LabelMatcher> ms = Evaluator.matchersOf(e);
    if (ms == null) {
      return Labels.empty();
    }
    Labels.Builder b = Labels.builder();
    Set<String> has = new HashSet<>();
    Set<String> deleted = new HashSet<>();
    for (LabelMatcher m : ms) {
      if (m.name().equals(Labels.METRIC_NAME)) {
        continue;
      }
      if (m.op() == LabelMatcher.Op.EQUAL && !has.contains(m.name())) {
        b.set(m.name(), m.value());
        has.add(m.name());
        deleted.remove(m.name());
      } else {
        b.remove(m.name());
        deleted.add(m.name());
      }
    }
    return b.build();
  }

  // ---------------------------------------------------------------- label functions

  /**
   * label_replace checks the deadline and the cancel flag every this many series (a power of 2).
   */
  static final int LABEL_CHECK_EVERY = 16;

  static Object labelReplace(Evaluator ev, Call c) {
    List<Expr> a = c.args();
    String dst = str(a.get(1));
    String repl = str(a.get(2));
    String src = str(a.get(3));
    String re = str(a.get(4));
    Pattern p;
    try {
      p = GoRegex.compileAnchored(re);
    } catch (com.google.re2j.PatternSyntaxException ex) {
      throw QueryException.execution("invalid regular expression in label_replace(): " + re);
    }
    if (!validLabelName(dst)) {
      throw QueryException.execution("invalid destination label name in label_replace(): " + dst);
    }
    Vec v = ev.evalVector(a.get(0));
    int k = 0;
    for (StepSeries s : v.series()) {
      if ((k++ & (LABEL_CHECK_EVERY - 1)) == 0) {
        ev.checkNow(); // a match is linear in the value, but values and series may be many
      }
      String sv = s.labels.get(src);
      if (sv == null) {
        sv = "";
      }
      Matcher m = p.matcher(sv);
      if (m.find()) {
        String res = GoRegex.expand(repl, m);
        s.labels = s.labels.toBuilder().set(dst, res).build();
        if (dst.equals(Labels.METRIC_NAME)) {
          s.dropName = false;
        }
      }
    }
    return new Vec(ev.mergeSameLabels(v.series(), true));
  }

  static Object labelJoin(Evaluator ev, Call c) {
    List<Expr> a = c.args();
    String dst = str(a.get(1));
    String sep = str(a.get(2));
    List<String> srcs = new ArrayList<>();
    for (int i = 3; i < a.size(); i++) {
      String s = str(a.get(i));
      if (!validLabelName(s)) {
        throw QueryException.execution("invalid source label name in label_join(): " + s);
      }
      srcs.add(s);
    }
    if (!validLabelName(dst)) {
      throw QueryException.execution("invalid destination label name in label_join(): " + dst);
    }
    Vec v = ev.evalVector(a.get(0));
    for (StepSeries s : v.series()) {
      StringBuilder sb = new StringBuilder();
      for (int i = 0; i < srcs.size(); i++) {
        if (i > 0) {
          sb.append(sep);
        }
        String x = s.labels.get(srcs.get(i));
        sb.append(x == null ? "" : x);
      }
      s.labels = s.labels.toBuilder().set(dst, sb.toString()).build();
      if (dst.equals(Labels.METRIC_NAME)) {
        s.dropName = false;
      }
    }
    return new Vec(ev.mergeSameLabels(v.series(), true));
  }

  static boolean validLabelName(String s) {
    if (s.isEmpty()) {
      return false;
    }
    for (int i = 0; i < s.length(); i++) {
      char ch = s.charAt(i);
      if (Character.isSurrogate(ch)) {
        if (Character.isHighSurrogate(ch)
            && i + 1 < s.length()
            && Character.isLowSurrogate(s.charAt(i + 1))) {
          i++;
          continue;
        }
        return false;
      }
      if (ch == '\uFFFD') {
        return false;
      }
    }
    return true;
  }

  static String str(Expr e) {
    return ((StringLiteral) Evaluator.unwrap(e)).value();
  }

  // ---------------------------------------------------------------- range kernels

  static boolean out(Window w, double v) {
    w.out = v;
    return true;
  }

  static double[] window(Window w) {
    return Arrays.copyOfRange(w.v, w.lo, w.hi);
  }

  /** Kahan increment: returns the new sum, the compensation in {@code c[0]}. */
  static double kahanInc(double inc, double sum, double[] c) {
    return kahanInc(inc, sum, c, 0);
  }

  /** {@link #kahanInc(double, double, double[])} with the compensation in {@code c[i]}. */
  static double kahanInc(double inc, double sum, double[] c, int i) {
    double t = sum + inc;
    if (Double.isInfinite(t)) {
      c[i] = 0;
    } else if (Math.abs(sum) >= Math.abs(inc)) {
      c[i] += (sum - t) + inc;
    } else {
      c[i] += (inc - t) + sum;
    }
    return t;
  }

  static boolean extrapolatedRate(Window w, boolean isCounter, boolean isRate) {
    int cnt = w.size();
    if (cnt < 2) {
      return false;
    }
    long rangeStart = w.start;
    long rangeEnd = w.end;
    long firstT = w.t[w.lo];
    long lastT = w.t[w.hi - 1];
    double first = w.v[w.lo];
    double result = w.v[w.hi - 1] - first;
    if (isCounter && w.decreases > 0) { // the window counts them as it slides: most have none
      for (int i = w.lo + 1; i < w.hi; i++) {
        if (w.v[i] < w.v[i - 1]) {
          result += w.v[i - 1];
        }
      }
    }
    double durationToStart = (firstT - rangeStart) / 1000.0;
    double durationToEnd = (rangeEnd - lastT) / 1000.0;
    double sampledInterval = (lastT - firstT) / 1000.0;
    double avgBetween = sampledInterval / (cnt - 1);
    double threshold = avgBetween * 1.1;
    if (durationToStart >= threshold) {
      durationToStart = avgBetween / 2;
    }
    if (isCounter) {
      double durationToZero = durationToStart;
      if (result > 0 && first >= 0) {
        durationToZero = sampledInterval * (first / result);
      }
      if (durationToZero < durationToStart) {
        durationToStart = durationToZero;
      }
    }
    if (durationToEnd >= threshold) {
      durationToEnd = avgBetween / 2;
    }
    double factor = 1.0;
    if (sampledInterval != 0) {
      factor = (sampledInterval + durationToStart + durationToEnd) / sampledInterval;
    }
    if (isRate) {
      factor /= w.rangeMs / 1000.0;
    }
    w.out = result * factor;
    return true;
  }

  static boolean instantValue(Window w, boolean isRate) {
    if (w.size() < 2) {
      return false;
    }
    long t0 = w.t[w.hi - 2];
    long t1 = w.t[w.hi - 1];
    double v0 = w.v[w.hi - 2];
    double v1 = w.v[w.hi - 1];
    long interval = t1 - t0;
    if (interval == 0) {
      return false;
    }
    double r = v1;
    if (!isRate || !(v1 < v0)) {
      r = v1 - v0;
    }
    if (isRate) {
      r /= interval / 1000.0;
    }
    w.out = r;
    return true;
  }

  /** Least-squares slope and intercept of the window, x in seconds from {@code interceptTime}. */
  static double[] linearRegression(Window w, long interceptTime) {
    double n = 0;
    double[] cX = {0};
    double[] cY = {0};
    double[] cXY = {0};
    double[] cX2 = {0};
    double sumX = 0;
    double sumY = 0;
    double sumXY = 0;
    double sumX2 = 0;
    double initY = w.v[w.lo];
    boolean constY = true;
    for (int i = w.lo; i < w.hi; i++) {
      double f = w.v[i];
      if (constY && i > w.lo && f != initY) {
        constY = false;
      }
      n += 1;
      double x = (w.t[i] - interceptTime) / 1e3;
      sumX = kahanInc(x, sumX, cX);
      sumY = kahanInc(f, sumY, cY);
      sumXY = kahanInc(x * f, sumXY, cXY);
      sumX2 = kahanInc(x * x, sumX2, cX2);
    }
    if (constY) {
      if (Double.isInfinite(initY)) {
        return new double[] {Double.NaN, Double.NaN};
      }
      return new double[] {0, initY};
    }
    sumX += cX[0];
    sumY += cY[0];
    sumXY += cXY[0];
    sumX2 += cX2[0];
    double covXY = sumXY - sumX * sumY / n;
    double varX = sumX2 - sumX * sumX / n;
    double slope = covXY / varX;
    double intercept = sumY / n - slope * sumX / n;
    return new double[] {slope, intercept};
  }

  static boolean deriv(Window w) {
    if (w.size() < 2) {
      return false;
    }
    return out(w, linearRegression(w, w.t[w.lo])[0]);
  }

  static boolean predictLinear(Window w) {
    if (w.size() < 2) {
      return false;
    }
    double[] si = linearRegression(w, w.stepT);
    return out(w, si[0] * w.p0 + si[1]);
  }

  static boolean resets(Window w) {
    return out(w, w.decreases); // v[i] < v[i-1] inside the window, counted as it slides
  }

  static boolean changes(Window w) {
    int r = 0;
    for (int i = w.lo + 1; i < w.hi; i++) {
      double a = w.v[i - 1];
      double b = w.v[i];
      if (a != b && !(Double.isNaN(a) && Double.isNaN(b))) {
        r++;
      }
    }
    return out(w, r);
  }

  static boolean avgOverTime(Window w) {
    double sum = w.v[w.lo];
    double count = 1;
    double mean = 0;
    double[] c = {0};
    boolean incremental = false;
    for (int i = w.lo + 1; i < w.hi; i++) {
      double f = w.v[i];
      count = i - w.lo + 1;
      if (!incremental) {
        double[] c2 = {c[0]};
        double ns = kahanInc(f, sum, c2);
        if (!Double.isInfinite(ns)) {
          sum = ns;
          c[0] = c2[0];
          continue;
        }
        incremental = true;
        mean = sum / (count - 1);
        c[0] /= (count - 1);
      }
      double q = (count - 1) / count;
      c[0] = q * c[0];
      mean = kahanInc(f / count, q * mean, c);
    }
    if (incremental) {
      return out(w, mean + c[0]);
    }
    return out(w, sum / count + c[0] / count);
  }

  static boolean sumOverTime(Window w) {
    double sum = 0;
    double[] c = {0};
    for (int i = w.lo; i < w.hi; i++) {
      sum = kahanInc(w.v[i], sum, c);
    }
    if (Double.isInfinite(sum)) {
      return out(w, sum);
    }
    return out(w, sum + c[0]);
  }

  /** As Prometheus: a later sample wins ties for ts_of_*, a NaN best is always replaced. */
  static boolean compareOverTime(Window w, boolean max, boolean ts) {
    double best = w.v[w.lo];
    long bestT = w.t[w.lo];
    for (int i = w.lo; i < w.hi; i++) {
      double f = w.v[i];
      boolean take = ts ? (max ? f >= best : f <= best) : (max ? f > best : f < best);
      if (take || Double.isNaN(best)) {
        best = f;
        bestT = w.t[i];
      }
    }
    return out(w, ts ? bestT / 1000.0 : best);
  }

  static double variance(Window w) {
    double count = 0;
    double mean = 0;
    double[] cMean = {0};
    double aux = 0;
    double[] cAux = {0};
    for (int i = w.lo; i < w.hi; i++) {
      double f = w.v[i];
      count++;
      double delta = f - (mean + cMean[0]);
      mean = kahanInc(delta / count, mean, cMean);
      aux = kahanInc(delta * (f - (mean + cMean[0])), aux, cAux);
    }
    return (aux + cAux[0]) / count;
  }

  static boolean madOverTime(Window w) {
    double[] vals = window(w);
    for (double d : vals) {
      if (Double.isNaN(d)) {
        return out(w, Double.NaN);
      }
    }
    double median = quantile(0.5, vals);
    for (int i = 0; i < vals.length; i++) {
      vals[i] = Math.abs(vals[i] - median);
    }
    return out(w, quantile(0.5, vals));
  }

  static boolean doubleExpSmoothing(Window w) {
    int l = w.size();
    if (l < 2) {
      return false;
    }
    double sf = w.p0;
    double tf = w.p1;
    double s0 = 0;
    double s1 = w.v[w.lo];
    double b = w.v[w.lo + 1] - w.v[w.lo];
    for (int i = 1; i < l; i++) {
      double x = sf * w.v[w.lo + i];
      if (i - 1 != 0) {
        b = tf * (s1 - s0) + (1 - tf) * b;
      }
      double y = (1 - sf) * (s1 + b);
      s0 = s1;
      s1 = x + y;
    }
    return out(w, s1);
  }

  /** Prometheus' {@code quantile}: sorts {@code values} in place (NaN first). */
  static double quantile(double q, double[] values) {
    if (values.length == 0 || Double.isNaN(q)) {
      return Double.NaN;
    }
    if (q < 0) {
      return Double.NEGATIVE_INFINITY;
    }
    if (q > 1) {
      return Double.POSITIVE_INFINITY;
    }
    sortNaNFirst(values);
    double n = values.length;
    double rank = q * (n - 1);
    double lower = Math.max(0, Math.floor(rank));
    double upper = Math.min(n - 1, lower + 1);
    double weight = rank - Math.floor(rank);
    return values[(int) lower] * (1 - weight) + values[(int) upper] * weight;
  }

  static void sortNaNFirst(double[] values) {
    Arrays.sort(values);
    // Arrays.sort puts NaN last; Prometheus' order puts it first.
    int nan = 0;
    for (int i = values.length - 1; i >= 0 && Double.isNaN(values[i]); i--) {
      nan++;
    }
    if (nan > 0 && nan < values.length) {
      System.arraycopy(values, 0, values, nan, values.length - nan);
      Arrays.fill(values, 0, nan, Double.NaN);
    }
  }
}
