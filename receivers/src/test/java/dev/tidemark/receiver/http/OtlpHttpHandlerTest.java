package dev.tidemark.receiver.http;

import static dev.tidemark.receiver.otlp.Otlp.counter;
import static dev.tidemark.receiver.otlp.Otlp.dp;
import static dev.tidemark.receiver.otlp.Otlp.gauge;
import static dev.tidemark.receiver.otlp.Otlp.request;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.util.JsonFormat;
import com.google.rpc.RetryInfo;
import dev.tidemark.receiver.Outcome;
import dev.tidemark.receiver.ReceiverConfig;
import dev.tidemark.receiver.ReceiverFixture;
import dev.tidemark.receiver.TestAppender;
import dev.tidemark.receiver.otlp.Otlp;
import dev.tidemark.tsdb.append.RejectReason;
import io.opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest;
import io.opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceResponse;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.zip.GZIPInputStream;
import java.util.zip.GZIPOutputStream;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** A real Jetty server on 127.0.0.1 with the handler, and java.net.http.HttpClient. */
class OtlpHttpHandlerTest {
  private static final String PROTOBUF = "application/x-protobuf";
  private static final String JSON = "application/json";
  private static final long MAX_BODY = 256 * 1024;

  private ReceiverFixture fixture;
  private Server server;
  private URI uri;
  private final HttpClient client =
      HttpClient.newBuilder()
          .version(HttpClient.Version.HTTP_1_1)
          .connectTimeout(Duration.ofSeconds(10))
          .build();

  private int port;

  private void start(ReceiverConfig config) throws Exception {
    start(config, 30_000);
  }

  private void start(ReceiverConfig config, long idleTimeoutMillis) throws Exception {
    fixture = new ReceiverFixture(config);
    server = new Server(new QueuedThreadPool(16, 4));
    ServerConnector connector = new ServerConnector(server, 1, 1);
    connector.setHost("127.0.0.1");
    connector.setPort(0);
    connector.setIdleTimeout(idleTimeoutMillis);
    server.addConnector(connector);
    server.setHandler(new OtlpHttpHandler(fixture.ingestor));
    server.start();
    port = connector.getLocalPort();
    uri = URI.create("http://127.0.0.1:" + port + "/v1/metrics");
  }

  private void start() throws Exception {
    start(
        ReceiverConfig.builder()
            .maxHttpBodyBytes(MAX_BODY)
            .retryAfter(Duration.ofMillis(1500))
            .build());
  }

  @AfterEach
  void stop() throws Exception {
    if (fixture != null) {
      fixture.appender.release();
    }
    if (server != null) {
      server.stop();
    }
  }

  // ------------------------------------------------------------------ success

  @Test
  void protobufFullSuccess() throws Exception {
    start();
    HttpResponse<byte[]> r =
        post(PROTOBUF, null, request(gauge("temp", 1, 2), counter("hits", 3)).toByteArray());
    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(r.headers().firstValue("Content-Type")).hasValue(PROTOBUF);
    assertThat(r.headers().firstValue("Content-Encoding")).isEmpty();
    ExportMetricsServiceResponse resp = ExportMetricsServiceResponse.parseFrom(r.body());
    assertThat(resp.hasPartialSuccess()).isFalse();
    assertThat(fixture.appender.named("temp")).hasSize(2);
    assertThat(fixture.appender.named("hits_total")).hasSize(1);
    assertThat(fixture.requests("http", Outcome.SUCCESS)).isEqualTo(1);
    assertThat(fixture.counter("tidemark_otlp_data_points_received", "protocol", "http"))
        .isEqualTo(3);
    assertThat(fixture.counter("tidemark_otlp_data_points_accepted", "protocol", "http"))
        .isEqualTo(3);
    assertThat(fixture.durationCount("http")).isEqualTo(1);
  }

  @Test
  void emptyProtobufBodyIsAnEmptyRequestAndSucceeds() throws Exception {
    start();
    HttpResponse<byte[]> r = post(PROTOBUF, null, new byte[0]);
    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(r.body()).isEmpty();
  }

  @Test
  void jsonInTheOtlpShapeWithCharsetParameter() throws Exception {
    start();
    HttpResponse<byte[]> r =
        post("application/json; charset=utf-8", null, otlpJson().getBytes(StandardCharsets.UTF_8));
    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(r.headers().firstValue("Content-Type")).hasValue(JSON);
    assertThat(new String(r.body(), StandardCharsets.UTF_8)).isEqualTo("{}");
    assertThat(fixture.appender.named("my_counter_total"))
        .singleElement()
        .satisfies(
            s -> {
              assertThat(s.value()).isEqualTo(5.0);
              assertThat(s.timestampMillis()).isEqualTo(Otlp.T0_MS);
            });
    assertThat(fixture.appender.named("my_gauge"))
        .singleElement()
        .satisfies(s -> assertThat(s.value()).isEqualTo(10.0));
    assertThat(fixture.appender.named("my_histogram_seconds_count"))
        .singleElement()
        .satisfies(s -> assertThat(s.value()).isEqualTo(3.0));
    assertThat(fixture.appender.named("my_histogram_seconds_bucket")).hasSize(3);
  }

  @Test
  void jsonPartialSuccessHasRejectedDataPointsAsAString() throws Exception {
    start();
    fixture.appender.reject("my_gauge", RejectReason.TOO_OLD);
    HttpResponse<byte[]> r = post(JSON, null, otlpJson().getBytes(StandardCharsets.UTF_8));
    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(r.headers().firstValue("Content-Type")).hasValue(JSON);
    String body = new String(r.body(), StandardCharsets.UTF_8);
    assertThat(body)
        .contains("\"rejectedDataPoints\":\"1\"")
        .contains("TOO_OLD")
        .contains("e.g. metric \\\"my_gauge\\\"");
    ExportMetricsServiceResponse.Builder parsed = ExportMetricsServiceResponse.newBuilder();
    JsonFormat.parser().merge(body, parsed);
    assertThat(parsed.getPartialSuccess().getRejectedDataPoints()).isEqualTo(1);
    assertThat(fixture.appender.named("my_counter_total")).hasSize(1);
  }

  @Test
  void protobufPartialSuccessStoresTheValidPoints() throws Exception {
    start();
    fixture.appender.reject("late", RejectReason.OUT_OF_ORDER);
    ExportMetricsServiceRequest req =
        request(
            gauge("good", 1, 2),
            gauge("late", 1, 2, 3),
            gauge("no_time", dp(0, 1)),
            gauge("nan", Double.NaN));
    HttpResponse<byte[]> r = post(PROTOBUF, null, req.toByteArray());
    assertThat(r.statusCode()).isEqualTo(200);
    ExportMetricsServiceResponse resp = ExportMetricsServiceResponse.parseFrom(r.body());
    assertThat(resp.getPartialSuccess().getRejectedDataPoints()).isEqualTo(4);
    assertThat(resp.getPartialSuccess().getErrorMessage())
        .contains("3 out of order sample (OUT_OF_ORDER, e.g. metric \"late\")")
        .contains("(ZERO_TIMESTAMP, e.g. metric \"no_time\")");
    assertThat(fixture.appender.named("good")).hasSize(2);
    assertThat(fixture.appender.named("nan")).hasSize(1);
    assertThat(fixture.requests("http", Outcome.PARTIAL_SUCCESS)).isEqualTo(1);
    assertThat(
            fixture.counter(
                "tidemark_otlp_data_points_rejected", "protocol", "http", "reason", "out_of_order"))
        .isEqualTo(3);
  }

  @Test
  void gzipRequestAndGzipResponseOnlyWhenAccepted() throws Exception {
    start();
    fixture.appender.reject("late", RejectReason.OUT_OF_ORDER);
    byte[] body = gzip(request(gauge("zipped", 1, 2, 3), gauge("late", 1)).toByteArray());

    HttpResponse<byte[]> plain = post(PROTOBUF, "gzip", body);
    assertThat(plain.statusCode()).isEqualTo(200);
    assertThat(plain.headers().firstValue("Content-Encoding")).isEmpty();
    assertThat(
            ExportMetricsServiceResponse.parseFrom(plain.body())
                .getPartialSuccess()
                .getRejectedDataPoints())
        .isEqualTo(1);

    HttpResponse<byte[]> zipped =
        send(
            builder(PROTOBUF, "gzip")
                .header("Accept-Encoding", "gzip")
                .POST(HttpRequest.BodyPublishers.ofByteArray(body)));
    assertThat(zipped.statusCode()).isEqualTo(200);
    assertThat(zipped.headers().firstValue("Content-Encoding")).hasValue("gzip");
    assertThat(zipped.headers().firstValue("Content-Type")).hasValue(PROTOBUF);
    assertThat(
            ExportMetricsServiceResponse.parseFrom(gunzip(zipped.body()))
                .getPartialSuccess()
                .getRejectedDataPoints())
        .isEqualTo(1);

    HttpResponse<byte[]> refused =
        send(
            builder(PROTOBUF, "gzip")
                .header("Accept-Encoding", "gzip;q=0, br")
                .POST(HttpRequest.BodyPublishers.ofByteArray(body)));
    assertThat(refused.headers().firstValue("Content-Encoding")).isEmpty();
    assertThat(fixture.appender.named("zipped")).hasSize(9);
  }

  // ------------------------------------------------------------------ 400

  @Test
  void garbageBytesGet400WithAStatusBody() throws Exception {
    start();
    HttpResponse<byte[]> r =
        post(PROTOBUF, null, "this is not protobuf".getBytes(StandardCharsets.UTF_8));
    assertThat(r.statusCode()).isEqualTo(400);
    assertThat(r.headers().firstValue("Content-Type")).hasValue(PROTOBUF);
    com.google.rpc.Status status = com.google.rpc.Status.parseFrom(r.body());
    assertThat(status.getCode()).isEqualTo(com.google.rpc.Code.INVALID_ARGUMENT_VALUE);
    assertThat(status.getMessage()).contains("cannot decode protobuf ExportMetricsServiceRequest");
    assertThat(fixture.requests("http", Outcome.INVALID)).isEqualTo(1);
  }

  @Test
  void truncatedProtobufGets400() throws Exception {
    start();
    byte[] full = request(gauge("temp", 1, 2, 3)).toByteArray();
    HttpResponse<byte[]> r = post(PROTOBUF, null, Arrays.copyOf(full, full.length - 3));
    assertThat(r.statusCode()).isEqualTo(400);
    assertThat(fixture.appender.samples()).isEmpty();
  }

  @Test
  void malformedJsonGets400WithAJsonStatusBody() throws Exception {
    start();
    HttpResponse<byte[]> r =
        post(JSON, null, "{\"resourceMetrics\": [".getBytes(StandardCharsets.UTF_8));
    assertThat(r.statusCode()).isEqualTo(400);
    assertThat(r.headers().firstValue("Content-Type")).hasValue(JSON);
    com.google.rpc.Status.Builder status = com.google.rpc.Status.newBuilder();
    JsonFormat.parser().merge(new String(r.body(), StandardCharsets.UTF_8), status);
    assertThat(status.getCode()).isEqualTo(com.google.rpc.Code.INVALID_ARGUMENT_VALUE);
    assertThat(status.getMessage()).contains("cannot decode JSON ExportMetricsServiceRequest");
  }

  @Test
  void deeplyNestedInputGets400NotAServerError() throws Exception {
    start();
    String deepJson = "[".repeat(100_000) + "]".repeat(100_000);
    assertThat(post(JSON, null, deepJson.getBytes(StandardCharsets.UTF_8)).statusCode())
        .isEqualTo(400);
    String deepValue =
        "{\"resourceMetrics\":[{\"resource\":{\"attributes\":[{\"key\":\"k\",\"value\":"
            + "{\"kvlistValue\":{\"values\":[{\"key\":\"k\",\"value\":".repeat(5_000)
            + "{}"
            + "}]}}".repeat(5_000)
            + "}]}}]}";
    assertThat(post(JSON, null, deepValue.getBytes(StandardCharsets.UTF_8)).statusCode())
        .isEqualTo(400);
    assertThat(fixture.requests("http", Outcome.INTERNAL_ERROR)).isZero();
  }

  @Test
  void brokenGzipGets400() throws Exception {
    start();
    byte[] good = gzip(request(gauge("temp", 1)).toByteArray());
    HttpResponse<byte[]> notGzip = post(PROTOBUF, "gzip", request(gauge("temp", 1)).toByteArray());
    assertThat(notGzip.statusCode()).isEqualTo(400);
    assertThat(com.google.rpc.Status.parseFrom(notGzip.body()).getMessage())
        .contains("invalid gzip body");
    HttpResponse<byte[]> cut = post(PROTOBUF, "gzip", Arrays.copyOf(good, good.length / 2));
    assertThat(cut.statusCode()).isEqualTo(400);
    byte[] corrupt = good.clone();
    for (int i = 12; i < corrupt.length - 8; i++) {
      corrupt[i] ^= 0x5a;
    }
    assertThat(post(PROTOBUF, "gzip", corrupt).statusCode()).isEqualTo(400);
    assertThat(fixture.appender.samples()).isEmpty();
    assertThat(fixture.requests("http", Outcome.INVALID)).isEqualTo(3);
  }

  // ------------------------------------------------------------------ 405, 415, 404

  @Test
  void otherMethodsGet405WithAllowPost() throws Exception {
    start();
    HttpResponse<byte[]> get = send(HttpRequest.newBuilder(uri).GET());
    assertThat(get.statusCode()).isEqualTo(405);
    assertThat(get.headers().firstValue("Allow")).hasValue("POST");
    assertThat(com.google.rpc.Status.parseFrom(get.body()).getMessage()).contains("GET");
    HttpResponse<byte[]> put =
        send(builder(PROTOBUF, null).PUT(HttpRequest.BodyPublishers.ofByteArray(new byte[0])));
    assertThat(put.statusCode()).isEqualTo(405);
    assertThat(fixture.requests("http", Outcome.METHOD_NOT_ALLOWED)).isEqualTo(2);
  }

  @Test
  void wrongContentTypeOrEncodingGets415() throws Exception {
    start();
    byte[] body = request(gauge("temp", 1)).toByteArray();
    HttpResponse<byte[]> text = post("text/plain", null, body);
    assertThat(text.statusCode()).isEqualTo(415);
    assertThat(text.headers().firstValue("Content-Type")).hasValue(PROTOBUF);
    assertThat(com.google.rpc.Status.parseFrom(text.body()).getMessage()).contains("text/plain");
    assertThat(
            send(HttpRequest.newBuilder(uri).POST(HttpRequest.BodyPublishers.ofByteArray(body)))
                .statusCode())
        .as("no content type")
        .isEqualTo(415);
    HttpResponse<byte[]> br = post(PROTOBUF, "br", body);
    assertThat(br.statusCode()).isEqualTo(415);
    assertThat(br.headers().firstValue("Accept-Encoding"))
        .hasValue("gzip, deflate, zstd, snappy, x-snappy-framed, identity");
    assertThat(post("Application/X-Protobuf ; foo=bar", "identity", body).statusCode())
        .as("case and parameters")
        .isEqualTo(200);
    assertThat(fixture.requests("http", Outcome.UNSUPPORTED_MEDIA_TYPE)).isEqualTo(3);
  }

  @Test
  void otherPathsAreLeftToTheNextHandler() throws Exception {
    start();
    HttpResponse<byte[]> r =
        send(
            HttpRequest.newBuilder(uri.resolve("/v1/traces"))
                .header("Content-Type", PROTOBUF)
                .POST(HttpRequest.BodyPublishers.ofByteArray(new byte[0])));
    assertThat(r.statusCode()).isEqualTo(404);
    assertThat(fixture.durationCount("http")).isZero();
  }

  // ------------------------------------------------------------------ 413

  @Test
  void bodyOverTheLimitGets413() throws Exception {
    start();
    ExportMetricsServiceRequest big = Otlp.bigRequest("big", 3000, 100);
    assertThat((long) big.getSerializedSize()).isGreaterThan(MAX_BODY);
    HttpResponse<byte[]> r = post(PROTOBUF, null, big.toByteArray());
    assertThat(r.statusCode()).isEqualTo(413);
    assertThat(com.google.rpc.Status.parseFrom(r.body()).getMessage())
        .contains("exceeds the limit of " + MAX_BODY);
    assertThat(fixture.appender.samples()).isEmpty();
    assertThat(fixture.requests("http", Outcome.TOO_LARGE)).isEqualTo(1);
  }

  @Test
  void aDeclaredLengthFarOverTheLimitIsAnswered413AtOnceNotAtTheIdleTimeout() throws Exception {
    long idleTimeoutMillis = 60_000;
    start(
        ReceiverConfig.builder()
            .maxHttpBodyBytes(MAX_BODY)
            .retryAfter(Duration.ofMillis(1500))
            .build(),
        idleTimeoutMillis);
    try (Socket s = sendHeadersOnly(100_000_000)) {
      s.getOutputStream().write(new byte[10]); // a few bytes of the announced 100 MB, then silence
      s.getOutputStream().flush();
      s.setSoTimeout((int) (idleTimeoutMillis / 2));
      long sent = System.nanoTime();
      RawResponse r = readResponse(s);
      long waitedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - sent);
      assertThat(r.statusLine).isEqualTo("HTTP/1.1 413 Payload Too Large");
      assertThat(com.google.rpc.Status.parseFrom(r.body).getMessage())
          .isEqualTo(
              "request body of 100000000 bytes (after decompression) exceeds the limit of "
                  + MAX_BODY
                  + " bytes");
      assertThat(waitedMillis)
          .as("answered long before the %d ms idle timeout", idleTimeoutMillis)
          .isLessThan(idleTimeoutMillis / 4);
    }
    assertThat(fixture.requests("http", Outcome.TOO_LARGE)).isEqualTo(1);
    assertThat(fixture.ingestor.inFlightBytes()).isZero();
  }

  @Test
  void chunkedBodiesWithoutContentLengthAreReadUpToTheLimit() throws Exception {
    start();
    byte[] ok = Otlp.bigRequest("chunked", 1000, 100).toByteArray();
    HttpResponse<byte[]> r =
        send(
            builder(PROTOBUF, null)
                .POST(
                    HttpRequest.BodyPublishers.ofInputStream(
                        () -> new java.io.ByteArrayInputStream(ok))));
    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(fixture.appender.named("chunked")).hasSize(1000);

    byte[] big = Otlp.bigRequest("big", 3000, 100).toByteArray();
    HttpResponse<byte[]> tooBig =
        send(
            builder(PROTOBUF, null)
                .POST(
                    HttpRequest.BodyPublishers.ofInputStream(
                        () -> new java.io.ByteArrayInputStream(big))));
    assertThat(tooBig.statusCode()).isEqualTo(413);
    assertThat(fixture.appender.named("big")).isEmpty();
    assertThat(fixture.ingestor.inFlightBytes()).isZero();
  }

  @Test
  void gzipBombGets413AfterDecompression() throws Exception {
    start();
    byte[] bomb = gzipZeros(64L * 1024 * 1024); // 64 MiB of zeros, ~64 KiB compressed
    assertThat((long) bomb.length).isLessThan(MAX_BODY);
    HttpResponse<byte[]> r = post(PROTOBUF, "gzip", bomb);
    assertThat(r.statusCode()).isEqualTo(413);
    assertThat(fixture.requests("http", Outcome.TOO_LARGE)).isEqualTo(1);
    assertThat(fixture.ingestor.inFlightBytes()).isZero();

    ExportMetricsServiceRequest justUnder = Otlp.bigRequest("fits", 1500, 100);
    assertThat((long) justUnder.getSerializedSize()).isLessThan(MAX_BODY);
    assertThat(post(PROTOBUF, "gzip", gzip(justUnder.toByteArray())).statusCode()).isEqualTo(200);
    assertThat(fixture.appender.named("fits")).hasSize(1500);
  }

  @Test
  void everyAcceptedContentCodingIsDecoded() throws Exception {
    start();
    byte[] raw = request(gauge("coded", 1, 2, 3)).toByteArray();
    java.util.Map<String, byte[]> bodies = new java.util.LinkedHashMap<>();
    bodies.put("zstd", com.github.luben.zstd.Zstd.compress(raw));
    bodies.put("snappy", org.xerial.snappy.Snappy.compress(raw));
    bodies.put("x-snappy-framed", framedSnappy(raw));
    java.util.zip.Deflater d = new java.util.zip.Deflater();
    d.setInput(raw);
    d.finish();
    byte[] zlib = new byte[raw.length + 64];
    bodies.put("deflate", Arrays.copyOf(zlib, d.deflate(zlib)));
    d.end();
    for (java.util.Map.Entry<String, byte[]> e : bodies.entrySet()) {
      HttpResponse<byte[]> r = post(PROTOBUF, e.getKey(), e.getValue());
      assertThat(r.statusCode()).as(e.getKey()).isEqualTo(200);
    }
    // "snappy" takes the framed format too, as the OpenTelemetry Collector's clients sent it.
    assertThat(post(PROTOBUF, "snappy", framedSnappy(raw)).statusCode()).isEqualTo(200);
    assertThat(fixture.appender.named("coded")).hasSize(5 * 3);
    HttpResponse<byte[]> broken = post(PROTOBUF, "zstd", Arrays.copyOf(bodies.get("zstd"), 7));
    assertThat(broken.statusCode()).isEqualTo(400);
    assertThat(com.google.rpc.Status.parseFrom(broken.body()).getMessage())
        .startsWith("invalid zstd body: invalid zstd data");
    assertThat(fixture.ingestor.inFlightBytes()).isZero();
  }

  @Test
  void zstdAndSnappyBombsGet413AfterDecompression() throws Exception {
    start();
    byte[] zeros = new byte[64 << 20];
    byte[] zstd = com.github.luben.zstd.Zstd.compress(zeros);
    assertThat((long) zstd.length).isLessThan(MAX_BODY);
    assertThat(post(PROTOBUF, "zstd", zstd).statusCode()).isEqualTo(413);
    // A snappy block says how long it decodes to: refused before anything is allocated for it.
    byte[] snappy = org.xerial.snappy.Snappy.compress(new byte[(int) MAX_BODY * 4]);
    assertThat((long) snappy.length).isLessThan(MAX_BODY);
    assertThat(post(PROTOBUF, "snappy", snappy).statusCode()).isEqualTo(413);
    assertThat(fixture.requests("http", Outcome.TOO_LARGE)).isEqualTo(2);
    assertThat(fixture.ingestor.inFlightBytes()).isZero();
  }

  private static byte[] framedSnappy(byte[] b) throws IOException {
    java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream();
    try (org.xerial.snappy.SnappyFramedOutputStream s =
        new org.xerial.snappy.SnappyFramedOutputStream(bytes)) {
      s.write(b);
    }
    return bytes.toByteArray();
  }

  // ------------------------------------------------------------------ slow clients

  @Test
  void silentClientsHoldNoThreadSoAFastClientIsAnsweredAtOnce() throws Exception {
    start(); // 16 threads: each silent client would hold one with blocking reads
    List<Socket> silent = new ArrayList<>();
    try {
      for (int i = 0; i < 60; i++) {
        silent.add(sendHeadersOnly(1000));
      }
      awaitConnections(60);
      long t0 = System.nanoTime();
      HttpResponse<byte[]> r = post(PROTOBUF, null, request(gauge("fast", 1)).toByteArray());
      assertThat(r.statusCode()).isEqualTo(200);
      assertThat((System.nanoTime() - t0) / 1_000_000)
          .as("ms to answer the fast client")
          .isLessThan(10_000);
      assertThat(fixture.appender.named("fast")).hasSize(1);
      // A silent client that finally sends its body is served as usual.
      byte[] body = request(gauge("late_body", 1, 2)).toByteArray();
      Socket late = sendHeadersOnly(body.length);
      late.getOutputStream().write(body);
      late.getOutputStream().flush();
      assertThat(readLine(late)).isEqualTo("HTTP/1.1 200 OK");
      late.close();
      assertThat(fixture.appender.named("late_body")).hasSize(2);
    } finally {
      for (Socket s : silent) {
        s.close();
      }
    }
  }

  @Test
  void aClientSilentPastTheIdleTimeoutGets503WithRetryAfterAndIsDisconnected() throws Exception {
    start(
        ReceiverConfig.builder()
            .maxHttpBodyBytes(MAX_BODY)
            .retryAfter(Duration.ofMillis(1500))
            .build(),
        500);
    try (Socket s = sendHeadersOnly(1000)) {
      s.getOutputStream().write(new byte[100]); // a tenth of the body, then silence
      s.getOutputStream().flush();
      RawResponse r = readResponse(s);
      assertThat(r.statusLine).isEqualTo("HTTP/1.1 503 Service Unavailable");
      assertThat(r.headers).containsEntry("retry-after", "2");
      com.google.rpc.Status status = com.google.rpc.Status.parseFrom(r.body);
      assertThat(status.getMessage())
          .isEqualTo(
              "cannot read the request body: no bytes received for 500 ms (idle timeout); the"
                  + " connection is closed; retry");
      assertThat(status.getDetails(0).unpack(RetryInfo.class).getRetryDelay().getNanos())
          .isEqualTo(500_000_000);
      s.setSoTimeout(10_000);
      assertThat(s.getInputStream().read()).as("the server closes the connection").isEqualTo(-1);
    }
    assertThat(fixture.requests("http", Outcome.BODY_UNREADABLE)).isEqualTo(1);
    assertThat(fixture.requests("http", Outcome.INVALID)).isZero();
    assertThat(fixture.ingestor.inFlightBytes()).isZero();
    assertThat(post(PROTOBUF, null, request(gauge("after", 1)).toByteArray()).statusCode())
        .isEqualTo(200);
  }

  @Test
  void aConnectionResetMidBodyReleasesTheInFlightBytes() throws Exception {
    start();
    Socket s = sendHeadersOnly(200_000);
    s.getOutputStream().write(new byte[100_000]); // half the body
    s.getOutputStream().flush();
    awaitCondition("the half body is admitted", () -> fixture.ingestor.inFlightBytes() > 0);
    s.setSoLinger(true, 0); // close() sends a TCP reset
    s.close();
    awaitCondition(
        "the reset request is counted",
        () -> fixture.requests("http", Outcome.BODY_UNREADABLE) == 1);
    assertThat(fixture.ingestor.inFlightBytes()).isZero();
    assertThat(fixture.inFlightGauge()).isZero();
    assertThat(fixture.requests("http", Outcome.INTERNAL_ERROR)).isZero();
    assertThat(post(PROTOBUF, null, request(gauge("after_reset", 1)).toByteArray()).statusCode())
        .isEqualTo(200);
    assertThat(fixture.appender.named("after_reset")).hasSize(1);
  }

  @Test
  void aBodyCutShortByTheClientClosingItsSideGets503() throws Exception {
    start();
    try (Socket s = sendHeadersOnly(1000)) {
      s.getOutputStream().write(new byte[100]);
      s.getOutputStream().flush();
      s.shutdownOutput(); // end of stream 900 bytes early; the client still reads the answer
      RawResponse r = readResponse(s);
      assertThat(r.statusLine).isEqualTo("HTTP/1.1 503 Service Unavailable");
      assertThat(r.headers).containsKey("retry-after");
      assertThat(com.google.rpc.Status.parseFrom(r.body).getMessage())
          .isEqualTo(
              "cannot read the request body: the connection was closed or reset before the body"
                  + " was complete; retry");
    }
    assertThat(fixture.requests("http", Outcome.BODY_UNREADABLE)).isEqualTo(1);
    assertThat(fixture.ingestor.inFlightBytes()).isZero();
  }

  @Test
  void aChunkedBodyWithBrokenFramingEndsLikeAnEarlyEofAndGets503() throws Exception {
    // Jetty hands the handler an early end of stream for a bad chunk size, the same failure as a
    // connection closed mid-body: the two cannot be told apart, so both are retryable.
    start();
    try (Socket s = new Socket("127.0.0.1", port)) {
      s.setSoTimeout(20_000);
      s.getOutputStream()
          .write(
              ("POST /v1/metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: "
                      + PROTOBUF
                      + "\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nabcd\r\nzz\r\n")
                  .getBytes(StandardCharsets.US_ASCII));
      s.getOutputStream().flush();
      RawResponse r = readResponse(s);
      assertThat(r.statusLine).isEqualTo("HTTP/1.1 503 Service Unavailable");
      assertThat(r.headers).containsKey("retry-after");
    }
    assertThat(fixture.requests("http", Outcome.BODY_UNREADABLE)).isEqualTo(1);
    assertThat(fixture.ingestor.inFlightBytes()).isZero();
  }

  /**
   * Opens a connection and sends complete POST headers announcing {@code contentLength} bytes, and
   * no body.
   */
  private Socket sendHeadersOnly(int contentLength) throws IOException {
    Socket s = new Socket("127.0.0.1", port);
    s.setSoTimeout(20_000);
    String head =
        "POST /v1/metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: "
            + PROTOBUF
            + "\r\nContent-Length: "
            + contentLength
            + "\r\n\r\n";
    s.getOutputStream().write(head.getBytes(StandardCharsets.US_ASCII));
    s.getOutputStream().flush();
    return s;
  }

  /** A response read off a socket: its status line, headers (names in lower case) and body. */
  private record RawResponse(
      String statusLine, java.util.Map<String, String> headers, byte[] body) {}

  /** Reads one response with a {@code Content-Length} body. */
  private static RawResponse readResponse(Socket s) throws IOException {
    String statusLine = readLine(s);
    java.util.Map<String, String> headers = new java.util.HashMap<>();
    for (String line = readLine(s); !line.isEmpty(); line = readLine(s)) {
      int colon = line.indexOf(':');
      headers.put(
          line.substring(0, colon).trim().toLowerCase(java.util.Locale.ROOT),
          line.substring(colon + 1).trim());
    }
    int length = Integer.parseInt(headers.getOrDefault("content-length", "0"));
    byte[] body = s.getInputStream().readNBytes(length);
    return new RawResponse(statusLine, headers, body);
  }

  /** Waits (at most 20 s) until {@code condition} holds. */
  private static void awaitCondition(String what, java.util.function.BooleanSupplier condition)
      throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("timed out waiting: " + what);
      }
      Thread.sleep(10); // polling state the server keeps; there is no event to wait on
    }
  }

  private static String readLine(Socket s) throws IOException {
    StringBuilder sb = new StringBuilder();
    java.io.InputStream in = s.getInputStream();
    int c;
    while ((c = in.read()) >= 0 && c != '\n') {
      if (c != '\r') {
        sb.append((char) c);
      }
    }
    return sb.toString();
  }

  /** Waits until the server has accepted {@code n} connections. */
  private void awaitConnections(int n) throws InterruptedException {
    ServerConnector connector = (ServerConnector) server.getConnectors()[0];
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    while (connector.getConnectedEndPoints().size() < n) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError(
            "only "
                + connector.getConnectedEndPoints().size()
                + " of "
                + n
                + " connections accepted");
      }
      Thread.sleep(10); // polling a count the server keeps; there is no event to wait on
    }
  }

  // ------------------------------------------------------------------ 503

  @Test
  void overloadGets503WithRetryAfter() throws Exception {
    byte[] held = Otlp.bigRequest("held", 100, 50).toByteArray();
    start(
        ReceiverConfig.builder()
            .maxInFlightBytes(held.length + held.length / 2)
            .retryAfter(Duration.ofMillis(1500))
            .build());
    TestAppender appender = fixture.appender;
    appender.holdOn("held");
    CompletableFuture<HttpResponse<byte[]>> first =
        client.sendAsync(
            builder(PROTOBUF, null).POST(HttpRequest.BodyPublishers.ofByteArray(held)).build(),
            HttpResponse.BodyHandlers.ofByteArray());
    assertThat(appender.awaitHeld()).isTrue();

    byte[] second = Otlp.bigRequest("second", 100, 50).toByteArray();
    HttpResponse<byte[]> r = post(PROTOBUF, null, second);
    assertThat(r.statusCode()).isEqualTo(503);
    assertThat(r.headers().firstValue("Retry-After")).hasValue("2");
    com.google.rpc.Status status = com.google.rpc.Status.parseFrom(r.body());
    assertThat(status.getMessage()).contains("overloaded");
    assertThat(status.getDetails(0).unpack(RetryInfo.class).getRetryDelay().getNanos())
        .isEqualTo(500_000_000);

    appender.release();
    assertThat(first.get(20, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
    assertThat(appender.named("held")).hasSize(100);
    assertThat(appender.named("second")).isEmpty();
    assertThat(fixture.requests("http", Outcome.OVERLOADED)).isEqualTo(1);
    assertThat(fixture.ingestor.inFlightBytes()).isZero();
    assertThat(post(PROTOBUF, null, second).statusCode()).isEqualTo(200);
  }

  @Test
  void storageUnavailableGets503WithRetryAfterInTheRequestsContentType() throws Exception {
    start();
    fixture.appender.unavailable(true);
    HttpResponse<byte[]> r = post(JSON, null, otlpJson().getBytes(StandardCharsets.UTF_8));
    assertThat(r.statusCode()).isEqualTo(503);
    assertThat(r.headers().firstValue("Retry-After")).hasValue("2");
    assertThat(r.headers().firstValue("Content-Type")).hasValue(JSON);
    String body = new String(r.body(), StandardCharsets.UTF_8);
    assertThat(body)
        .contains("storage unavailable")
        .contains("type.googleapis.com/google.rpc.RetryInfo");
    assertThat(fixture.requests("http", Outcome.STORAGE_UNAVAILABLE)).isEqualTo(1);
    assertThat(fixture.counter("tidemark_otlp_data_points_received", "protocol", "http"))
        .isEqualTo(3);
    assertThat(fixture.counter("tidemark_otlp_data_points_accepted", "protocol", "http")).isZero();
  }

  // ------------------------------------------------------------------ helpers

  /**
   * The OTLP/JSON shape of opentelemetry-proto's {@code examples/metrics.json}: lowerCamelCase
   * keys, 64-bit integers as strings (and one as a number), enums as integers, hex trace and span
   * ids in an exemplar, base64 bytes in an attribute, and unknown fields at several levels.
   */
  static String otlpJson() {
    String t = Long.toString(Otlp.T0);
    String start = Long.toString(Otlp.T0 - 60 * Otlp.SEC);
    return """
        {
          "resourceMetrics": [{
            "resource": {
              "attributes": [
                {"key": "service.name", "value": {"stringValue": "my.service"}},
                {"key": "service.instance.id", "value": {"stringValue": "i-1"}}
              ],
              "futureResourceField": {"nested": [1, 2, 3]}
            },
            "scopeMetrics": [{
              "scope": {"name": "my.library", "version": "1.0.0",
                        "attributes": [{"key": "my.scope.attribute", "value": {"stringValue": "some scope attribute"}}]},
              "metrics": [
                {
                  "name": "my.counter", "unit": "1", "description": "I am a Counter",
                  "sum": {
                    "aggregationTemporality": 2, "isMonotonic": true,
                    "dataPoints": [{
                      "asDouble": 5, "startTimeUnixNano": "%2$s", "timeUnixNano": "%1$s",
                      "attributes": [{"key": "my.counter.attr", "value": {"stringValue": "some value"}}],
                      "exemplars": [{"timeUnixNano": "%1$s", "asDouble": 5,
                                     "traceId": "5B8EFFF798038103D269B633813FC60C", "spanId": "eee19b7ec3c1b174"}]
                    }]
                  }
                },
                {
                  "name": "my.gauge", "description": "I am a Gauge",
                  "gauge": {"dataPoints": [{
                    "asInt": "10", "timeUnixNano": %1$s,
                    "attributes": [{"key": "my.bytes", "value": {"bytesValue": "aGVsbG8="}}],
                    "unknownPointField": true
                  }]}
                },
                {
                  "name": "my.histogram", "unit": "s", "description": "I am a Histogram",
                  "histogram": {
                    "aggregationTemporality": 2,
                    "dataPoints": [{
                      "startTimeUnixNano": "%2$s", "timeUnixNano": "%1$s",
                      "count": "3", "sum": 3, "bucketCounts": ["1", "1", "1"], "explicitBounds": [1, 2],
                      "min": 0.5, "max": 2.5
                    }]
                  },
                  "someNewMetricKind": {}
                }
              ]
            }]
          }]
        }
        """
        .formatted(t, start);
  }

  private HttpRequest.Builder builder(String contentType, String contentEncoding) {
    HttpRequest.Builder b = HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(30));
    if (contentType != null) {
      b.header("Content-Type", contentType);
    }
    if (contentEncoding != null) {
      b.header("Content-Encoding", contentEncoding);
    }
    return b;
  }

  private HttpResponse<byte[]> post(String contentType, String contentEncoding, byte[] body)
      throws Exception {
    return send(
        builder(contentType, contentEncoding).POST(HttpRequest.BodyPublishers.ofByteArray(body)));
  }

  private HttpResponse<byte[]> send(HttpRequest.Builder b) throws Exception {
    return client.send(b.build(), HttpResponse.BodyHandlers.ofByteArray());
  }

  static byte[] gzip(byte[] b) throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    try (OutputStream gz = new GZIPOutputStream(out)) {
      gz.write(b);
    }
    return out.toByteArray();
  }

  static byte[] gunzip(byte[] b) throws IOException {
    try (GZIPInputStream in = new GZIPInputStream(new java.io.ByteArrayInputStream(b))) {
      return in.readAllBytes();
    }
  }

  static byte[] gzipZeros(long n) throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    byte[] zeros = new byte[64 * 1024];
    try (OutputStream gz = new GZIPOutputStream(out)) {
      for (long written = 0; written < n; written += zeros.length) {
        gz.write(zeros);
      }
    }
    return out.toByteArray();
  }
}
