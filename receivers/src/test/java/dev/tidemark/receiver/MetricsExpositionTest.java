package dev.tidemark.receiver;

import static dev.tidemark.receiver.otlp.Otlp.gauge;
import static dev.tidemark.receiver.otlp.Otlp.request;
import static org.assertj.core.api.Assertions.assertThat;

import dev.tidemark.receiver.otlp.OtlpIngestor.Exchange;
import dev.tidemark.receiver.otlp.OtlpIngestor.Protocol;
import dev.tidemark.tsdb.append.RejectReason;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** The receiver's metrics as /metrics shows them in the Prometheus text format. */
class MetricsExpositionTest {

  @Test
  void namesLabelsAndValuesInTheTextFormat() throws Exception {
    ReceiverFixture f = new ReceiverFixture();
    f.appender.reject("late", RejectReason.OUT_OF_ORDER);
    try (Exchange ex = f.ingestor.begin(Protocol.GRPC)) {
      ex.export(request(gauge("ok", 1, 2), gauge("late", 1)));
    }
    try (Exchange ex = f.ingestor.begin(Protocol.HTTP)) {
      ex.reserve(10);
      ex.overloaded();
    }
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    PrometheusTextFormatWriter.create().write(out, f.registry.scrape());
    String text = out.toString(StandardCharsets.UTF_8);

    assertThat(text)
        .contains("# TYPE tidemark_otlp_data_points_received_total counter")
        .contains("tidemark_otlp_data_points_received_total{protocol=\"grpc\"} 3.0")
        .contains("tidemark_otlp_data_points_accepted_total{protocol=\"grpc\"} 2.0")
        .contains(
            "tidemark_otlp_data_points_rejected_total{protocol=\"grpc\",reason=\"out_of_order\"} 1.0")
        .contains(
            "tidemark_otlp_data_points_rejected_total{protocol=\"http\",reason=\"type_conflict\"} 0.0")
        .contains("tidemark_otlp_requests_total{outcome=\"partial_success\",protocol=\"grpc\"} 1.0")
        .contains("tidemark_otlp_requests_total{outcome=\"overloaded\",protocol=\"http\"} 1.0")
        .contains("# TYPE tidemark_otlp_request_duration_seconds histogram")
        .contains("tidemark_otlp_request_duration_seconds_count{protocol=\"grpc\"} 1")
        .contains("tidemark_otlp_request_duration_seconds_bucket{protocol=\"http\",le=\"+Inf\"} 1")
        .contains("# TYPE tidemark_otlp_in_flight_bytes gauge")
        .contains("tidemark_otlp_in_flight_bytes 0.0");
  }
}
