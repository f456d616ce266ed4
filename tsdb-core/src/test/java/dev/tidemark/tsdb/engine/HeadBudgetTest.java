package dev.tidemark.tsdb.engine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.tidemark.tsdb.append.AppendResult;
import dev.tidemark.tsdb.append.RejectReason;
import dev.tidemark.tsdb.append.SampleBatch;
import dev.tidemark.tsdb.kv.InMemoryKvStore;
import dev.tidemark.tsdb.model.Labels;
import dev.tidemark.tsdb.model.MetricMetadata;
import dev.tidemark.tsdb.query.LabelMatcher;
import dev.tidemark.tsdb.query.QueryContext;
import dev.tidemark.tsdb.query.SampleIterator;
import dev.tidemark.tsdb.query.SeriesSet;
import dev.tidemark.tsdb.time.ManualClock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * Issue #22: a head over its byte budget refuses only series new to it, each on its own point, and
 * takes every sample of the series it holds; what was acknowledged survives a crash (the engine
 * abandoned without a close, then opened again on the same store). Seeded, against a model of the
 * acknowledged samples; rerun one seed with {@code -Dtidemark.seed=<seed>}.
 */
class HeadBudgetTest {

  private static final long SEED = Long.getLong("tidemark.seed", 0xB0D6E7L);
  private static final long T0 = EngineTest.T0;
  private static final long HOUR = 3_600_000L;

  @Test
  void overTheBudgetKnownSeriesAreNeverRefusedAndNothingAcknowledgedIsLostAcrossCrashes() {
    for (int round = 0; round < 5; round++) {
      run(SEED + round);
    }
  }

  private void run(long seed) {
    SplittableRandom rnd = new SplittableRandom(seed);
    ManualClock clock = new ManualClock(T0 + 50 * 60_000L);
    EngineConfig config =
        EngineConfig.builder()
            .clock(clock)
            .maxHeadBytes(24 * 1024)
            .retentionInterval(Duration.ZERO)
            .compactionInterval(Duration.ZERO)
            .headFreezeSamples(rnd.nextBoolean() ? 4 : 0)
            .build();
    InMemoryKvStore kv = new InMemoryKvStore();
    Engine engine = Engine.open(kv, config);
    Map<Labels, TreeMap<Long, Double>> acked = new HashMap<>();
    Set<Labels> inHead = new HashSet<>();
    int refusedNew = 0;
    long t = T0;
    try {
      for (int step = 0; step < 120; step++) {
        String where = "seed " + seed + " step " + step;
        int op = rnd.nextInt(100);
        if (op < 85) {
          t += 1_000;
          String refusal = engine.newSeriesRefusal();
          SampleBatch batch = new SampleBatch();
          List<Labels> points = new ArrayList<>();
          List<Double> values = new ArrayList<>();
          int n = 1 + rnd.nextInt(40);
          Set<Labels> inBatch = new HashSet<>();
          for (int i = 0; i < n; i++) {
            Labels l = Labels.of("__name__", "m", "s", Integer.toString(rnd.nextInt(600)));
            if (inBatch.add(l)) {
              double v = rnd.nextInt(1_000);
              batch.addPoint(l, MetricMetadata.UNKNOWN, t, v);
              points.add(l);
              values.add(v);
            }
          }
          AppendResult r = engine.append(batch);
          for (int p = 0; p < points.size(); p++) {
            Labels l = points.get(p);
            if (inHead.contains(l) || refusal == null) {
              assertThat(r.pointReason(p)).as(where + " " + l).isNull();
              acked.computeIfAbsent(l, k -> new TreeMap<>()).put(t, values.get(p));
              inHead.add(l);
            } else {
              assertThat(r.pointReason(p)).as(where + " " + l).isEqualTo(RejectReason.SERIES_LIMIT);
              assertThat(r.pointDetail(p)).isEqualTo(refusal);
              refusedNew++;
            }
          }
        } else if (op < 93) {
          engine.abandon(); // a crash: the head is rebuilt from the head log
          engine = Engine.open(kv, config);
        } else {
          engine.flush(); // a seal makes room: the head is empty
          inHead.clear();
          // Go on in the next hour: a sample for the sealed hour would read it back into the head
          // whole (a reopen), its series known again.
          t = (t / HOUR + 1) * HOUR;
          clock.set(t + 50 * 60_000L);
        }
        assertThat(stored(engine)).as(where).isEqualTo(acked);
      }
      assertThat(refusedNew).as("seed %d: the budget was reached", seed).isPositive();
    } finally {
      engine.close();
    }
  }

  private static Map<Labels, TreeMap<Long, Double>> stored(Engine engine) {
    Map<Labels, TreeMap<Long, Double>> out = new HashMap<>();
    SeriesSet ss =
        engine.select(
            T0, T0 + 100 * HOUR, List.of(LabelMatcher.equal("__name__", "m")), QueryContext.NONE);
    while (ss.next()) {
      TreeMap<Long, Double> samples = new TreeMap<>();
      SampleIterator it = ss.at().iterator();
      while (it.next()) {
        samples.put(it.timestampMillis(), Double.longBitsToDouble(it.valueBits()));
      }
      out.put(ss.at().labels(), samples);
    }
    return out;
  }
}
