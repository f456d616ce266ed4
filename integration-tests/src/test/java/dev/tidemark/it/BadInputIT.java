package dev.tidemark.it;

import static dev.tidemark.it.Otlp.gauge;
import static dev.tidemark.it.Otlp.point;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.tidemark.it.StoredData.Sample;
import dev.tidemark.tsdb.model.Labels;
import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.opentelemetry.proto.collector.metrics.v1.ExportMetricsPartialSuccess;
import io.opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest;
import io.opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceResponse;
import io.opentelemetry.proto.collector.metrics.v1.MetricsServiceGrpc;
import io.opentelemetry.proto.metrics.v1.AggregationTemporality;
import io.opentelemetry.proto.metrics.v1.Histogram;
import io.opentelemetry.proto.metrics.v1.HistogramDataPoint;
import io.opentelemetry.proto.metrics.v1.Metric;
import io.opentelemetry.proto.metrics.v1.NumberDataPoint;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.zip.GZIPOutputStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Bad input against one server process (started with a 64 KiB OTLP/HTTP body limit and a 64 KiB
 * OTLP/gRPC message limit): each case gets the documented status (contract {@code
 * docs/otlp-translation.md} §5.2-§5.5) and, where a request mixes good and bad points, the bad ones
 * are counted in {@code partial_success.rejected_data_points}, named in {@code error_message}, and
 * the good ones are stored. The last test stops the server and checks that the data folder holds
 * exactly the points the earlier tests expect (requests refused as a whole store nothing).
 *
 * <p>Every series has a metric name starting with {@code bad_}; {@code protocol} tells the gRPC and
 * HTTP variants apart.
 */
@ExtendWith(ServerLogs.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class BadInputIT {
  static final int LIMIT_BYTES = 64 * 1024;
  static final String PROTOBUF = "application/x-protobuf";
  static final long STALE_NAN_BITS = 0x7ff0000000000002L;
  static final long CANONICAL_NAN_BITS = 0x7ff8000000000001L;
  static final long ODD_NAN_BITS = 0x7ff80000deadbeefL;

  @TempDir static Path tmp;

  private ServerProcess server;
  private ManagedChannel channel;
  private final HttpClient http =
      HttpClient.newBuilder()
          .version(HttpClient.Version.HTTP_1_1)
          .connectTimeout(Duration.ofSeconds(5))
          .build();

  /** Now, minus a minute: the time of the accepted points. */
  private final long t1 = System.currentTimeMillis() - 60_000;

  /** What the data folder must hold at the end: every series named bad_*, with its samples. */
  private final Map<Labels, List<Sample>> expected = new TreeMap<>();

  @BeforeAll
  void startServer() throws Exception {
    server =
        ServerProcess.start(
            tmp.resolve("data"),
            "--otlp-http-max-body-size",
            LIMIT_BYTES + "B",
            "--otlp-grpc-max-message-size",
            LIMIT_BYTES + "B");
    channel = Otlp.channel(server.grpcPort());
  }

  @AfterAll
  void cleanUp() throws InterruptedException {
    if (channel != null) {
      channel.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
    }
    if (server != null) {
      server.close();
    }
  }

  // ------------------------------------------------------------------ undecodable requests

  @Test
  @Order(1)
  void garbageBytesOverHttpGet400() throws Exception {
    HttpResponse<byte[]> r = post(PROTOBUF, null, garbage());
    assertStatus(r, 400, Status.Code.INVALID_ARGUMENT, "cannot decode");
  }

  @Test
  @Order(2)
  void truncatedProtobufOverHttpGets400AndStoresNothing() throws Exception {
    byte[] whole = validRequest("bad_truncated", "http").toByteArray();
    HttpResponse<byte[]> r = post(PROTOBUF, null, Arrays.copyOf(whole, whole.length - 3));
    assertStatus(r, 400, Status.Code.INVALID_ARGUMENT, "cannot decode");
  }

  @Test
  @Order(3)
  void garbageBytesOverGrpcGetInvalidArgument() {
    assertThatThrownBy(
            () ->
                Otlp.exportRaw(
                    channel,
                    CallOptions.DEFAULT.withDeadlineAfter(30, TimeUnit.SECONDS),
                    garbage()))
        .isInstanceOfSatisfying(
            StatusRuntimeException.class,
            e -> {
              assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
              assertThat(e.getStatus().getDescription()).contains("cannot decode");
            });
  }

  @Test
  @Order(4)
  void truncatedProtobufOverGrpcGetsInvalidArgumentAndStoresNothing() {
    byte[] whole = validRequest("bad_truncated", "grpc").toByteArray();
    byte[] cut = Arrays.copyOf(whole, whole.length - 3);
    assertThatThrownBy(
            () ->
                Otlp.exportRaw(
                    channel, CallOptions.DEFAULT.withDeadlineAfter(30, TimeUnit.SECONDS), cut))
        .isInstanceOfSatisfying(
            StatusRuntimeException.class,
            e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT));
  }

  @Test
  @Order(5)
  void brokenGzipOverHttpGets400AndStoresNothing() throws Exception {
    byte[] gz = gzip(validRequest("bad_broken_gzip", "http").toByteArray());
    // A gzip stream cut short, and one whose deflate data is corrupted.
    HttpResponse<byte[]> cut = post(PROTOBUF, "gzip", Arrays.copyOf(gz, gz.length / 2));
    assertStatus(cut, 400, Status.Code.INVALID_ARGUMENT, "gzip");
    byte[] corrupt = gz.clone();
    for (int i = 10; i < corrupt.length - 8; i++) {
      corrupt[i] ^= 0x5A;
    }
    HttpResponse<byte[]> bad = post(PROTOBUF, "gzip", corrupt);
    assertThat(bad.statusCode()).as("corrupted gzip: %s", text(bad)).isEqualTo(400);
    HttpResponse<byte[]> notGzip =
        post(PROTOBUF, "gzip", validRequest("bad_broken_gzip", "http").toByteArray());
    assertStatus(notGzip, 400, Status.Code.INVALID_ARGUMENT, "gzip");
  }

  // ------------------------------------------------------------------ HTTP-only refusals

  @Test
  @Order(10)
  void wrongContentTypeGets415AndStoresNothing() throws Exception {
    byte[] body = validRequest("bad_content_type", "http").toByteArray();
    HttpResponse<byte[]> r = post("text/plain", null, body);
    assertThat(r.statusCode()).as("%s", text(r)).isEqualTo(415);
    HttpResponse<byte[]> r2 = post("application/octet-stream", null, body);
    assertThat(r2.statusCode()).as("%s", text(r2)).isEqualTo(415);
  }

  @Test
  @Order(11)
  void getGets405WithAllowPost() throws Exception {
    HttpResponse<byte[]> r =
        http.send(
            HttpRequest.newBuilder(URI.create(server.otlpHttpUrl()))
                .timeout(Duration.ofSeconds(30))
                .GET()
                .build(),
            HttpResponse.BodyHandlers.ofByteArray());
    assertThat(r.statusCode()).as("%s", text(r)).isEqualTo(405);
    assertThat(r.headers().firstValue("Allow")).hasValue("POST");
  }

  // ------------------------------------------------------------------ size limits

  @Test
  @Order(20)
  void bodyOverTheLimitGets413AndStoresNothing() throws Exception {
    byte[] big = bigRequest("bad_oversize", "http").toByteArray();
    assertThat(big.length).isGreaterThan(LIMIT_BYTES);
    HttpResponse<byte[]> plain = post(PROTOBUF, null, big);
    assertStatus(plain, 413, Status.Code.RESOURCE_EXHAUSTED, "exceeds the limit");
    // Gzipped, the body is small; the limit applies after decompression.
    byte[] gz = gzip(big);
    assertThat(gz.length).isLessThan(LIMIT_BYTES);
    HttpResponse<byte[]> compressed = post(PROTOBUF, "gzip", gz);
    assertStatus(compressed, 413, Status.Code.RESOURCE_EXHAUSTED, "exceeds the limit");
  }

  @Test
  @Order(21)
  void messageOverTheLimitGetsResourceExhaustedOverGrpc() {
    ExportMetricsServiceRequest big = bigRequest("bad_oversize", "grpc");
    assertThat(big.getSerializedSize()).isGreaterThan(LIMIT_BYTES);
    MetricsServiceGrpc.MetricsServiceBlockingStub stub =
        MetricsServiceGrpc.newBlockingStub(channel);
    assertThatThrownBy(() -> stub.withDeadlineAfter(30, TimeUnit.SECONDS).export(big))
        .isInstanceOfSatisfying(
            StatusRuntimeException.class,
            e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED));
    assertThatThrownBy(
            () -> stub.withDeadlineAfter(30, TimeUnit.SECONDS).withCompression("gzip").export(big))
        .isInstanceOfSatisfying(
            StatusRuntimeException.class,
            e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED));
  }

  // ------------------------------------------------------------------ per-point problems

  @Test
  @Order(30)
  void mixedRequestOverHttpRejectsOnlyTheBadPoints() throws Exception {
    mixedRequest("http");
  }

  @Test
  @Order(31)
  void mixedRequestOverGrpcRejectsOnlyTheBadPoints() throws Exception {
    mixedRequest("grpc");
  }

  /**
   * First a clean request that gives two series a sample at {@code t1}; then one request with good
   * points and bad ones: an invalid metric name (2 points), NaN (odd payload and the staleness bit
   * pattern: both stored as the canonical NaN), ±Inf (stored), time 0, a point an hour ahead, a
   * point 40 min behind its series (window 30 min) and one 5 min behind (inside the window,
   * stored), the same sample again (accepted) and another value at the same time (rejected).
   */
  private void mixedRequest(String protocol) throws Exception {
    ExportMetricsServiceResponse first =
        export(
            protocol,
            Otlp.request(
                "badinput",
                "bad-1",
                List.of(
                    gauge("bad_ooo", point(t1, 1.0, "protocol", protocol)),
                    gauge(
                        "bad_dup",
                        point(t1, 7.0, "protocol", protocol, "case", "same"),
                        point(t1, 7.0, "protocol", protocol, "case", "different")))));
    assertThat(first.hasPartialSuccess()).as("first request: %s", first).isFalse();
    expect("bad_ooo", protocol, null, t1, 1.0);
    expect("bad_dup", protocol, "same", t1, 7.0);
    expect("bad_dup", protocol, "different", t1, 7.0);

    long future = System.currentTimeMillis() + Duration.ofHours(1).toMillis();
    List<Metric> metrics = new ArrayList<>();
    metrics.add(gauge("bad_ok", point(t1, 1.5, "protocol", protocol)));
    metrics.add(
        gauge(
            "@#$%",
            point(t1, 1.0, "protocol", protocol), point(t1 + 1, 2.0, "protocol", protocol)));
    metrics.add(
        gauge(
            "bad_special",
            point(t1, Double.longBitsToDouble(ODD_NAN_BITS), "protocol", protocol, "case", "nan"),
            point(
                t1,
                Double.longBitsToDouble(STALE_NAN_BITS),
                "protocol",
                protocol,
                "case",
                "stale_bits"),
            point(t1, Double.POSITIVE_INFINITY, "protocol", protocol, "case", "pos_inf"),
            point(t1, Double.NEGATIVE_INFINITY, "protocol", protocol, "case", "neg_inf")));
    metrics.add(gauge("bad_zero_time", point(0, 3.0, "protocol", protocol)));
    metrics.add(gauge("bad_future", point(future, 4.0, "protocol", protocol)));
    metrics.add(
        gauge(
            "bad_ooo",
            point(t1 - Duration.ofMinutes(40).toMillis(), 5.0, "protocol", protocol),
            point(t1 - Duration.ofMinutes(5).toMillis(), 6.0, "protocol", protocol)));
    metrics.add(
        gauge(
            "bad_dup",
            point(t1, 7.0, "protocol", protocol, "case", "same"),
            point(t1, 8.0, "protocol", protocol, "case", "different")));
    ExportMetricsServiceRequest request = Otlp.request("badinput", "bad-1", metrics);

    ExportMetricsServiceResponse resp = export(protocol, request);
    ExportMetricsPartialSuccess ps = resp.getPartialSuccess();
    String msg = ps.getErrorMessage();
    // 2 invalid name + 1 zero time + 1 future + 1 out of order + 1 duplicate.
    assertThat(ps.getRejectedDataPoints())
        .as("rejected points; error_message: %s", msg)
        .isEqualTo(6);
    assertThat(msg)
        .contains("rejected 6 of 13 data points")
        .contains("INVALID_METRIC_NAME")
        .contains("ZERO_TIMESTAMP")
        .contains("TOO_FAR_IN_FUTURE")
        .contains("OUT_OF_ORDER")
        .contains("DUPLICATE")
        .contains("bad_future")
        .contains("bad_ooo")
        .contains("bad_dup");

    expect("bad_ok", protocol, null, t1, 1.5);
    expectBits("bad_special", protocol, "nan", t1, CANONICAL_NAN_BITS);
    expectBits("bad_special", protocol, "stale_bits", t1, CANONICAL_NAN_BITS);
    expect("bad_special", protocol, "pos_inf", t1, Double.POSITIVE_INFINITY);
    expect("bad_special", protocol, "neg_inf", t1, Double.NEGATIVE_INFINITY);
    expect("bad_ooo", protocol, null, t1 - Duration.ofMinutes(5).toMillis(), 6.0);
  }

  // ------------------------------------------------------------------ NoRecordedValue

  /**
   * A point flagged NoRecordedValue (contract §4.1) writes the staleness marker bits {@code
   * 0x7ff0000000000002} into every series it maps to: the gauge, and each {@code _bucket} (with
   * {@code +Inf}), {@code _sum} and {@code _count} of a histogram. The bits survive storage
   * exactly.
   */
  @Test
  @Order(35)
  void noRecordedValueWritesStalenessMarkers() throws Exception {
    long t0 = t1 - 2000;
    HistogramDataPoint.Builder hp =
        HistogramDataPoint.newBuilder()
            .setTimeUnixNano(t0 * 1_000_000L)
            .addAttributes(Otlp.attr("protocol", "stale"))
            .addAllExplicitBounds(List.of(1.0, 2.0))
            .addAllBucketCounts(List.of(1L, 0L, 1L))
            .setCount(2)
            .setSum(3.5);
    ExportMetricsServiceResponse first =
        export(
            "http",
            Otlp.request(
                "badinput",
                "bad-1",
                List.of(
                    gauge("bad_stale", point(t0, 1.0, "protocol", "stale")),
                    histogram("bad_stale_hist", hp.build()))));
    assertThat(first.hasPartialSuccess()).as("%s", first).isFalse();
    NumberDataPoint staleGauge =
        NumberDataPoint.newBuilder()
            .setTimeUnixNano(t1 * 1_000_000L)
            .setFlags(1)
            .addAttributes(Otlp.attr("protocol", "stale"))
            .build();
    HistogramDataPoint staleHist =
        HistogramDataPoint.newBuilder()
            .setTimeUnixNano(t1 * 1_000_000L)
            .setFlags(1)
            .addAttributes(Otlp.attr("protocol", "stale"))
            .build();
    ExportMetricsServiceResponse second =
        export(
            "http",
            Otlp.request(
                "badinput",
                "bad-1",
                List.of(gauge("bad_stale", staleGauge), histogram("bad_stale_hist", staleHist))));
    assertThat(second.hasPartialSuccess()).as("%s", second).isFalse();

    expect("bad_stale", "stale", null, t0, 1.0);
    expectBits("bad_stale", "stale", null, t1, STALE_NAN_BITS);
    String[][] series = {
      {"bad_stale_hist_bucket", "1", "1"},
      {"bad_stale_hist_bucket", "2", "1"},
      {"bad_stale_hist_bucket", "+Inf", "2"},
      {"bad_stale_hist_sum", null, "3.5"},
      {"bad_stale_hist_count", null, "2"}
    };
    for (String[] s : series) {
      Labels.Builder b =
          Labels.builder()
              .add("__name__", s[0])
              .add("job", "badinput")
              .add("instance", "bad-1")
              .add("protocol", "stale");
      if (s[1] != null) {
        b.add("le", s[1]);
      }
      List<Sample> samples = expected.computeIfAbsent(b.build(), k -> new ArrayList<>());
      samples.add(Sample.of(t0, Double.parseDouble(s[2])));
      samples.add(new Sample(t1, STALE_NAN_BITS));
    }
  }

  private static Metric histogram(String name, HistogramDataPoint... points) {
    return Metric.newBuilder()
        .setName(name)
        .setHistogram(
            Histogram.newBuilder()
                .setAggregationTemporality(
                    AggregationTemporality.AGGREGATION_TEMPORALITY_CUMULATIVE)
                .addAllDataPoints(List.of(points)))
        .build();
  }

  // ------------------------------------------------------------------ OTLP/JSON

  /**
   * OTLP/JSON (contract §5.3): 64-bit integers as strings, enums as integers, a hex trace id, an
   * unknown field, {@code "NaN"}, a media-type parameter; the response is JSON, with {@code
   * rejectedDataPoints} as a string. Undecodable JSON gets 400 with a JSON {@code
   * google.rpc.Status}.
   */
  @Test
  @Order(40)
  void otlpJsonWithPartialSuccessAndBadJson() throws Exception {
    long nanos = t1 * 1_000_000L;
    String json =
        """
        {"resourceMetrics": [{
          "resource": {"attributes": [
            {"key": "service.name", "value": {"stringValue": "badinput"}},
            {"key": "service.instance.id", "value": {"stringValue": "bad-1"}}]},
          "unknownResourceField": {"x": 1},
          "scopeMetrics": [{"scope": {}, "metrics": [
            {"name": "bad_json_gauge", "gauge": {"dataPoints": [
              {"timeUnixNano": "%1$d", "asDouble": 2.5,
               "attributes": [{"key": "protocol", "value": {"stringValue": "json"}}]},
              {"timeUnixNano": "%1$d", "asDouble": "NaN",
               "attributes": [{"key": "protocol", "value": {"stringValue": "json"}},
                              {"key": "case", "value": {"stringValue": "nan"}}]}]}},
            {"name": "bad_json_requests", "sum": {"aggregationTemporality": 2, "isMonotonic": true,
              "dataPoints": [{"timeUnixNano": %1$d, "asInt": "3",
                "attributes": [{"key": "protocol", "value": {"stringValue": "json"}}],
                "exemplars": [{"timeUnixNano": "%1$d", "asInt": "1",
                  "traceId": "5B8EFFF798038103D269B633813FC60C", "spanId": "EEE19B7EC3C1B174"}]}]}},
            {"name": "@#$%%", "gauge": {"dataPoints": [
              {"timeUnixNano": "%1$d", "asDouble": 1,
               "attributes": [{"key": "protocol", "value": {"stringValue": "json"}}]}]}}
          ]}]
        }]}
        """
            .formatted(nanos);
    HttpResponse<byte[]> r =
        post("application/json; charset=utf-8", null, json.getBytes(StandardCharsets.UTF_8));
    assertThat(r.statusCode()).as("%s", text(r)).isEqualTo(200);
    assertThat(r.headers().firstValue("Content-Type"))
        .hasValueSatisfying(v -> assertThat(v).startsWith("application/json"));
    String body = new String(r.body(), StandardCharsets.UTF_8);
    assertThat(body).contains("\"rejectedDataPoints\":\"1\"");
    ExportMetricsServiceResponse.Builder resp = ExportMetricsServiceResponse.newBuilder();
    com.google.protobuf.util.JsonFormat.parser().merge(body, resp);
    assertThat(resp.getPartialSuccess().getRejectedDataPoints()).isEqualTo(1);
    assertThat(resp.getPartialSuccess().getErrorMessage()).contains("INVALID_METRIC_NAME");
    expect("bad_json_gauge", "json", null, t1, 2.5);
    expectBits("bad_json_gauge", "json", "nan", t1, CANONICAL_NAN_BITS);
    expect("bad_json_requests_total", "json", null, t1, 3.0);

    HttpResponse<byte[]> bad =
        post("application/json", null, "{\"resourceMetrics\": [".getBytes(StandardCharsets.UTF_8));
    assertThat(bad.statusCode()).as("%s", text(bad)).isEqualTo(400);
    assertThat(bad.headers().firstValue("Content-Type"))
        .hasValueSatisfying(v -> assertThat(v).startsWith("application/json"));
    com.google.rpc.Status.Builder status = com.google.rpc.Status.newBuilder();
    com.google.protobuf.util.JsonFormat.parser()
        .ignoringUnknownFields()
        .merge(new String(bad.body(), StandardCharsets.UTF_8), status);
    assertThat(status.getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT.value());
  }

  // ------------------------------------------------------------------ read back

  @Test
  @Order(100)
  void afterTheStopExactlyTheValidPointsAreStored() throws Exception {
    channel.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
    assertThat(server.stop()).as("exit code after SIGTERM").isZero();
    StoredData stored = StoredData.read(server.dataDir());
    System.out.println("BadInputIT read back " + stored);
    Map<Labels, List<Sample>> want = new TreeMap<>();
    expected.forEach(
        (l, s) -> {
          List<Sample> sorted = new ArrayList<>(s);
          sorted.sort((a, b) -> Long.compare(a.t(), b.t()));
          want.put(l, sorted);
        });
    assertThat(stored.all().keySet())
        .as("stored series")
        .containsExactlyInAnyOrderElementsOf(want.keySet());
    for (Map.Entry<Labels, List<Sample>> e : want.entrySet()) {
      assertThat(stored.samples(e.getKey()))
          .as("samples of %s", e.getKey())
          .containsExactlyElementsOf(e.getValue());
    }
  }

  // ------------------------------------------------------------------ helpers

  private void expect(String name, String protocol, String caseName, long t, double v) {
    expectBits(name, protocol, caseName, t, Double.doubleToRawLongBits(v));
  }

  private void expectBits(String name, String protocol, String caseName, long t, long bits) {
    Labels.Builder b =
        Labels.builder()
            .add("__name__", name)
            .add("job", "badinput")
            .add("instance", "bad-1")
            .add("protocol", protocol);
    if (caseName != null) {
      b.add("case", caseName);
    }
    expected.computeIfAbsent(b.build(), k -> new ArrayList<>()).add(new Sample(t, bits));
  }

  private ExportMetricsServiceResponse export(String protocol, ExportMetricsServiceRequest request)
      throws Exception {
    if (protocol.equals("grpc")) {
      return MetricsServiceGrpc.newBlockingStub(channel)
          .withDeadlineAfter(30, TimeUnit.SECONDS)
          .export(request);
    }
    HttpResponse<byte[]> r = post(PROTOBUF, null, request.toByteArray());
    assertThat(r.statusCode()).as("HTTP export: %s", text(r)).isEqualTo(200);
    assertThat(r.headers().firstValue("Content-Type"))
        .hasValueSatisfying(v -> assertThat(v).startsWith(PROTOBUF));
    return ExportMetricsServiceResponse.parseFrom(r.body());
  }

  /**
   * A valid request with two good points of {@code name}: must not be stored when refused whole.
   */
  private ExportMetricsServiceRequest validRequest(String name, String protocol) {
    return Otlp.request(
        "badinput",
        "bad-1",
        List.of(
            gauge(
                name,
                point(t1, 1.0, "protocol", protocol),
                point(t1 + 1, 2.0, "protocol", protocol))));
  }

  /** A valid request larger than {@link #LIMIT_BYTES} (compresses well). */
  private ExportMetricsServiceRequest bigRequest(String name, String protocol) {
    List<NumberDataPoint> points = new ArrayList<>();
    String pad = "x".repeat(200);
    for (int i = 0; i < 400; i++) {
      points.add(point(t1, i, "protocol", protocol, "i", Integer.toString(i), "pad", pad));
    }
    return Otlp.request(
        "badinput", "bad-1", List.of(gauge(name, points.toArray(NumberDataPoint[]::new))));
  }

  /** Not a protobuf message: field 1 with the invalid wire type 7, then text. */
  private static byte[] garbage() {
    byte[] text =
        "this is not an ExportMetricsServiceRequest \u0000\u00ff"
            .getBytes(StandardCharsets.ISO_8859_1);
    byte[] out = new byte[text.length + 1];
    out[0] = 0x0F;
    System.arraycopy(text, 0, out, 1, text.length);
    return out;
  }

  private HttpResponse<byte[]> post(String contentType, String contentEncoding, byte[] body)
      throws IOException, InterruptedException {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(URI.create(server.otlpHttpUrl()))
            .timeout(Duration.ofSeconds(30))
            .header("Content-Type", contentType)
            .POST(HttpRequest.BodyPublishers.ofByteArray(body));
    if (contentEncoding != null) {
      b.header("Content-Encoding", contentEncoding);
    }
    return http.send(b.build(), HttpResponse.BodyHandlers.ofByteArray());
  }

  /** Checks the status and the {@code google.rpc.Status} body (protobuf). */
  private static void assertStatus(
      HttpResponse<byte[]> r, int status, Status.Code code, String messagePart) throws IOException {
    assertThat(r.statusCode()).as("%s", text(r)).isEqualTo(status);
    assertThat(r.headers().firstValue("Content-Type"))
        .hasValueSatisfying(v -> assertThat(v).startsWith(PROTOBUF));
    com.google.rpc.Status body = com.google.rpc.Status.parseFrom(r.body());
    assertThat(body.getCode()).as("google.rpc.Status code in %s", body).isEqualTo(code.value());
    assertThat(body.getMessage()).containsIgnoringCase(messagePart);
  }

  private static String text(HttpResponse<byte[]> r) {
    String s = new String(r.body(), StandardCharsets.UTF_8).replaceAll("[^\\x20-\\x7e]", ".");
    return r.statusCode() + " " + r.headers().map() + " " + s;
  }

  private static byte[] gzip(byte[] data) throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    try (GZIPOutputStream gz = new GZIPOutputStream(out)) {
      gz.write(data);
    }
    return out.toByteArray();
  }
}
