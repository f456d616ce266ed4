package dev.tidemark.tsdb.engine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.tidemark.tsdb.append.AppendResult;
import dev.tidemark.tsdb.append.SampleBatch;
import dev.tidemark.tsdb.kv.InMemoryKvStore;
import dev.tidemark.tsdb.model.Labels;
import dev.tidemark.tsdb.model.MetricMetadata;
import dev.tidemark.tsdb.query.LabelMatcher;
import dev.tidemark.tsdb.query.SampleIterator;
import dev.tidemark.tsdb.query.Series;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class EngineTest {
  static final long T0 = 1_700_000_000_000L;
  MutableClock clock = new MutableClock(T0);
  InMemoryKvStore kv = new InMemoryKvStore();
  EngineConfig config;
  Engine engine;

  @BeforeEach
  void open() {
    config = EngineConfig.builder().clock(clock).retentionInterval(Duration.ZERO).build();
    engine = Engine.open(kv, config);
  }

  @AfterEach
  void close() {
    engine.close();
  }

  static List<String> samples(Series s) {
    List<String> out = new ArrayList<>();
    SampleIterator it = s.iterator();
    while (it.next()) {
      out.add(it.timestampMillis() + "=" + it.value());
    }
    return out;
  }

  @Test
  void selectReturnsOnlySamplesInRange() {
    Labels a = Labels.of("__name__", "up", "job", "a");
    SampleBatch b = new SampleBatch();
    b.addPoint(a, MetricMetadata.UNKNOWN, T0 - 60_000, 1);
    b.addPoint(a, MetricMetadata.UNKNOWN, T0 - 30_000, 2);
    b.addPoint(a, MetricMetadata.UNKNOWN, T0, 3);
    AppendResult r = engine.append(b);
    assertThat(r.rejectedPoints()).isZero();
    List<Series> all = engine.select(T0 - 3_600_000, T0, List.of());
    assertThat(all).hasSize(1);
    assertThat(samples(all.get(0))).containsExactly((T0 - 60_000) + "=1.0", (T0 - 30_000) + "=2.0", T0 + "=3.0");
    assertThat(samples(engine.select(T0 - 40_000, T0 - 1, List.of()).get(0))).containsExactly((T0 - 30_000) + "=2.0");
    assertThat(engine.select(T0 + 1, T0 + 10, List.of())).isEmpty();
    assertThat(engine.select(T0 - 200_000, T0 - 100_000, List.of(LabelMatcher.equal("job", "a")))).isEmpty();
  }
}
