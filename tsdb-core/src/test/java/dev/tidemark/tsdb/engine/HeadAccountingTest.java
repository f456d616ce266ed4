package dev.tidemark.tsdb.engine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.tidemark.tsdb.append.SampleBatch;
import dev.tidemark.tsdb.kv.InMemoryKvStore;
import dev.tidemark.tsdb.model.Labels;
import dev.tidemark.tsdb.model.MetricMetadata;
import dev.tidemark.tsdb.model.MetricType;
import dev.tidemark.tsdb.model.Temporality;
import dev.tidemark.tsdb.time.ManualClock;
import java.time.Duration;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The head's byte count does not drift over seals (issue #22). */
class HeadAccountingTest {
  static final long T0 = EngineTest.T0;
  static final long MIN = 60_000L;
  static final MetricMetadata GAUGE =
      new MetricMetadata(MetricType.GAUGE, "", Temporality.UNSPECIFIED, false);

  @Test
  void theHeadsByteCountReturnsToZeroAfterEverySealCycle() {
    ManualClock clock = new ManualClock(T0);
    Random rnd = new Random(22);
    try (Engine engine =
        Engine.open(
            new InMemoryKvStore(),
            EngineConfig.builder()
                .clock(clock)
                .retentionInterval(Duration.ZERO)
                .headFreezeSamples(8)
                .build())) {
      for (int hour = 0; hour < 40; hour++) {
        long start = T0 + hour * 60 * MIN;
        for (int step = 0; step < 60; step++) {
          long t = start + step * MIN;
          clock.set(t);
          SampleBatch b = new SampleBatch();
          for (int s = 0; s < 50; s++) {
            Labels l = Labels.of("__name__", "m", "s", Integer.toString(s));
            long ts = rnd.nextInt(10) == 0 ? t - rnd.nextInt(5) * 1000 - 1 : t;
            b.addPoint(l, GAUGE, ts, rnd.nextInt(4) == 0 ? rnd.nextDouble() : rnd.nextInt(100));
          }
          engine.append(b);
        }
        assertThat(engine.headSampleBytesDrift()).as("hour %d", hour).isZero();
        engine.flush();
        assertThat(engine.stats().headSeries()).as("hour %d", hour).isZero();
        assertThat(engine.stats().headBytes()).as("hour %d", hour).isZero();
        // late samples reopen the sealed bucket (its chunks loaded back), then it is sealed again
        SampleBatch late = new SampleBatch();
        for (int s = 0; s < 50; s += 3) {
          late.addPoint(
              Labels.of("__name__", "m", "s", Integer.toString(s)), GAUGE, start + 59 * MIN - 7, s);
        }
        assertThat(engine.append(late).rejectedPoints()).isZero();
        assertThat(engine.headSampleBytesDrift()).as("hour %d reopened", hour).isZero();
        engine.flush();
        assertThat(engine.stats().headBytes()).as("hour %d sealed again", hour).isZero();
      }
    }
  }
}
