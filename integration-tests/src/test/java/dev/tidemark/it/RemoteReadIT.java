package dev.tidemark.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.grpc.ManagedChannel;
import io.opentelemetry.proto.collector.metrics.v1.MetricsServiceGrpc;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A real Prometheus (Debian's) with Tidemark as its {@code remote_read} store: series sent to
 * Tidemark over OTLP, and none in Prometheus' own storage, come back through Prometheus' query API
 * with their labels and values, over hours of history (a range function included).
 */
class RemoteReadIT {
  @TempDir Path tmp;

  @Test
  void prometheusReadsTidemarkAsItsRemoteStore() throws Exception {
    try (ServerProcess tm = ServerProcess.start(tmp.resolve("data"))) {
      long now = System.currentTimeMillis() / 1000 * 1000;
      ManagedChannel ch = Otlp.channel(tm.grpcPort());
      try {
        var points = new io.opentelemetry.proto.metrics.v1.NumberDataPoint[40];
        for (int i = 0; i < points.length; i++) {
          points[i] = Otlp.point(now - (points.length - 1 - i) * 15_000L, i * 10, "queue", "q1");
        }
        MetricsServiceGrpc.newBlockingStub(ch)
            .withDeadlineAfter(30, TimeUnit.SECONDS)
            .export(Otlp.request("rr", "i-1", List.of(Otlp.counter("jobs.done", points))));
      } finally {
        ch.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
      }
      String config =
          "remote_read:\n"
              + "  - url: http://127.0.0.1:"
              + tm.apiPort()
              + "/api/v1/read\n"
              + "    read_recent: true\n";
      try (PrometheusProcess prom = PrometheusProcess.start(tmp, config)) {
        JsonNode last = prom.queryUntil("jobs_done_total", r -> r.size() == 1);
        assertThat(last).as(prom.log()).isNotNull();
        assertThat(last.get(0).path("metric").toString())
            .isEqualTo(
                "{\"__name__\":\"jobs_done_total\",\"instance\":\"i-1\",\"job\":\"rr\","
                    + "\"queue\":\"q1\"}");
        assertThat(last.get(0).path("value").get(1).asText()).isEqualTo("390");
        // 10 per 15 s over the last 5 minutes, from the samples Tidemark sent back.
        JsonNode rate = prom.queryUntil("rate(jobs_done_total[5m])", r -> r.size() == 1);
        assertThat(rate).as(prom.log()).isNotNull();
        assertThat(Double.parseDouble(rate.get(0).path("value").get(1).asText()))
            .isCloseTo(10 / 15.0, org.assertj.core.data.Offset.offset(1e-9));
      }
    }
  }
}
