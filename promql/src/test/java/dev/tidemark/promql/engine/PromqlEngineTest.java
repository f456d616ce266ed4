package dev.tidemark.promql.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import dev.tidemark.promql.parser.ParserOptions;
import dev.tidemark.tsdb.append.SampleBatch;
import dev.tidemark.tsdb.engine.Engine;
import dev.tidemark.tsdb.engine.EngineConfig;
import dev.tidemark.tsdb.kv.InMemoryKvStore;
import dev.tidemark.tsdb.model.Labels;
import dev.tidemark.tsdb.model.MetricMetadata;
import dev.tidemark.tsdb.query.ForwardingQuerier;
import dev.tidemark.tsdb.query.LabelMatcher;
import dev.tidemark.tsdb.query.Querier;
import dev.tidemark.tsdb.query.QueryContext;
import dev.tidemark.tsdb.query.SeriesSet;
import dev.tidemark.tsdb.time.ManualClock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Seeded property tests of the evaluator against brute-force references computed straight from the
 * loaded samples, plus the limits (sample budget, cancellation, deadline).
 */
class PromqlEngineTest {
  static final long MIN = 60_000;
  static final long LOOKBACK = 5 * MIN;

  /** One random series: its labels and samples (NaN with stale bits = staleness marker). */
  record Data(Labels labels, long[] ts, double[] vs) {}

  final List<Engine> engines = new ArrayList<>();

  @AfterEach
  void close() {
    engines.forEach(Engine::close);
  }

  Engine load(List<Data> data) {
    long newest = 0;
    SampleBatch b = new SampleBatch();
    for (Data d : data) {
      for (int i = 0; i < d.ts.length; i++) {
        if (Double.doubleToRawLongBits(d.vs[i]) == SampleBatch.STALE_NAN_BITS) {
          b.addStaleMarker(d.labels, MetricMetadata.UNKNOWN, d.ts[i]);
          b.endPoint();
        } else {
          b.addPoint(d.labels, MetricMetadata.UNKNOWN, d.ts[i], d.vs[i]);
        }
        newest = Math.max(newest, d.ts[i]);
      }
    }
    Engine e =
        Engine.open(
            new InMemoryKvStore(),
            EngineConfig.builder()
                .clock(new ManualClock(newest))
                .retention(Duration.ofDays(365 * 100))
                .maxFutureSkew(Duration.ofDays(365))
                .build());
    engines.add(e);
    assertThat(e.append(b).rejectedPoints()).isZero();
    return e;
  }

  /** Counters with resets, gaps (some longer than the lookback) and staleness markers. */
  static List<Data> randomData(Random r, int series) {
    List<Data> out = new ArrayList<>();
    for (int s = 0; s < series; s++) {
      List<Long> ts = new ArrayList<>();
      List<Double> vs = new ArrayList<>();
      long t = r.nextInt(120) * 1000L;
      double v = r.nextInt(100);
      while (t < 120 * MIN) {
        int kind = r.nextInt(20);
        if (kind == 0) {
          vs.add(Double.longBitsToDouble(SampleBatch.STALE_NAN_BITS));
        } else {
          if (kind == 1) {
            v = r.nextInt(10); // counter reset
          } else {
            v += r.nextInt(50);
          }
          vs.add(v);
        }
        ts.add(t);
        t += r.nextInt(15) == 0 ? (6 + r.nextInt(10)) * MIN : (5 + r.nextInt(60)) * 1000L;
      }
      Labels l = Labels.of("__name__", "m_total", "g", "g" + (s % 3), "i", Integer.toString(s));
      out.add(
          new Data(
              l,
              ts.stream().mapToLong(Long::longValue).toArray(),
              vs.stream().mapToDouble(Double::doubleValue).toArray()));
    }
    return out;
  }

  static boolean stale(double v) {
    return Double.doubleToRawLongBits(v) == SampleBatch.STALE_NAN_BITS;
  }

  /** The reference instant selector: newest sample in (t - 5m, t], absent if it is a marker. */
  static Double instant(Data d, long t) {
    Double v = null;
    for (int i = 0; i < d.ts.length; i++) {
      if (d.ts[i] > t - LOOKBACK && d.ts[i] <= t) {
        v = stale(d.vs[i]) ? null : d.vs[i];
      }
    }
    return v;
  }

  /** The reference window: samples in (t - r, t], markers left out. */
  static List<double[]> window(Data d, long t, long r) {
    List<double[]> w = new ArrayList<>();
    for (int i = 0; i < d.ts.length; i++) {
      if (d.ts[i] > t - r && d.ts[i] <= t && !stale(d.vs[i])) {
        w.add(new double[] {d.ts[i], d.vs[i]});
      }
    }
    return w;
  }

  /** Prometheus' extrapolatedRate for a counter, written plainly. */
  static Double rate(List<double[]> w, long t, long r) {
    if (w.size() < 2) {
      return null;
    }
    double inc = 0;
    for (int i = 1; i < w.size(); i++) {
      double d = w.get(i)[1] - w.get(i - 1)[1];
      inc += d >= 0 ? d : w.get(i)[1];
    }
    double first = w.get(0)[0];
    double last = w.get(w.size() - 1)[0];
    double sampled = (last - first) / 1000;
    double avg = sampled / (w.size() - 1);
    double toStart = (first - (t - r)) / 1000;
    double toEnd = (t - last) / 1000;
    if (toStart >= avg * 1.1) {
      toStart = avg / 2;
    }
    if (inc > 0 && w.get(0)[1] >= 0) {
      toStart = Math.min(toStart, sampled * (w.get(0)[1] / inc));
    }
    if (toEnd >= avg * 1.1) {
      toEnd = avg / 2;
    }
    return inc * (sampled + toStart + toEnd) / sampled / (r / 1000.0);
  }

  static Map<Labels, Double> vector(QueryResult r) {
    Map<Labels, Double> m = new HashMap<>();
    for (Value.Sample s : ((Value.Vector) r.value()).samples()) {
      m.put(s.labels(), s.value());
    }
    return m;
  }

  /** How many values the comparisons looked at, so a test cannot pass on empty results. */
  int compared;

  void assertClose(Map<Labels, Double> got, Map<Labels, Double> want, String what) {
    compared += want.size();
    assertThat(got.keySet()).as(what).isEqualTo(want.keySet());
    want.forEach(
        (l, v) ->
            assertThat(got.get(l))
                .as(what + " " + l)
                .isCloseTo(v, within(Math.abs(v) * 1e-9 + 1e-9)));
  }

  static Labels noName(Labels l) {
    return l.toBuilder().remove("__name__").build();
  }

  @Test
  void instantQueriesMatchBruteForce() {
    PromqlEngine promql = new PromqlEngine();
    for (long seed = 1; seed <= 8; seed++) {
      Random r = new Random(seed);
      List<Data> data = randomData(r, 7);
      Engine e = load(data);
      for (int q = 0; q < 25; q++) {
        long t = r.nextInt(130 * 60) * 1000L;
        long range = (1 + r.nextInt(10)) * MIN;
        String rs = (range / MIN) + "m";
        String what = "seed " + seed + " t=" + t + " range=" + rs;

        Map<Labels, Double> sel = new HashMap<>();
        Map<Labels, Double> rate = new HashMap<>();
        Map<Labels, Double> sum = new HashMap<>();
        Map<Labels, Double> avg = new HashMap<>();
        Map<Labels, Double> min = new HashMap<>();
        Map<Labels, Double> max = new HashMap<>();
        Map<Labels, Double> cnt = new HashMap<>();
        Map<Labels, Double> last = new HashMap<>();
        Map<Labels, double[]> byG = new TreeMap<>();
        for (Data d : data) {
          Double v = instant(d, t);
          if (v != null) {
            sel.put(d.labels, v);
            double[] acc =
                byG.computeIfAbsent(Labels.of("g", d.labels.get("g")), k -> new double[2]);
            acc[0] += v;
            acc[1]++;
          }
          List<double[]> w = window(d, t, range);
          Double rv = rate(w, t, range);
          if (rv != null) {
            rate.put(noName(d.labels), rv);
          }
          if (!w.isEmpty()) {
            double s = 0;
            double mn = Double.POSITIVE_INFINITY;
            double mx = Double.NEGATIVE_INFINITY;
            for (double[] p : w) {
              s += p[1];
              mn = Math.min(mn, p[1]);
              mx = Math.max(mx, p[1]);
            }
            sum.put(noName(d.labels), s);
            avg.put(noName(d.labels), s / w.size());
            min.put(noName(d.labels), mn);
            max.put(noName(d.labels), mx);
            cnt.put(noName(d.labels), (double) w.size());
            last.put(d.labels, w.get(w.size() - 1)[1]);
          }
        }
        Map<Labels, Double> sumBy = new HashMap<>();
        Map<Labels, Double> avgBy = new HashMap<>();
        byG.forEach(
            (g, acc) -> {
              sumBy.put(g, acc[0]);
              avgBy.put(g, acc[0] / acc[1]);
            });

        assertClose(vector(promql.instantQuery(e, "m_total", t)), sel, what + " selector");
        assertClose(
            vector(promql.instantQuery(e, "rate(m_total[" + rs + "])", t)), rate, what + " rate");
        assertClose(
            vector(promql.instantQuery(e, "sum_over_time(m_total[" + rs + "])", t)),
            sum,
            what + " sum_over_time");
        assertClose(
            vector(promql.instantQuery(e, "avg_over_time(m_total[" + rs + "])", t)),
            avg,
            what + " avg_over_time");
        assertClose(
            vector(promql.instantQuery(e, "min_over_time(m_total[" + rs + "])", t)),
            min,
            what + " min_over_time");
        assertClose(
            vector(promql.instantQuery(e, "max_over_time(m_total[" + rs + "])", t)),
            max,
            what + " max_over_time");
        assertClose(
            vector(promql.instantQuery(e, "count_over_time(m_total[" + rs + "])", t)),
            cnt,
            what + " count_over_time");
        assertClose(
            vector(promql.instantQuery(e, "last_over_time(m_total[" + rs + "])", t)),
            last,
            what + " last_over_time");
        assertClose(
            vector(promql.instantQuery(e, "sum by (g) (m_total)", t)), sumBy, what + " sum by");
        assertClose(
            vector(promql.instantQuery(e, "avg by (g) (m_total)", t)), avgBy, what + " avg by");
      }
    }
    assertThat(compared).isGreaterThan(5_000);
  }

  @Test
  void rangeQueryEqualsInstantQueryAtEveryStep() {
    PromqlEngine promql = new PromqlEngine();
    for (long seed = 11; seed <= 14; seed++) {
      Random r = new Random(seed);
      Engine e = load(randomData(r, 5));
      for (String q :
          List.of(
              "m_total",
              "rate(m_total[3m])",
              "sum by (g) (increase(m_total[7m]))",
              "max_over_time(m_total[2m] offset 1m)",
              "avg_over_time(m_total[10m:30s])",
              "m_total > 100",
              "resets(m_total[20m])")) {
        long start = r.nextInt(60) * MIN + r.nextInt(60_000);
        long step = (1 + r.nextInt(120)) * 1000L;
        long end = start + 40 * step;
        Value.Matrix m = (Value.Matrix) promql.rangeQuery(e, q, start, end, step).value();
        for (long t = start; t <= end; t += step) {
          Map<Labels, Double> fromRange = new HashMap<>();
          for (Value.Series s : m.series()) {
            for (int i = 0; i < s.size(); i++) {
              if (s.timestamps()[i] == t) {
                fromRange.put(s.labels(), s.values()[i]);
              }
            }
          }
          assertClose(
              fromRange,
              vector(promql.instantQuery(e, q, t)),
              "seed " + seed + " " + q + " at " + t);
        }
      }
    }
    assertThat(compared).isGreaterThan(2_000);
  }

  @Test
  void rangeFunctionsGiveTheSameBitsInParallelSlices() {
    Engine e = load(randomData(new Random(21), 70));
    PromqlEngine serial = new PromqlEngine(EngineOptions.DEFAULTS.withParallelism(1));
    PromqlEngine parallel = new PromqlEngine(EngineOptions.DEFAULTS.withParallelism(4));
    for (String q :
        List.of(
            "rate(m_total[3m])",
            "sum by (g) (increase(m_total[7m]))",
            "max_over_time(m_total[2m] offset 1m)",
            "avg_over_time(m_total[10m:30s])",
            "quantile_over_time(0.3, m_total[9m])",
            "resets(m_total[20m])")) {
      Value.Matrix a = (Value.Matrix) serial.rangeQuery(e, q, 0, 120 * MIN, 20_000).value();
      Value.Matrix b = (Value.Matrix) parallel.rangeQuery(e, q, 0, 120 * MIN, 20_000).value();
      assertThat(b.series()).as(q).hasSameSizeAs(a.series());
      for (int i = 0; i < a.series().size(); i++) {
        Value.Series x = a.series().get(i);
        Value.Series y = b.series().get(i);
        assertThat(y.labels()).as(q).isEqualTo(x.labels());
        assertThat(y.timestamps()).as(q).isEqualTo(x.timestamps());
        for (int j = 0; j < x.size(); j++) {
          assertThat(Double.doubleToRawLongBits(y.values()[j]))
              .as(q + " " + x.labels())
              .isEqualTo(Double.doubleToRawLongBits(x.values()[j]));
        }
      }
    }
  }

  /**
   * An aggregation folds a selection wider than a batch of the store's series ({@link
   * Evaluator#RANGE_BATCH}) as it is read: every series counted once, none lost at a batch's edge,
   * per group the brute-force references, and the same bits on one thread and on four.
   */
  @Test
  void aggregationsOverSelectionsWiderThanABatchFoldEverySeriesOnce() {
    int series = 2 * Evaluator.RANGE_BATCH + 37;
    List<Data> data = randomData(new Random(77), series);
    Engine e = load(data);
    PromqlEngine serial = new PromqlEngine(EngineOptions.DEFAULTS.withParallelism(1));
    PromqlEngine parallel = new PromqlEngine(EngineOptions.DEFAULTS.withParallelism(4));
    for (long t : new long[] {37 * MIN, 80 * MIN + 13_000}) {
      String what = "t=" + t;
      Map<Labels, Double> count = new HashMap<>();
      Map<Labels, Double> rates = new HashMap<>();
      Map<Labels, Double> max = new HashMap<>();
      for (Data d : data) {
        Labels g = Labels.of("g", d.labels().get("g"));
        Double v = instant(d, t);
        if (v != null) {
          count.merge(Labels.empty(), 1.0, Double::sum);
          max.merge(g, v, Math::max);
        }
        Double rt = rate(window(d, t, 5 * MIN), t, 5 * MIN);
        if (rt != null) {
          rates.merge(g, rt, Double::sum);
        }
      }
      assertThat(count.get(Labels.empty())).as(what).isGreaterThan(series / 2.0);
      assertClose(vector(serial.instantQuery(e, "count(m_total)", t)), count, what);
      assertClose(vector(serial.instantQuery(e, "max by (g) (m_total)", t)), max, what);
      assertClose(vector(serial.instantQuery(e, "sum by (g) (rate(m_total[5m]))", t)), rates, what);
      assertClose(
          vector(parallel.instantQuery(e, "sum by (g) (rate(m_total[5m]))", t)), rates, what);
    }
    for (String q :
        List.of(
            "sum by (g) (rate(m_total[5m]))",
            "avg(increase(m_total[7m]))",
            "stddev by (g) (delta(m_total[3m]))",
            "count(m_total)")) {
      Value.Matrix a = (Value.Matrix) serial.rangeQuery(e, q, 0, 120 * MIN, 60_000).value();
      Value.Matrix b = (Value.Matrix) parallel.rangeQuery(e, q, 0, 120 * MIN, 60_000).value();
      assertThat(a.series()).as(q).isNotEmpty().hasSameSizeAs(b.series());
      for (int i = 0; i < a.series().size(); i++) {
        Value.Series x = a.series().get(i);
        Value.Series y = b.series().get(i);
        assertThat(y.labels()).as(q).isEqualTo(x.labels());
        assertThat(y.timestamps()).as(q).isEqualTo(x.timestamps());
        for (int j = 0; j < x.size(); j++) {
          assertThat(Double.doubleToLongBits(y.values()[j]))
              .as(q + " " + x.labels())
              .isEqualTo(Double.doubleToLongBits(x.values()[j]));
        }
      }
    }
    // Folded series are counted as if held, as Prometheus holds a selection: the limit is the same.
    PromqlEngine small = new PromqlEngine(EngineOptions.DEFAULTS.withMaxSamples(series / 2));
    assertThatThrownBy(() -> small.instantQuery(e, "count(m_total)", 37 * MIN))
        .hasMessage("query processing would load too many samples into memory in query execution");
    assertThatThrownBy(() -> small.instantQuery(e, "sum(rate(m_total[5m]))", 37 * MIN))
        .hasMessage("query processing would load too many samples into memory in query execution");
  }

  @Test
  void queryOverTheSampleLimitFails() {
    List<Data> data = new ArrayList<>();
    for (int s = 0; s < 20; s++) {
      long[] ts = new long[60];
      double[] vs = new double[60];
      for (int i = 0; i < 60; i++) {
        ts[i] = i * 15_000L;
        vs[i] = i;
      }
      data.add(new Data(Labels.of("__name__", "x", "i", Integer.toString(s)), ts, vs));
    }
    Engine e = load(data);
    PromqlEngine small = new PromqlEngine(EngineOptions.DEFAULTS.withMaxSamples(50));
    assertThatThrownBy(() -> small.rangeQuery(e, "x", 0, 14 * MIN, 15_000))
        .isInstanceOfSatisfying(
            QueryException.class,
            q -> assertThat(q.errorType()).isEqualTo(QueryException.ErrorType.EXECUTION))
        .hasMessage("query processing would load too many samples into memory in query execution");
    PromqlEngine tiny = new PromqlEngine(EngineOptions.DEFAULTS.withMaxSamples(10));
    assertThatThrownBy(() -> tiny.instantQuery(e, "sum(rate(x[10m]))", 14 * MIN))
        .hasMessage("query processing would load too many samples into memory in query execution");
    // within the budget the same queries work
    assertThat(
            new PromqlEngine(EngineOptions.DEFAULTS.withMaxSamples(100_000))
                .rangeQuery(e, "x", 0, 14 * MIN, 15_000)
                .value())
        .isInstanceOf(Value.Matrix.class);
  }

  /** Every series 0..n-1 of metric {@code x}, a sample every 15 s over {@code [0, 30m]}. */
  List<Data> denseSeries(int n) {
    List<Data> data = new ArrayList<>();
    for (int s = 0; s < n; s++) {
      long[] ts = new long[121];
      double[] vs = new double[121];
      for (int i = 0; i <= 120; i++) {
        ts[i] = i * 15_000L;
        vs[i] = s + i;
      }
      data.add(new Data(Labels.of("__name__", "x", "i", Integer.toString(s)), ts, vs));
    }
    return data;
  }

  /** {@code inner}, counting the series whose samples are read (iterators handed out). */
  static Querier countingSeries(Querier inner, java.util.concurrent.atomic.AtomicInteger read) {
    return new ForwardingQuerier(inner) {
      @Override
      public SeriesSet select(long minT, long maxT, List<LabelMatcher> matchers, QueryContext ctx) {
        SeriesSet set = inner.select(minT, maxT, matchers, ctx);
        return new SeriesSet() {
          @Override
          public boolean next() {
            return set.next();
          }

          @Override
          public dev.tidemark.tsdb.query.Series at() {
            dev.tidemark.tsdb.query.Series s = set.at();
            return new dev.tidemark.tsdb.query.Series() {
              @Override
              public Labels labels() {
                return s.labels();
              }

              @Override
              public MetricMetadata metadata() {
                return s.metadata();
              }

              @Override
              public dev.tidemark.tsdb.query.SampleIterator iterator() {
                read.incrementAndGet();
                return s.iterator();
              }

              @Override
              public dev.tidemark.tsdb.query.SampleIterator iterator(
                  dev.tidemark.tsdb.query.SampleIterator reuse) {
                read.incrementAndGet();
                return s.iterator(reuse);
              }
            };
          }
        };
      }
    };
  }

  @Test
  void queriesTogetherStayWithinTheSharedBudgetAndGiveBackWhatTheyHeldHoweverTheyEnd() {
    Engine e = load(denseSeries(20)); // 121 samples per series over 30 minutes
    QueryMemory memory = new QueryMemory(1_000);
    PromqlEngine shared = new PromqlEngine(EngineOptions.DEFAULTS, ParserOptions.DEFAULT, memory);
    // Alone, a query within the budget answers, and gives everything back.
    assertThat(shared.instantQuery(e, "count(x)", 30 * MIN).value()).isNotNull();
    assertThat(memory.held()).isZero();
    // Another query holds most of the budget: this one, within its own limit, fails naming the
    // shared budget, and gives back what it took.
    assertThat(memory.tryAcquire(900)).isTrue();
    // (its windows of 30 minutes hold 121 samples each: with 900 held elsewhere, over 1,000)
    assertThatThrownBy(() -> shared.instantQuery(e, "sum(rate(x[30m]))", 30 * MIN))
        .isInstanceOfSatisfying(
            QueryException.class,
            q -> assertThat(q.errorType()).isEqualTo(QueryException.ErrorType.EXECUTION))
        .hasMessage(
            "query processing would load too many samples into memory in query execution: the"
                + " queries running now would hold more than the 1000 samples the server allows"
                + " at once");
    assertThat(memory.held()).isEqualTo(900);
    memory.release(900);
    assertThat(shared.instantQuery(e, "sum(rate(x[30m]))", 30 * MIN).value()).isNotNull();
    assertThat(shared.rangeQuery(e, "x", 0, 30 * MIN, 60_000).value()).isNotNull();
    assertThat(memory.held()).isZero();
    // A query over its own limit fails with Prometheus' text, and leaves nothing held.
    PromqlEngine small =
        new PromqlEngine(EngineOptions.DEFAULTS.withMaxSamples(50), ParserOptions.DEFAULT, memory);
    assertThatThrownBy(() -> small.rangeQuery(e, "x", 0, 30 * MIN, 15_000))
        .hasMessage("query processing would load too many samples into memory in query execution");
    assertThat(memory.held()).isZero();
  }

  @Test
  void aWideSubqueryStopsAtTheSampleLimitBeforeReadingEverySeries() {
    Engine e = load(denseSeries(400));
    // The subquery's inner selector holds 121 samples per series (every 15 s step of 30 minutes):
    // a limit of 1,000 is passed by the ninth series, and the query must stop there, not first
    // read (and allocate step arrays for) all 400.
    for (String q : List.of("max_over_time(x[30m:15s])", "sum_over_time(rate(x[1m])[30m:15s])")) {
      java.util.concurrent.atomic.AtomicInteger read =
          new java.util.concurrent.atomic.AtomicInteger();
      PromqlEngine small = new PromqlEngine(EngineOptions.DEFAULTS.withMaxSamples(1_000));
      assertThatThrownBy(() -> small.instantQuery(countingSeries(e, read), q, 30 * MIN))
          .as(q)
          .isInstanceOfSatisfying(
              QueryException.class,
              x -> assertThat(x.errorType()).isEqualTo(QueryException.ErrorType.EXECUTION))
          .hasMessage(
              "query processing would load too many samples into memory in query execution");
      assertThat(read.get()).as(q).isLessThan(20);
    }
    // the same query within the limit answers every series
    Value v =
        new PromqlEngine(EngineOptions.DEFAULTS.withMaxSamples(400 * 121 + 400))
            .instantQuery(e, "max_over_time(x[30m:15s])", 30 * MIN)
            .value();
    assertThat(((Value.Vector) v).samples()).hasSize(400);
  }

  @Test
  void aRangeFunctionCountsItsOutputAsItGoes() {
    Engine e = load(denseSeries(400));
    java.util.concurrent.atomic.AtomicInteger read =
        new java.util.concurrent.atomic.AtomicInteger();
    // 121 output steps per series: the output passes 1,000 samples by the ninth series
    PromqlEngine small =
        new PromqlEngine(EngineOptions.DEFAULTS.withMaxSamples(1_000).withParallelism(1));
    assertThatThrownBy(
            () -> small.rangeQuery(countingSeries(e, read), "rate(x[1m])", 0, 30 * MIN, 15_000))
        .hasMessage("query processing would load too many samples into memory in query execution");
    assertThat(read.get()).isLessThan(20);
  }

  /** One sample at 0 of {@code x{src=value}} for each value. */
  Engine withSrcValues(List<String> values) {
    List<Data> data = new ArrayList<>();
    for (int i = 0; i < values.size(); i++) {
      data.add(
          new Data(
              Labels.of("__name__", "x", "i", Integer.toString(i), "src", values.get(i)),
              new long[] {0},
              new double[] {i}));
    }
    return load(data);
  }

  static String labelOf(QueryResult r, String name) {
    return ((Value.Vector) r.value()).samples().get(0).labels().get(name);
  }

  @Test
  void labelReplaceExpandsAsGoWithRe2Syntax() {
    Engine e = withSrcValues(List.of("host-42.example"));
    PromqlEngine promql = new PromqlEngine();
    String[][] cases = {
      {"$1", "host-(\\d+)\\..*", "42"},
      {"${1}x", "host-(\\d+)\\..*", "42x"},
      {"$1x", "host-(\\d+)\\..*", ""}, // Go: the group named "1x", which does not exist
      {"${num}-$dom", "host-(?P<num>\\d+)\\.(?P<dom>.*)", "42-example"},
      {"$$1", "host-(\\d+).*", "$1"},
      {"$2", "host-(\\d+).*", ""}, // no such group
      {"${1", "host-(\\d+).*", "${1"},
      {"$1", "(?i)HOST-(\\d+).*", "42"},
    };
    for (String[] c : cases) {
      String q = "label_replace(x, \"dst\", \"" + c[0] + "\", \"src\", `" + c[1] + "`)";
      assertThat(labelOf(promql.instantQuery(e, q, 0), "dst"))
          .as(q)
          .isEqualTo(c[2].isEmpty() ? null : c[2]);
    }
    // anchored: a partial match changes nothing
    assertThat(
            labelOf(
                promql.instantQuery(e, "label_replace(x, \"dst\", \"y\", \"src\", \"host\")", 0),
                "dst"))
        .isNull();
    // Java-only syntax (back references) is not RE2: Prometheus' error
    assertThatThrownBy(
            () -> promql.instantQuery(e, "label_replace(x, \"dst\", \"$1\", \"src\", `(a)\\1`)", 0))
        .isInstanceOfSatisfying(
            QueryException.class,
            x -> assertThat(x.errorType()).isEqualTo(QueryException.ErrorType.EXECUTION))
        .hasMessage("invalid regular expression in label_replace(): (a)\\1");
  }

  @Test
  void labelReplaceNeverBacktracks() {
    // (.*a){12}c against 40 'a's: java.util.regex tries the ways to split them in 12 (minutes);
    // RE2 is linear in the value
    Engine e = withSrcValues(List.of("a".repeat(40)));
    QueryResult r =
        org.junit.jupiter.api.Assertions.assertTimeoutPreemptively(
            Duration.ofSeconds(10),
            () ->
                new PromqlEngine()
                    .instantQuery(
                        e, "label_replace(x, \"dst\", \"$1\", \"src\", \"(.*a){12}c\")", 0));
    assertThat(labelOf(r, "dst")).isNull();
  }

  @Test
  void labelReplaceOverManySeriesHonoursTheDeadline() {
    // 300 values of 20,000 characters: '(.*)(a|b)(.*)c' takes milliseconds on each (linear, but
    // with three groups), seconds in all; the query must stop at its 300 ms deadline
    List<String> values = new ArrayList<>();
    for (int i = 0; i < 300; i++) {
      values.add(Integer.toString(i) + "ab".repeat(10_000));
    }
    Engine e = withSrcValues(values);
    PromqlEngine promql =
        new PromqlEngine(EngineOptions.DEFAULTS.withTimeout(Duration.ofMillis(300)));
    long t0 = System.nanoTime();
    assertThatThrownBy(
            () ->
                promql.instantQuery(
                    e, "label_replace(x, \"dst\", \"$1\", \"src\", \"(.*)(a|b)(.*)c\")", 0))
        .isInstanceOfSatisfying(
            QueryException.class,
            x -> assertThat(x.errorType()).isEqualTo(QueryException.ErrorType.TIMEOUT));
    assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofSeconds(5));
  }

  @Test
  void cancelledQueryStops() {
    Engine e = load(randomData(new Random(3), 50));
    QueryControl control = new QueryControl();
    // A querier that cancels the query as soon as it reads: evaluation must stop with CANCELED.
    Querier cancelling =
        new ForwardingQuerier(e) {
          @Override
          public SeriesSet select(
              long minT, long maxT, List<LabelMatcher> matchers, QueryContext ctx) {
            control.cancel();
            return super.select(minT, maxT, matchers, ctx);
          }
        };
    PromqlEngine promql = new PromqlEngine();
    assertThatThrownBy(
            () ->
                promql.rangeQuery(
                    cancelling, "sum(rate(m_total[5m]))", 0, 120 * MIN, 1000, control))
        .isInstanceOfSatisfying(
            QueryException.class,
            q -> assertThat(q.errorType()).isEqualTo(QueryException.ErrorType.CANCELED));
  }

  /**
   * A querier whose {@code select} matches label values for ever, checking only its {@link
   * QueryContext}, as the engine's costly regex matching does: it ends only if the evaluator hands
   * it the query's deadline and cancel flag.
   */
  static Querier spinningSelect(Querier inner) {
    return new ForwardingQuerier(inner) {
      @Override
      public SeriesSet select(long minT, long maxT, List<LabelMatcher> matchers, QueryContext ctx) {
        while (true) {
          ctx.check();
          Thread.onSpinWait();
        }
      }
    };
  }

  @Test
  void storageReadsHonourTheDeadline() {
    Querier q = spinningSelect(load(randomData(new Random(5), 3)));
    PromqlEngine promql =
        new PromqlEngine(EngineOptions.DEFAULTS.withTimeout(Duration.ofMillis(100)));
    for (String query : List.of("m_total", "rate(m_total[5m])")) {
      assertThatThrownBy(
              () ->
                  org.junit.jupiter.api.Assertions.assertTimeoutPreemptively(
                      Duration.ofSeconds(10), () -> promql.instantQuery(q, query, 60 * MIN)))
          .isInstanceOfSatisfying(
              QueryException.class,
              x -> assertThat(x.errorType()).isEqualTo(QueryException.ErrorType.TIMEOUT))
          .hasMessage("query timed out in expression evaluation");
    }
  }

  @Test
  void storageReadsHonourCancellation() throws Exception {
    Querier q = spinningSelect(load(randomData(new Random(6), 3)));
    QueryControl control = new QueryControl();
    Thread canceler =
        new Thread(
            () -> {
              try {
                Thread.sleep(100);
              } catch (InterruptedException e) {
                return;
              }
              control.cancel();
            });
    canceler.start();
    assertThatThrownBy(
            () ->
                org.junit.jupiter.api.Assertions.assertTimeoutPreemptively(
                    Duration.ofSeconds(10),
                    () -> new PromqlEngine().instantQuery(q, "m_total", 60 * MIN, control)))
        .isInstanceOfSatisfying(
            QueryException.class,
            x -> assertThat(x.errorType()).isEqualTo(QueryException.ErrorType.CANCELED))
        .hasMessage("query was canceled in expression evaluation");
    canceler.join();
  }

  /**
   * The outcome of {@code query} evaluated on a new thread with {@code stackBytes} (0: default).
   */
  static Object onThread(long stackBytes, java.util.function.Supplier<Object> query)
      throws InterruptedException {
    Object[] out = new Object[1];
    Thread t =
        new Thread(
            null,
            () -> {
              try {
                out[0] = query.get();
              } catch (Throwable x) {
                out[0] = x;
              }
            },
            "deep-query",
            stackBytes);
    t.start();
    t.join();
    return out[0];
  }

  @Test
  void theDeepestQueriesTheParserAcceptsEvaluateOnAnOrdinaryThread() throws Exception {
    Engine e = load(randomData(new Random(7), 3));
    PromqlEngine promql = new PromqlEngine();
    for (String q :
        List.of(
            "(".repeat(499) + "m_total" + ")".repeat(499),
            "-".repeat(499) + "m_total",
            "m_total" + " + m_total".repeat(499),
            "m_total" + " or m_total".repeat(499),
            "abs(".repeat(499) + "m_total" + ")".repeat(499),
            "sum(".repeat(499) + "m_total" + ")".repeat(499))) {
      assertThat(onThread(0, () -> promql.rangeQuery(e, q, 0, 30 * MIN, MIN)))
          .as(q.substring(0, 20))
          .isInstanceOf(QueryResult.class);
    }
  }

  @Test
  void aStackOverflowIsTheQuerysErrorNotTheThreads() throws Exception {
    Engine e = load(randomData(new Random(8), 3));
    PromqlEngine promql = new PromqlEngine();
    // A thread with a tiny stack overflows well inside the parser's depth limit: the query fails
    // with Prometheus' error types, the thread goes on.
    Object parse =
        onThread(
            128 * 1024,
            () -> promql.instantQuery(e, "abs(".repeat(499) + "m_total" + ")".repeat(499), 0));
    assertThat(parse)
        .isInstanceOfSatisfying(
            QueryException.class,
            q ->
                assertThat(q.errorType())
                    .isIn(QueryException.ErrorType.BAD_DATA, QueryException.ErrorType.EXECUTION));
  }

  @Test
  void expiredDeadlineIsATimeout() {
    Engine e = load(randomData(new Random(4), 5));
    PromqlEngine promql = new PromqlEngine(EngineOptions.DEFAULTS.withTimeout(Duration.ofNanos(1)));
    assertThatThrownBy(() -> promql.rangeQuery(e, "rate(m_total[5m])", 0, 120 * MIN, 1000))
        .isInstanceOfSatisfying(
            QueryException.class,
            q -> assertThat(q.errorType()).isEqualTo(QueryException.ErrorType.TIMEOUT));
  }

  @Test
  void errorsCarryPrometheusErrorTypes() {
    Engine e =
        load(
            List.of(
                new Data(
                    Labels.of("__name__", "m_total", "i", "a"),
                    new long[] {0, MIN},
                    new double[] {1, 2}),
                new Data(
                    Labels.of("__name__", "m_total", "i", "b"),
                    new long[] {0, MIN},
                    new double[] {1, 2})));
    PromqlEngine promql = new PromqlEngine();
    assertThatThrownBy(() -> promql.instantQuery(e, "sum(", 0))
        .isInstanceOfSatisfying(
            QueryException.class,
            q -> assertThat(q.errorType()).isEqualTo(QueryException.ErrorType.BAD_DATA));
    assertThatThrownBy(() -> promql.rangeQuery(e, "m_total[5m]", 0, MIN, 1000))
        .isInstanceOfSatisfying(
            QueryException.class,
            q -> assertThat(q.errorType()).isEqualTo(QueryException.ErrorType.BAD_DATA));
    assertThatThrownBy(() -> promql.instantQuery(e, "m_total + on() m_total", MIN))
        .isInstanceOfSatisfying(
            QueryException.class,
            q -> assertThat(q.errorType()).isEqualTo(QueryException.ErrorType.EXECUTION))
        .hasMessageStartingWith(
            "found duplicate series for the match group {} on the right hand-side of the operation: [");
  }

  @Test
  void withTypeAndUnitLabelsTheTypeLabelDecidesWhatIsACounter() {
    long[] t = {0, 15_000, 30_000};
    double[] v = {1, 2, 3};
    Engine e =
        load(
            List.of(
                new Data(
                    Labels.of("__name__", "temperature", "__type__", "gauge", "id", "1"), t, v),
                new Data(Labels.of("__name__", "hits", "__type__", "counter", "id", "2"), t, v),
                new Data(
                    Labels.of("__name__", "lat_bucket", "__type__", "histogram", "id", "3"), t, v),
                new Data(Labels.of("__name__", "untyped_total", "id", "4"), t, v)));
    PromqlEngine typed =
        new PromqlEngine(EngineOptions.DEFAULTS.withTypeAndUnitLabels(true), ParserOptions.DEFAULT);
    QueryResult r = typed.instantQuery(e, "rate({__name__=~\".+\"}[1m])", 30_000);
    assertThat(r.annotations().infos())
        .containsExactlyInAnyOrder(
            "PromQL info: metric might not be a counter, __type__ label is not set to \"counter\""
                + " or \"histogram\", got \"gauge\": \"temperature\" (1:6)",
            "PromQL info: metric might not be a counter, __type__ label is not set to \"counter\""
                + " or \"histogram\", got \"\": \"untyped_total\" (1:6)");
    // off, the name decides: only temperature (hits has no _total, but the name rule applies)
    r = new PromqlEngine().instantQuery(e, "increase({__name__=~\".+\"}[1m])", 30_000);
    assertThat(r.annotations().infos())
        .hasSize(2)
        .allMatch(i -> i.contains("name does not end in _total/_sum/_count/_bucket"));
  }

  @Test
  void rateOfANonCounterNameRaisesTheInfo() {
    List<Data> data =
        List.of(
            new Data(
                Labels.of("__name__", "temperature"),
                new long[] {0, 15_000, 30_000},
                new double[] {1, 2, 3}));
    Engine e = load(data);
    QueryResult r = new PromqlEngine().instantQuery(e, "rate(temperature[1m])", 30_000);
    assertThat(r.annotations().infos())
        .containsExactly(
            "PromQL info: metric might not be a counter, name does not end in _total/_sum/_count/_bucket: \"temperature\" (1:6)");
    // One message raised twice is one annotation with the later position, as Prometheus keys
    // them by the text without position; columns count UTF-8 bytes ("é" is 2), as Go's do.
    r =
        new PromqlEngine()
            .instantQuery(e, "rate(temperature{x!=\"é\"}[1m]) + rate(temperature[1m])", 30_000);
    assertThat(r.annotations().infos())
        .containsExactly(
            "PromQL info: metric might not be a counter, name does not end in _total/_sum/_count/_bucket: \"temperature\" (1:39)");
    r = new PromqlEngine().instantQuery(e, "sum(\n  rate(temperature[1m])\n)", 30_000);
    assertThat(r.annotations().infos()).hasSize(1);
    assertThat(r.annotations().infos().get(0)).endsWith(" (2:8)");
    assertThat(Evaluator.startPos("a\n日本 x", 5)).isEqualTo("2:8");
    assertThat(Evaluator.startPos("\uD83D\uDE00 x", 3)).isEqualTo("1:6");
  }

  @Test
  void limitRatioHashesLabelsWithXxh64AsPrometheus() {
    // XXH64 reference vectors (seed 0): the hash Prometheus' labels.Hash() uses.
    com.dynatrace.hash4j.hashing.Hasher64 h = com.dynatrace.hash4j.hashing.Hashing.xxh64();
    assertThat(h.hashBytesToLong(new byte[0])).isEqualTo(0xEF46DB3751D8E999L);
    assertThat(h.hashBytesToLong("abc".getBytes(java.nio.charset.StandardCharsets.UTF_8)))
        .isEqualTo(0x44BC2CF5AD770999L);
    assertThat(Aggregations.unsignedToDouble(-1L)).isEqualTo(18446744073709551615.0);
  }

  @Test
  void histogramQuantileOverClassicBuckets() {
    long[] ts = {0};
    Engine e =
        load(
            List.of(
                new Data(
                    Labels.of("__name__", "h_bucket", "le", "0.1", "j", "a"), ts, new double[] {1}),
                new Data(
                    Labels.of("__name__", "h_bucket", "le", "0.5", "j", "a"), ts, new double[] {3}),
                new Data(
                    Labels.of("__name__", "h_bucket", "le", "+Inf", "j", "a"),
                    ts,
                    new double[] {4}),
                new Data(
                    Labels.of("__name__", "h_bucket", "le", "1", "j", "b"), ts, new double[] {5}),
                new Data(
                    Labels.of("__name__", "h_bucket", "le", "2", "j", "b"), ts, new double[] {4}),
                new Data(
                    Labels.of("__name__", "h_bucket", "le", "+Inf", "j", "b"),
                    ts,
                    new double[] {10})));
    QueryResult r = new PromqlEngine().instantQuery(e, "histogram_quantile(0.5, h_bucket)", 0);
    Map<Labels, Double> got = vector(r);
    assertThat(got.get(Labels.of("j", "a"))).isCloseTo(0.3, within(1e-12));
    // b is not monotonic: le=2 is lifted to 5; rank 5 falls in the first bucket's upper edge
    assertThat(got.get(Labels.of("j", "b"))).isCloseTo(1.0, within(1e-12));
    assertThat(r.annotations().infos())
        .singleElement()
        .asString()
        .startsWith("PromQL info: input to histogram_quantile needed to be fixed for monotonicity");
  }

  @Test
  void labelFunctionsCountValuesAndLimits() {
    long[] ts = {0};
    Engine e =
        load(
            List.of(
                new Data(Labels.of("__name__", "x", "src", "a-1"), ts, new double[] {2}),
                new Data(Labels.of("__name__", "x", "src", "b-2"), ts, new double[] {2}),
                new Data(Labels.of("__name__", "x", "src", "c-3"), ts, new double[] {0.5})));
    PromqlEngine promql = new PromqlEngine();
    assertThat(
            vector(
                promql.instantQuery(
                    e, "label_replace(x, \"dst\", \"${1}_${2}x\", \"src\", \"(.*)-(.*)\")", 0)))
        .containsKey(Labels.of("__name__", "x", "src", "a-1", "dst", "a_1x"));
    // Go's Expand reads "$1_" as the group named "1_", which does not exist.
    assertThat(
            vector(
                promql.instantQuery(
                    e, "label_replace(x, \"dst\", \"$1_${2}x\", \"src\", \"(.*)-(.*)\")", 0)))
        .containsKey(Labels.of("__name__", "x", "src", "a-1", "dst", "1x"));
    assertThat(
            vector(
                promql.instantQuery(e, "label_join(x, \"dst\", \"+\", \"src\", \"__name__\")", 0)))
        .containsKey(Labels.of("__name__", "x", "src", "c-3", "dst", "c-3+x"));
    assertThat(vector(promql.instantQuery(e, "count_values(\"v\", x)", 0)))
        .isEqualTo(Map.of(Labels.of("v", "2"), 2.0, Labels.of("v", "0.5"), 1.0));
    assertThat(vector(promql.instantQuery(e, "limitk(2, x)", 0))).hasSize(2);
    Map<Labels, Double> ratio = vector(promql.instantQuery(e, "limit_ratio(0.5, x)", 0));
    Map<Labels, Double> rest = vector(promql.instantQuery(e, "limit_ratio(-0.5, x)", 0));
    assertThat(ratio.size() + rest.size()).isEqualTo(3);
    assertThat(ratio.keySet()).doesNotContainAnyElementsOf(rest.keySet());
    List<Value.Sample> sorted =
        ((Value.Vector) promql.instantQuery(e, "sort_by_label_desc(x, \"src\")", 0).value())
            .samples();
    assertThat(sorted.get(0).labels().get("src")).isEqualTo("c-3");
  }

  /**
   * {@code count_values} labels by {@code strconv.FormatFloat(v, 'f', -1, 64)} (Prometheus'
   * engine.go): the shortest digits that read back, never an exponent, never Java's longer digits
   * ({@code Double.toString(1e23)} is {@code 9.999999999999999E22} on JDK 17).
   */
  @Test
  void countValuesLabelsWithGoShortestDigits() {
    long[] ts = {0};
    Engine e =
        load(
            List.of(
                new Data(Labels.of("__name__", "x", "i", "1"), ts, new double[] {1e23}),
                new Data(Labels.of("__name__", "x", "i", "2"), ts, new double[] {1e-7}),
                new Data(Labels.of("__name__", "x", "i", "3"), ts, new double[] {-0.0}),
                new Data(Labels.of("__name__", "x", "i", "4"), ts, new double[] {0.1 + 0.2})));
    assertThat(vector(new PromqlEngine().instantQuery(e, "count_values(\"v\", x)", 0)))
        .isEqualTo(
            Map.of(
                Labels.of("v", "100000000000000000000000"), 1.0,
                Labels.of("v", "0.0000001"), 1.0,
                Labels.of("v", "-0"), 1.0,
                Labels.of("v", "0.30000000000000004"), 1.0));
  }
}
