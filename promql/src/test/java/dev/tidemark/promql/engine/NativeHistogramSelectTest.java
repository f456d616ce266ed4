package dev.tidemark.promql.engine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.tidemark.tsdb.append.SampleBatch;
import dev.tidemark.tsdb.engine.Engine;
import dev.tidemark.tsdb.engine.EngineConfig;
import dev.tidemark.tsdb.kv.InMemoryKvStore;
import dev.tidemark.tsdb.model.CounterResetHint;
import dev.tidemark.tsdb.model.HistogramLayout;
import dev.tidemark.tsdb.model.IntegerHistogram;
import dev.tidemark.tsdb.model.Labels;
import dev.tidemark.tsdb.model.MetricMetadata;
import dev.tidemark.tsdb.time.ManualClock;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Native histogram samples in the store (issue #25, step 1) before the evaluator reads them: every
 * selector kind leaves them out of the result and warns, and the float samples of the same query
 * are answered as before.
 */
class NativeHistogramSelectTest {
  static final long T = 1_700_000_000_000L;
  static final Labels HIST = Labels.of("__name__", "latency", "job", "h");
  static final Labels FLOAT = Labels.of("__name__", "latency", "job", "f");

  final Engine engine =
      Engine.open(new InMemoryKvStore(), EngineConfig.builder().clock(new ManualClock(T)).build());

  @AfterEach
  void close() {
    engine.close();
  }

  @Test
  void histogramsAreLeftOutWithAWarning() {
    SampleBatch b = new SampleBatch();
    for (int i = 0; i < 4; i++) {
      long t = T - (3 - i) * 15_000L;
      b.addHistogram(
          HIST,
          MetricMetadata.UNKNOWN,
          t,
          IntegerHistogram.of(
              HistogramLayout.exponential(0, 1e-128, new int[] {0, 1}, null),
              CounterResetHint.UNKNOWN,
              i + 1,
              0,
              i + 1.0,
              new long[] {i + 1},
              null));
      b.endPoint();
      b.addPoint(FLOAT, MetricMetadata.UNKNOWN, t, i);
    }
    assertThat(engine.append(b).rejectedPoints()).isZero();
    PromqlEngine promql = new PromqlEngine();
    for (String q : List.of("latency", "rate(latency[1m])", "sum(latency)", "latency > -1")) {
      QueryResult r = promql.instantQuery(engine, q, T);
      assertThat(r.annotations().warnings())
          .as(q)
          .singleElement()
          .asString()
          .startsWith("PromQL warning: " + Evaluator.HISTOGRAMS_LEFT_OUT);
      assertThat(((Value.Vector) r.value()).samples()).as(q).hasSize(1);
    }
    QueryResult floats = promql.instantQuery(engine, "latency{job=\"f\"}", T);
    assertThat(floats.annotations().warnings()).isEmpty();
    assertThat(((Value.Vector) floats.value()).samples().get(0).value()).isEqualTo(3.0);
    QueryResult range = promql.rangeQuery(engine, "latency", T - 60_000, T, 15_000);
    assertThat(range.annotations().warnings()).hasSize(1);
  }
}
