package dev.tidemark.receiver;

import dev.tidemark.receiver.otlp.Otlp;
import dev.tidemark.receiver.otlp.OtlpIngestor;
import dev.tidemark.translator.Translator;
import dev.tidemark.translator.TranslatorConfig;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot;
import io.prometheus.metrics.model.snapshots.HistogramSnapshot;
import io.prometheus.metrics.model.snapshots.Labels;
import io.prometheus.metrics.model.snapshots.MetricSnapshot;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;

/**
 * A real {@link Translator} over a {@link TestAppender}, a fresh registry and an {@link
 * OtlpIngestor}.
 */
public final class ReceiverFixture {
  public final TestAppender appender = new TestAppender();
  public final PrometheusRegistry registry = new PrometheusRegistry();
  public final Translator translator;
  public final OtlpIngestor ingestor;

  public ReceiverFixture(ReceiverConfig config) {
    Clock clock = Clock.fixed(Instant.ofEpochMilli(Otlp.T0_MS + 60_000), ZoneOffset.UTC);
    translator = new Translator(appender, TranslatorConfig.defaults(), clock);
    ingestor = new OtlpIngestor(translator, config, registry);
  }

  public ReceiverFixture() {
    this(ReceiverConfig.defaults());
  }

  /**
   * The value of a counter (name without {@code _total}) with exactly these label pairs, 0 if
   * absent.
   */
  public double counter(String name, String... labelPairs) {
    Labels want = Labels.of(labelPairs);
    for (MetricSnapshot s : registry.scrape()) {
      if (s instanceof CounterSnapshot c && c.getMetadata().getName().equals(name)) {
        for (CounterSnapshot.CounterDataPointSnapshot d : c.getDataPoints()) {
          if (d.getLabels().equals(want)) {
            return d.getValue();
          }
        }
      }
    }
    return 0;
  }

  public double requests(String protocol, Outcome outcome) {
    return counter("tidemark_otlp_requests", "protocol", protocol, "outcome", outcome.label());
  }

  public long durationCount(String protocol) {
    for (MetricSnapshot s : registry.scrape()) {
      if (s instanceof HistogramSnapshot h
          && h.getMetadata().getName().equals("tidemark_otlp_request_duration_seconds")) {
        for (HistogramSnapshot.HistogramDataPointSnapshot d : h.getDataPoints()) {
          if (d.getLabels().equals(Labels.of("protocol", protocol))) {
            return d.getCount();
          }
        }
      }
    }
    return 0;
  }

  public double inFlightGauge() {
    for (MetricSnapshot s : registry.scrape()) {
      if (s instanceof GaugeSnapshot g
          && g.getMetadata().getName().equals("tidemark_otlp_in_flight_bytes")) {
        return g.getDataPoints().get(0).getValue();
      }
    }
    throw new AssertionError("no tidemark_otlp_in_flight_bytes");
  }
}
