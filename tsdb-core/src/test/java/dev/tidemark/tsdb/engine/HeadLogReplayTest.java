package dev.tidemark.tsdb.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.tidemark.tsdb.append.SampleBatch;
import dev.tidemark.tsdb.codec.CorruptRecordException;
import dev.tidemark.tsdb.codec.TimeBucket;
import dev.tidemark.tsdb.kv.InMemoryKvStore;
import dev.tidemark.tsdb.kv.KvCursor;
import dev.tidemark.tsdb.kv.WriteBatch;
import dev.tidemark.tsdb.model.Labels;
import dev.tidemark.tsdb.model.MetricMetadata;
import dev.tidemark.tsdb.model.MetricType;
import dev.tidemark.tsdb.model.Temporality;
import dev.tidemark.tsdb.time.ManualClock;
import java.time.Duration;
import java.util.SplittableRandom;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Recovery replays the head log grouped by series, in windows decoded on a second thread ({@link
 * HeadLogReplay}). Under seeded workloads (late samples, duplicates, retries, several buckets,
 * series frozen often) a crash and a recovery in windows of a few entries must give what the {@link
 * ReferenceModel} holds, and exactly the head (bytes, series, newest timestamp) that a recovery in
 * one window gives; a corrupt log still refuses to open, and no decoder thread is left behind.
 */
class HeadLogReplayTest {

  private static final MetricMetadata META =
      new MetricMetadata(MetricType.GAUGE, "", Temporality.UNSPECIFIED, false);

  @AfterEach
  void resetHook() {
    HeadLogReplay.windowEntriesForTests = 0;
  }

  @ParameterizedTest
  @ValueSource(longs = {1L, 2L, 3L, 42L, 7_777L})
  void recoveryInSmallWindowsMatchesModelAndOneWindow(long baseSeed) {
    long seed = Long.getLong("tidemark.seed", baseSeed);
    SplittableRandom rnd = new SplittableRandom(seed);
    ManualClock clock = new ManualClock(1_700_000_000_000L);
    EngineConfig config =
        EngineConfig.builder()
            .clock(clock)
            .outOfOrderWindow(Duration.ofMinutes(30))
            .retention(Duration.ofHours(6))
            .retentionInterval(Duration.ZERO)
            .compactionInterval(Duration.ZERO)
            .headFreezeSamples(rnd.nextBoolean() ? 2 : EngineConfig.DEFAULT_HEAD_FREEZE_SAMPLES)
            .build();
    InMemoryKvStore kv = new InMemoryKvStore();
    ReferenceModel model = new ReferenceModel(config);
    Labels[] series = EngineModelTest.testSeries();
    Engine engine = Engine.open(kv, config);
    try {
      for (int round = 0; round < 6; round++) {
        String where = "seed " + seed + " round " + round;
        int batches = 1 + rnd.nextInt(8);
        for (int i = 0; i < batches; i++) {
          SampleBatch batch = EngineModelTest.randomBatch(rnd, series, model, clock.millis());
          engine.append(batch);
          model.append(batch, clock.millis());
          if (rnd.nextInt(4) == 0) {
            clock.advance(rnd.nextLong(60_000, 40 * 60_000));
          }
        }
        if (rnd.nextInt(5) == 0) {
          engine.flush(); // sealed chunks plus a head log: the reopen path
        }
        engine.abandon(); // a crash: the head is only in the log
        InMemoryKvStore crashed = copy(kv); // an open may seal due buckets in the background

        // The same log replayed in windows of a few entries and in one window: the same head.
        HeadLogReplay.windowEntriesForTests = 1 + rnd.nextInt(7);
        String small = describeRecoveredHead(crashed, config);
        HeadLogReplay.windowEntriesForTests = Integer.MAX_VALUE;
        assertThat(small).as(where).isEqualTo(describeRecoveredHead(crashed, config));

        HeadLogReplay.windowEntriesForTests = 1 + rnd.nextInt(7);
        engine = Engine.open(kv, config);
        EngineModelTest.compare(engine, model, rnd, clock.millis(), where + " small windows");
        assertThat(engine.headSampleBytesDrift()).as(where).isZero();
      }
    } finally {
      engine.close();
    }
    assertThat(decoderThreads()).isZero();
  }

  @Test
  void headLogNamingAnUnknownSeriesRefusesToOpen() {
    HeadLogReplay.windowEntriesForTests = 2;
    ManualClock clock = new ManualClock(1_700_000_000_000L);
    EngineConfig config = EngineConfig.builder().clock(clock).build();
    InMemoryKvStore kv = new InMemoryKvStore();
    Engine engine = Engine.open(kv, config);
    SampleBatch batch = new SampleBatch();
    for (int i = 0; i < 5; i++) {
      batch.add(Labels.of("__name__", "m", "i", Integer.toString(i)), META, clock.millis(), i);
      batch.endPoint();
    }
    engine.append(batch);
    engine.abandon();
    TimeBucket b = TimeBucket.containing(clock.millis(), 1);
    HeadLogBuffer log = new HeadLogBuffer();
    log.add(1, clock.millis() + 1, 0);
    log.add(99, clock.millis() + 1, 0);
    kv.write(new WriteBatch().put(Engine.headLogKey(b, 1_000), log.toByteArray()));

    assertThatThrownBy(() -> Engine.open(kv, config))
        .isInstanceOf(CorruptRecordException.class)
        .hasMessageContaining("names series id 99 which has no ForwardIndex record");
    assertThat(decoderThreads()).isZero();
  }

  @Test
  void truncatedHeadLogRefusesToOpen() {
    HeadLogReplay.windowEntriesForTests = 1;
    ManualClock clock = new ManualClock(1_700_000_000_000L);
    EngineConfig config = EngineConfig.builder().clock(clock).build();
    InMemoryKvStore kv = new InMemoryKvStore();
    Engine engine = Engine.open(kv, config);
    SampleBatch batch = new SampleBatch();
    batch.add(Labels.of("__name__", "m"), META, clock.millis(), 1);
    batch.endPoint();
    engine.append(batch);
    engine.abandon();
    TimeBucket b = TimeBucket.containing(clock.millis(), 1);
    kv.write(
        new WriteBatch()
            .put(Engine.headLogKey(b, 1_000), new byte[] {2, 0, 0, 0, 0, 0, 0, 0, 0, 0}));

    assertThatThrownBy(() -> Engine.open(kv, config)).isInstanceOf(CorruptRecordException.class);
    assertThat(decoderThreads()).isZero();
  }

  /** Recovers a head from {@code kv} (no engine, so no seal) and describes every series in it. */
  private static String describeRecoveredHead(InMemoryKvStore kv, EngineConfig config) {
    HeadState head = new HeadState(kv, config);
    head.lock.writeLock().lock();
    try {
      new Recovery(head).recover();
      StringBuilder sb = new StringBuilder();
      sb.append("series ").append(head.headSeries);
      sb.append(" bytes ").append(head.headSampleBytes);
      sb.append(" maxT ").append(head.headMaxT);
      sb.append(" logSeq ").append(head.logSeq);
      head.open.forEach(
          (b, hb) -> {
            sb.append("\n").append(b).append(" [").append(hb.minTimestamp);
            sb.append(",").append(hb.maxTimestamp).append("]");
            for (int id = 0; id < hb.nextId(); id++) {
              HeadSeries hs = hb.byId(id);
              if (hs == null) {
                continue;
              }
              sb.append("\n ").append(id).append(" ").append(hs.labels);
              sb.append(" n=").append(hs.sampleCount()).append(" bytes=").append(hs.sampleBytes());
              if (!hs.isEmpty()) {
                sb.append(" max=").append(hs.maxTimestamp());
              }
            }
          });
      return sb.toString();
    } finally {
      head.lock.writeLock().unlock();
    }
  }

  private static InMemoryKvStore copy(InMemoryKvStore kv) {
    InMemoryKvStore copy = new InMemoryKvStore();
    WriteBatch all = new WriteBatch();
    try (KvCursor c = kv.scan(null, null)) {
      while (c.next()) {
        all.put(c.key(), c.value());
      }
    }
    copy.write(all);
    return copy;
  }

  private static long decoderThreads() {
    return Thread.getAllStackTraces().keySet().stream()
        .filter(
            t ->
                t.getName().startsWith("tidemark-recovery")
                    || t.getName().startsWith("tidemark-reopen"))
        .filter(Thread::isAlive)
        .count();
  }
}
