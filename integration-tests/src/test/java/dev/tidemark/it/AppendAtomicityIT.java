package dev.tidemark.it;

import static org.assertj.core.api.Assertions.assertThat;

import dev.tidemark.it.StoredData.Sample;
import dev.tidemark.tsdb.model.Labels;
import io.opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest;
import io.opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceResponse;
import io.opentelemetry.proto.metrics.v1.NumberDataPoint;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue #9's critical case against the real server: a request whose one point has a 70 kB
 * attribute, as the first write into an hour. The over-long point alone is refused (partial success
 * naming the field and the limit), the valid point of the same request is stored, a later request
 * into the same hour is stored, and after a SIGKILL and a restart everything acknowledged reads
 * back, through the admin API too (the hour is neither lost nor corrupt). Also: a number point
 * without a value is refused with a reason, never stored as 0.
 */
@ExtendWith(ServerLogs.class)
class AppendAtomicityIT {

  @TempDir Path tmp;

  private final HttpClient http =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  @Test
  void anOverLongAttributeLosesOnlyItsOwnPointAcrossAKill() throws Exception {
    Path data = tmp.resolve("data");
    // An hour of its own, 2 hours back (inside the default 15 d retention, 10 min skew).
    long hour = (System.currentTimeMillis() / 3_600_000L - 2) * 3_600_000L;
    String statement = "select * from t where x = '" + "x".repeat(70_000) + "'";
    try (ServerProcess server = ServerProcess.start(data)) {
      ExportMetricsServiceResponse first =
          post(
              server,
              Otlp.request(
                  "db",
                  "i-1",
                  List.of(
                      Otlp.gauge(
                          "db_calls",
                          Otlp.point(hour + 1_000, 1, "db.statement", "select 1"),
                          Otlp.point(hour + 1_000, 2, "db.statement", statement)))));
      assertThat(first.getPartialSuccess().getRejectedDataPoints()).isEqualTo(1);
      assertThat(first.getPartialSuccess().getErrorMessage())
          .contains("LIMIT_EXCEEDED")
          .contains(
              "label value of 70028 bytes exceeds the 65535-byte limit (label \"db_statement\")")
          .hasSizeLessThan(2_000);

      ExportMetricsServiceResponse second =
          post(
              server,
              Otlp.request(
                  "db",
                  "i-1",
                  List.of(
                      Otlp.gauge(
                          "db_calls", Otlp.point(hour + 2_000, 3, "db.statement", "select 2")))));
      assertThat(second.hasPartialSuccess()).isFalse();

      NumberDataPoint valueless =
          NumberDataPoint.newBuilder()
              .setTimeUnixNano((hour + 3_000) * 1_000_000L)
              .addAttributes(Otlp.attr("db.statement", "select 3"))
              .build();
      ExportMetricsServiceResponse third =
          post(
              server,
              Otlp.request(
                  "db",
                  "i-1",
                  List.of(
                      Otlp.gauge(
                          "db_calls",
                          valueless,
                          Otlp.point(hour + 3_000, 4, "db.statement", "select 4")))));
      assertThat(third.getPartialSuccess().getRejectedDataPoints()).isEqualTo(1);
      assertThat(third.getPartialSuccess().getErrorMessage())
          .contains(
              "1 number data point without a value (MISSING_VALUE, e.g. metric \"db_calls\")");

      server.kill();
      try (ServerProcess again = server.restart()) {
        String address = "127.0.0.1:" + again.adminPort();
        AdminCli.Result read =
            AdminCli.run(tmp, Map.of(), "read", "db_calls", "--address", address, "--json");
        assertThat(read.code()).as(read.toString()).isZero();
        assertThat(read.out())
            .contains("select 1")
            .contains("select 2")
            .contains("select 4")
            .doesNotContain("select 3")
            .doesNotContain("xxxxxxxx");
        AdminCli.Result buckets = AdminCli.run(tmp, Map.of(), "buckets", "--address", address);
        assertThat(buckets.code()).as(buckets.toString()).isZero();
        assertThat(again.stop()).isZero();
      }
    }
    Map<Labels, List<Sample>> stored = StoredData.read(data).family("db_calls");
    assertThat(stored).hasSize(3);
    assertThat(stored.values()).allSatisfy(samples -> assertThat(samples).hasSize(1));
    assertThat(stored.keySet())
        .extracting(l -> l.get("db_statement"))
        .containsExactlyInAnyOrder("select 1", "select 2", "select 4");
  }

  private ExportMetricsServiceResponse post(
      ServerProcess server, ExportMetricsServiceRequest request) throws Exception {
    HttpResponse<byte[]> r =
        http.send(
            HttpRequest.newBuilder(
                    URI.create("http://127.0.0.1:" + server.otlpHttpPort() + "/v1/metrics"))
                .header("Content-Type", "application/x-protobuf")
                .POST(HttpRequest.BodyPublishers.ofByteArray(request.toByteArray()))
                .build(),
            HttpResponse.BodyHandlers.ofByteArray());
    assertThat(r.statusCode()).as(new String(r.body())).isEqualTo(200);
    return ExportMetricsServiceResponse.parseFrom(r.body());
  }
}
