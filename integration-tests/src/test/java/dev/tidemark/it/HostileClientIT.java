package dev.tidemark.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.tidemark.it.StoredData.Sample;
import dev.tidemark.tsdb.model.Labels;
import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest;
import io.opentelemetry.proto.collector.metrics.v1.MetricsServiceGrpc;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
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
 * Hostile clients against one real server (issue #9), started with a small heap ({@code -Xmx256m})
 * and an {@value #LIMIT_MIB} MiB OTLP/HTTP body limit: slow connections, gzip bombs, OTLP/JSON
 * {@code -0.0}, error texts, unknown paths and malformed requests on both HTTP ports, garbage on
 * the gRPC port. After each attack a normal client is still served; the last test stops the server
 * and reads back what was stored.
 */
@ExtendWith(ServerLogs.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class HostileClientIT {
  static final int LIMIT_MIB = 8;
  static final long SEED = 9L;
  static final String PROTOBUF = "application/x-protobuf";

  /** Bounds for "answered promptly": correctness checks on a shared 2-core machine, not timings. */
  static final Duration PROMPT = Duration.ofSeconds(10);

  /** A Java class name in a text: qualified, or a simple name ending in Exception or Error. */
  static final Pattern CLASS_NAME =
      Pattern.compile(
          "\\b(?:java|javax|com|io|org|dev)\\.[\\w.$]+|\\b[A-Z]\\w*(?:Exception|Error)\\b");

  @TempDir static Path tmp;

  private ServerProcess server;
  private ManagedChannel channel;
  private final HttpClient http =
      HttpClient.newBuilder()
          .version(HttpClient.Version.HTTP_1_1)
          .connectTimeout(Duration.ofSeconds(5))
          .build();
  private final long t1 = System.currentTimeMillis() - 60_000;

  @BeforeAll
  void startServer() throws Exception {
    server =
        ServerProcess.start(
            tmp.resolve("data"),
            List.of("-Xmx256m"),
            List.of("--otlp-http-max-body-size", LIMIT_MIB + "MiB"));
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

  // ------------------------------------------------------------------ 1. slow connections

  @Test
  @Order(1)
  void twoHundredSilentConnectionsDoNotDelayAFastClient() throws Exception {
    List<Socket> silent = new ArrayList<>();
    try {
      for (int i = 0; i < 200; i++) {
        silent.add(headersOnly(server.otlpHttpPort(), 1000));
      }
      // The silent requests reach the handler in the background; several exports in a row make
      // sure some run after all of them are waiting for their bodies.
      for (int i = 0; i < 5; i++) {
        long t0 = System.nanoTime();
        HttpResponse<byte[]> r =
            post(
                PROTOBUF, null, request("hostile_fast", i, "i", Integer.toString(i)).toByteArray());
        assertThat(r.statusCode()).as("export %d next to 200 silent connections", i).isEqualTo(200);
        assertThat(Duration.ofNanos(System.nanoTime() - t0))
            .as("export %d answered promptly", i)
            .isLessThan(PROMPT);
      }
      assertThat(get(server.apiUrl("/-/ready")).statusCode()).isEqualTo(200);

      // A silent client that finally sends its body is served as usual.
      byte[] body = request("hostile_late_body", 7).toByteArray();
      try (Socket s = headersOnly(server.otlpHttpPort(), body.length)) {
        s.getOutputStream().write(body);
        s.getOutputStream().flush();
        assertThat(statusLine(s)).isEqualTo("HTTP/1.1 200 OK");
      }
    } finally {
      for (Socket s : silent) {
        s.close();
      }
    }
    // Nothing broken: the next export and the gRPC port still work.
    assertThat(post(PROTOBUF, null, request("hostile_after_slow", 1).toByteArray()).statusCode())
        .isEqualTo(200);
    MetricsServiceGrpc.newBlockingStub(channel)
        .withDeadlineAfter(30, TimeUnit.SECONDS)
        .export(request("hostile_after_slow_grpc", 1));
  }

  // ------------------------------------------------------------------ 2. gzip bombs

  @Test
  @Order(2)
  void gzipBombsGet413WithoutTheHeapGrowingAndTheServerStaysUsable() throws Exception {
    byte[] bomb = gzipBomb(1L << 30); // 1 GiB of zeros
    assertThat(bomb.length).as("compressed bomb").isLessThan(LIMIT_MIB << 20);
    String rssBefore = peakRss();
    List<CompletableFuture<HttpResponse<byte[]>>> answers = new ArrayList<>();
    for (int i = 0; i < 6; i++) {
      answers.add(
          http.sendAsync(
              HttpRequest.newBuilder(URI.create(server.otlpHttpUrl()))
                  .timeout(Duration.ofSeconds(60))
                  .header("Content-Type", PROTOBUF)
                  .header("Content-Encoding", "gzip")
                  .POST(HttpRequest.BodyPublishers.ofByteArray(bomb))
                  .build(),
              HttpResponse.BodyHandlers.ofByteArray()));
    }
    for (CompletableFuture<HttpResponse<byte[]>> a : answers) {
      HttpResponse<byte[]> r = a.get(60, TimeUnit.SECONDS);
      assertThat(r.statusCode()).isEqualTo(413);
      assertThat(com.google.rpc.Status.parseFrom(r.body()).getMessage())
          .contains("exceeds the limit of " + (LIMIT_MIB << 20) + " bytes");
    }
    System.out.printf(
        "HostileClientIT: 6 concurrent gzip bombs of %d bytes (1 GiB inflated) against -Xmx256m and a"
            + " %d MiB limit: server peak RSS before %s, after %s%n",
        bomb.length, LIMIT_MIB, rssBefore, peakRss());
    assertThat(server.isAlive()).isTrue();
    assertThat(
            post(PROTOBUF, "gzip", gzip(request("hostile_after_bomb", 2).toByteArray()))
                .statusCode())
        .isEqualTo(200);
    String metrics = server.apiGet("/metrics");
    assertThat(OtelSdkIT.counter(metrics, "tidemark_otlp_requests_total", "outcome=\"too_large\""))
        .isEqualTo(6);
    assertThat(server.log()).doesNotContain("OutOfMemoryError").doesNotContain("out of memory");
  }

  // ------------------------------------------------------------------ 3. -0.0 over JSON

  @Test
  @Order(3)
  void jsonNegativeZeroIsAccepted() throws Exception {
    String json =
        """
        {"resourceMetrics": [{"resource": {"attributes": [
            {"key": "service.name", "value": {"stringValue": "hostile"}},
            {"key": "service.instance.id", "value": {"stringValue": "h-1"}}]},
          "scopeMetrics": [{"metrics": [{"name": "hostile_negative_zero", "gauge": {"dataPoints": [
            {"timeUnixNano": "%d", "asDouble": -0.0}]}}]}]}]}
        """
            .formatted(t1 * 1_000_000L);
    HttpResponse<byte[]> r = post("application/json", null, json.getBytes(StandardCharsets.UTF_8));
    assertThat(r.statusCode()).as(new String(r.body(), StandardCharsets.UTF_8)).isEqualTo(200);
  }

  // ------------------------------------------------------------------ 4. error texts

  @Test
  @Order(4)
  void errorAnswersNameNoJavaClass() throws Exception {
    List<String> messages = new ArrayList<>();
    HttpResponse<byte[]> json =
        post("application/json", null, "{\"resourceMetrics\": [".getBytes(StandardCharsets.UTF_8));
    assertThat(json.statusCode()).isEqualTo(400);
    messages.add(new String(json.body(), StandardCharsets.UTF_8));
    HttpResponse<byte[]> badValue =
        post(
            "application/json",
            null,
            "{\"resourceMetrics\": [{\"scopeMetrics\": [{\"metrics\": [{\"gauge\": {\"dataPoints\": [{\"asDouble\": {}}]}}]}]}]}"
                .getBytes(StandardCharsets.UTF_8));
    assertThat(badValue.statusCode()).isEqualTo(400);
    messages.add(new String(badValue.body(), StandardCharsets.UTF_8));
    for (byte[] body : List.of(garbage(), new byte[] {0x0a, 0x7f}, gzip(new byte[0]))) {
      HttpResponse<byte[]> r = post(PROTOBUF, null, body);
      assertThat(r.statusCode()).isEqualTo(400);
      messages.add(com.google.rpc.Status.parseFrom(r.body()).getMessage());
    }
    for (byte[] body :
        List.of(
            new byte[0],
            "not gzip".getBytes(StandardCharsets.UTF_8),
            new byte[] {0x1f, (byte) 0x8b, 8, 0})) {
      HttpResponse<byte[]> r = post(PROTOBUF, "gzip", body);
      assertThat(r.statusCode()).isEqualTo(400);
      messages.add(com.google.rpc.Status.parseFrom(r.body()).getMessage());
    }
    for (byte[] body : List.of(garbage(), new byte[] {0x0a, 0x7f})) {
      assertThatThrownBy(
              () ->
                  Otlp.exportRaw(
                      channel, CallOptions.DEFAULT.withDeadlineAfter(30, TimeUnit.SECONDS), body))
          .isInstanceOfSatisfying(
              StatusRuntimeException.class,
              e -> {
                assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
                messages.add(e.getStatus().getDescription());
              });
    }
    System.out.println("HostileClientIT error texts:\n  " + String.join("\n  ", messages));
    for (String m : messages) {
      assertThat(m).isNotBlank();
      assertThat(CLASS_NAME.matcher(m).find()).as("class name in %s", m).isFalse();
    }
  }

  // ------------------------------------------------------------------ 5. plain 404 and error pages

  @Test
  @Order(5)
  void unknownPathsAndMalformedRequestsGetPlainTextOnBothHttpPorts() throws Exception {
    for (int port : new int[] {server.otlpHttpPort(), server.apiPort()}) {
      HttpResponse<byte[]> r = get("http://127.0.0.1:" + port + "/no/such/path");
      assertThat(r.statusCode()).as("port %d", port).isEqualTo(404);
      assertThat(r.headers().firstValue("Content-Type"))
          .hasValueSatisfying(v -> assertThat(v).startsWith("text/plain"));
      assertThat(new String(r.body(), StandardCharsets.UTF_8)).isEqualTo("404 page not found\n");

      assertPlainError(port, "GET /a b c HTTP/1.1\r\nHost: x\r\n\r\n", 400);
      assertPlainError(port, "GET /" + "a".repeat(20_000) + " HTTP/1.1\r\nHost: x\r\n\r\n", 414);
      assertPlainError(
          port, "GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + "b".repeat(20_000) + "\r\n\r\n", 431);
    }
    HttpResponse<byte[]> post =
        http.send(
            HttpRequest.newBuilder(
                    URI.create("http://127.0.0.1:" + server.otlpHttpPort() + "/v1/traces"))
                .header("Content-Type", PROTOBUF)
                .POST(HttpRequest.BodyPublishers.ofByteArray(new byte[3]))
                .build(),
            HttpResponse.BodyHandlers.ofByteArray());
    assertThat(post.statusCode()).isEqualTo(404);
    assertThat(new String(post.body(), StandardCharsets.UTF_8)).isEqualTo("404 page not found\n");
  }

  // ------------------------------------------------------------------ 6. garbage on the gRPC port

  @Test
  @Order(6)
  void garbageOnTheGrpcPortIsNotLoggedPerConnection() throws Exception {
    int linesBefore = server.log().split("\n").length;
    SplittableRandom random = new SplittableRandom(SEED);
    for (int i = 0; i < 50; i++) {
      byte[] bytes;
      if (i % 2 == 0) {
        bytes =
            ("POST /v1/metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 3\r\n\r\nabc")
                .getBytes(StandardCharsets.US_ASCII);
      } else {
        bytes = new byte[64 + random.nextInt(512)];
        random.nextBytes(bytes);
      }
      try (Socket s = new Socket("127.0.0.1", server.grpcPort())) {
        s.setSoTimeout(10_000);
        s.getOutputStream().write(bytes);
        s.getOutputStream().flush();
        InputStream in = s.getInputStream();
        while (in.read() >= 0) {
          // read until the server closes the connection
        }
      } catch (IOException reset) {
        // the server may reset the connection: that is an answer too
      }
    }
    MetricsServiceGrpc.newBlockingStub(channel)
        .withDeadlineAfter(30, TimeUnit.SECONDS)
        .export(request("hostile_after_grpc_garbage", 3));

    String[] lines = server.log().split("\n");
    List<String> added = List.of(lines).subList(Math.min(linesBefore, lines.length), lines.length);
    System.out.println(
        "HostileClientIT: log lines after 50 garbage gRPC connections:\n  "
            + String.join("\n  ", added));
    assertThat(server.log()).doesNotContain("Hex dump").doesNotContain("Transport failed");
    assertThat(added.stream().filter(l -> l.contains("gRPC")).count())
        .as("lines about the garbage connections (rate-limited to one per 10 s)")
        .isBetween(1L, 3L);
  }

  // ------------------------------------------------------------------ read back

  @Test
  @Order(100)
  void afterTheStopTheStoredValuesAreThereBitForBit() throws Exception {
    channel.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
    assertThat(server.stop()).as("exit code after SIGTERM").isZero();
    StoredData stored = StoredData.read(server.dataDir());
    assertThat(stored.samples(labels("hostile_negative_zero")))
        .as(stored.describe(l -> true))
        .containsExactly(new Sample(t1, 0x8000000000000000L));
    assertThat(stored.samples(labels("hostile_late_body"))).containsExactly(Sample.of(t1, 7));
    assertThat(stored.samples(labels("hostile_after_bomb"))).containsExactly(Sample.of(t1, 2));
    assertThat(stored.family("hostile_fast")).hasSize(5);
  }

  // ------------------------------------------------------------------ helpers

  private static Labels labels(String name) {
    return Labels.of("__name__", name, "job", "hostile", "instance", "h-1");
  }

  private ExportMetricsServiceRequest request(String name, double value, String... attrs) {
    return Otlp.request("hostile", "h-1", List.of(Otlp.gauge(name, Otlp.point(t1, value, attrs))));
  }

  /**
   * Connects and sends complete POST headers announcing {@code contentLength} body bytes, and no
   * body.
   */
  private static Socket headersOnly(int port, int contentLength) throws IOException {
    Socket s = new Socket("127.0.0.1", port);
    s.setSoTimeout(30_000);
    OutputStream out = s.getOutputStream();
    out.write(
        ("POST /v1/metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: "
                + PROTOBUF
                + "\r\nContent-Length: "
                + contentLength
                + "\r\n\r\n")
            .getBytes(StandardCharsets.US_ASCII));
    out.flush();
    return s;
  }

  private static String statusLine(Socket s) throws IOException {
    StringBuilder sb = new StringBuilder();
    InputStream in = s.getInputStream();
    int c;
    while ((c = in.read()) >= 0 && c != '\n') {
      if (c != '\r') {
        sb.append((char) c);
      }
    }
    return sb.toString();
  }

  /** Sends a raw request and checks the status and that the answer is one line of plain text. */
  private static void assertPlainError(int port, String rawRequest, int status) throws IOException {
    try (Socket s = new Socket("127.0.0.1", port)) {
      s.setSoTimeout(10_000);
      s.getOutputStream().write(rawRequest.getBytes(StandardCharsets.US_ASCII));
      s.getOutputStream().flush();
      String answer = new String(s.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      assertThat(answer).as("port %d: %s", port, answer).startsWith("HTTP/1.1 " + status + " ");
      assertThat(answer.toLowerCase(java.util.Locale.ROOT))
          .as("port %d", port)
          .contains("content-type: text/plain")
          .doesNotContain("<html")
          .doesNotContain("<h2>");
      String body = answer.substring(answer.indexOf("\r\n\r\n") + 4);
      assertThat(body).as("port %d", port).startsWith(status + " ").endsWith("\n");
      assertThat(CLASS_NAME.matcher(body).find()).as("class name in %s", body).isFalse();
    }
  }

  private HttpResponse<byte[]> get(String url) throws IOException, InterruptedException {
    return http.send(
        HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(30)).GET().build(),
        HttpResponse.BodyHandlers.ofByteArray());
  }

  private HttpResponse<byte[]> post(String contentType, String contentEncoding, byte[] body)
      throws IOException, InterruptedException {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(URI.create(server.otlpHttpUrl()))
            .timeout(PROMPT.plusSeconds(20))
            .header("Content-Type", contentType)
            .POST(HttpRequest.BodyPublishers.ofByteArray(body));
    if (contentEncoding != null) {
      b.header("Content-Encoding", contentEncoding);
    }
    return http.send(b.build(), HttpResponse.BodyHandlers.ofByteArray());
  }

  /** Peak resident memory of the server process (Linux {@code VmHWM}), for the report. */
  private String peakRss() {
    try {
      for (String line : Files.readAllLines(Path.of("/proc/" + server.pid() + "/status"))) {
        if (line.startsWith("VmHWM:")) {
          return line.substring(6).trim();
        }
      }
    } catch (IOException e) {
      // not Linux
    }
    return "n/a";
  }

  /** Not a protobuf message: field 1 with the invalid wire type 7, then text. */
  private static byte[] garbage() {
    return "\u000fthis is not an ExportMetricsServiceRequest".getBytes(StandardCharsets.ISO_8859_1);
  }

  private static byte[] gzip(byte[] data) throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    try (GZIPOutputStream gz = new GZIPOutputStream(out)) {
      gz.write(data);
    }
    return out.toByteArray();
  }

  /** {@code n} zero bytes, gzipped: about a thousandth of {@code n}. */
  private static byte[] gzipBomb(long n) throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    byte[] zeros = new byte[1 << 20];
    try (GZIPOutputStream gz = new GZIPOutputStream(out, 1 << 16)) {
      for (long written = 0; written < n; written += zeros.length) {
        gz.write(zeros);
      }
    }
    return out.toByteArray();
  }
}
