package dev.tidemark.it;

import static org.assertj.core.api.Assertions.assertThat;

import dev.tidemark.receiver.remotewrite.proto.Label;
import dev.tidemark.receiver.remotewrite.proto.MetricMetadata;
import dev.tidemark.receiver.remotewrite.proto.Sample;
import dev.tidemark.receiver.remotewrite.proto.TimeSeries;
import dev.tidemark.receiver.remotewrite.proto.WriteRequest;
import dev.tidemark.receiver.remotewrite.proto.v2.Metadata;
import dev.tidemark.receiver.remotewrite.proto.v2.Request;
import io.opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest;
import io.opentelemetry.proto.common.v1.AnyValue;
import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.metrics.v1.Gauge;
import io.opentelemetry.proto.metrics.v1.Metric;
import io.opentelemetry.proto.metrics.v1.NumberDataPoint;
import io.opentelemetry.proto.metrics.v1.ResourceMetrics;
import io.opentelemetry.proto.metrics.v1.ScopeMetrics;
import io.opentelemetry.proto.resource.v1.Resource;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.xerial.snappy.Snappy;

/**
 * Remote write 1.0 and 2.0 and Prometheus' OTLP path against the real jar: bodies built here with
 * the generated classes of Prometheus' definitions, sent over HTTP, read back through the query API
 * ({@code /api/v1/query}, {@code /api/v1/metadata}) exactly as Prometheus would answer.
 */
@ExtendWith(ServerLogs.class)
class RemoteWriteIT {
  static final String V1 = "application/x-protobuf;proto=prometheus.WriteRequest";
  static final String V2 = "application/x-protobuf;proto=io.prometheus.write.v2.Request";
  static final HttpClient HTTP =
      HttpClient.newBuilder()
          .version(HttpClient.Version.HTTP_1_1)
          .connectTimeout(Duration.ofSeconds(10))
          .build();

  @TempDir static Path tmp;
  static ServerProcess server;

  /** A whole second ten minutes ago: every sample of the test is inside the head's window. */
  static final long T = (System.currentTimeMillis() / 1000 - 600) * 1000;

  @BeforeAll
  static void start() throws Exception {
    server = ServerProcess.start(tmp.resolve("data"), "--otlp-http-max-body-size=1MiB");
  }

  @AfterAll
  static void stop() {
    if (server != null) {
      server.close();
    }
  }

  @Test
  void v1FloatsStaleMarkersAndMetadataAreReadBackThroughTheQueryApi() throws Exception {
    WriteRequest req =
        WriteRequest.newBuilder()
            .addTimeseries(
                TimeSeries.newBuilder()
                    .addLabels(label("__name__", "rw1_temp_celsius"))
                    .addLabels(label("room", "a"))
                    .addLabels(label("job", "it"))
                    .addSamples(sample(T, 21.5))
                    .addSamples(sample(T + 15_000, -3.25))
                    .addSamples(sample(T + 30_000, 1e-7))
                    .addSamples(sample(T + 45_000, Double.longBitsToDouble(0x7ff0000000000002L))))
            .addTimeseries(
                TimeSeries.newBuilder()
                    .addLabels(label("__name__", "rw1_requests_total"))
                    .addLabels(label("job", "it"))
                    .addSamples(sample(T, 10))
                    .addSamples(sample(T + 15_000, 25)))
            .addMetadata(
                MetricMetadata.newBuilder()
                    .setType(MetricMetadata.MetricType.COUNTER)
                    .setMetricFamilyName("rw1_requests_total")
                    .setHelp("Requests served."))
            .build();
    HttpResponse<String> r =
        post("/api/v1/write", V1, "snappy", Snappy.compress(req.toByteArray()));
    assertThat(r.statusCode()).as(r.body()).isEqualTo(204);

    assertThat(query("rw1_temp_celsius[1m]", T + 40_000))
        .isEqualTo(
            "{\"status\":\"success\",\"data\":{\"resultType\":\"matrix\",\"result\":[{\"metric\":"
                + "{\"__name__\":\"rw1_temp_celsius\",\"job\":\"it\",\"room\":\"a\"},\"values\":"
                + "[["
                + secs(T)
                + ",\"21.5\"],["
                + secs(T + 15_000)
                + ",\"-3.25\"],["
                + secs(T + 30_000)
                + ",\"1e-07\"]]}]}}");
    // The staleness marker at T+45s ends the series for instant queries, as in Prometheus.
    assertThat(query("rw1_temp_celsius", T + 44_000)).contains("\"1e-07\"");
    assertThat(query("rw1_temp_celsius", T + 46_000)).contains("\"result\":[]");
    assertThat(server.apiGet("/api/v1/metadata?metric=rw1_requests_total"))
        .isEqualTo(
            "{\"status\":\"success\",\"data\":{\"rw1_requests_total\":[{\"type\":\"counter\","
                + "\"help\":\"Requests served.\",\"unit\":\"\"}]}}");
  }

  @Test
  void v2SymbolsMetadataAndWrittenCountsThenABadSampleBesideGoodOnes() throws Exception {
    Request req =
        Request.newBuilder()
            .addAllSymbols(
                List.of("", "__name__", "rw2_queue_length", "job", "it", "Items waiting.", "items"))
            .addTimeseries(
                dev.tidemark.receiver.remotewrite.proto.v2.TimeSeries.newBuilder()
                    .addAllLabelsRefs(List.of(1, 2, 3, 4))
                    .addSamples(v2sample(T, 3))
                    .addSamples(v2sample(T + 15_000, 5))
                    .setMetadata(
                        Metadata.newBuilder()
                            .setType(Metadata.MetricType.METRIC_TYPE_GAUGE)
                            .setHelpRef(5)
                            .setUnitRef(6)))
            .build();
    HttpResponse<String> r =
        post("/api/v1/write", V2, "snappy", Snappy.compress(req.toByteArray()));
    assertThat(r.statusCode()).as(r.body()).isEqualTo(204);
    assertThat(r.headers().firstValue("X-Prometheus-Remote-Write-Samples-Written")).hasValue("2");
    assertThat(query("rw2_queue_length", T + 20_000)).contains("\"5\"]");
    assertThat(server.apiGet("/api/v1/metadata?metric=rw2_queue_length"))
        .contains("{\"type\":\"gauge\",\"help\":\"Items waiting.\",\"unit\":\"items\"}");

    // The same series again: one sample duplicates a stored timestamp with another value, one is
    // new; a series without a name rides along.
    Request again =
        Request.newBuilder()
            .addAllSymbols(List.of("", "__name__", "rw2_queue_length", "job", "it", "nameless"))
            .addTimeseries(
                dev.tidemark.receiver.remotewrite.proto.v2.TimeSeries.newBuilder()
                    .addAllLabelsRefs(List.of(1, 2, 3, 4))
                    .addSamples(v2sample(T + 15_000, 6))
                    .addSamples(v2sample(T + 30_000, 7)))
            .addTimeseries(
                dev.tidemark.receiver.remotewrite.proto.v2.TimeSeries.newBuilder()
                    .addAllLabelsRefs(List.of(3, 5))
                    .addSamples(v2sample(T, 1)))
            .build();
    HttpResponse<String> bad =
        post("/api/v1/write", V2, "snappy", Snappy.compress(again.toByteArray()));
    assertThat(bad.statusCode()).isEqualTo(400);
    assertThat(bad.headers().firstValue("X-Prometheus-Remote-Write-Samples-Written")).hasValue("1");
    assertThat(bad.body())
        .isEqualTo(
            "invalid metric name or labels, got {job=\"nameless\"}\n"
                + "duplicate sample for timestamp for series {__name__=\"rw2_queue_length\","
                + " job=\"it\"} at "
                + (T + 15_000)
                + "\n");
    assertThat(query("rw2_queue_length[1m]", T + 40_000))
        .contains("[" + secs(T + 15_000) + ",\"5\"],[" + secs(T + 30_000) + ",\"7\"]]");
  }

  @Test
  void unusableRequestsGetPrometheusStatusesAndWriteNothing() throws Exception {
    byte[] one =
        Snappy.compress(
            WriteRequest.newBuilder()
                .addTimeseries(
                    TimeSeries.newBuilder()
                        .addLabels(label("__name__", "rw_never"))
                        .addSamples(sample(T, 1)))
                .build()
                .toByteArray());
    assertThat(post("/api/v1/write", "text/plain", "snappy", one).statusCode()).isEqualTo(415);
    assertThat(post("/api/v1/write", V1, "br", one).statusCode()).isEqualTo(415);
    // gzip is accepted (issue #27); snappy bytes labelled gzip are a broken gzip body.
    HttpResponse<String> mislabelled = post("/api/v1/write", V1, "gzip", one);
    assertThat(mislabelled.statusCode()).isEqualTo(400);
    assertThat(mislabelled.body()).isEqualTo("gzip: not in gzip format\n");
    HttpResponse<String> garbage =
        post("/api/v1/write", V1, "snappy", Snappy.compress("garbage!".getBytes()));
    assertThat(garbage.statusCode()).isEqualTo(400);
    assertThat(garbage.body()).startsWith("cannot decode protobuf prometheus.WriteRequest");
    HttpResponse<String> notSnappy = post("/api/v1/write", V1, "snappy", "garbage!".getBytes());
    assertThat(notSnappy.statusCode()).isEqualTo(400);
    assertThat(notSnappy.body()).isEqualTo("snappy: corrupt input\n");
    HttpResponse<String> big =
        post("/api/v1/write", V1, "snappy", Snappy.compress(new byte[2 * 1024 * 1024]));
    assertThat(big.statusCode()).isEqualTo(413);
    HttpResponse<String> get =
        HTTP.send(
            HttpRequest.newBuilder(URI.create(server.apiUrl("/api/v1/write"))).GET().build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(get.statusCode()).isEqualTo(405);
    assertThat(query("rw_never", T + 1000)).contains("\"result\":[]");
  }

  @Test
  void prometheusOtlpPathAnswersLikeTheOtlpPort() throws Exception {
    byte[] body = otlp("rw_otlp_alias", T, 42).toByteArray();
    HttpResponse<String> alias =
        post("/api/v1/otlp/v1/metrics", "application/x-protobuf", null, body);
    HttpResponse<String> port =
        HTTP.send(
            HttpRequest.newBuilder(URI.create(server.otlpHttpUrl()))
                .header("Content-Type", "application/x-protobuf")
                .POST(HttpRequest.BodyPublishers.ofByteArray(body))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(alias.statusCode()).isEqualTo(200);
    assertThat(alias.statusCode()).isEqualTo(port.statusCode());
    assertThat(alias.body()).isEqualTo(port.body());
    assertThat(query("rw_otlp_alias", T + 1000)).contains("\"42\"]");
    HttpResponse<String> badAlias =
        post("/api/v1/otlp/v1/metrics", "application/x-protobuf", null, new byte[] {0x0a, 0x7f});
    assertThat(badAlias.statusCode()).isEqualTo(400);
    HttpResponse<String> json =
        post(
            "/api/v1/otlp/v1/metrics",
            "application/json",
            null,
            "{\"resourceMetrics\":[]}".getBytes(StandardCharsets.UTF_8));
    assertThat(json.statusCode()).isEqualTo(200);
    assertThat(json.body()).isEqualTo("{}");
  }

  // ------------------------------------------------------------------ helpers

  static HttpResponse<String> post(String path, String contentType, String encoding, byte[] body)
      throws Exception {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(URI.create(server.apiUrl(path)))
            .POST(HttpRequest.BodyPublishers.ofByteArray(body))
            .header("Content-Type", contentType)
            .header("X-Prometheus-Remote-Write-Version", "0.1.0");
    if (encoding != null) {
      b.header("Content-Encoding", encoding);
    }
    return HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  static String query(String promql, long atMillis) throws Exception {
    return server.apiGet(
        "/api/v1/query?query="
            + URLEncoder.encode(promql, StandardCharsets.UTF_8)
            + "&time="
            + secs(atMillis));
  }

  static String secs(long millis) {
    return millis % 1000 == 0
        ? Long.toString(millis / 1000)
        : String.format(java.util.Locale.ROOT, "%.3f", millis / 1000.0);
  }

  static Label label(String n, String v) {
    return Label.newBuilder().setName(n).setValue(v).build();
  }

  static Sample sample(long t, double v) {
    return Sample.newBuilder().setTimestamp(t).setValue(v).build();
  }

  static dev.tidemark.receiver.remotewrite.proto.v2.Sample v2sample(long t, double v) {
    return dev.tidemark.receiver.remotewrite.proto.v2.Sample.newBuilder()
        .setTimestamp(t)
        .setValue(v)
        .build();
  }

  static ExportMetricsServiceRequest otlp(String name, long t, double v) {
    return ExportMetricsServiceRequest.newBuilder()
        .addResourceMetrics(
            ResourceMetrics.newBuilder()
                .setResource(
                    Resource.newBuilder()
                        .addAttributes(
                            KeyValue.newBuilder()
                                .setKey("service.name")
                                .setValue(AnyValue.newBuilder().setStringValue("it"))))
                .addScopeMetrics(
                    ScopeMetrics.newBuilder()
                        .addMetrics(
                            Metric.newBuilder()
                                .setName(name)
                                .setGauge(
                                    Gauge.newBuilder()
                                        .addDataPoints(
                                            NumberDataPoint.newBuilder()
                                                .setTimeUnixNano(t * 1_000_000)
                                                .setAsDouble(v))))))
        .build();
  }
}
