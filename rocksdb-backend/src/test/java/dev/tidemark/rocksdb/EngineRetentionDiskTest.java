package dev.tidemark.rocksdb;

import static org.assertj.core.api.Assertions.assertThat;

import dev.tidemark.tsdb.append.SampleBatch;
import dev.tidemark.tsdb.engine.Engine;
import dev.tidemark.tsdb.engine.EngineConfig;
import dev.tidemark.tsdb.model.Labels;
import dev.tidemark.tsdb.model.MetricMetadata;
import dev.tidemark.tsdb.time.ManualClock;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Retention on real RocksDB: dropping whole buckets frees disk, unlike KairosDB's deletes. */
class EngineRetentionDiskTest {
  private static final long HOUR = 3_600_000L;

  @TempDir Path dir;

  @Test
  void droppingExpiredBucketsShrinksTheStoreOnDisk() {
    long t0 = 1_700_000_000_000L - 1_700_000_000_000L % HOUR;
    ManualClock clock = new ManualClock(t0 + 3 * HOUR);
    EngineConfig config =
        EngineConfig.builder()
            .clock(clock)
            .retention(Duration.ofHours(2))
            .retentionInterval(Duration.ZERO)
            .build();
    SplittableRandom rnd = new SplittableRandom(7);
    try (RocksDbKvStore store = RocksDbKvStore.open(dir)) {
      Engine engine = Engine.open(store, config);
      SampleBatch batch = new SampleBatch();
      // Three hours of 2,000 series with random values (hard to compress): ~1.4M samples.
      for (long t = t0 + 1_000; t < t0 + 3 * HOUR; t += 15_000) {
        batch.clear();
        clock.set(t);
        for (int s = 0; s < 2_000; s++) {
          batch.addPoint(
              Labels.of("__name__", "noise", "s", Integer.toString(s)),
              MetricMetadata.UNKNOWN,
              t,
              rnd.nextDouble());
        }
        assertThat(engine.append(batch).rejectedPoints()).isZero();
      }
      engine.flush();
      store.compactRange(null, null);
      long before = store.approximateSizeBytes();

      clock.set(t0 + 4 * HOUR + 1); // the first two buckets are now older than 2 h
      assertThat(engine.applyRetention()).isEqualTo(2);
      long after = store.approximateSizeBytes();
      assertThat(after)
          .as("bytes on disk before %d, after %d", before, after)
          .isLessThan(before / 2);

      assertThat(engine.select(t0, t0 + 2 * HOUR - 1, List.of()).toList()).isEmpty();
      assertThat(engine.select(t0 + 2 * HOUR, t0 + 3 * HOUR, List.of()).toList()).hasSize(2_000);
      engine.close();
      Engine reopened = Engine.open(store, config);
      assertThat(reopened.select(t0, t0 + 2 * HOUR - 1, List.of()).toList())
          .as("dropped data stays dropped")
          .isEmpty();
      assertThat(reopened.buckets()).hasSize(1);
      reopened.close();
    }
  }
}
