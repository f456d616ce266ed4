package dev.tidemark.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.tidemark.rocksdb.RocksDbKvStore;
import dev.tidemark.tsdb.append.SampleBatch;
import dev.tidemark.tsdb.engine.Engine;
import dev.tidemark.tsdb.engine.EngineConfig;
import dev.tidemark.tsdb.model.Labels;
import dev.tidemark.tsdb.model.MetricMetadata;
import dev.tidemark.tsdb.query.LabelMatcher;
import dev.tidemark.tsdb.query.SampleIterator;
import dev.tidemark.tsdb.query.Series;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse;
import io.grpc.health.v1.HealthGrpc;
import io.opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest;
import io.opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceResponse;
import io.opentelemetry.proto.collector.metrics.v1.MetricsServiceGrpc;
import io.opentelemetry.proto.common.v1.AnyValue;
import io.opentelemetry.proto.common.v1.InstrumentationScope;
import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.metrics.v1.Gauge;
import io.opentelemetry.proto.metrics.v1.Metric;
import io.opentelemetry.proto.metrics.v1.NumberDataPoint;
import io.opentelemetry.proto.metrics.v1.ResourceMetrics;
import io.opentelemetry.proto.metrics.v1.ScopeMetrics;
import io.opentelemetry.proto.resource.v1.Resource;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TidemarkServerTest {

  /** A sample line of the Prometheus text format: {@code name{labels} value [timestamp]}. */
  private static final Pattern SAMPLE_LINE =
      Pattern.compile(
          "[a-zA-Z_:][a-zA-Z0-9_:]*(\\{([a-zA-Z_][a-zA-Z0-9_]*=\"([^\"\\\\]|\\\\.)*\",?)*\\})?"
              + " ([-+]?[0-9.eE+-]+|NaN|[+-]Inf)( -?[0-9]+)?");

  private static final Pattern COMMENT_LINE =
      Pattern.compile(
          "# (HELP [a-zA-Z_:][a-zA-Z0-9_:]* .*|TYPE [a-zA-Z_:][a-zA-Z0-9_:]* (counter|gauge|histogram|summary|untyped|info|stateset|unknown))");

  @TempDir Path dir;

  private final List<AutoCloseable> toClose = new ArrayList<>();
  private final HttpClient http =
      HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

  @AfterEach
  void closeAll() throws Exception {
    for (int i = toClose.size() - 1; i >= 0; i--) {
      toClose.get(i).close();
    }
  }

  private ServerConfig.Builder config() {
    return ServerConfig.builder()
        .dataDir(dir.resolve("data"))
        .anyFreePorts()
        .shutdownTimeout(Duration.ofSeconds(5));
  }

  private TidemarkServer start(ServerConfig.Builder b) {
    TidemarkServer s = TidemarkServer.start(b.build());
    toClose.add(s);
    return s;
  }

  private HttpResponse<String> get(int port, String path) throws Exception {
    return http.send(
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).GET().build(),
        HttpResponse.BodyHandlers.ofString());
  }

  private ManagedChannel channel(int port) {
    ManagedChannel ch =
        Grpc.newChannelBuilderForAddress("127.0.0.1", port, InsecureChannelCredentials.create())
            .build();
    toClose.add(
        () -> {
          ch.shutdownNow();
          ch.awaitTermination(5, TimeUnit.SECONDS);
        });
    return ch;
  }

  private static ExportMetricsServiceRequest gauge(String name, long timeMillis, double value) {
    return ExportMetricsServiceRequest.newBuilder()
        .addResourceMetrics(
            ResourceMetrics.newBuilder()
                .setResource(
                    Resource.newBuilder()
                        .addAttributes(
                            KeyValue.newBuilder()
                                .setKey("service.name")
                                .setValue(AnyValue.newBuilder().setStringValue("checkout"))))
                .addScopeMetrics(
                    ScopeMetrics.newBuilder()
                        .setScope(InstrumentationScope.newBuilder().setName("test"))
                        .addMetrics(
                            Metric.newBuilder()
                                .setName(name)
                                .setGauge(
                                    Gauge.newBuilder()
                                        .addDataPoints(
                                            NumberDataPoint.newBuilder()
                                                .setTimeUnixNano(timeMillis * 1_000_000L)
                                                .setAsDouble(value))))))
        .build();
  }

  @Test
  void servesHealthReadinessAndNotFound() throws Exception {
    TidemarkServer s = start(config());
    assertThat(s.isReady()).isTrue();
    assertThat(s.httpPort()).isPositive();
    assertThat(s.otlpGrpcPort()).isPositive();
    assertThat(s.otlpHttpPort()).isPositive();
    assertThat(List.of(s.httpPort(), s.otlpGrpcPort(), s.otlpHttpPort())).doesNotHaveDuplicates();

    HttpResponse<String> healthy = get(s.httpPort(), "/-/healthy");
    assertThat(healthy.statusCode()).isEqualTo(200);
    assertThat(healthy.body()).isEqualTo("Tidemark is Healthy.\n");
    HttpResponse<String> ready = get(s.httpPort(), "/-/ready");
    assertThat(ready.statusCode()).isEqualTo(200);
    assertThat(ready.body()).isEqualTo("Tidemark is Ready.\n");
    assertThat(get(s.httpPort(), "/nope").statusCode()).isEqualTo(404);
    assertThat(get(s.httpPort(), "/v1/metrics").statusCode()).isEqualTo(404);
    HttpResponse<String> post =
        http.send(
            HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + s.httpPort() + "/-/ready"))
                .POST(HttpRequest.BodyPublishers.ofString("x"))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(post.statusCode()).isEqualTo(405);
    assertThat(post.headers().firstValue("Allow")).hasValue("GET, HEAD");

    HealthCheckResponse grpcHealth =
        HealthGrpc.newBlockingStub(channel(s.otlpGrpcPort()))
            .check(HealthCheckRequest.newBuilder().setService("").build());
    assertThat(grpcHealth.getStatus()).isEqualTo(HealthCheckResponse.ServingStatus.SERVING);
    HealthCheckResponse otlpHealth =
        HealthGrpc.newBlockingStub(channel(s.otlpGrpcPort()))
            .check(
                HealthCheckRequest.newBuilder()
                    .setService(MetricsServiceGrpc.SERVICE_NAME)
                    .build());
    assertThat(otlpHealth.getStatus()).isEqualTo(HealthCheckResponse.ServingStatus.SERVING);

    s.close();
    assertThat(s.isReady()).isFalse();
    assertThat(s.stop()).isFalse(); // idempotent
  }

  /**
   * {@code --enable-feature} end to end: each name logged at start as Prometheus logs it (an
   * unknown one a warning, not a failure), the list in {@code /api/v1/status/flags} as Prometheus
   * shows it, and the features in effect in the query API.
   */
  @Test
  void enableFeatureIsLoggedAtStartListedInStatusFlagsAndInEffect() throws Exception {
    List<String> logged = new CopyOnWriteArrayList<>();
    Logger jul = Logger.getLogger(TidemarkServer.class.getName());
    Handler capture =
        new Handler() {
          @Override
          public void publish(LogRecord r) {
            logged.add(r.getLevel() + " " + r.getMessage());
          }

          @Override
          public void flush() {}

          @Override
          public void close() {}
        };
    jul.addHandler(capture);
    TidemarkServer s;
    try {
      s =
          start(
              config()
                  .set(
                      "enable-feature",
                      List.of(
                          "promql-delayed-name-removal,nosuch", "promql-experimental-functions"),
                      "--enable-feature"));
    } finally {
      jul.removeHandler(capture);
    }
    assertThat(logged)
        .contains(
            "INFO Experimental PromQL delayed name removal enabled.",
            "WARNING Unknown option for --enable-feature option=nosuch",
            "INFO Experimental PromQL functions enabled.");
    String flags = get(s.httpPort(), "/api/v1/status/flags").body();
    assertThat(flags)
        .contains(
            "\"enable-feature\":\"promql-delayed-name-removal,nosuch,promql-experimental-functions\"")
        .contains("\"query-experimental-functions\":\"false\"");
    HttpResponse<String> mad =
        get(s.httpPort(), "/api/v1/query?query=mad_over_time(vector(1)%5B5m:1m%5D)&time=600");
    assertThat(mad.statusCode()).as(mad.body()).isEqualTo(200);
    s.close();

    TidemarkServer plain = start(config().dataDir(dir.resolve("plain")));
    assertThat(get(plain.httpPort(), "/api/v1/status/flags").body())
        .contains("\"enable-feature\":\"\"");
    assertThat(
            get(plain.httpPort(), "/api/v1/query?query=mad_over_time(vector(1)%5B5m:1m%5D)")
                .statusCode())
        .isEqualTo(400);
  }

  @Test
  void overTheHeadBudgetNewSeriesAreRefusedInPartialSuccessWhileReadyAndKnownSeriesStay()
      throws Exception {
    TidemarkServer s = start(config().maxHeadBytes(16 * 1024));
    MetricsServiceGrpc.MetricsServiceBlockingStub stub =
        MetricsServiceGrpc.newBlockingStub(channel(s.otlpGrpcPort()));
    long now = System.currentTimeMillis();
    int series = 0;
    // New series are taken until the head is over its budget (the append that crosses it still
    // succeeds); from then on a new series' point is refused in partial success.
    ExportMetricsServiceResponse refused = null;
    while (refused == null) {
      assertThat(series).as("the 16 KiB head budget was never spent").isLessThan(1000);
      ExportMetricsServiceResponse r = stub.export(gauge("filler_" + series, now, series));
      if (r.getPartialSuccess().getRejectedDataPoints() > 0) {
        refused = r;
      }
      series++;
    }
    assertThat(series).isGreaterThan(1);
    assertThat(refused.getPartialSuccess().getErrorMessage())
        .contains("SERIES_LIMIT")
        .contains(s.engine().newSeriesRefusal())
        .contains("head memory is over its budget of 16384 bytes");
    ExportMetricsServiceResponse known = stub.export(gauge("filler_0", now + 15_000, -1));
    assertThat(known.getPartialSuccess().getRejectedDataPoints())
        .as("a known series over the budget")
        .isZero();

    assertThat(s.writeRefusal()).isNull();
    assertThat(get(s.httpPort(), "/-/ready").statusCode()).isEqualTo(200);
    assertThat(get(s.httpPort(), "/-/healthy").statusCode()).isEqualTo(200);
    assertThat(get(s.httpPort(), "/metrics").body())
        .contains("\ntidemark_head_refusing_new_series 1");

    s.engine().flush(); // the head is empty again: new series are taken
    assertThat(s.engine().newSeriesRefusal()).isNull();
    assertThat(
            stub.export(gauge("after_flush", now, 1)).getPartialSuccess().getRejectedDataPoints())
        .isZero();
  }

  @Test
  void metricsAreValidPrometheusTextWithEngineReceiverAndJvmFamilies() throws Exception {
    TidemarkServer s = start(config());
    MetricsServiceGrpc.newBlockingStub(channel(s.otlpGrpcPort()))
        .export(gauge("queue_depth", System.currentTimeMillis(), 3));
    assertThat(get(s.httpPort(), "/api/v1/query?query=queue_depth").statusCode()).isEqualTo(200);

    HttpResponse<String> r = get(s.httpPort(), "/metrics");
    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(r.headers().firstValue("Content-Type"))
        .hasValueSatisfying(ct -> assertThat(ct).startsWith("text/plain"));
    String text = r.body();
    for (String line : text.split("\n")) {
      assertThat(SAMPLE_LINE.matcher(line).matches() || COMMENT_LINE.matcher(line).matches())
          .as("line is a comment or 'name{labels} value': %s", line)
          .isTrue();
    }
    assertThat(text)
        .contains(
            "\ntidemark_head_series 1",
            "\ntidemark_head_bytes ",
            "\ntidemark_head_bytes_per_series ",
            "\ntidemark_buckets 1",
            "\ntidemark_buckets_coarse 0",
            "\ntidemark_bucket_compactions_total 0",
            "\ntidemark_bucket_compaction_written_bytes_total 0",
            "# TYPE tidemark_bucket_compaction_seconds_total counter",
            "\ntidemark_samples_appended_total 1",
            "\ntidemark_samples_rejected_total 0",
            "\ntidemark_recovery_seconds ",
            "\ntidemark_storage_bytes ",
            "\ntidemark_rocksdb_sst_files ",
            "\ntidemark_rocksdb_bytes_written_total ",
            "\ntidemark_rocksdb_block_cache_usage_bytes ",
            "# TYPE tidemark_samples_appended_total counter",
            "# TYPE tidemark_head_series gauge",
            "tidemark_otlp_requests_total{",
            "tidemark_otlp_data_points_accepted_total{protocol=\"grpc\"} 1",
            "tidemark_otlp_request_duration_seconds_bucket{",
            "\njvm_memory_used_bytes{",
            "tidemark_http_request_duration_seconds_bucket{handler=\"/api/v1/query\",le=\"+Inf\"} 1",
            "tidemark_http_request_duration_seconds_count{handler=\"/api/v1/query\"} 1",
            "tidemark_engine_query_duration_seconds{slice=\"inner_eval\",quantile=\"0.99\"}",
            "tidemark_engine_query_duration_seconds_count{slice=\"queue_time\"} 1",
            "# TYPE tidemark_build_info gauge",
            "\ntidemark_build_info{arch=\"",
            "\ntidemark_config_last_reload_successful 1",
            "\ntidemark_config_last_reload_success_timestamp_seconds ",
            "\ntidemark_seal_duration_seconds_count 0",
            "\ntidemark_compaction_duration_seconds_count 0");

    s.engine().flush(); // one seal, fed to the histogram through the engine's events
    assertThat(get(s.httpPort(), "/metrics").body())
        .contains(
            "\ntidemark_seal_duration_seconds_count 1",
            "\ntidemark_seal_duration_seconds_bucket{le=\"+Inf\"} 1");
  }

  @Test
  void zstdOverGrpcAndOtlpHttpReachesTheStore() throws Exception {
    TidemarkServer s = start(config());
    long now = System.currentTimeMillis();
    io.grpc.CompressorRegistry compressors = io.grpc.CompressorRegistry.newEmptyInstance();
    compressors.register(
        new io.grpc.Compressor() {
          @Override
          public String getMessageEncoding() {
            return "zstd";
          }

          @Override
          public java.io.OutputStream compress(java.io.OutputStream os) throws java.io.IOException {
            return new com.github.luben.zstd.ZstdOutputStream(os);
          }
        });
    ManagedChannel zstdChannel =
        Grpc.newChannelBuilderForAddress(
                "127.0.0.1", s.otlpGrpcPort(), InsecureChannelCredentials.create())
            .compressorRegistry(compressors)
            .build();
    try {
      ExportMetricsServiceResponse viaGrpc =
          MetricsServiceGrpc.newBlockingStub(zstdChannel)
              .withCompression("zstd")
              .export(gauge("zstd.grpc", now, 1));
      assertThat(viaGrpc.hasPartialSuccess()).as("%s", viaGrpc).isFalse();
    } finally {
      zstdChannel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
    HttpResponse<byte[]> viaHttp =
        http.send(
            HttpRequest.newBuilder(
                    URI.create("http://127.0.0.1:" + s.otlpHttpPort() + "/v1/metrics"))
                .header("Content-Type", "application/x-protobuf")
                .header("Content-Encoding", "zstd")
                .POST(
                    HttpRequest.BodyPublishers.ofByteArray(
                        com.github.luben.zstd.Zstd.compress(
                            gauge("zstd.http", now, 2).toByteArray())))
                .build(),
            HttpResponse.BodyHandlers.ofByteArray());
    assertThat(viaHttp.statusCode()).isEqualTo(200);
    s.close();
    try (RocksDbKvStore store = RocksDbKvStore.open(dir.resolve("data"));
        Engine engine =
            Engine.open(store, EngineConfig.builder().retentionInterval(Duration.ZERO).build())) {
      assertThat(readOne(engine, "zstd_grpc", now)).isEqualTo(1);
      assertThat(readOne(engine, "zstd_http", now)).isEqualTo(2);
    }
  }

  @Test
  void tsdbAdminApisOnlyWithTheFlagAndAsPrometheusAnswersThem() throws Exception {
    TidemarkServer off = start(config());
    HttpResponse<String> disabled =
        http.send(
            HttpRequest.newBuilder(
                    URI.create(
                        "http://127.0.0.1:" + off.httpPort() + "/api/v1/admin/tsdb/snapshot"))
                .POST(HttpRequest.BodyPublishers.noBody())
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(disabled.statusCode()).isEqualTo(503);
    assertThat(disabled.body())
        .isEqualTo(
            "{\"status\":\"error\",\"errorType\":\"unavailable\",\"error\":\"admin APIs"
                + " disabled\"}");
    off.close();

    Path data = dir.resolve("admin-data");
    TidemarkServer s = start(config().dataDir(data).webEnableAdminApi(true));
    long now = System.currentTimeMillis();
    SampleBatch b = new SampleBatch();
    b.addPoint(Labels.of("__name__", "keep", "job", "a"), MetricMetadata.UNKNOWN, now, 1);
    b.addPoint(Labels.of("__name__", "drop", "job", "a"), MetricMetadata.UNKNOWN, now, 2);
    assertThat(s.engine().append(b).rejectedPoints()).isZero();
    String base = "http://127.0.0.1:" + s.httpPort() + "/api/v1/admin/tsdb/";

    HttpResponse<String> snapshot =
        http.send(
            HttpRequest.newBuilder(URI.create(base + "snapshot"))
                .POST(HttpRequest.BodyPublishers.noBody())
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(snapshot.statusCode()).isEqualTo(200);
    String name =
        new com.fasterxml.jackson.databind.ObjectMapper()
            .readTree(snapshot.body())
            .path("data")
            .path("name")
            .asText();
    assertThat(name).matches("\\d{8}T\\d{6}Z-[0-9a-f]{16}");
    Path copy = dir.resolve("admin-data.snapshots").resolve(name);
    assertThat(copy.resolve("CURRENT")).exists();

    HttpResponse<String> delete =
        http.send(
            HttpRequest.newBuilder(
                    URI.create(
                        base
                            + "delete_series?match[]="
                            + java.net.URLEncoder.encode(
                                "drop", java.nio.charset.StandardCharsets.UTF_8)))
                .PUT(HttpRequest.BodyPublishers.noBody())
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(delete.statusCode()).as(delete.body()).isEqualTo(204);
    assertThat(
            s.engine()
                .select(now - 1, now + 1, List.of(LabelMatcher.equal("__name__", "drop")))
                .toList())
        .isEmpty();
    HttpResponse<String> noMatch =
        http.send(
            HttpRequest.newBuilder(URI.create(base + "delete_series"))
                .POST(HttpRequest.BodyPublishers.noBody())
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(noMatch.statusCode()).isEqualTo(400);
    assertThat(noMatch.body()).contains("no match[] parameter provided");
    assertThat(
            http.send(
                    HttpRequest.newBuilder(URI.create(base + "clean_tombstones"))
                        .POST(HttpRequest.BodyPublishers.noBody())
                        .build(),
                    HttpResponse.BodyHandlers.ofString())
                .statusCode())
        .isEqualTo(204);
    assertThat(
            http.send(
                    HttpRequest.newBuilder(URI.create(base + "snapshot")).GET().build(),
                    HttpResponse.BodyHandlers.ofString())
                .statusCode())
        .isEqualTo(405);
    s.close();

    // The snapshot serves what the store held when it was taken, the deleted series included.
    try (RocksDbKvStore store = RocksDbKvStore.open(copy);
        Engine engine =
            Engine.open(store, EngineConfig.builder().retentionInterval(Duration.ZERO).build())) {
      assertThat(readOne(engine, "drop", now)).isEqualTo(2);
      assertThat(readOne(engine, "keep", now)).isEqualTo(1);
    }
  }

  @Test
  void theQueryLogHasALineForEveryQueryAsPrometheusWritesIt() throws Exception {
    Path log = dir.resolve("logs").resolve("queries.jsonl");
    TidemarkServer s = start(config().queryLogFile(log));
    assertThat(get(s.httpPort(), "/api/v1/query?query=up&time=1700000000").statusCode())
        .isEqualTo(200);
    assertThat(
            get(
                    s.httpPort(),
                    "/api/v1/query_range?query=sum(up)&start=1700000000&end=1700000060&step=15")
                .statusCode())
        .isEqualTo(200);
    assertThat(get(s.httpPort(), "/api/v1/labels").statusCode()).isEqualTo(200); // not a query
    List<String> lines = java.nio.file.Files.readAllLines(log);
    assertThat(lines).hasSize(2);
    com.fasterxml.jackson.databind.ObjectMapper json =
        new com.fasterxml.jackson.databind.ObjectMapper();
    com.fasterxml.jackson.databind.JsonNode instant = json.readTree(lines.get(0));
    assertThat(instant.path("httpRequest").path("clientIP").asText()).isEqualTo("127.0.0.1");
    assertThat(instant.path("httpRequest").path("method").asText()).isEqualTo("GET");
    assertThat(instant.path("httpRequest").path("path").asText()).isEqualTo("/api/v1/query");
    assertThat(instant.path("params").toString())
        .isEqualTo(
            "{\"end\":\"2023-11-14T22:13:20Z\",\"query\":\"up\",\"start\":\"2023-11-14T22:13:20Z\","
                + "\"step\":0}");
    assertThat(instant.path("stats").path("timings").path("execTotalTime").isNumber()).isTrue();
    assertThat(instant.path("stats").path("samples").path("peakSamples").isNumber()).isTrue();
    assertThat(instant.path("ts").asText()).endsWith("Z");
    com.fasterxml.jackson.databind.JsonNode range = json.readTree(lines.get(1));
    assertThat(range.path("httpRequest").path("path").asText()).isEqualTo("/api/v1/query_range");
    assertThat(range.path("params").path("step").asLong()).isEqualTo(15);
    assertThat(range.path("params").path("end").asText()).isEqualTo("2023-11-14T22:14:20Z");
  }

  @Test
  void grpcExportIsDurableAcrossCloseAndReopen() throws Exception {
    TidemarkServer s = start(config());
    long now = System.currentTimeMillis();
    ExportMetricsServiceResponse response =
        MetricsServiceGrpc.newBlockingStub(channel(s.otlpGrpcPort()))
            .withCompression("gzip")
            .export(gauge("room.temperature", now, 21.5));
    assertThat(
            response.hasPartialSuccess()
                && response.getPartialSuccess().getRejectedDataPoints() > 0)
        .as("partial success: %s", response)
        .isFalse();

    HttpResponse<byte[]> viaHttp =
        http.send(
            HttpRequest.newBuilder(
                    URI.create("http://127.0.0.1:" + s.otlpHttpPort() + "/v1/metrics"))
                .header("Content-Type", "application/x-protobuf")
                .POST(
                    HttpRequest.BodyPublishers.ofByteArray(
                        gauge("room.humidity", now, 40).toByteArray()))
                .build(),
            HttpResponse.BodyHandlers.ofByteArray());
    assertThat(viaHttp.statusCode()).isEqualTo(200);

    s.close();

    try (RocksDbKvStore store = RocksDbKvStore.open(dir.resolve("data"));
        Engine engine =
            Engine.open(store, EngineConfig.builder().retentionInterval(Duration.ZERO).build())) {
      assertThat(engine.stats().headSeries()).as("the head was sealed on close").isZero();
      assertThat(readOne(engine, "room_temperature", now)).isEqualTo(21.5);
      assertThat(readOne(engine, "room_humidity", now)).isEqualTo(40);
      List<Series> series =
          engine
              .select(now - 1, now + 1, List.of(LabelMatcher.equal("__name__", "room_temperature")))
              .toList();
      assertThat(series.get(0).labels().get("job")).isEqualTo("checkout");
    }
  }

  @Test
  void metadataIsServedAgainAfterARestart() throws Exception {
    TidemarkServer s = start(config());
    long now = System.currentTimeMillis();
    ExportMetricsServiceRequest.Builder request = gauge("room.temperature", now, 21.5).toBuilder();
    request
        .getResourceMetricsBuilder(0)
        .getScopeMetricsBuilder(0)
        .getMetricsBuilder(0)
        .setDescription("Temperature of the room.");
    MetricsServiceGrpc.newBlockingStub(channel(s.otlpGrpcPort())).export(request.build());
    String expected =
        "\"room_temperature\":[{\"type\":\"gauge\",\"help\":\"Temperature of the room.\","
            + "\"unit\":\"\"}]";
    assertThat(get(s.httpPort(), "/api/v1/metadata").body()).contains(expected);
    s.close();

    TidemarkServer again = start(config());
    assertThat(get(again.httpPort(), "/api/v1/metadata").body())
        .as("read back from the store")
        .contains(expected);
  }

  @Test
  void grpcPartialSuccessNamesTheSeriesLimitAndKnownSeriesGoOn() throws Exception {
    TidemarkServer s = start(config().maxActiveSeries(2));
    MetricsServiceGrpc.MetricsServiceBlockingStub stub =
        MetricsServiceGrpc.newBlockingStub(channel(s.otlpGrpcPort()));
    long now = System.currentTimeMillis();
    assertThat(stub.export(both(gauge("a", now, 1), gauge("b", now, 2))).hasPartialSuccess())
        .isFalse();

    ExportMetricsServiceResponse r =
        stub.export(both(gauge("a", now + 1000, 3), gauge("c", now + 1000, 4)));
    assertThat(r.getPartialSuccess().getRejectedDataPoints()).isEqualTo(1);
    assertThat(r.getPartialSuccess().getErrorMessage())
        .isEqualTo(
            "rejected 1 of 2 data points: 1 series limit reached (SERIES_LIMIT, e.g. metric"
                + " \"c\": the head holds 2 active series, the --max-active-series limit: new"
                + " series are refused until some stop, series already in the head are still"
                + " accepted)");
    List<Series> a =
        s.engine().select(now, now + 1000, List.of(LabelMatcher.equal("__name__", "a"))).toList();
    assertThat(a).hasSize(1);
    SampleIterator it = a.get(0).iterator();
    assertThat(it.next() && it.next()).as("both samples of the known series").isTrue();
    assertThat(it.value()).isEqualTo(3);
    assertThat(
            s.engine()
                .select(0, Long.MAX_VALUE / 2, List.of(LabelMatcher.equal("__name__", "c")))
                .toList())
        .isEmpty();
    assertThat(get(s.httpPort(), "/metrics").body())
        .contains(
            "tidemark_otlp_data_points_rejected_total{protocol=\"grpc\",reason=\"series_limit\"} 1",
            "\ntidemark_head_active_series 2",
            "\ntidemark_head_max_active_series 2");
  }

  private static ExportMetricsServiceRequest both(
      ExportMetricsServiceRequest a, ExportMetricsServiceRequest b) {
    return a.toBuilder().addAllResourceMetrics(b.getResourceMetricsList()).build();
  }

  @Test
  void stopWaitsForAnInFlightRequestAndRefusesNewConnections() throws Exception {
    TidemarkServer s = start(config());
    long now = System.currentTimeMillis();
    byte[] body = gauge("in_flight", now, 1).toByteArray();
    try (java.net.Socket socket = new java.net.Socket("127.0.0.1", s.otlpHttpPort())) {
      java.io.OutputStream out = socket.getOutputStream();
      out.write(
          ("POST /v1/metrics HTTP/1.1\r\nHost: t\r\nContent-Type: application/x-protobuf\r\n"
                  + "Content-Length: "
                  + body.length
                  + "\r\n\r\n")
              .getBytes(java.nio.charset.StandardCharsets.US_ASCII));
      out.write(body, 0, body.length / 2);
      out.flush();
      Thread.sleep(200); // the request is being read by the handler

      java.util.concurrent.CompletableFuture<Boolean> stopped =
          java.util.concurrent.CompletableFuture.supplyAsync(s::stop);
      while (s.isReady()) {
        Thread.onSpinWait();
      }
      Thread.sleep(300);
      assertThat(stopped).isNotDone(); // waiting for the request
      assertThatThrownBy(() -> new java.net.Socket("127.0.0.1", s.otlpHttpPort()).close())
          .isInstanceOf(java.net.ConnectException.class);

      out.write(body, body.length / 2, body.length - body.length / 2);
      out.flush();
      String status =
          new java.io.BufferedReader(
                  new java.io.InputStreamReader(
                      socket.getInputStream(), java.nio.charset.StandardCharsets.US_ASCII))
              .readLine();
      assertThat(status).isEqualTo("HTTP/1.1 200 OK");
      assertThat(stopped.get(10, TimeUnit.SECONDS)).isTrue();
    }
    try (RocksDbKvStore store = RocksDbKvStore.open(dir.resolve("data"));
        Engine engine =
            Engine.open(store, EngineConfig.builder().retentionInterval(Duration.ZERO).build())) {
      assertThat(readOne(engine, "in_flight", now)).isEqualTo(1);
    }
  }

  @Test
  void aStopClosesIdleKeepAliveConnectionsOnBothHttpPortsAtOnce() throws Exception {
    TidemarkServer s = start(config());
    // An idle gRPC connection too, after one call.
    HealthGrpc.newBlockingStub(channel(s.otlpGrpcPort()))
        .check(HealthCheckRequest.newBuilder().setService("").build());
    List<java.net.Socket> idle = keepAliveConnections(s, 4);
    try {
      long t0 = System.nanoTime();
      assertThat(s.stop()).isTrue();
      long stopMillis = (System.nanoTime() - t0) / 1_000_000;
      // Each waited for the 2 s shutdown idle timeout before, one server after the other.
      assertThat(stopMillis)
          .as("ms to stop with %d idle keep-alive connections", idle.size())
          .isLessThan(1500);
      for (java.net.Socket c : idle) {
        c.setSoTimeout(5_000);
        assertThat(c.getInputStream().read()).as("the server closed the connection").isEqualTo(-1);
      }
    } finally {
      for (java.net.Socket c : idle) {
        c.close();
      }
    }
  }

  @Test
  void aRequestInProgressDuringAStopIsAnsweredWhileIdleConnectionsAreClosedAtOnce()
      throws Exception {
    TidemarkServer s = start(config());
    List<java.net.Socket> idle = keepAliveConnections(s, 3);
    long now = System.currentTimeMillis();
    byte[] body = gauge("answered_during_stop", now, 7).toByteArray();
    try (java.net.Socket busy = new java.net.Socket("127.0.0.1", s.otlpHttpPort())) {
      busy.setSoTimeout(10_000);
      java.io.OutputStream out = busy.getOutputStream();
      out.write(
          ("POST /v1/metrics HTTP/1.1\r\nHost: t\r\nContent-Type: application/x-protobuf\r\n"
                  + "Content-Length: "
                  + body.length
                  + "\r\n\r\n")
              .getBytes(java.nio.charset.StandardCharsets.US_ASCII));
      out.write(body, 0, body.length / 2);
      out.flush();
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      while (inFlightBytes(s) == 0) { // the handler holds the half body: the request is in progress
        assertThat(System.nanoTime()).as("the request reaches the handler").isLessThan(deadline);
        Thread.sleep(10);
      }

      long t0 = System.nanoTime();
      java.util.concurrent.CompletableFuture<Boolean> stopped =
          java.util.concurrent.CompletableFuture.supplyAsync(s::stop);
      for (java.net.Socket c : idle) {
        c.setSoTimeout(5_000);
        assertThat(c.getInputStream().read()).as("the server closed the connection").isEqualTo(-1);
      }
      assertThat((System.nanoTime() - t0) / 1_000_000)
          .as("ms until every idle connection was closed")
          .isLessThan(1500);
      assertThat(stopped).as("the stop waits for the request in progress").isNotDone();

      out.write(body, body.length / 2, body.length - body.length / 2);
      out.flush();
      List<String> head = readHead(busy);
      assertThat(head.get(0)).isEqualTo("HTTP/1.1 200 OK");
      assertThat(head).contains("Connection: close");
      assertThat(stopped.get(10, TimeUnit.SECONDS)).isTrue();
    } finally {
      for (java.net.Socket c : idle) {
        c.close();
      }
    }
    try (RocksDbKvStore store = RocksDbKvStore.open(dir.resolve("data"));
        Engine engine =
            Engine.open(store, EngineConfig.builder().retentionInterval(Duration.ZERO).build())) {
      assertThat(readOne(engine, "answered_during_stop", now)).isEqualTo(7);
    }
  }

  /**
   * Opens {@code n} connections to each HTTP port (OTLP/HTTP and API), sends one request on each
   * and reads its answer: keep-alive connections left idle, as collectors and scrapers leave them.
   */
  private static List<java.net.Socket> keepAliveConnections(TidemarkServer s, int n)
      throws IOException {
    List<java.net.Socket> sockets = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      sockets.add(
          keepAlive(
              s.otlpHttpPort(),
              "POST /v1/metrics HTTP/1.1\r\nHost: t\r\nContent-Type: application/x-protobuf\r\n"
                  + "Content-Length: 0\r\n\r\n"));
      sockets.add(keepAlive(s.httpPort(), "GET /-/healthy HTTP/1.1\r\nHost: t\r\n\r\n"));
    }
    return sockets;
  }

  private static java.net.Socket keepAlive(int port, String request) throws IOException {
    java.net.Socket socket = new java.net.Socket("127.0.0.1", port);
    socket.setSoTimeout(10_000);
    socket.getOutputStream().write(request.getBytes(java.nio.charset.StandardCharsets.US_ASCII));
    socket.getOutputStream().flush();
    List<String> head = readHead(socket);
    assertThat(head.get(0)).isEqualTo("HTTP/1.1 200 OK");
    assertThat(head).doesNotContain("Connection: close");
    int length = -1;
    for (String line : head) {
      if (line.regionMatches(true, 0, "Content-Length:", 0, 15)) {
        length = Integer.parseInt(line.substring(15).trim());
      }
    }
    assertThat(length).as("Content-Length of the answer").isNotNegative();
    assertThat(socket.getInputStream().readNBytes(length)).hasSize(length);
    return socket;
  }

  /** The status line and header lines of a response, up to the empty line. */
  private static List<String> readHead(java.net.Socket socket) throws IOException {
    List<String> lines = new ArrayList<>();
    java.io.InputStream in = socket.getInputStream();
    StringBuilder line = new StringBuilder();
    for (int c = in.read(); c >= 0; c = in.read()) {
      if (c == '\n') {
        if (line.length() == 0) {
          return lines;
        }
        lines.add(line.toString());
        line.setLength(0);
      } else if (c != '\r') {
        line.append((char) c);
      }
    }
    throw new java.io.EOFException("connection closed in the response head: " + lines);
  }

  private static double inFlightBytes(TidemarkServer s) {
    for (io.prometheus.metrics.model.snapshots.MetricSnapshot m : s.registry().scrape()) {
      if (m instanceof io.prometheus.metrics.model.snapshots.GaugeSnapshot g
          && g.getMetadata().getName().equals("tidemark_otlp_in_flight_bytes")) {
        return g.getDataPoints().get(0).getValue();
      }
    }
    throw new AssertionError("no tidemark_otlp_in_flight_bytes");
  }

  private static double readOne(Engine engine, String name, long t) {
    List<Series> series =
        engine
            .select(t - 60_000, t + 60_000, List.of(LabelMatcher.equal("__name__", name)))
            .toList();
    assertThat(series).as(name).hasSize(1);
    SampleIterator it = series.get(0).iterator();
    assertThat(it.next()).isTrue();
    assertThat(it.timestampMillis()).isEqualTo(t);
    double v = it.value();
    assertThat(it.next()).isFalse();
    return v;
  }

  @Test
  void secondServerOnTheSameDataFolderFailsClearly() throws Exception {
    TidemarkServer first = start(config());
    Path folder = dir.resolve("data").toAbsolutePath().normalize();
    assertThatThrownBy(() -> TidemarkServer.start(config().build()))
        .isInstanceOf(StartupException.class)
        .hasMessage(
            "data folder "
                + folder
                + " is locked by another process (is another Tidemark running on it?)");
    // the first is unaffected
    assertThat(get(first.httpPort(), "/-/ready").statusCode()).isEqualTo(200);
  }

  @Test
  void portInUseFailsClearlyAndReleasesTheDataFolder() throws Exception {
    try (ServerSocket taken = new ServerSocket(0, 50, InetAddress.getByName("127.0.0.1"))) {
      int port = taken.getLocalPort();
      assertThatThrownBy(() -> TidemarkServer.start(config().otlpGrpcPort(port).build()))
          .isInstanceOf(StartupException.class)
          .hasMessage("port " + port + " (OTLP gRPC) on 127.0.0.1 is already in use");
      assertThatThrownBy(() -> TidemarkServer.start(config().otlpHttpPort(port).build()))
          .isInstanceOf(StartupException.class)
          .hasMessage("port " + port + " (OTLP HTTP) on 127.0.0.1 is already in use");
      assertThatThrownBy(() -> TidemarkServer.start(config().httpPort(port).build()))
          .isInstanceOf(StartupException.class)
          .hasMessage("port " + port + " (HTTP API) on 127.0.0.1 is already in use");
    }
    // everything opened before the failures was released: the folder and ports are free again
    TidemarkServer s = start(config());
    assertThat(get(s.httpPort(), "/-/ready").statusCode()).isEqualTo(200);
  }

  @Test
  void mainReportsAPortInUseWithExitCode1AndNoStackTrace() throws IOException {
    try (ServerSocket taken = new ServerSocket(0, 50, InetAddress.getByName("127.0.0.1"))) {
      java.io.StringWriter err = new java.io.StringWriter();
      int code =
          Main.run(
              new java.io.PrintWriter(new java.io.StringWriter()),
              new java.io.PrintWriter(err),
              "--data-dir",
              dir.resolve("data").toString(),
              "--http-port",
              String.valueOf(taken.getLocalPort()),
              "--otlp-grpc-port",
              "0",
              "--otlp-http-port",
              "0");
      assertThat(code).isEqualTo(Main.EXIT_FAILURE);
      assertThat(err.toString())
          .isEqualTo(
              "tidemark: port "
                  + taken.getLocalPort()
                  + " (HTTP API) on 127.0.0.1 is already in use"
                  + System.lineSeparator());
    }
  }
}
