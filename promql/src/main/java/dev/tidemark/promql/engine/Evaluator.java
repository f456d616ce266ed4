package dev.tidemark.promql.engine;

import dev.tidemark.promql.parser.AggregateExpr;
import dev.tidemark.promql.parser.AtModifier;
import dev.tidemark.promql.parser.BinaryExpr;
import dev.tidemark.promql.parser.Call;
import dev.tidemark.promql.parser.Expr;
import dev.tidemark.promql.parser.ExtendedRange;
import dev.tidemark.promql.parser.MatrixSelector;
import dev.tidemark.promql.parser.NumberLiteral;
import dev.tidemark.promql.parser.ParenExpr;
import dev.tidemark.promql.parser.PositionRange;
import dev.tidemark.promql.parser.StringLiteral;
import dev.tidemark.promql.parser.SubqueryExpr;
import dev.tidemark.promql.parser.UnaryExpr;
import dev.tidemark.promql.parser.VectorSelector;
import dev.tidemark.tsdb.append.SampleBatch;
import dev.tidemark.tsdb.model.Labels;
import dev.tidemark.tsdb.query.CallerRunsParallel;
import dev.tidemark.tsdb.query.LabelMatcher;
import dev.tidemark.tsdb.query.Querier;
import dev.tidemark.tsdb.query.QueryAbortedException;
import dev.tidemark.tsdb.query.QueryContext;
import dev.tidemark.tsdb.query.SampleIterator;
import dev.tidemark.tsdb.query.Series;
import dev.tidemark.tsdb.query.SeriesSet;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Evaluates one expression over the steps {@code start, start+interval, ..., end}. Every node is
 * evaluated once for all steps (as Prometheus' {@code rangeEval}): an instant-vector node yields
 * its series, each with one value slot per step; a scalar node one value per step. Range vectors
 * are never materialised for all steps: a function over a range walks each series once with a
 * sliding window (see {@link #rangeCall}).
 */
final class Evaluator {
  /** Points a {@link Window} reads from its cursor at once, at first (it grows with the window). */
  static final int INITIAL_WINDOW_BUFFER = 256;

  /**
   * Slices per thread of a parallel range function: enough to even out threads slowed by others.
   */
  static final int SLICES_PER_THREAD = 4;

  /** A range function runs in parallel slices only with at least this many series per slice. */
  static final int MIN_SERIES_PER_PART = 16;

  static final String TOO_MANY_SAMPLES =
      "query processing would load too many samples into memory in query execution";

  /** {@link #TOO_MANY_SAMPLES} when the queries' shared budget ({@link QueryMemory}) is spent. */
  static String tooManySamplesTogether(long max) {
    return TOO_MANY_SAMPLES
        + ": the queries running now would hold more than the "
        + max
        + " samples the server allows at once";
  }

  /** What all evaluators of one query share. */
  static final class Shared {
    Querier querier;
    EngineOptions options;
    QueryControl control;
    long deadlineNanos;

    /** The deadline and the cancel flag, handed to every storage read. */
    QueryContext ctx;

    Annotations annotations = new Annotations();
    String query;
    long queryStart;
    long queryEnd;

    /**
     * What {@code step()} returns, in ms: the query's step, constant inside subqueries too, and 0
     * when the query has one evaluation time ({@code start == end}, every instant query), as
     * Prometheus folds it.
     */
    long queryStep;

    /**
     * Samples held now (Prometheus' {@code currentSamples}); written under this object's lock,
     * since the threads of a parallel range function count their series as they finish them.
     */
    volatile long held;

    /** The budget of every query of the engine; {@link #held} is this query's part of it. */
    QueryMemory memory = QueryMemory.unlimited();

    long peak;
    int ticks;
  }

  /** A scalar: one value per step. */
  record Scal(double[] v) {}

  /** A string. */
  record Str(String s) {}

  /** An instant vector over all steps. */
  record Vec(List<StepSeries> series) {}

  /** One series of an instant vector: a value slot per step, {@code has} marks the filled ones. */
  static final class StepSeries {
    Labels labels;
    final double[] v;
    final boolean[] has;
    boolean dropName;

    StepSeries(Labels labels, int n) {
      this.labels = labels;
      this.v = new double[n];
      this.has = new boolean[n];
    }

    int count() {
      int c = 0;
      for (boolean b : has) {
        if (b) {
          c++;
        }
      }
      return c;
    }

    void set(int i, double value) {
      v[i] = value;
      has[i] = true;
    }
  }

  /**
   * Takes the series of an instant-vector node one at a time, in the node's order, instead of a
   * list of all of them: an aggregation folds a wide selection into its groups this way without
   * holding it. A series passed in is the sink's to keep; its producer makes a new one for each.
   */
  interface SeriesSink {
    void accept(StepSeries s);
  }

  /**
   * Series a streamed range function reads from the store at a time: what one node holds of a wide
   * selection (the series handles and their results) while a parent folds it.
   */
  static final int RANGE_BATCH = 1024;

  final Shared sh;
  final long start;
  final long end;
  final long interval;
  final int n;
  final long[] times;

  Evaluator(Shared sh, long start, long end, long interval) {
    this.sh = sh;
    this.start = start;
    this.end = end;
    this.interval = interval;
    this.n = (int) ((end - start) / interval) + 1;
    this.times = new long[n];
    for (int i = 0; i < n; i++) {
      times[i] = start + i * interval;
    }
  }

  static Evaluator top(
      Querier q,
      EngineOptions opt,
      QueryControl control,
      String query,
      long start,
      long end,
      long step) {
    return top(q, opt, QueryMemory.unlimited(), control, query, start, end, step);
  }

  static Evaluator top(
      Querier q,
      EngineOptions opt,
      QueryMemory memory,
      QueryControl control,
      String query,
      long start,
      long end,
      long step) {
    Shared sh = new Shared();
    sh.querier = q;
    sh.options = opt;
    sh.memory = memory;
    sh.control = control;
    sh.deadlineNanos = System.nanoTime() + opt.timeout().toNanos();
    sh.ctx = QueryContext.of(sh.deadlineNanos, control::isCanceled);
    sh.query = query;
    sh.queryStart = start;
    sh.queryEnd = end;
    sh.queryStep = start == end ? 0 : step;
    return new Evaluator(sh, start, end, step == 0 ? 1 : step);
  }

  // ---------------------------------------------------------------- running and limits

  QueryResult run(Expr e, boolean instant) {
    try {
      return runChecked(e, instant);
    } catch (QueryAbortedException a) { // a storage read stopped by sh.ctx
      throw a.reason() == QueryAbortedException.Reason.CANCELED ? canceled() : timedOut();
    } finally {
      releaseAll();
    }
  }

  private QueryResult runChecked(Expr e, boolean instant) {
    checkNow();
    Expr u = unwrap(e);
    Value value;
    if (u instanceof MatrixSelector || u instanceof SubqueryExpr) {
      RangeSource src = rangeSource(u);
      List<Value.Series> out = new ArrayList<>();
      Window w = new Window();
      for (int s = 0; s < src.size(); s++) {
        w.reset(cursorOf(src, s, w));
        advance(w, src, windowEnd(src, 0));
        if (src.ext != ExtendedRange.NONE) {
          checkWindow(w.size());
          Value.Series ext = ExtendedRanges.extend(w, src.labels(s));
          if (ext != null) {
            acquire(ext.timestamps().length);
            out.add(ext);
          }
        } else if (w.hi > w.lo) {
          acquire(w.hi - w.lo); // a range-vector result is held whole, as in Prometheus
          Labels l = src.dropName(s) ? dropName(src.labels(s)) : src.labels(s);
          out.add(
              new Value.Series(
                  l, Arrays.copyOfRange(w.t, w.lo, w.hi), Arrays.copyOfRange(w.v, w.lo, w.hi)));
        }
      }
      out.sort(Comparator.comparing(Value.Series::labels));
      value = new Value.Matrix(out);
    } else {
      Object r = eval(e);
      if (r instanceof Scal s) {
        if (instant) {
          value = new Value.Scalar(start, s.v()[0]);
        } else {
          value =
              new Value.Matrix(
                  List.of(new Value.Series(Labels.empty(), times.clone(), s.v().clone())));
        }
      } else if (r instanceof Str s) {
        value = new Value.StringValue(start, s.s());
      } else {
        List<StepSeries> series = ((Vec) r).series();
        for (StepSeries ss : series) {
          if (ss.dropName) {
            ss.labels = dropName(ss.labels);
            ss.dropName = false;
          }
        }
        if (instant) {
          List<Value.Sample> samples = new ArrayList<>();
          java.util.Set<Labels> seen = new java.util.HashSet<>();
          for (StepSeries ss : series) {
            if (ss.has[0]) {
              if (!seen.add(ss.labels)) {
                throw QueryException.execution(
                    "vector cannot contain metrics with the same labelset");
              }
              samples.add(new Value.Sample(ss.labels, start, ss.v[0]));
            }
          }
          value = new Value.Vector(samples);
        } else {
          List<StepSeries> merged = mergeSameLabels(series, true);
          List<Value.Series> out = new ArrayList<>();
          for (StepSeries ss : merged) {
            Value.Series points = points(ss, times);
            if (points != null) {
              out.add(points);
            }
          }
          out.sort(Comparator.comparing(Value.Series::labels));
          value = new Value.Matrix(out);
        }
      }
    }
    sh.control.recordPeak(sh.peak);
    return new QueryResult(value, sh.annotations);
  }

  /** The steps {@code ss} has a value at, as a series of points; null when it has none. */
  static Value.Series points(StepSeries ss, long[] times) {
    int c = ss.count();
    if (c == 0) {
      return null;
    }
    long[] ts = new long[c];
    double[] vs = new double[c];
    int k = 0;
    for (int i = 0; i < times.length; i++) {
      if (ss.has[i]) {
        ts[k] = times[i];
        vs[k++] = ss.v[i];
      }
    }
    return new Value.Series(ss.labels, ts, vs);
  }

  void tick() {
    if ((++sh.ticks & 63) == 0) {
      checkNow();
    }
  }

  void checkNow() {
    if (sh.control.isCanceled()) {
      throw canceled();
    }
    if (System.nanoTime() - sh.deadlineNanos > 0) {
      throw timedOut();
    }
  }

  static QueryException canceled() {
    return new QueryException(
        QueryException.ErrorType.CANCELED, "query was canceled in expression evaluation");
  }

  static QueryException timedOut() {
    return new QueryException(
        QueryException.ErrorType.TIMEOUT, "query timed out in expression evaluation");
  }

  /**
   * Counts {@code count} more samples held, failing the query once more than {@code maxSamples}
   * are. Nodes count each series as they produce it (as Prometheus' {@code rangeEval} counts each
   * step's output), not their whole result at the end: a node over many series or steps (a wide
   * subquery) stops within one series of the limit instead of first allocating everything.
   */
  void acquire(long count) {
    synchronized (sh) {
      long h = sh.held + count;
      if (h > sh.options.maxSamples()) {
        throw QueryException.execution(TOO_MANY_SAMPLES);
      }
      if (!sh.memory.tryAcquire(count)) {
        throw QueryException.execution(tooManySamplesTogether(sh.memory.max()));
      }
      sh.held = h;
      if (h > sh.peak) {
        sh.peak = h;
      }
    }
  }

  void release(long count) {
    synchronized (sh) {
      sh.held -= count;
      sh.memory.release(count);
    }
  }

  /**
   * Fails the query if a window of {@code size} samples, held for a moment beside what it holds,
   * would pass its limit or the shared budget (a window is not acquired: it is reused step by
   * step).
   */
  void checkWindow(long size) {
    if (sh.held + size > sh.options.maxSamples()) {
      throw QueryException.execution(TOO_MANY_SAMPLES);
    }
    if (sh.memory.held() + size > sh.memory.max()) {
      throw QueryException.execution(tooManySamplesTogether(sh.memory.max()));
    }
  }

  /**
   * Gives back to the shared budget whatever the query still holds: at its end, however it ends.
   */
  void releaseAll() {
    synchronized (sh) {
      sh.memory.release(sh.held);
      sh.held = 0;
    }
  }

  long held(Vec v) {
    long c = 0;
    for (StepSeries s : v.series()) {
      c += s.count();
    }
    return c;
  }

  Vec track(Vec v) {
    acquire(held(v));
    return v;
  }

  void done(Object o) {
    if (o instanceof Vec v) {
      release(held(v));
    }
  }

  // ---------------------------------------------------------------- dispatch

  static Expr unwrap(Expr e) {
    while (e instanceof ParenExpr p) {
      e = p.expr();
    }
    return e;
  }

  /**
   * Evaluates one node. Without delayed name removal ({@link EngineOptions#delayedNameRemoval()})
   * the names a node drops are removed here, as Prometheus removes them in the node, not at the
   * end.
   */
  Object eval(Expr e) {
    Object r = evalNode(e);
    if (!sh.options.delayedNameRemoval() && r instanceof Vec v) {
      return removeNamesNow(v);
    }
    return r;
  }

  /**
   * Removes at once the names {@code v}'s node dropped; series then left with the same labels
   * become one, and two values at one step fail the query, as Prometheus' {@code rangeEval} fails
   * it without delayed name removal. Only a label set that lost a label can meet another: a node
   * over series that have no name left ({@code rate(x[5m]) * 2}) compares nothing.
   */
  Vec removeNamesNow(Vec v) {
    boolean changed = false;
    for (StepSeries ss : v.series()) {
      if (ss.dropName) {
        Labels l = dropName(ss.labels);
        changed |= l != ss.labels;
        ss.labels = l;
        ss.dropName = false;
      }
    }
    return changed ? new Vec(mergeSameLabels(v.series(), true)) : v;
  }

  /**
   * A sink that removes the names a streamed range function drops before {@code sink} sees the
   * series, for a query without delayed name removal. Two series left with the same labels and a
   * value at the same step fail the query, as they do in Prometheus. To find them the labels of
   * every series passed are kept, unless every series has the same name (the selector is {@code
   * name[5m]} or has {@code __name__="name"}): then two can only collide when one carries {@code
   * __type__} or {@code __unit__}, the other labels removed with the name, and only the labels of
   * such series are kept (a million series of one metric, the common case, keep nothing). A gap
   * this leaves, for the rare store that holds one metric both with and without type-and-unit
   * labels: a series without them is only compared with the typed ones already passed, so such a
   * pair is caught when the typed series comes first, and otherwise both reach the parent.
   */
  SeriesSink namesRemovedNow(Call c, int matrixArg, SeriesSink sink) {
    Expr arg = unwrap(c.args().get(matrixArg));
    boolean oneName =
        arg instanceof MatrixSelector ms
            && ms.selector().matchers().stream()
                .anyMatch(
                    m -> m.name().equals(Labels.METRIC_NAME) && m.op() == LabelMatcher.Op.EQUAL);
    Map<Labels, boolean[]> seen = new HashMap<>();
    return s -> {
      if (s.dropName) {
        boolean typed = s.labels.get(TYPE_LABEL) != null || s.labels.get(UNIT_LABEL) != null;
        s.labels = dropName(s.labels);
        s.dropName = false;
        if (!oneName || typed || !seen.isEmpty()) {
          boolean[] has =
              !oneName || typed ? seen.putIfAbsent(s.labels, s.has.clone()) : seen.get(s.labels);
          if (has != null) {
            for (int i = 0; i < has.length; i++) {
              if (s.has[i] && has[i]) {
                throw QueryException.execution(
                    "vector cannot contain metrics with the same labelset");
              }
              has[i] |= s.has[i];
            }
          }
        }
      }
      sink.accept(s);
    };
  }

  private Object evalNode(Expr e) {
    tick();
    if (e instanceof NumberLiteral nl) {
      double[] v = new double[n];
      Arrays.fill(v, nl.value());
      return new Scal(v);
    } else if (e instanceof StringLiteral sl) {
      return new Str(sl.value());
    } else if (e instanceof ParenExpr p) {
      return eval(p.expr());
    } else if (e instanceof UnaryExpr u) {
      Object r = eval(u.expr());
      if (!u.negate()) {
        return r;
      }
      if (r instanceof Scal s) {
        double[] v = new double[n];
        for (int i = 0; i < n; i++) {
          v[i] = -s.v()[i];
        }
        return new Scal(v);
      }
      for (StepSeries ss : ((Vec) r).series()) {
        for (int i = 0; i < n; i++) {
          ss.v[i] = -ss.v[i];
        }
        ss.dropName = true;
      }
      return r;
    } else if (e instanceof VectorSelector vs) {
      return selectVector(vs, false); // counted as it is read
    } else if (e instanceof Call c) {
      return Functions.call(this, c);
    } else if (e instanceof AggregateExpr a) {
      return Aggregations.aggregate(this, a);
    } else if (e instanceof BinaryExpr b) {
      return BinaryOps.binary(this, b);
    }
    throw QueryException.execution(
        "unexpected expression of type " + e.type().documentedName() + ": " + e);
  }

  /**
   * Evaluates an instant-vector expression into {@code sink}, series by series. A selector and a
   * range function read from the store as the sink takes them (a range function {@link
   * #RANGE_BATCH} series at a time), so nothing holds the whole selection; any other expression is
   * evaluated whole and then passed on. The series passed are counted against the query's limits as
   * if they were all held, as Prometheus holds them (so {@code --query-max-samples} means what it
   * means there); the count is returned for the caller to release once it has folded them.
   */
  long stream(Expr e, SeriesSink sink) {
    tick();
    Expr u = unwrap(e);
    long before = sh.held;
    if (u instanceof VectorSelector vs) {
      selectVector(vs, false, sink);
      return sh.held - before;
    }
    if (u instanceof Call c && Functions.RANGE.containsKey(c.function().name())) {
      Functions.callRange(
          this,
          c,
          sh.options.delayedNameRemoval()
              ? sink
              : namesRemovedNow(c, Functions.RANGE.get(c.function().name()).matrixArg(), sink));
      return sh.held - before;
    }
    Vec v = evalVector(e);
    for (StepSeries s : v.series()) {
      sink.accept(s);
    }
    return held(v);
  }

  Scal evalScalar(Expr e) {
    Object o = eval(e);
    if (o instanceof Scal s) {
      return s;
    }
    throw QueryException.execution("expected scalar, got " + e.type().documentedName());
  }

  Vec evalVector(Expr e) {
    Object o = eval(e);
    if (o instanceof Vec v) {
      return v;
    }
    throw QueryException.execution("expected instant vector, got " + e.type().documentedName());
  }

  // ---------------------------------------------------------------- selectors

  long atTime(AtModifier at) {
    return switch (at.kind()) {
      case TIMESTAMP -> at.timestampMillis();
      case START -> sh.queryStart;
      case END -> sh.queryEnd;
    };
  }

  long eff(int i, AtModifier at, long offsetMs) {
    return (at != null ? atTime(at) : times[i]) - offsetMs;
  }

  /**
   * Instant selector: per step the newest sample in {@code (t - lookback, t]}, unless stale. Each
   * series is counted against the sample limit as soon as it is read ({@link #acquire}).
   */
  Vec selectVector(VectorSelector vs, boolean timestamps) {
    List<StepSeries> out = new ArrayList<>();
    selectVector(vs, timestamps, out::add);
    return new Vec(out);
  }

  /** {@link #selectVector(VectorSelector, boolean)} into a sink, series by series. */
  void selectVector(VectorSelector vs, boolean timestamps, SeriesSink out) {
    if (vs.extendedRange() == ExtendedRange.SMOOTHED && !timestamps) {
      selectSmoothed(vs, out); // timestamp() ignores smoothing, as Prometheus' does
      return;
    }
    long lb = sh.options.lookbackDelta().toMillis();
    long off = vs.offset().toMillis();
    long minEff = Math.min(eff(0, vs.at(), off), eff(n - 1, vs.at(), off));
    long maxEff = Math.max(eff(0, vs.at(), off), eff(n - 1, vs.at(), off));
    SeriesSet set = select(minEff - lb + 1, maxEff, vs);
    SampleIterator it = null;
    long[] newest = new long[2];
    while (set.next()) {
      Series s = set.at();
      StepSeries r = new StepSeries(s.labels(), n);
      it = s.iterator(it);
      if (n == 1) { // one time: only the newest sample of the window matters (read newest first)
        tick();
        long t = eff(0, vs.at(), off);
        if (it.newestIn(t - lb + 1, t, newest) && newest[1] != SampleBatch.STALE_NAN_BITS) {
          r.set(0, timestamps ? newest[0] / 1000.0 : Double.longBitsToDouble(newest[1]));
          acquire(1);
          out.accept(r);
        }
        continue;
      }
      boolean more = it.next();
      boolean haveCur = false;
      long curT = 0;
      long curB = 0;
      for (int i = 0; i < n; i++) {
        tick();
        long t = eff(i, vs.at(), off);
        if (more && it.timestampMillis() <= t - lb) {
          haveCur = false;
          more = it.seek(t - lb + 1);
        }
        while (more && it.timestampMillis() <= t) {
          curT = it.timestampMillis();
          curB = it.valueBits();
          haveCur = true;
          more = it.next();
        }
        if (haveCur && curT > t - lb && curT <= t && curB != SampleBatch.STALE_NAN_BITS) {
          r.set(i, timestamps ? curT / 1000.0 : Double.longBitsToDouble(curB));
        }
      }
      int c = r.count();
      if (c > 0) {
        acquire(c);
        out.accept(r);
      }
    }
  }

  /**
   * A smoothed instant selector: per step the value at the step's data time interpolated from the
   * samples within a lookback delta either side of it ({@link ExtendedRanges#smoothedAt}), read
   * through one sliding window per series. Stale markers are dropped, not ends of the series.
   */
  private void selectSmoothed(VectorSelector vs, SeriesSink out) {
    long lb = sh.options.lookbackDelta().toMillis();
    long off = vs.offset().toMillis();
    long minEff = Math.min(eff(0, vs.at(), off), eff(n - 1, vs.at(), off));
    long maxEff = Math.max(eff(0, vs.at(), off), eff(n - 1, vs.at(), off));
    SeriesSet set = select(minEff - lb + 1, maxEff + lb, vs);
    Window w = new Window();
    while (set.next()) {
      Series s = set.at();
      checkNow();
      w.iterator = s.iterator(w.iterator);
      w.reset(w.iteratorCursor.reset(w.iterator));
      StepSeries r = new StepSeries(s.labels(), n);
      for (int i = 0; i < n; i++) {
        tick();
        long t = eff(i, vs.at(), off);
        w.advance(t - lb, t + lb);
        if (w.size() > 0 && ExtendedRanges.smoothedAt(w, t)) {
          r.set(i, w.out);
        }
      }
      int c = r.count();
      if (c > 0) {
        acquire(c);
        out.accept(r);
      }
    }
  }

  // ---------------------------------------------------------------- range vectors

  /**
   * A source of (time, value) points in time order, stale markers excluded, read in bulk into a
   * {@link Window}'s buffers.
   */
  interface Cursor {
    /**
     * Reads up to {@code max} points after the last one read into {@code w.t}/{@code w.v} from
     * {@code off} ({@code w.bits} is scratch of the same length); fewer only at the end.
     */
    int read(Window w, int off, int max);

    /**
     * Skips to the first point at or after {@code t} (never backwards), then reads as {@link
     * #read}.
     */
    int seekAndRead(long t, Window w, int off, int max);
  }

  /** A series' samples; one per window, re-pointed at each series (no allocation per series). */
  static final class IteratorCursor implements Cursor {
    private SampleIterator it;

    IteratorCursor reset(SampleIterator it) {
      this.it = it;
      return this;
    }

    @Override
    public int read(Window w, int off, int max) {
      int n = 0;
      while (n < max) {
        int want = max - n;
        int got = it.next(w.t, w.bits, off + n, want);
        n += keepFresh(w, off + n, got);
        if (got < want) {
          break;
        }
      }
      return n;
    }

    @Override
    public int seekAndRead(long t, Window w, int off, int max) {
      if (!it.seek(t)) {
        return 0;
      }
      int n = 0;
      if (it.valueBits() != SampleBatch.STALE_NAN_BITS) {
        w.t[off] = it.timestampMillis();
        w.v[off] = it.value();
        n = 1;
      }
      return n + read(w, off + n, max - n);
    }

    /**
     * Turns {@code got} points at {@code from} into values, dropping stale markers; how many stay.
     */
    private static int keepFresh(Window w, int from, int got) {
      long[] t = w.t;
      double[] v = w.v;
      long[] bits = w.bits;
      int k = from;
      for (int i = from, end = from + got; i < end; i++) {
        long b = bits[i];
        if (b != SampleBatch.STALE_NAN_BITS) {
          t[k] = t[i];
          v[k++] = Double.longBitsToDouble(b);
        }
      }
      return k - from;
    }
  }

  static final class ArrayCursor implements Cursor {
    private final long[] ts;
    private final double[] vs;
    private final int len;
    private int i;

    ArrayCursor(long[] ts, double[] vs, int len) {
      this.ts = ts;
      this.vs = vs;
      this.len = len;
    }

    @Override
    public int read(Window w, int off, int max) {
      int n = Math.min(max, len - i);
      System.arraycopy(ts, i, w.t, off, n);
      System.arraycopy(vs, i, w.v, off, n);
      i += n;
      return n;
    }

    @Override
    public int seekAndRead(long t, Window w, int off, int max) {
      while (i < len && ts[i] < t) {
        i++;
      }
      return read(w, off, max);
    }
  }

  /** The series of a range-vector expression and how its windows are placed. */
  final class RangeSource {
    final List<Labels> labels = new ArrayList<>();
    final List<Boolean> dropNames = new ArrayList<>();
    final List<Object> data = new ArrayList<>();
    long rangeMs;
    long offsetMs;
    AtModifier at;
    Expr selectorExpr;
    PositionRange argPos;

    /** The selector's {@code anchored}/{@code smoothed}; NONE for a subquery. */
    ExtendedRange ext = ExtendedRange.NONE;

    /** How far the window reaches before the range start (the lookback when extended), ms. */
    long beforeMs;

    /** How far the window reaches after the range end (the lookback when smoothed), ms. */
    long afterMs;

    /** Samples of a subquery's inner result, counted against the budget until the call is done. */
    long held;

    int size() {
      return labels.size();
    }

    void clear() {
      labels.clear();
      dropNames.clear();
      data.clear();
    }

    /** A subquery's inner series as points at {@code child}'s steps, if it has any. */
    void addPoints(StepSeries ss, Evaluator child) {
      Value.Series points = points(ss, child.times);
      if (points != null) {
        labels.add(ss.labels);
        dropNames.add(ss.dropName);
        data.add(new Object[] {points.timestamps(), points.values()});
      }
    }

    void add(Series s) {
      labels.add(s.labels());
      dropNames.add(false);
      data.add(s);
    }

    Labels labels(int i) {
      return labels.get(i);
    }

    boolean dropName(int i) {
      return dropNames.get(i);
    }
  }

  /** Sets {@code src}'s window from a matrix selector and selects its series. */
  SeriesSet selectRange(MatrixSelector ms, RangeSource src) {
    VectorSelector vs = ms.selector();
    src.argPos = ms.positionRange();
    src.rangeMs = ms.range().toMillis();
    src.offsetMs = vs.offset().toMillis();
    src.at = vs.at();
    src.selectorExpr = ms;
    src.ext = vs.extendedRange();
    long lb = sh.options.lookbackDelta().toMillis();
    src.beforeMs = src.ext == ExtendedRange.NONE ? 0 : lb;
    src.afterMs = src.ext == ExtendedRange.SMOOTHED ? lb : 0;
    long a = windowEnd(src, 0);
    long b = windowEnd(src, n - 1);
    return select(
        Math.min(a, b) - src.rangeMs - src.beforeMs + 1, Math.max(a, b) + src.afterMs, vs);
  }

  /**
   * The warning of a selector that met native histogram samples (issue #25): the evaluator reads
   * float samples only ({@link Series#iterator()}), so the histograms are left out of the result,
   * and the answer says so instead of failing the query or pretending there were none.
   */
  static final String HISTOGRAMS_LEFT_OUT =
      "native histogram samples are not supported by PromQL yet and were left out";

  /**
   * The querier's select for a selector, warning ({@link #HISTOGRAMS_LEFT_OUT}) when a series it
   * hands out has native histogram samples in the range.
   */
  private SeriesSet select(long minT, long maxT, VectorSelector vs) {
    SeriesSet set = sh.querier.select(minT, maxT, vs.matchers(), sh.ctx);
    return new SeriesSet() {
      private boolean warned;

      @Override
      public boolean next() {
        if (!set.next()) {
          return false;
        }
        if (!warned) {
          Series s = set.at();
          if (s.hasHistograms() && s.histogramIterator().next()) {
            warned = true;
            warn(HISTOGRAMS_LEFT_OUT, vs.positionRange());
          }
        }
        return true;
      }

      @Override
      public Series at() {
        return set.at();
      }
    };
  }

  /**
   * Advances {@code w} to the window of step end {@code wEnd}: {@code (wEnd - range, wEnd]},
   * reaching further either side for an anchored or smoothed selector ({@link ExtendedRanges}).
   */
  void advance(Window w, RangeSource src, long wEnd) {
    w.rangeStart = wEnd - src.rangeMs;
    w.rangeEnd = wEnd;
    w.ext = src.ext;
    w.advance(wEnd - src.rangeMs - src.beforeMs, wEnd + src.afterMs);
  }

  long windowEnd(RangeSource src, int i) {
    return eff(i, src.at, src.offsetMs);
  }

  RangeSource rangeSource(Expr e) {
    e = unwrap(e);
    RangeSource src = new RangeSource();
    src.argPos = e.positionRange();
    if (e instanceof MatrixSelector ms) {
      SeriesSet set = selectRange(ms, src);
      while (set.next()) {
        src.add(set.at());
      }
      return src;
    }
    SubqueryExpr sq = (SubqueryExpr) e;
    src.rangeMs = sq.range().toMillis();
    src.offsetMs = sq.offset().toMillis();
    src.at = sq.at();
    src.selectorExpr = sq;
    long step = sq.hasStep() ? sq.step().toMillis() : sh.options.defaultSubqueryStep().toMillis();
    long a = windowEnd(src, 0);
    long b = windowEnd(src, n - 1);
    long lo = Math.min(a, b) - src.rangeMs;
    long innerStart = Math.floorDiv(lo, step) * step + step;
    long innerEnd = Math.max(a, b);
    if (innerStart > innerEnd) {
      return src;
    }
    Evaluator child = new Evaluator(sh, innerStart, innerEnd, step);
    long before = sh.held;
    if (unwrap(sq.expr()) instanceof VectorSelector) {
      // A selector's series are distinct: each becomes its points as it is read, without the
      // inner vector of all of them first.
      child.stream(sq.expr(), ss -> src.addPoints(ss, child));
      src.held = Math.max(0, sh.held - before);
      return src;
    }
    Object r = child.eval(sq.expr());
    src.held = Math.max(0, sh.held - before);
    List<StepSeries> series;
    if (r instanceof Scal s) {
      StepSeries ss = new StepSeries(Labels.empty(), child.n);
      for (int i = 0; i < child.n; i++) {
        ss.set(i, s.v()[i]);
      }
      series = List.of(ss);
    } else {
      series = mergeSameLabels(((Vec) r).series(), false);
    }
    for (StepSeries ss : series) {
      src.addPoints(ss, child);
    }
    return src;
  }

  /** Series {@code i}'s points, through {@code w}'s reused iterator cursor where it is a series. */
  Cursor cursorOf(RangeSource src, int i, Window w) {
    Object d = src.data.get(i);
    if (d instanceof Series s) {
      w.iterator = s.iterator(w.iterator);
      return w.iteratorCursor.reset(w.iterator);
    }
    Object[] arr = (Object[]) d;
    long[] ts = (long[]) arr[0];
    return new ArrayCursor(ts, (double[]) arr[1], ts.length);
  }

  /**
   * The points of one series inside the current window {@code (start, end]}: {@code t[lo..hi)}.
   * Points are read from the cursor in bulk into the same buffers: {@code t[hi..filled)} are read
   * but not yet in the window. Since points are in time order, the window holds exactly the points
   * in {@code (start, end]} however it is filled.
   */
  final class Window {
    long[] t = new long[INITIAL_WINDOW_BUFFER];
    double[] v = new double[INITIAL_WINDOW_BUFFER];

    /** Scratch for value bits as read, before stale markers are dropped. */
    long[] bits = new long[INITIAL_WINDOW_BUFFER];

    int lo;
    int hi;

    /** End of the points read from the cursor. */
    int filled;

    /**
     * How many points of the window are below their predecessor ({@code v[i] < v[i-1]}, lo < i <
     * hi).
     */
    int decreases;

    Cursor cur;

    /** Whether the cursor may have points after {@code t[filled-1]}. */
    boolean more;

    final IteratorCursor iteratorCursor = new IteratorCursor();
    SampleIterator iterator;
    long start;
    long end;

    /**
     * The range itself, {@code (rangeStart, rangeEnd]}; the window reaches further when extended.
     */
    long rangeStart;

    long rangeEnd;
    ExtendedRange ext = ExtendedRange.NONE;
    long rangeMs;
    long stepT;
    double p0;
    double p1;
    double out;
    Labels labels;

    void reset(Cursor c) {
      cur = c;
      lo = 0;
      hi = 0;
      filled = 0;
      decreases = 0;
      more = true;
    }

    void advance(long wStart, long wEnd) {
      start = wStart;
      end = wEnd;
      // Locals in the per-point loops: the fields are written back once.
      long[] ts = t;
      double[] vs = v;
      int l = lo;
      int h = hi;
      int dec = decreases;
      while (l < h && ts[l] <= wStart) {
        if (l + 1 < h && vs[l + 1] < vs[l]) {
          dec--;
        }
        l++;
      }
      if (l == h) {
        dec = 0;
        while (h < filled && ts[h] <= wStart) {
          h++;
        }
        l = h;
        if (h == filled) {
          l = 0;
          h = 0;
          filled = 0;
          if (more) {
            filled = cur.seekAndRead(wStart + 1, this, 0, ts.length);
            more = filled == ts.length;
          }
        }
      }
      while (true) {
        int f = filled;
        while (h < f && ts[h] <= wEnd) {
          if (h > l && vs[h] < vs[h - 1]) {
            dec++;
          }
          h++;
        }
        if (h < f || !more) {
          break;
        }
        if (l > 0) {
          System.arraycopy(ts, l, ts, 0, f - l);
          System.arraycopy(vs, l, vs, 0, f - l);
          f -= l;
          h -= l;
          l = 0;
        }
        if (f == ts.length) {
          ts = t = Arrays.copyOf(ts, ts.length * 2);
          vs = v = Arrays.copyOf(vs, vs.length * 2);
          bits = new long[ts.length];
        }
        int want = ts.length - f;
        int got = cur.read(this, f, want);
        filled = f + got;
        more = got == want;
      }
      lo = l;
      hi = h;
      decreases = dec;
    }

    int size() {
      return hi - lo;
    }

    String metricName() {
      String m = labels.get(Labels.METRIC_NAME);
      return m == null ? "" : m;
    }
  }

  /** A function of the points in one window; false for no output at this step. */
  interface Kernel {
    boolean apply(Window w);
  }

  /**
   * Applies a range function: for each series, one pass over its samples with a window sliding
   * forward step by step, so at most one window's samples per series are held.
   */
  Vec rangeCall(Call c, int matrixArg, Kernel k, boolean dropName, Scal p0, Scal p1) {
    return rangeCall(c, matrixArg, k, dropName, p0, p1, false);
  }

  Vec rangeCall(
      Call c, int matrixArg, Kernel k, boolean dropName, Scal p0, Scal p1, boolean stepDependent) {
    List<StepSeries> out = new ArrayList<>();
    rangeCall(c, matrixArg, k, dropName, p0, p1, stepDependent, out::add);
    return new Vec(out); // counted series by series in rangeSlice
  }

  /**
   * {@link #rangeCall(Call, int, Kernel, boolean, Scal, Scal)} into a sink. Over a matrix selector
   * the series are read from the store {@link #RANGE_BATCH} at a time and each batch is computed
   * (on several threads when it is wide) and passed on in order before the next is read, so the
   * function holds one batch of series handles and results, not the whole selection; the sink sees
   * the series in the same order either way. A subquery's inner result is whole anyway.
   */
  void rangeCall(
      Call c,
      int matrixArg,
      Kernel k,
      boolean dropName,
      Scal p0,
      Scal p1,
      boolean stepDependent,
      SeriesSink sink) {
    Expr arg = unwrap(c.args().get(matrixArg));
    Window w = new Window();
    if (arg instanceof MatrixSelector ms) {
      ExtendedRanges.check(c.function().name(), ms.selector().extendedRange());
      RangeSource src = new RangeSource();
      SeriesSet set = selectRange(ms, src);
      boolean more = true;
      while (more) {
        src.clear();
        while (src.size() < RANGE_BATCH && (more = set.next())) {
          src.add(set.at());
        }
        if (src.size() > 0) {
          rangeBatch(src, w, k, dropName, p0, p1, stepDependent, sink);
        }
      }
      return;
    }
    RangeSource src = rangeSource(arg);
    rangeBatch(src, w, k, dropName, p0, p1, stepDependent, sink);
    release(src.held); // the subquery's result is no longer held (Prometheus' deferred release)
  }

  /** The series of {@code src}, computed in one slice or in parallel ones, passed on in order. */
  private void rangeBatch(
      RangeSource src,
      Window w,
      Kernel k,
      boolean dropName,
      Scal p0,
      Scal p1,
      boolean stepDependent,
      SeriesSink sink) {
    int size = src.size();
    int parts = Math.min(sh.options.parallelism(), size / MIN_SERIES_PER_PART);
    List<StepSeries> out =
        parts <= 1
            ? rangeSlice(src, w, 0, size, k, dropName, p0, p1, stepDependent)
            : rangeParallel(src, parts, k, dropName, p0, p1, stepDependent);
    for (StepSeries s : out) {
      sink.accept(s);
    }
  }

  /**
   * Series are independent until something combines them, so a range function over many series runs
   * on {@code threads} threads: the caller's and common-pool workers. The series are cut into
   * contiguous slices, a few per thread, which the threads take in turn from a shared counter, so a
   * thread slowed down by other work on the machine takes fewer; a worker that has not started when
   * the caller ran out of slices is told not to (the caller never waits for an idle pool). The
   * output keeps the series order. Kernels are stateless functions of their {@link Window}; each
   * thread has its own. The sample budget is checked per window against what the query held before
   * (each thread holds one window at a time).
   */
  private List<StepSeries> rangeParallel(
      RangeSource src,
      int threads,
      Kernel k,
      boolean dropName,
      Scal p0,
      Scal p1,
      boolean stepDependent) {
    int size = src.size();
    int slices = Math.min(size / MIN_SERIES_PER_PART, threads * SLICES_PER_THREAD);
    int per = (size + slices - 1) / slices;
    slices = (size + per - 1) / per;
    @SuppressWarnings("unchecked")
    List<StepSeries>[] results = new List[slices];
    AtomicInteger next = new AtomicInteger();
    int count = slices;
    Runnable work =
        () -> {
          Window w = new Window();
          for (int i; (i = next.getAndIncrement()) < count; ) {
            results[i] =
                rangeSlice(
                    src,
                    w,
                    i * per,
                    Math.min(size, (i + 1) * per),
                    k,
                    dropName,
                    p0,
                    p1,
                    stepDependent);
          }
        };
    CallerRunsParallel.run(
        work, threads - 1, () -> next.set(count)); // the others stop after their slice
    if (Thread.currentThread().isInterrupted()) { // as a Future.get() interrupted while waiting
      throw canceled();
    }
    List<StepSeries> out = new ArrayList<>(size);
    for (List<StepSeries> r : results) {
      out.addAll(r);
    }
    return out;
  }

  /** Series {@code [from, to)} of a range function, each in one pass with a sliding window. */
  private List<StepSeries> rangeSlice(
      RangeSource src,
      Window w,
      int from,
      int to,
      Kernel k,
      boolean dropName,
      Scal p0,
      Scal p1,
      boolean stepDependent) {
    List<StepSeries> out = new ArrayList<>();
    w.rangeMs = src.rangeMs;
    // With @ every step sees the same window: the value is reused unless the kernel reads the
    // step's time (predict_linear's intercept).
    boolean reuse = src.at != null && !stepDependent;
    int ticks = 0;
    for (int s = from; s < to; s++) {
      checkNow();
      w.reset(cursorOf(src, s, w));
      w.labels = src.labels(s);
      StepSeries r = new StepSeries(src.labels(s), n);
      r.dropName = dropName || src.dropName(s);
      long prevEnd = Long.MIN_VALUE;
      boolean prevHas = false;
      double prevVal = 0;
      for (int i = 0; i < n; i++) {
        if ((++ticks & 63) == 0) {
          checkNow();
        }
        long wEnd = windowEnd(src, i);
        w.stepT = times[i];
        double a0 = p0 == null ? 0 : p0.v()[i];
        double a1 = p1 == null ? 0 : p1.v()[i];
        if (reuse && wEnd == prevEnd && a0 == w.p0 && a1 == w.p1) {
          if (prevHas) {
            r.set(i, prevVal);
          }
          continue;
        }
        w.p0 = a0;
        w.p1 = a1;
        advance(w, src, wEnd);
        checkWindow(w.size());
        prevEnd = wEnd;
        prevHas = w.size() > 0 && k.apply(w);
        if (prevHas) {
          prevVal = w.out;
          r.set(i, w.out);
        }
      }
      int c = r.count();
      if (c > 0) {
        acquire(c);
        out.add(r);
      }
    }
    return out;
  }

  static boolean constant(Scal s) {
    if (s == null) {
      return true;
    }
    for (double d : s.v()) {
      if (Double.doubleToRawLongBits(d) != Double.doubleToRawLongBits(s.v()[0])) {
        return false;
      }
    }
    return true;
  }

  // ---------------------------------------------------------------- labels

  /**
   * The labels without the metric's identity: {@code __name__} and, as Prometheus drops them with
   * it ({@code DropReserved(schema.IsMetadataLabel)}), the type-and-unit labels {@code __type__}
   * and {@code __unit__}.
   */
  static Labels dropName(Labels l) {
    if (l.get(Labels.METRIC_NAME) == null
        && l.get(TYPE_LABEL) == null
        && l.get(UNIT_LABEL) == null) {
      return l;
    }
    return l.toBuilder().remove(Labels.METRIC_NAME).remove(TYPE_LABEL).remove(UNIT_LABEL).build();
  }

  /** The type-and-unit labels of Prometheus 3 ({@code --enable-feature=type-and-unit-labels}). */
  static final String TYPE_LABEL = "__type__";

  static final String UNIT_LABEL = "__unit__";

  /**
   * Series with the same labels become one (after name dropping two may collide); two values at one
   * step are an error when {@code strict}, else the first wins.
   */
  List<StepSeries> mergeSameLabels(List<StepSeries> in, boolean strict) {
    if (in.size() <= 1) {
      return in;
    }
    Map<Labels, StepSeries> byLabels = new LinkedHashMap<>();
    boolean dup = false;
    for (StepSeries s : in) {
      StepSeries prev = byLabels.putIfAbsent(s.labels, s);
      if (prev != null) {
        dup = true;
        int m = s.v.length;
        for (int i = 0; i < m; i++) {
          if (s.has[i]) {
            if (prev.has[i]) {
              if (strict) {
                throw QueryException.execution(
                    "vector cannot contain metrics with the same labelset");
              }
              continue;
            }
            prev.set(i, s.v[i]);
          }
        }
      }
    }
    return dup ? new ArrayList<>(byLabels.values()) : in;
  }

  /**
   * The position text Prometheus appends to an annotation ({@code posrange.StartPosInput}): {@code
   * line:column} of the start, the column counted in UTF-8 bytes from 1, as Go indexes the query.
   */
  String pos(PositionRange pr) {
    return startPos(sh.query, pr.start());
  }

  /** {@code line:column} of char {@code p} of {@code q}, the column in UTF-8 bytes, from 1. */
  static String startPos(String q, int p) {
    int end = Math.min(p, q.length());
    int line = 1;
    int lastNl = -1;
    for (int i = 0; i < end; i++) {
      if (q.charAt(i) == '\n') {
        line++;
        lastNl = i;
      }
    }
    int col = 1;
    for (int i = lastNl + 1; i < end; i++) {
      char c = q.charAt(i);
      if (c < 0x80) {
        col += 1;
      } else if (c < 0x800) {
        col += 2;
      } else if (Character.isHighSurrogate(c)
          && i + 1 < end
          && Character.isLowSurrogate(q.charAt(i + 1))) {
        col += 4; // one code point beyond the BMP: 4 bytes for the pair
        i++;
      } else {
        col += 3;
      }
    }
    return line + ":" + col;
  }

  void warn(String text, PositionRange pr) {
    String message = "PromQL warning: " + text;
    sh.annotations.warn(message, message + " (" + pos(pr) + ")");
  }

  void info(String text, PositionRange pr) {
    String message = "PromQL info: " + text;
    sh.annotations.info(message, message + " (" + pos(pr) + ")");
  }

  static List<LabelMatcher> matchersOf(Expr e) {
    e = unwrap(e);
    if (e instanceof VectorSelector vs) {
      return vs.matchers();
    }
    if (e instanceof MatrixSelector ms) {
      return ms.selector().matchers();
    }
    return null;
  }
}
