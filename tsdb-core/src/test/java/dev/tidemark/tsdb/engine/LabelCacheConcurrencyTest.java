package dev.tidemark.tsdb.engine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.tidemark.tsdb.append.SampleBatch;
import dev.tidemark.tsdb.kv.InMemoryKvStore;
import dev.tidemark.tsdb.model.Labels;
import dev.tidemark.tsdb.model.MetricMetadata;
import dev.tidemark.tsdb.model.MetricType;
import dev.tidemark.tsdb.model.Temporality;
import dev.tidemark.tsdb.query.LabelMatcher;
import dev.tidemark.tsdb.query.SampleIterator;
import dev.tidemark.tsdb.query.Series;
import dev.tidemark.tsdb.time.ManualClock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * Selects racing with appends that reopen sealed buckets, seals and deletes that free ids for
 * reuse: every sample a select returns must belong to the series whose labels it comes with (each
 * series' values are its own number), so a label table used for records it does not describe shows
 * at once. At the end the engine answers what a fresh engine without a cache answers.
 */
class LabelCacheConcurrencyTest {
  static final long HOUR = 3_600_000L;
  static final long T0 = 1_700_000_000_000L - 1_700_000_000_000L % HOUR;
  static final MetricMetadata GAUGE =
      new MetricMetadata(MetricType.GAUGE, "", Temporality.UNSPECIFIED, false);
  static final List<LabelMatcher> UP = List.of(LabelMatcher.equal("__name__", "up"));

  @Test
  void selectsNeverMixUpSeriesWhileBucketsChange() throws Exception {
    long seed = Long.getLong("seed", new SplittableRandom().nextLong());
    InMemoryKvStore kv = new InMemoryKvStore();
    ManualClock clock = new ManualClock(T0 + 3 * HOUR);
    EngineConfig config =
        EngineConfig.builder()
            .clock(clock)
            .retentionInterval(Duration.ZERO)
            .outOfOrderWindow(Duration.ofHours(4))
            .labelCacheBytes(1 << 20)
            .readParallelism(3)
            .build();
    Engine engine = Engine.open(kv, config);
    AtomicBoolean stop = new AtomicBoolean();
    ConcurrentLinkedQueue<String> problems = new ConcurrentLinkedQueue<>();
    Thread writer =
        new Thread(
            () -> {
              SplittableRandom rnd = new SplittableRandom(seed);
              try {
                for (int round = 0; round < 400 && problems.isEmpty(); round++) {
                  SampleBatch batch = new SampleBatch();
                  for (int k = 0; k < 8; k++) {
                    int number = round * 8 + k;
                    long t = T0 + rnd.nextInt(3) * HOUR + rnd.nextLong(HOUR);
                    batch.addPoint(
                        Labels.of("__name__", "up", "n", Integer.toString(number)),
                        GAUGE,
                        t,
                        number);
                  }
                  engine.append(batch);
                  if (rnd.nextInt(4) == 0) {
                    engine.flush();
                  }
                  if (rnd.nextInt(3) == 0
                      && round > 0) { // frees the highest ids of buckets for reuse
                    int victim = (round - 1) * 8 + rnd.nextInt(8);
                    engine.deleteSeries(
                        0,
                        T0 + 4 * HOUR,
                        List.of(LabelMatcher.equal("n", Integer.toString(victim))));
                  }
                }
              } catch (RuntimeException e) {
                problems.add("writer: " + e);
              } finally {
                stop.set(true);
              }
            });
    List<Thread> readers = new ArrayList<>();
    for (int r = 0; r < 2; r++) {
      readers.add(
          new Thread(
              () -> {
                while (!stop.get() && problems.size() < 5) {
                  try {
                    for (Series s : engine.select(T0, T0 + 3 * HOUR, UP).toList()) {
                      double own = Double.parseDouble(s.labels().get("n"));
                      SampleIterator it = s.iterator();
                      while (it.next()) {
                        if (it.value() != own) {
                          problems.add(s.labels() + " returned a sample of series " + it.value());
                        }
                      }
                    }
                  } catch (RuntimeException e) {
                    problems.add("reader: " + e);
                  }
                }
              }));
    }
    writer.start();
    readers.forEach(Thread::start);
    writer.join();
    for (Thread t : readers) {
      t.join();
    }
    assertThat(problems).as("seed %d", seed).isEmpty();
    engine.flush();
    Map<Labels, List<String>> cached = read(engine);
    assertThat(read(engine)).isEqualTo(cached);
    engine.close();
    try (Engine fresh = Engine.open(kv, config.toBuilder().labelCacheBytes(0).build())) {
      assertThat(read(fresh)).as("seed %d", seed).isEqualTo(cached);
    }
  }

  private static Map<Labels, List<String>> read(Engine e) {
    Map<Labels, List<String>> out = new LinkedHashMap<>();
    for (Series s : e.select(T0, T0 + 3 * HOUR, UP).toList()) {
      List<String> samples = new ArrayList<>();
      SampleIterator it = s.iterator();
      while (it.next()) {
        samples.add(it.timestampMillis() + "=" + it.value());
      }
      out.put(s.labels(), samples);
    }
    return out;
  }
}
