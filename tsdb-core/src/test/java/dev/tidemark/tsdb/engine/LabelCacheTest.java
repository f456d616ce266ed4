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
import org.junit.jupiter.api.Test;

/**
 * The label cache of sealed buckets ({@link LabelCache}) never answers with labels of records the
 * reader's snapshot does not hold: a series id reused after a delete and a reopen, a bucket dropped
 * by retention and written again, a cache too small for one table, no cache at all; and selects
 * read buckets on several threads with the same answer as on one.
 */
class LabelCacheTest {
  static final long T0 = 1_700_000_000_000L - 1_700_000_000_000L % 3_600_000L;
  static final long MIN = 60_000L;
  static final long HOUR = 3_600_000L;
  static final MetricMetadata GAUGE =
      new MetricMetadata(MetricType.GAUGE, "", Temporality.UNSPECIFIED, false);
  static final List<LabelMatcher> UP = List.of(LabelMatcher.equal("__name__", "up"));

  final ManualClock clock = new ManualClock(T0 + 30 * MIN);
  final InMemoryKvStore kv = new InMemoryKvStore();

  static Labels job(String j) {
    return Labels.of("__name__", "up", "job", j);
  }

  private Engine open(EngineConfig.Builder b) {
    return Engine.open(kv, b.clock(clock).retentionInterval(Duration.ZERO).build());
  }

  private static void append(Engine e, Labels l, long t, double v) {
    assertThat(e.append(new SampleBatch().addPoint(l, GAUGE, t, v)).pointReason(0)).isNull();
  }

  /** Every selected series with its samples as "t=v", in select order. */
  static Map<Labels, List<String>> read(Engine e, long minT, long maxT) {
    Map<Labels, List<String>> out = new LinkedHashMap<>();
    for (Series s : e.select(minT, maxT, UP).toList()) {
      List<String> samples = new ArrayList<>();
      SampleIterator it = s.iterator();
      while (it.next()) {
        samples.add((it.timestampMillis() - T0) / MIN + "=" + it.value());
      }
      out.put(s.labels(), samples);
    }
    return out;
  }

  @Test
  void anIdReusedAfterADeleteAndAReopenReadsItsNewLabels() {
    try (Engine e = open(EngineConfig.builder())) {
      append(e, job("a"), T0 + MIN, 1);
      append(e, job("b"), T0 + MIN, 2);
      e.flush();
      assertThat(read(e, T0, T0 + HOUR - 1))
          .containsOnlyKeys(job("a"), job("b")); // the table is cached
      assertThat(
              e.deleteSeries(T0, T0 + HOUR - 1, List.of(LabelMatcher.equal("job", "b"))).series())
          .isEqualTo(1);
      append(e, job("c"), T0 + 2 * MIN, 3); // reopens the bucket; takes id 1, b's id
      e.flush();
      Map<Labels, List<String>> got = read(e, T0, T0 + HOUR - 1);
      assertThat(got).containsOnlyKeys(job("a"), job("c"));
      assertThat(got.get(job("c"))).containsExactly("2=3.0");
    }
  }

  @Test
  void aBucketDroppedByRetentionAndWrittenAgainReadsItsNewSeries() {
    try (Engine e = open(EngineConfig.builder().retention(Duration.ofHours(1)))) {
      append(e, job("a"), T0 + MIN, 1);
      append(e, job("b"), T0 + MIN, 2);
      e.flush();
      assertThat(read(e, T0, T0 + HOUR - 1)).hasSize(2);
      clock.advance(Duration.ofHours(3));
      assertThat(e.applyRetention()).isEqualTo(1);
      assertThat(read(e, T0, T0 + HOUR - 1)).isEmpty();
      e.setRetention(Duration.ofDays(1));
      append(e, job("z"), T0 + 5 * MIN, 9); // a new series in the old hour: the bucket again, id 0
      e.flush();
      assertThat(read(e, T0, T0 + HOUR - 1)).containsExactly(Map.entry(job("z"), List.of("5=9.0")));
    }
  }

  @Test
  void answersAreTheSameWithoutACacheWithATinyOneAndOnOneThread() {
    List<Map<Labels, List<String>>> answers = new ArrayList<>();
    for (EngineConfig.Builder b :
        List.of(
            EngineConfig.builder(),
            EngineConfig.builder().labelCacheBytes(0),
            EngineConfig.builder().labelCacheBytes(1),
            EngineConfig.builder().readParallelism(1),
            EngineConfig.builder().readParallelism(7))) {
      InMemoryKvStore store = new InMemoryKvStore();
      ManualClock c = new ManualClock(T0 + 6 * HOUR);
      try (Engine e = Engine.open(store, b.clock(c).retentionInterval(Duration.ZERO).build())) {
        for (int h = 0; h < 5; h++) {
          for (int j = 0; j < 40; j++) {
            if ((j + h) % 3 != 0) { // series come and go across the hours
              append(e, job("j" + j), T0 + h * HOUR + j * 1000, h * 100 + j);
            }
          }
        }
        append(e, job("late"), T0 + 5 * HOUR + MIN, 1); // in the head
        e.flush();
        append(e, job("head"), T0 + 5 * HOUR + 2 * MIN, 2);
        Map<Labels, List<String>> first = read(e, T0, T0 + 6 * HOUR);
        assertThat(read(e, T0, T0 + 6 * HOUR)).as("from the cache").isEqualTo(first);
        assertThat(read(e, T0 + HOUR + 20_000, T0 + 3 * HOUR)).as("a cut range").isNotEmpty();
        answers.add(first);
      }
    }
    assertThat(answers.get(0)).hasSize(42);
    for (Map<Labels, List<String>> a : answers) {
      assertThat(a).isEqualTo(answers.get(0));
    }
  }

  @Test
  void settingsAreChecked() {
    org.assertj.core.api.Assertions.assertThatThrownBy(
            () -> EngineConfig.builder().labelCacheBytes(-1).build())
        .hasMessage("labelCacheBytes must not be negative, was -1");
    org.assertj.core.api.Assertions.assertThatThrownBy(
            () -> EngineConfig.builder().readParallelism(0).build())
        .hasMessage("readParallelism must be at least 1, was 0");
  }
}
