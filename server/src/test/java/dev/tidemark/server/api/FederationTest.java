package dev.tidemark.server.api;

import static org.assertj.core.api.Assertions.assertThat;

import dev.tidemark.promql.parser.PromqlParser;
import dev.tidemark.tsdb.append.SampleBatch;
import dev.tidemark.tsdb.engine.Engine;
import dev.tidemark.tsdb.engine.EngineConfig;
import dev.tidemark.tsdb.kv.InMemoryKvStore;
import dev.tidemark.tsdb.model.Labels;
import dev.tidemark.tsdb.model.MetricMetadata;
import dev.tidemark.tsdb.query.QueryContext;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import org.junit.jupiter.api.Test;

/** What {@code /federate} answers, against the real engine: Prometheus' rules one by one. */
class FederationTest {
  private static final long NOW = 1_705_312_800_000L + 3_600_000L * 5 + 600_000; // 15:10 UTC

  @Test
  void newestSampleInTheLookbackOfEverySeriesOfTheUnionInTheTextFormat() throws Exception {
    Clock clock = Clock.fixed(Instant.ofEpochMilli(NOW), ZoneOffset.UTC);
    try (Engine engine =
        Engine.open(
            new InMemoryKvStore(),
            EngineConfig.builder().clock(clock).retentionInterval(Duration.ZERO).build())) {
      SampleBatch b = new SampleBatch();
      for (long t = NOW - 120_000; t <= NOW; t += 15_000) {
        b.addPoint(Labels.of("__name__", "up", "job", "b"), MetricMetadata.UNKNOWN, t, 0);
        b.addPoint(
            Labels.of("__name__", "up", "job", "a", "instance", "h:1"),
            MetricMetadata.UNKNOWN,
            t,
            1);
        b.addPoint(
            Labels.of("__name__", "job:errors:rate5m", "job", "a", "note", "say \"hi\"\n\\"),
            MetricMetadata.UNKNOWN,
            t,
            t == NOW ? 1e-7 : 2);
      }
      // Newest sample 4 minutes ago: inside the 5-minute lookback.
      b.addPoint(
          Labels.of("__name__", "slow", "job", "a"), MetricMetadata.UNKNOWN, NOW - 240_000, 7);
      // Six minutes ago: outside.
      b.addPoint(
          Labels.of("__name__", "gone", "job", "a"), MetricMetadata.UNKNOWN, NOW - 360_000, 7);
      // Ended by a staleness marker: left out.
      b.addPoint(
          Labels.of("__name__", "ended", "job", "a"), MetricMetadata.UNKNOWN, NOW - 60_000, 3);
      b.addStaleMarker(
              Labels.of("__name__", "ended", "job", "a"), MetricMetadata.UNKNOWN, NOW - 30_000)
          .endPoint();
      // A name the text format cannot carry unquoted.
      b.addPoint(
          Labels.of("__name__", "http.server.duration", "job", "a"),
          MetricMetadata.UNKNOWN,
          NOW,
          5);
      assertThat(engine.append(b).rejectedPoints()).isZero();

      Federation f = new Federation(engine, clock, QueryConfig.DEFAULTS);
      List<Federation.Sample> samples =
          f.newest(
              List.of(
                  PromqlParser.parseMetricSelector("{job=\"a\"}"),
                  PromqlParser.parseMetricSelector("up"), // overlaps the first: once each
                  PromqlParser.parseMetricSelector("{__name__=~\"gone|ended\"}")),
              QueryContext.NONE);
      assertThat(Federation.render(samples))
          .isEqualTo(
              "# TYPE http_server_duration untyped\n"
                  + "http_server_duration{job=\"a\",instance=\"\"} 5 "
                  + NOW
                  + "\n"
                  + "# TYPE job:errors:rate5m untyped\n"
                  + "job:errors:rate5m{job=\"a\",note=\"say \\\"hi\\\"\\n\\\\\",instance=\"\"} 1e-07 "
                  + NOW
                  + "\n"
                  + "# TYPE slow untyped\n"
                  + "slow{job=\"a\",instance=\"\"} 7 "
                  + (NOW - 240_000)
                  + "\n"
                  + "# TYPE up untyped\n"
                  + "up{instance=\"h:1\",job=\"a\"} 1 "
                  + NOW
                  + "\n"
                  + "up{job=\"b\",instance=\"\"} 0 "
                  + NOW
                  + "\n");
      assertThat(f.newest(List.of(), QueryContext.NONE)).isEmpty();
    }
  }

  @Test
  void namesOutsideTheLegacyCharactersAreEscapedWithUnderscores() {
    assertThat(Federation.escapeName("up")).isEqualTo("up");
    assertThat(Federation.escapeName("job:rate5m")).isEqualTo("job:rate5m");
    assertThat(Federation.escapeName("http.server.duration")).isEqualTo("http_server_duration");
    assertThat(Federation.escapeName("1st")).isEqualTo("_st");
    assertThat(Federation.escapeName("température")).isEqualTo("temp_rature");
  }
}
