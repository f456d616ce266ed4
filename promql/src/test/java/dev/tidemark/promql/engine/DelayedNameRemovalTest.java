package dev.tidemark.promql.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import dev.tidemark.tsdb.append.SampleBatch;
import dev.tidemark.tsdb.engine.Engine;
import dev.tidemark.tsdb.engine.EngineConfig;
import dev.tidemark.tsdb.kv.InMemoryKvStore;
import dev.tidemark.tsdb.model.Labels;
import dev.tidemark.tsdb.model.MetricMetadata;
import dev.tidemark.tsdb.time.ManualClock;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@link EngineOptions#delayedNameRemoval()} on and off, as Prometheus 3.14 evaluates with and
 * without {@code --enable-feature=promql-delayed-name-removal}: off, a node that drops {@code
 * __name__} removes it at once, and two series left with the same labels fail the query there; on,
 * the names are removed from the result only, so an aggregation in between sees distinct series.
 */
class DelayedNameRemovalTest {
  static final long MIN = 60_000;
  static final String SAME_LABELSET = "vector cannot contain metrics with the same labelset";

  Engine store;
  final PromqlEngine delayed = new PromqlEngine(EngineOptions.DEFAULTS);
  final PromqlEngine immediate =
      new PromqlEngine(EngineOptions.DEFAULTS.withDelayedNameRemoval(false));

  /**
   * Every 15 s for 10 min: {@code a_total{job="x"}} growing by 1 a sample and {@code
   * b_total{job="x"}} by 2; {@code c_total{job="y"}} up to 5m and {@code d_total{job="y"}} from 6m,
   * never both at one step.
   */
  @BeforeEach
  void load() {
    SampleBatch b = new SampleBatch();
    for (long t = 0; t <= 10 * MIN; t += 15_000) {
      double k = t / 15_000.0;
      b.addPoint(Labels.of("__name__", "a_total", "job", "x"), MetricMetadata.UNKNOWN, t, k);
      b.addPoint(Labels.of("__name__", "b_total", "job", "x"), MetricMetadata.UNKNOWN, t, 2 * k);
      if (t <= 5 * MIN) {
        b.addPoint(Labels.of("__name__", "c_total", "job", "y"), MetricMetadata.UNKNOWN, t, k);
      }
      if (t >= 6 * MIN) {
        b.addPoint(Labels.of("__name__", "d_total", "job", "y"), MetricMetadata.UNKNOWN, t, k);
      }
    }
    store =
        Engine.open(
            new InMemoryKvStore(),
            EngineConfig.builder()
                .clock(new ManualClock(10 * MIN))
                .retention(Duration.ofDays(365 * 100))
                .build());
    assertThat(store.append(b).rejectedPoints()).isZero();
  }

  @AfterEach
  void close() {
    store.close();
  }

  double scalarOf(QueryResult r) {
    Value.Vector v = (Value.Vector) r.value();
    assertThat(v.samples()).hasSize(1);
    return v.samples().get(0).value();
  }

  @Test
  void anAggregationOverSeriesThatDifferOnlyInTheirNameNeedsDelayedRemoval() {
    // a streamed range function under an aggregation: 1/15 + 2/15 per second
    String q = "sum(rate({job=\"x\"}[1m]))";
    assertThat(scalarOf(delayed.instantQuery(store, q, 5 * MIN))).isCloseTo(0.2, within(1e-9));
    assertThatThrownBy(() -> immediate.instantQuery(store, q, 5 * MIN))
        .isInstanceOf(QueryException.class)
        .hasMessage(SAME_LABELSET);
    assertThatThrownBy(() -> immediate.rangeQuery(store, q, 0, 10 * MIN, MIN))
        .hasMessage(SAME_LABELSET);
    // a node evaluated whole (a unary minus) under an aggregation
    String neg = "sum(-{job=\"x\"})";
    assertThat(scalarOf(delayed.instantQuery(store, neg, 5 * MIN))).isEqualTo(-60.0);
    assertThatThrownBy(() -> immediate.instantQuery(store, neg, 5 * MIN)).hasMessage(SAME_LABELSET);
  }

  @Test
  void withoutDelayedRemovalTheNameIsGoneBeforeTheParentSeesIt() {
    // grouping by __name__ finds none: the name went with rate(); a series of one metric streams
    QueryResult r = immediate.instantQuery(store, "sum by (__name__) (rate(a_total[1m]))", 5 * MIN);
    Value.Vector v = (Value.Vector) r.value();
    assertThat(v.samples()).hasSize(1);
    assertThat(v.samples().get(0).labels()).isEqualTo(Labels.empty());
    // label_replace sees no __name__ to copy from
    Value.Vector copied =
        (Value.Vector)
            immediate
                .instantQuery(
                    store,
                    "label_replace(rate(a_total[1m]), \"was\", \"$1\", \"__name__\", \"(.*)\")",
                    5 * MIN)
                .value();
    assertThat(copied.samples().get(0).labels()).isEqualTo(Labels.of("job", "x"));
    Value.Vector kept =
        (Value.Vector)
            delayed
                .instantQuery(
                    store,
                    "label_replace(rate(a_total[1m]), \"was\", \"$1\", \"__name__\", \"(.*)\")",
                    5 * MIN)
                .value();
    assertThat(kept.samples().get(0).labels()).isEqualTo(Labels.of("job", "x", "was", "a_total"));
  }

  @Test
  void seriesThatMeetAtNoStepBecomeOneEitherWay() {
    for (PromqlEngine e : new PromqlEngine[] {delayed, immediate}) {
      Value.Matrix m =
          (Value.Matrix) e.rangeQuery(store, "rate({job=\"y\"}[1m])", 0, 10 * MIN, MIN).value();
      assertThat(m.series()).hasSize(1);
      assertThat(m.series().get(0).labels()).isEqualTo(Labels.of("job", "y"));
      assertThat(m.series().get(0).timestamps()).hasSize(9); // 1m..5m and 7m..10m
    }
  }
}
