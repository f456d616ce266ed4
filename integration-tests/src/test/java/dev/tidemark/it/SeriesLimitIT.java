package dev.tidemark.it;

import static org.assertj.core.api.Assertions.assertThat;

import dev.tidemark.receiver.remotewrite.proto.Label;
import dev.tidemark.receiver.remotewrite.proto.Sample;
import dev.tidemark.receiver.remotewrite.proto.TimeSeries;
import dev.tidemark.receiver.remotewrite.proto.WriteRequest;
import io.opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest;
import io.opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceResponse;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.xerial.snappy.Snappy;

/**
 * {@code --max-active-series} against the real jar (issue #22): once the head holds the limit, a
 * point of a new series is refused on its own, named in OTLP partial success and in the remote
 * write answer, while every sample of a series already in the head, in the same requests, is
 * stored; {@code /metrics} counts the refusals under reason {@code series_limit}.
 */
@ExtendWith(ServerLogs.class)
class SeriesLimitIT {
  static final String DETAIL =
      "the head holds 4 active series, the --max-active-series limit: new series are refused"
          + " until some stop, series already in the head are still accepted";

  /** A whole second ten minutes ago: every sample is inside the head's window. */
  static final long T = (System.currentTimeMillis() / 1000 - 600) * 1000;

  private final HttpClient http =
      HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

  @TempDir Path tmp;

  @Test
  void newSeriesBeyondTheLimitAreRefusedOneByOneOverOtlpAndRemoteWrite() throws Exception {
    try (ServerProcess server =
        ServerProcess.start(tmp.resolve("data"), "--max-active-series", "4")) {
      ExportMetricsServiceResponse first = otlp(server, known(T));
      assertThat(first.hasPartialSuccess()).as(first.toString()).isFalse();
      HttpResponse<String> rw = remoteWrite(server, List.of(series("rw_a", T, 1)));
      assertThat(rw.statusCode()).as(rw.body()).isEqualTo(204);

      // Full: 3 OTLP series and rw_a. The known series' points go in, the two new ones do not.
      ExportMetricsServiceRequest mixed =
          Otlp.request(
              "sl",
              "i-1",
              List.of(
                  Otlp.gauge(
                      "sl_known",
                      Otlp.point(T + 15_000, 10, "i", "0"),
                      Otlp.point(T + 15_000, 11, "i", "1"),
                      Otlp.point(T + 15_000, 12, "i", "2")),
                  Otlp.gauge(
                      "sl_new",
                      Otlp.point(T + 15_000, 1, "i", "0"),
                      Otlp.point(T + 15_000, 2, "i", "1"))));
      ExportMetricsServiceResponse partial = otlp(server, mixed);
      assertThat(partial.getPartialSuccess().getRejectedDataPoints()).isEqualTo(2);
      assertThat(partial.getPartialSuccess().getErrorMessage())
          .isEqualTo(
              "rejected 2 of 5 data points: 2 series limit reached (SERIES_LIMIT, e.g. metric"
                  + " \"sl_new\": "
                  + DETAIL
                  + ")");

      HttpResponse<String> refused =
          remoteWrite(server, List.of(series("rw_a", T + 15_000, 2), series("rw_b", T, 1)));
      assertThat(refused.statusCode()).isEqualTo(400);
      assertThat(refused.body())
          .isEqualTo(
              "series limit reached ("
                  + DETAIL
                  + ") for series {__name__=\"rw_b\"} at "
                  + T
                  + "\n");

      assertThat(query(server, "count(sl_known)", T + 20_000)).contains(",\"3\"]");
      assertThat(query(server, "sum(sl_known)", T + 20_000)).contains(",\"33\"]");
      assertThat(query(server, "rw_a", T + 20_000)).contains(",\"2\"]");
      assertThat(query(server, "sl_new", T + 20_000)).contains("\"result\":[]");
      assertThat(query(server, "rw_b", T + 20_000)).contains("\"result\":[]");

      String metrics = server.apiGet("/metrics");
      assertThat(
              OtelSdkIT.counter(
                  metrics, "tidemark_otlp_data_points_rejected_total", "reason=\"series_limit\""))
          .as(OtelSdkIT.grep(metrics, "tidemark_otlp_data_points_rejected_total"))
          .isEqualTo(2);
      assertThat(
              OtelSdkIT.counter(
                  metrics,
                  "tidemark_remote_write_samples_refused_total",
                  "reason=\"series_limit\""))
          .isEqualTo(1);
      assertThat(metrics)
          .contains("\ntidemark_head_active_series 4", "\ntidemark_head_max_active_series 4");
    }
  }

  private static ExportMetricsServiceRequest known(long t) {
    return Otlp.request(
        "sl",
        "i-1",
        List.of(
            Otlp.gauge(
                "sl_known",
                Otlp.point(t, 0, "i", "0"),
                Otlp.point(t, 1, "i", "1"),
                Otlp.point(t, 2, "i", "2"))));
  }

  private ExportMetricsServiceResponse otlp(ServerProcess server, ExportMetricsServiceRequest req)
      throws Exception {
    HttpResponse<byte[]> r =
        http.send(
            HttpRequest.newBuilder(URI.create(server.otlpHttpUrl()))
                .header("Content-Type", "application/x-protobuf")
                .POST(HttpRequest.BodyPublishers.ofByteArray(req.toByteArray()))
                .build(),
            HttpResponse.BodyHandlers.ofByteArray());
    assertThat(r.statusCode()).as(new String(r.body(), StandardCharsets.UTF_8)).isEqualTo(200);
    return ExportMetricsServiceResponse.parseFrom(r.body());
  }

  private static TimeSeries series(String name, long t, double v) {
    return TimeSeries.newBuilder()
        .addLabels(Label.newBuilder().setName("__name__").setValue(name))
        .addSamples(Sample.newBuilder().setTimestamp(t).setValue(v))
        .build();
  }

  private HttpResponse<String> remoteWrite(ServerProcess server, List<TimeSeries> series)
      throws Exception {
    byte[] body =
        Snappy.compress(WriteRequest.newBuilder().addAllTimeseries(series).build().toByteArray());
    return http.send(
        HttpRequest.newBuilder(URI.create(server.apiUrl("/api/v1/write")))
            .header("Content-Type", "application/x-protobuf")
            .header("Content-Encoding", "snappy")
            .header("X-Prometheus-Remote-Write-Version", "0.1.0")
            .POST(HttpRequest.BodyPublishers.ofByteArray(body))
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  private static String query(ServerProcess server, String promql, long atMillis) throws Exception {
    return server.apiGet(
        "/api/v1/query?query="
            + URLEncoder.encode(promql, StandardCharsets.UTF_8)
            + "&time="
            + atMillis / 1000);
  }
}
