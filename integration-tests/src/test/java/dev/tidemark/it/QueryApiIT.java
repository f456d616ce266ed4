package dev.tidemark.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.grpc.ManagedChannel;
import io.opentelemetry.proto.collector.metrics.v1.MetricsServiceGrpc;
import io.opentelemetry.proto.metrics.v1.Metric;
import io.opentelemetry.proto.metrics.v1.NumberDataPoint;
import java.io.ByteArrayInputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.zip.GZIPInputStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Prometheus HTTP API of the real server jar, fed over OTLP/gRPC and read through the JDK's
 * HTTP client as Grafana or promtool would: every endpoint with GET and POST, the parameter forms,
 * the error types and statuses, gzip, the concurrency limit, a timeout, a client that disconnects,
 * and ingestion unharmed by a slow query.
 */
@ExtendWith(ServerLogs.class)
class QueryApiIT {
  static final ObjectMapper JSON = new ObjectMapper();
  static final HttpClient HTTP =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

  /** Series of the gauge that the slow query reads. */
  static final int LOAD_SERIES = 300;

  static final long STEP_MS = 15_000;
  static final int POINTS = 240; // one hour

  @TempDir static Path dir;
  static ServerProcess server;
  static long end; // the newest sample, whole seconds

  @BeforeAll
  static void start() throws Exception {
    server =
        ServerProcess.start(
            dir.resolve("data"),
            List.of("--query-max-concurrency", "1", "--query-max-queued", "1"));
    end = (System.currentTimeMillis() - 60_000) / 1000 * 1000;
    long start = end - (POINTS - 1) * STEP_MS;
    ManagedChannel ch = Otlp.channel(server.grpcPort());
    try {
      MetricsServiceGrpc.MetricsServiceBlockingStub stub =
          MetricsServiceGrpc.newBlockingStub(ch).withDeadlineAfter(60, TimeUnit.SECONDS);
      for (int s = 0; s < LOAD_SERIES; s += 50) {
        List<Metric> metrics = new ArrayList<>();
        for (int k = s; k < s + 50; k++) {
          List<NumberDataPoint> pts = new ArrayList<>();
          for (int i = 0; i < POINTS; i++) {
            pts.add(
                Otlp.point(
                    start + i * STEP_MS, (k * 7 + i) % 100 / 4.0, "cpu", Integer.toString(k)));
          }
          metrics.add(Otlp.gauge("load", pts.toArray(NumberDataPoint[]::new)));
        }
        stub.export(Otlp.request("node", "host-1", metrics));
      }
      List<NumberDataPoint> counter = new ArrayList<>();
      for (int i = 0; i < POINTS; i++) {
        counter.add(Otlp.point(start + i * STEP_MS, 10.0 * i, "code", "200"));
      }
      Metric requests =
          Otlp.counter("http.requests", counter.toArray(NumberDataPoint[]::new)).toBuilder()
              .setDescription("Requests served")
              .setUnit("{request}")
              .build();
      stub.export(Otlp.request("shop", "host-1", List.of(requests)));
    } finally {
      ch.shutdownNow();
    }
  }

  @AfterAll
  static void stop() throws Exception {
    if (server != null) {
      server.stop();
    }
  }

  static String enc(String s) {
    return URLEncoder.encode(s, StandardCharsets.UTF_8);
  }

  static HttpResponse<String> get(String pathAndQuery) throws Exception {
    return HTTP.send(
        HttpRequest.newBuilder(URI.create(server.apiUrl(pathAndQuery)))
            .timeout(Duration.ofSeconds(60))
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  static HttpResponse<String> post(String path, String form) throws Exception {
    return HTTP.send(
        HttpRequest.newBuilder(URI.create(server.apiUrl(path)))
            .timeout(Duration.ofSeconds(60))
            .header("Content-Type", "application/x-www-form-urlencoded")
            .POST(HttpRequest.BodyPublishers.ofString(form))
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  static JsonNode ok(HttpResponse<String> r) throws Exception {
    assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
    JsonNode j = JSON.readTree(r.body());
    assertThat(j.get("status").asText()).isEqualTo("success");
    return j;
  }

  static void error(HttpResponse<String> r, int status, String type) throws Exception {
    assertThat(r.statusCode()).as(r.body()).isEqualTo(status);
    JsonNode j = JSON.readTree(r.body());
    assertThat(j.get("status").asText()).isEqualTo("error");
    assertThat(j.get("errorType").asText()).isEqualTo(type);
    assertThat(j.get("error").asText()).isNotEmpty().doesNotContain("java.", "Exception");
  }

  static double metric(String name) throws Exception {
    return OtelSdkIT.counter(server.apiGet("/metrics"), name, "");
  }

  @Test
  void everyEndpointWithGetAndPost() throws Exception {
    String t = Long.toString(end / 1000);
    JsonNode v = ok(get("/api/v1/query?query=" + enc("http_requests_total") + "&time=" + t));
    assertThat(v.at("/data/resultType").asText()).isEqualTo("vector");
    assertThat(v.at("/data/result/0/metric").toString())
        .isEqualTo(
            "{\"__name__\":\"http_requests_total\",\"code\":\"200\",\"instance\":\"host-1\",\"job\":\"shop\"}");
    assertThat(v.at("/data/result/0/value").toString())
        .isEqualTo("[" + t + ",\"" + (10 * (POINTS - 1)) + "\"]");
    JsonNode p =
        ok(
            post(
                "/api/v1/query",
                "query=" + enc("sum(rate(http_requests_total[5m]))") + "&time=" + t));
    assertThat(p.at("/data/result/0/value/1").asDouble())
        .isCloseTo(10.0 / 15, org.assertj.core.data.Offset.offset(1e-9));
    // RFC 3339 times, a step written as a duration, POST
    String from = java.time.Instant.ofEpochMilli(end - 600_000).toString();
    String to = java.time.Instant.ofEpochMilli(end).toString();
    JsonNode m =
        ok(
            post(
                "/api/v1/query_range",
                "query=" + enc("count(load)") + "&start=" + from + "&end=" + to + "&step=1m"));
    assertThat(m.at("/data/resultType").asText()).isEqualTo("matrix");
    assertThat(m.at("/data/result/0/values").size()).isEqualTo(11);
    assertThat(m.at("/data/result/0/values/0/1").asText()).isEqualTo(Integer.toString(LOAD_SERIES));
    ok(
        get(
            "/api/v1/query_range?query="
                + enc("count(load)")
                + "&start="
                + (end / 1000 - 600)
                + "&end="
                + t
                + "&step=60"));

    JsonNode series = ok(get("/api/v1/series?match[]=" + enc("load{cpu=~\"1.\"}")));
    assertThat(series.get("data").size()).isEqualTo(10);
    assertThat(ok(post("/api/v1/series", "match[]=http_requests_total&limit=1")).get("data").size())
        .isEqualTo(1);
    assertThat(ok(get("/api/v1/labels")).get("data").toString())
        .isEqualTo("[\"__name__\",\"code\",\"cpu\",\"instance\",\"job\"]");
    assertThat(ok(post("/api/v1/labels", "match[]=http_requests_total")).get("data").toString())
        .isEqualTo("[\"__name__\",\"code\",\"instance\",\"job\"]");
    assertThat(ok(get("/api/v1/label/__name__/values")).get("data").toString())
        .contains("\"http_requests_total\"", "\"load\"");
    assertThat(ok(get("/api/v1/label/job/values?match[]=load")).get("data").toString())
        .isEqualTo("[\"node\"]");
    JsonNode meta = ok(get("/api/v1/metadata?metric=http_requests_total"));
    assertThat(meta.get("data").toString())
        .isEqualTo(
            "{\"http_requests_total\":[{\"type\":\"counter\",\"help\":\"Requests served\",\"unit\":\"\"}]}");
    assertThat(
            ok(get("/api/v1/format_query?query=" + enc("sum(rate(x[5m]))by(a)")))
                .get("data")
                .asText())
        .isEqualTo("sum by (a) (rate(x[5m]))");
    assertThat(ok(post("/api/v1/parse_query", "query=up")).at("/data/type").asText())
        .isEqualTo("vectorSelector");
    assertThat(ok(get("/api/v1/status/buildinfo")).at("/data/version").asText()).isNotEmpty();
    assertThat(ok(get("/api/v1/status/runtimeinfo")).at("/data/storageRetention").asText())
        .isEqualTo("15d");
    JsonNode flags = ok(get("/api/v1/status/flags"));
    assertThat(flags.at("/data/query-timeout").asText()).isEqualTo("2m");
    assertThat(flags.at("/data/query-max-concurrency").asText()).isEqualTo("1");
    JsonNode tsdb = ok(get("/api/v1/status/tsdb"));
    assertThat(tsdb.at("/data/seriesCountByMetricName/0").toString())
        .isEqualTo("{\"name\":\"load\",\"value\":300}");
    assertThat(ok(get("/api/v1/rules")).at("/data/groups").size()).isZero();
    assertThat(ok(get("/api/v1/alerts")).at("/data/alerts").size()).isZero();
    assertThat(ok(get("/api/v1/targets")).at("/data/activeTargets").size()).isZero();
    assertThat(ok(post("/api/v1/query_exemplars", "query=load")).get("data").size()).isZero();

    // gzip when asked for
    HttpResponse<byte[]> gz =
        HTTP.send(
            HttpRequest.newBuilder(URI.create(server.apiUrl("/api/v1/series?match[]=load")))
                .header("Accept-Encoding", "gzip")
                .build(),
            HttpResponse.BodyHandlers.ofByteArray());
    assertThat(gz.headers().firstValue("Content-Encoding")).hasValue("gzip");
    JsonNode unzipped = JSON.readTree(new GZIPInputStream(new ByteArrayInputStream(gz.body())));
    assertThat(unzipped.get("data").size()).isEqualTo(LOAD_SERIES);
  }

  @Test
  void errorsInPrometheusShape() throws Exception {
    error(get("/api/v1/query?query=" + enc("sum(")), 400, "bad_data");
    error(post("/api/v1/query_range", "query=load&start=x&end=1&step=1"), 400, "bad_data");
    error(get("/api/v1/query_range?query=load&start=0&end=20000&step=1"), 400, "bad_data");
    error(get("/api/v1/series"), 400, "bad_data");
    error(
        get("/api/v1/query?query=" + enc("load + on() load") + "&time=" + end / 1000),
        422,
        "execution");
    error(
        get("/api/v1/query?query=" + enc("sort_by_label(load, \"cpu\")")),
        400,
        "bad_data"); // experimental: off
    assertThat(get("/api/v1/nosuch").statusCode()).isEqualTo(404);
    HttpResponse<String> put =
        HTTP.send(
            HttpRequest.newBuilder(URI.create(server.apiUrl("/api/v1/query?query=up")))
                .PUT(HttpRequest.BodyPublishers.noBody())
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(put.statusCode()).isEqualTo(405);
  }

  /**
   * A query that runs for many seconds unless stopped (about 14 s alone on this 2-core machine;
   * without the 500 ms resampling it took 2 s): for each of 10,000 steps, a quantile over an hour
   * of 300 series resampled every 500 ms (7,200 points per window).
   */
  static String slowQuery(String extra) {
    return "/api/v1/query_range?query="
        + enc("quantile_over_time(0.5, load[1h:500ms])")
        + "&start="
        + (end / 1000 - 3000)
        + "&end="
        + end / 1000
        + "&step=0.3"
        + extra;
  }

  @Test
  void slowQueriesTimeOutQueueAreRefusedAndAreCancelledByDisconnect() throws Exception {
    // a timeout answers 503 timeout quickly
    long t0 = System.nanoTime();
    error(get(slowQuery("&timeout=0.5")), 503, "timeout");
    assertThat(System.nanoTime() - t0).isLessThan(TimeUnit.SECONDS.toNanos(20));
    await("no query running", () -> metric("tidemark_query_running") == 0);

    // a slow query from a raw connection, that then goes away
    double canceledBefore = metric("tidemark_query_canceled_by_client_total");
    try (Socket s = new Socket("127.0.0.1", URI.create(server.apiUrl("/")).getPort())) {
      OutputStream out = s.getOutputStream();
      out.write(
          ("GET " + slowQuery("") + " HTTP/1.1\r\nHost: x\r\n\r\n")
              .getBytes(StandardCharsets.US_ASCII));
      out.flush();
      await("the slow query running", () -> metric("tidemark_query_running") == 1);

      // concurrency 1, queue 1: a second query waits, a third is refused at once
      CompletableFuture<HttpResponse<String>> waiting =
          HTTP.sendAsync(
              HttpRequest.newBuilder(
                      URI.create(
                          server.apiUrl("/api/v1/query?query=count(load)&time=" + end / 1000)))
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      await("one query queued", () -> metric("tidemark_query_queued") == 1);
      error(get("/api/v1/query?query=load"), 503, "unavailable");
      // other endpoints and ingestion go on meanwhile
      ok(get("/api/v1/status/buildinfo"));
      assertThat(server.apiGet("/-/ready")).contains("Ready");
      ManagedChannel ch = Otlp.channel(server.grpcPort());
      try {
        long t1 = System.nanoTime();
        MetricsServiceGrpc.newBlockingStub(ch)
            .withDeadlineAfter(10, TimeUnit.SECONDS)
            .export(
                Otlp.request(
                    "late", "host-2", List.of(Otlp.gauge("during_query", Otlp.point(end, 1)))));
        assertThat(System.nanoTime() - t1).isLessThan(TimeUnit.SECONDS.toNanos(5));
      } finally {
        ch.shutdownNow();
      }
      assertThat(waiting).isNotDone();
      s.close(); // the client goes away: its query is cancelled and the waiting one runs
      HttpResponse<String> after = waiting.get(30, TimeUnit.SECONDS);
      assertThat(ok(after).at("/data/result/0/value/1").asText())
          .isEqualTo(Integer.toString(LOAD_SERIES));
    }
    assertThat(metric("tidemark_query_canceled_by_client_total")).isEqualTo(canceledBefore + 1);
    await("no query running", () -> metric("tidemark_query_running") == 0);
    assertThat(
            ok(get("/api/v1/query?query=during_query&time=" + end / 1000))
                .at("/data/result")
                .size())
        .isEqualTo(1);
  }

  interface Check {
    boolean ok() throws Exception;
  }

  static void await(String what, Check check) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (!check.ok()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("timed out waiting for: " + what);
      }
      Thread.sleep(50);
    }
  }
}
