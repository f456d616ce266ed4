package dev.tidemark.tsdb.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.tidemark.tsdb.append.SampleBatch;
import dev.tidemark.tsdb.kv.InMemoryKvStore;
import dev.tidemark.tsdb.model.Labels;
import dev.tidemark.tsdb.model.MetricMetadata;
import dev.tidemark.tsdb.model.MetricType;
import dev.tidemark.tsdb.model.Temporality;
import dev.tidemark.tsdb.query.LabelMatcher;
import dev.tidemark.tsdb.query.QueryAbortedException;
import dev.tidemark.tsdb.query.QueryContext;
import dev.tidemark.tsdb.time.ManualClock;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Queries cannot hurt ingestion (issue #22): a pathological regex over many long label values is
 * matched outside the engine's lock and stopped by its deadline, while appends on another thread go
 * on. Bounds are generous (a loaded CI machine); without the isolation an append waits for the
 * whole match, seconds.
 */
class QueryIsolationTest {
  static final long T0 = EngineTest.T0;
  static final long MIN = 60_000L;
  static final MetricMetadata GAUGE =
      new MetricMetadata(MetricType.GAUGE, "", Temporality.UNSPECIFIED, false);

  /** Catastrophic for a backtracking engine; linear, but not free, for RE2. */
  static final String PATHOLOGICAL = "(.*a){12}b";

  final ManualClock clock = new ManualClock(T0 + 30 * MIN);
  Engine engine;

  @BeforeEach
  void open() {
    engine =
        Engine.open(
            new InMemoryKvStore(),
            EngineConfig.builder().clock(clock).retentionInterval(Duration.ZERO).build());
  }

  @AfterEach
  void close() {
    engine.close();
  }

  /** {@code n} series of metric {@code big}, each with a 5,000-character value of label l. */
  private void loadLongValues(int n) {
    String a = "a".repeat(5_000);
    SampleBatch b = new SampleBatch();
    for (int i = 0; i < n; i++) {
      b.addPoint(Labels.of("__name__", "big", "l", i + a), GAUGE, T0 + MIN, i);
      if (b.size() == 500) {
        assertThat(engine.append(b).rejectedPoints()).isZero();
        b = new SampleBatch();
      }
    }
    assertThat(engine.append(b).rejectedPoints()).isZero();
  }

  /**
   * Runs {@code query} while another thread appends to other series, one sample at a time; returns
   * the longest an append took.
   */
  private long maxAppendNanosDuring(Runnable query) throws InterruptedException {
    AtomicBoolean stop = new AtomicBoolean();
    AtomicLong maxNanos = new AtomicLong();
    AtomicLong appended = new AtomicLong();
    Thread writer =
        new Thread(
            () -> {
              long t = T0 + 2 * MIN;
              Labels l = Labels.of("__name__", "steady", "job", "w");
              while (!stop.get()) {
                long start = System.nanoTime();
                engine.append(new SampleBatch().addPoint(l, GAUGE, t += 1000, 1));
                maxNanos.accumulateAndGet(System.nanoTime() - start, Math::max);
                appended.incrementAndGet();
              }
            });
    writer.start();
    try {
      while (appended.get() < 10) {
        Thread.onSpinWait(); // the writer is running before the query starts
      }
      query.run();
    } finally {
      stop.set(true);
      writer.join();
    }
    assertThat(appended.get()).isGreaterThan(10);
    return maxNanos.get();
  }

  private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

  private static long millis(long nanos) {
    return nanos / 1_000_000;
  }

  @Test
  void aPathologicalRegexIsStoppedByItsDeadlineWhileAppendsGoOn() throws Exception {
    loadLongValues(2_000);
    List<LabelMatcher> matchers =
        List.of(LabelMatcher.equal("__name__", "big"), LabelMatcher.regex("l", PATHOLOGICAL));
    long deadlineMillis = 1_500;
    for (Consumer<QueryContext> read :
        List.<Consumer<QueryContext>>of(
            ctx -> engine.select(T0, T0 + 10 * MIN, matchers, ctx),
            ctx -> engine.series(T0, T0 + 10 * MIN, matchers, 0, ctx),
            ctx -> engine.labelValues("l", T0, T0 + 10 * MIN, matchers, 0, ctx),
            ctx -> engine.labelNames(T0, T0 + 10 * MIN, matchers, 0, ctx))) {
      long[] took = new long[2];
      long maxAppend =
          maxAppendNanosDuring(
              () -> {
                long cpuStart = THREADS.getCurrentThreadCpuTime();
                long start = System.nanoTime();
                QueryContext ctx = QueryContext.withDeadline(start + deadlineMillis * 1_000_000);
                assertThatThrownBy(() -> read.accept(ctx))
                    .isInstanceOfSatisfying(
                        QueryAbortedException.class,
                        e ->
                            assertThat(e.reason()).isEqualTo(QueryAbortedException.Reason.TIMEOUT));
                took[0] = System.nanoTime() - start;
                took[1] = THREADS.getCurrentThreadCpuTime() - cpuStart;
              });
      assertThat(millis(took[0])).as("stopped soon after its deadline").isLessThan(4_000);
      // And it stopped working there: its own CPU time is bounded the same way.
      assertThat(millis(took[1])).as("query CPU until it stopped").isLessThan(4_000);
      assertThat(millis(maxAppend)).as("longest append during the query").isLessThan(500);
    }
  }

  @Test
  void aCanceledReadStops() {
    loadLongValues(10);
    AtomicBoolean canceled = new AtomicBoolean(true);
    QueryContext ctx = QueryContext.of(Long.MAX_VALUE, canceled::get);
    assertThatThrownBy(
            () -> engine.select(T0, T0 + 10 * MIN, List.of(LabelMatcher.regex("l", ".+")), ctx))
        .isInstanceOfSatisfying(
            QueryAbortedException.class,
            e -> assertThat(e.reason()).isEqualTo(QueryAbortedException.Reason.CANCELED));
    canceled.set(false);
    assertThat(
            engine.select(T0, T0 + 10 * MIN, List.of(LabelMatcher.regex("l", ".+")), ctx).toList())
        .hasSize(10);
  }

  @Test
  void aLimitStopsEarlyAndKeepsTheAnswerSorted() {
    SampleBatch b = new SampleBatch();
    for (int i = 0; i < 1_000; i++) {
      b.addPoint(Labels.of("__name__", "m", "i", String.format("%04d", i)), GAUGE, T0 + MIN, i);
    }
    assertThat(engine.append(b).rejectedPoints()).isZero();
    engine.flush(); // one stored bucket
    clock.set(T0 + 90 * MIN);
    b = new SampleBatch();
    for (int i = 500; i < 1_500; i++) {
      b.addPoint(
          Labels.of("__name__", "m", "i", String.format("%04d", i)), GAUGE, T0 + 61 * MIN, i);
    }
    assertThat(engine.append(b).rejectedPoints()).isZero(); // and one head bucket
    List<LabelMatcher> m = List.of(LabelMatcher.regex("__name__", "m|n"));
    long minT = T0;
    long maxT = T0 + 120 * MIN;
    List<Labels> ten = engine.series(minT, maxT, m, 10, QueryContext.NONE);
    assertThat(ten).hasSize(10).isSorted();
    assertThat(engine.series(minT, maxT, m, 0, QueryContext.NONE)).hasSize(1_500).containsAll(ten);
    assertThat(engine.series(minT, maxT, m, 2_000, QueryContext.NONE)).hasSize(1_500);
    List<String> values = engine.labelValues("i", minT, maxT, List.of(), 7, QueryContext.NONE);
    assertThat(values).hasSize(7).isSorted().doesNotHaveDuplicates();
    assertThat(engine.labelValues("i", minT, maxT, m, 7, QueryContext.NONE)).hasSize(7).isSorted();
    assertThat(engine.labelValues("i", minT, maxT, m, 0, QueryContext.NONE)).hasSize(1_500);
    assertThat(engine.labelNames(minT, maxT, m, 1, QueryContext.NONE)).hasSize(1);
    assertThat(engine.labelNames(minT, maxT, m, 0, QueryContext.NONE))
        .containsExactly("__name__", "i");
  }
}
