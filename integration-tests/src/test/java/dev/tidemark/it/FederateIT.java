package dev.tidemark.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.grpc.ManagedChannel;
import io.opentelemetry.proto.collector.metrics.v1.MetricsServiceGrpc;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
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

      String config =
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
              + "']\n";
      try (PrometheusProcess prom = PrometheusProcess.start(tmp, config)) {
        JsonNode result = prom.queryUntil("{job=\"fed\"}", r -> r.size() == 2);
        assertThat(result).as(prom.log()).isNotNull();
        JsonNode queue =
            result.get(0).path("metric").path("__name__").asText().equals("queue_depth")
                ? result.get(0)
                : result.get(1);
        assertThat(JSON.writeValueAsString(queue.path("metric")))
            .isEqualTo(
                "{\"__name__\":\"queue_depth\",\"instance\":\"i-1\",\"job\":\"fed\","
                    + "\"queue\":\"q1\"}");
        assertThat(queue.path("value").get(1).asText()).isEqualTo("42.5");
      }
    }
  }

  private static String enc(String s) {
    return URLEncoder.encode(s, StandardCharsets.UTF_8);
  }
}
