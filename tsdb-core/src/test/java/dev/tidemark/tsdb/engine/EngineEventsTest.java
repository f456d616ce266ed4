package dev.tidemark.tsdb.engine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.tidemark.tsdb.append.SampleBatch;
import dev.tidemark.tsdb.codec.TimeBucket;
import dev.tidemark.tsdb.kv.InMemoryKvStore;
import dev.tidemark.tsdb.time.ManualClock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The engine tells its {@link EngineEvents} of every seal and compaction, and survives a throw. */
class EngineEventsTest {
  static final long T0 = CompactionGoldenTest.T0;

  @Test
  void sealsAndCompactionsAreToldWithTheirBucketsSeriesAndDurations() {
    List<String> told = new ArrayList<>();
    List<Long> nanos = new ArrayList<>();
    EngineEvents events =
        new EngineEvents() {
          @Override
          public void sealed(TimeBucket bucket, int series, long n, boolean leftHead) {
            told.add("sealed " + bucket + " " + series + " " + leftHead);
            nanos.add(n);
          }

          @Override
          public void compacted(TimeBucket target, int merged, long n) {
            told.add("compacted " + target + " " + merged);
            nanos.add(n);
            throw new IllegalStateException("a listener's failure is the listener's");
          }
        };
    ManualClock clock = new ManualClock(T0);
    EngineConfig config =
        EngineConfig.builder()
            .clock(clock)
            .retention(Duration.ofDays(3650))
            .retentionInterval(Duration.ZERO)
            .compactionInterval(Duration.ZERO)
            .compactionDelay(Duration.ZERO)
            .compactionLevels(List.of(Duration.ofHours(1), Duration.ofHours(2)))
            .build();
    try (Engine e = Engine.open(new InMemoryKvStore(), config, events)) {
      e.append(
          new SampleBatch().addPoint(CompactionGoldenTest.REQ, CompactionGoldenTest.SUM, T0, 1));
      clock.set(T0 + 4_500_000);
      e.append(
          new SampleBatch()
              .addPoint(CompactionGoldenTest.UP, CompactionGoldenTest.GAUGE, T0 + 4_500_000, 1)
              .addPoint(CompactionGoldenTest.REQ, CompactionGoldenTest.SUM, T0 + 3_600_000, 3));
      clock.set(T0 + 3 * 3_600_000L);
      e.flush();
      assertThat(e.compactNow()).isEqualTo(1);
      assertThat(e.stats().compactions()).as("the engine carried on after the throw").isEqualTo(1);
    }
    TimeBucket h10 = TimeBucket.containing(T0, 1);
    TimeBucket h11 = TimeBucket.containing(T0 + 3_600_000, 1);
    assertThat(told)
        .containsExactly(
            "sealed " + h10 + " 1 true",
            "sealed " + h11 + " 2 true",
            "compacted " + TimeBucket.containing(T0, 2) + " 2");
    assertThat(nanos).allSatisfy(n -> assertThat(n).isPositive());
  }
}
