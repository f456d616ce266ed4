package dev.tidemark.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.grpc.ManagedChannel;
import io.opentelemetry.proto.collector.metrics.v1.MetricsServiceGrpc;
import java.net.ServerSocket;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A real Prometheus (Debian's {@code prometheus}) scrapes Tidemark's {@code /federate} as its
 * federation documentation configures it ({@code honor_labels: true}, {@code match[]} params) and
 * reads back the series sent to Tidemark over OTLP, with their labels and values; and the endpoint
 * answers a bad selector with 400 and a line of text, as Prometheus does.
 */
class FederateIT {
  private static final ObjectMapper JSON = new ObjectMapper();

  @TempDir Path tmp;

  @Test
  void prometheusFederatesFromTidemark() throws Exception {
    HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    try (ServerProcess tm = ServerProcess.start(tmp.resolve("data"))) {
      long now = System.currentTimeMillis();
      ManagedChannel ch = Otlp.channel(tm.grpcPort());
      try {
        MetricsServiceGrpc.newBlockingStub(ch)
            .withDeadlineAfter(30, TimeUnit.SECONDS)
            .export(
                Otlp.request(
                    "fed",
                    "i-1",
                    List.of(
                        Otlp.gauge("queue.depth", Otlp.point(now, 42.5, "queue", "q1")),
                        Otlp.gauge("other.thing", Otlp.point(now, 1)))));
      } finally {
        ch.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
      }

      String base = "http://127.0.0.1:" + tm.apiPort();
      HttpResponse<String> bad =
          http.send(
              HttpRequest.newBuilder(URI.create(base + "/federate?match[]=" + enc("{job=")))
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      assertThat(bad.statusCode()).isEqualTo(400);
      assertThat(bad.headers().firstValue("Content-Type"))
          .hasValueSatisfying(t -> assertThat(t).startsWith("text/plain"));
      HttpResponse<String> direct =
          http.send(
              HttpRequest.newBuilder(URI.create(base + "/federate?match[]=" + enc("queue_depth")))
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      assertThat(direct.statusCode()).isEqualTo(200);
      assertThat(direct.body())
          .isEqualTo(
              "# TYPE queue_depth untyped\n"
                  + "queue_depth{instance=\"i-1\",job=\"fed\",queue=\"q1\"} 42.5 "
                  + now
                  + "\n");

      int promPort;
      try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
        promPort = s.getLocalPort();
      }
      Path config = tmp.resolve("prometheus.yml");
      Files.writeString(
          config,
          "global:\n"
              + "  scrape_interval: 1s\n"
              + "scrape_configs:\n"
              + "  - job_name: federate\n"
              + "    honor_labels: true\n"
              + "    metrics_path: /federate\n"
              + "    params:\n"
              + "      'match[]': ['{job=\"fed\"}']\n"
              + "    static_configs:\n"
              + "      - targets: ['127.0.0.1:"
              + tm.apiPort()
              + "']\n");
      Path log = tmp.resolve("prometheus.log");
      Process prom =
          new ProcessBuilder(
                  "prometheus",
                  "--config.file=" + config,
                  "--storage.tsdb.path=" + tmp.resolve("prom-data"),
                  "--web.listen-address=127.0.0.1:" + promPort)
              .directory(tmp.toFile())
              .redirectErrorStream(true)
              .redirectOutput(log.toFile())
              .start();
      try {
        JsonNode result = null;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (System.nanoTime() < deadline && prom.isAlive()) {
          try {
            HttpResponse<String> r =
                http.send(
                    HttpRequest.newBuilder(
                            URI.create(
                                "http://127.0.0.1:"
                                    + promPort
                                    + "/api/v1/query?query="
                                    + enc("{job=\"fed\"}")))
                        .build(),
                    HttpResponse.BodyHandlers.ofString());
            JsonNode data = JSON.readTree(r.body()).path("data").path("result");
            if (data.size() == 2) {
              result = data;
              break;
            }
          } catch (java.io.IOException notYet) {
            // Prometheus is still starting
          }
          Thread.sleep(250);
        }
        assertThat(result).as(Files.readString(log)).isNotNull();
        JsonNode queue =
            result.get(0).path("metric").path("__name__").asText().equals("queue_depth")
                ? result.get(0)
                : result.get(1);
        assertThat(JSON.writeValueAsString(queue.path("metric")))
            .isEqualTo(
                "{\"__name__\":\"queue_depth\",\"instance\":\"i-1\",\"job\":\"fed\","
                    + "\"queue\":\"q1\"}");
        assertThat(queue.path("value").get(1).asText()).isEqualTo("42.5");
      } finally {
        prom.destroy();
        if (!prom.waitFor(30, TimeUnit.SECONDS)) {
          prom.destroyForcibly().waitFor();
        }
      }
    }
  }

  private static String enc(String s) {
    return URLEncoder.encode(s, StandardCharsets.UTF_8);
  }
}
