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

  @Test
  void aSeriesInTwoOpenHoursCountsWhatItsCopiesShareOnce() {
    ManualClock clock = new ManualClock(T0 + 30 * MIN);
    try (Engine engine =
        Engine.open(
            new InMemoryKvStore(),
            EngineConfig.builder()
                .clock(clock)
                .outOfOrderWindow(Duration.ofMinutes(30))
                .retentionInterval(Duration.ZERO)
                .build())) {
      int series = 20;
      long before = bytesAfter(engine, clock, T0 + 30 * MIN, series);
      long labelRefs = 2L * 2 * 8; // two labels: a name and a value reference each
      long oneCopy = HeadSeries.OVERHEAD_BYTES + labelRefs;
      assertThat(engine.stats().headSeries()).isEqualTo(series);
      // one sample each: the sample bytes are what remains beside the fixed costs
      long sampleBytes = before - series * oneCopy;
      assertThat(sampleBytes).isPositive().isLessThan(series * 16L);

      // The next hour, the first still open for the out-of-order window: a second copy of each.
      long after = bytesAfter(engine, clock, T0 + 61 * MIN, series);
      assertThat(engine.stats().headSeries()).isEqualTo(2L * series);
      assertThat(after - before - sampleBytes)
          .as("a second copy costs its own object and index shares, not the label set and ref")
          .isEqualTo(series * (long) HeadSeries.COPY_BYTES);

      // The old hour sealed: the copies left are the series' only ones and count everything.
      clock.set(T0 + 2 * 60 * MIN);
      int sealed = 0;
      for (int i = 0; i < 10 && sealed == 0; i++) {
        sealed = engine.sealIdleBuckets(); // the old hour is over and idle after some checks
      }
      assertThat(sealed).isEqualTo(1);
      assertThat(engine.stats().headSeries()).isEqualTo(series);
      assertThat(engine.stats().headBytes()).isEqualTo(series * oneCopy + sampleBytes);
      assertThat(engine.headSampleBytesDrift()).isZero();
    }
  }

  private static long bytesAfter(Engine engine, ManualClock clock, long t, int series) {
    clock.set(t);
    SampleBatch b = new SampleBatch();
    for (int s = 0; s < series; s++) {
      b.addPoint(Labels.of("__name__", "m", "s", Integer.toString(s)), GAUGE, t, 1.0);
    }
    assertThat(engine.append(b).rejectedPoints()).isZero();
    return engine.stats().headBytes();
  }
}
