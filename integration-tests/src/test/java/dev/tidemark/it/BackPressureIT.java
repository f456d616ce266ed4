package dev.tidemark.it;

import static org.assertj.core.api.Assertions.assertThat;

import dev.tidemark.it.StoredData.Sample;
import dev.tidemark.tsdb.model.Labels;
import io.grpc.ManagedChannel;
import io.opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest;
import io.opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceResponse;
import io.opentelemetry.proto.collector.metrics.v1.MetricsServiceGrpc;
import io.opentelemetry.proto.metrics.v1.NumberDataPoint;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * The head's memory budget end to end (issue #22: "samples of known series are never refused for
 * memory; new series ... are refused one by one with a clear reason in partial success"; it
 * replaces issue #5's whole-request refusal): a server with a 1 MiB head budget receives requests
 * of {@value #SERIES_PER_REQUEST} new series each until the budget is spent; from then on each new
 * series' point is refused in OTLP partial success naming the budget, over gRPC and over HTTP,
 * while the points of series already in the head in the same request are stored; the server stays
 * healthy and ready (writes are taken), counts the refusals under reason {@code series_limit},
 * stops cleanly, and the folder holds exactly what was acknowledged.
 */
@ExtendWith(ServerLogs.class)
class BackPressureIT {
  static final int SERIES_PER_REQUEST = 1000;
  static final int MAX_REQUESTS = 100;
  static final String DETAIL =
      "head memory is over its budget of 1048576 bytes: new series are refused until a seal frees"
          + " memory, series already in the head are still accepted";

  @TempDir Path tmp;

  @Test
  void overTheHeadBudgetOnlyNewSeriesAreRefusedEachOnItsOwnPoint() throws Exception {
    long t = System.currentTimeMillis() - 60_000;
    ServerProcess server = ServerProcess.start(tmp.resolve("data"), "--head-memory-limit", "1MiB");
    int acked = 0;
    ExportMetricsServiceResponse partial = null;
    try {
      ManagedChannel channel = Otlp.channel(server.grpcPort());
      try {
        MetricsServiceGrpc.MetricsServiceBlockingStub stub =
            MetricsServiceGrpc.newBlockingStub(channel);
        for (int r = 0; r < MAX_REQUESTS && partial == null; r++) {
          ExportMetricsServiceResponse resp =
              stub.withDeadlineAfter(30, TimeUnit.SECONDS).export(request(r, t));
          if (resp.getPartialSuccess().getRejectedDataPoints() == 0) {
            acked++;
          } else {
            partial = resp;
          }
        }
        assertThat(partial)
            .as("no refusal after %d requests of %d new series", MAX_REQUESTS, SERIES_PER_REQUEST)
            .isNotNull();
        // The request that crossed the budget was taken whole; the next one is refused whole,
        // point by point, since all its series are new.
        assertThat(partial.getPartialSuccess().getRejectedDataPoints())
            .isEqualTo(SERIES_PER_REQUEST);
        assertThat(partial.getPartialSuccess().getErrorMessage())
            .isEqualTo(
                "rejected 1000 of 1000 data points: 1000 series limit reached (SERIES_LIMIT, e.g."
                    + " metric \"bp_gauge\": "
                    + DETAIL
                    + ")");

        // Known series keep being stored, beside new ones refused in the same request.
        ExportMetricsServiceRequest mixed =
            gauges(
                Otlp.point(t + 15_000, -1, "series", "0"),
                Otlp.point(t + 15_000, -2, "series", "new-a"),
                Otlp.point(t + 15_000, -3, "series", "1"));
        ExportMetricsServiceResponse grpcMixed =
            stub.withDeadlineAfter(30, TimeUnit.SECONDS).export(mixed);
        assertThat(grpcMixed.getPartialSuccess().getRejectedDataPoints()).isEqualTo(1);

        HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
        HttpResponse<byte[]> r =
            http.send(
                HttpRequest.newBuilder(URI.create(server.otlpHttpUrl()))
                    .timeout(Duration.ofSeconds(30))
                    .header("Content-Type", "application/x-protobuf")
                    .POST(
                        HttpRequest.BodyPublishers.ofByteArray(
                            gauges(
                                    Otlp.point(t + 30_000, -4, "series", "0"),
                                    Otlp.point(t + 30_000, -5, "series", "new-b"))
                                .toByteArray()))
                    .build(),
                HttpResponse.BodyHandlers.ofByteArray());
        assertThat(r.statusCode()).isEqualTo(200);
        ExportMetricsServiceResponse httpMixed = ExportMetricsServiceResponse.parseFrom(r.body());
        assertThat(httpMixed.getPartialSuccess().getRejectedDataPoints()).isEqualTo(1);
        assertThat(httpMixed.getPartialSuccess().getErrorMessage()).contains(DETAIL);
      } finally {
        channel.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
      }
      HttpResponse<String> healthy =
          HttpClient.newHttpClient()
              .send(
                  HttpRequest.newBuilder(URI.create(server.apiUrl("/-/healthy"))).GET().build(),
                  HttpResponse.BodyHandlers.ofString());
      assertThat(healthy.statusCode()).as("/-/healthy over the head budget").isEqualTo(200);
      HttpResponse<String> ready =
          HttpClient.newHttpClient()
              .send(
                  HttpRequest.newBuilder(URI.create(server.apiUrl("/-/ready"))).GET().build(),
                  HttpResponse.BodyHandlers.ofString());
      assertThat(ready.statusCode())
          .as("/-/ready over the head budget: writes are taken")
          .isEqualTo(200);
      String metrics = server.apiGet("/metrics");
      assertThat(
              OtelSdkIT.counter(
                  metrics, "tidemark_otlp_data_points_rejected_total", "reason=\"series_limit\""))
          .as(OtelSdkIT.grep(metrics, "tidemark_otlp_data_points_rejected_total"))
          .isEqualTo(SERIES_PER_REQUEST + 2);
      assertThat(
              OtelSdkIT.counter(
                  metrics, "tidemark_otlp_requests_total", "outcome=\"storage_unavailable\""))
          .isZero();
    } finally {
      assertThat(server.stop()).as("exit code after SIGTERM").isZero();
    }

    StoredData stored = StoredData.read(server.dataDir());
    Map<Labels, List<Sample>> expected = new TreeMap<>();
    for (int r = 0; r < acked; r++) {
      for (int i = 0; i < SERIES_PER_REQUEST; i++) {
        expected.put(labels(r, i), List.of(Sample.of(t, r)));
      }
    }
    expected.put(
        labels(0, 0),
        List.of(Sample.of(t, 0), Sample.of(t + 15_000, -1), Sample.of(t + 30_000, -4)));
    expected.put(labels(0, 1), List.of(Sample.of(t, 0), Sample.of(t + 15_000, -3)));
    assertThat(stored.all().size()).as("stored series").isEqualTo(expected.size());
    assertThat(stored.all()).containsExactlyInAnyOrderEntriesOf(expected);
  }

  private static ExportMetricsServiceRequest request(int r, long t) {
    NumberDataPoint[] points = new NumberDataPoint[SERIES_PER_REQUEST];
    for (int i = 0; i < SERIES_PER_REQUEST; i++) {
      points[i] = Otlp.point(t, r, "series", Integer.toString(r * SERIES_PER_REQUEST + i));
    }
    return gauges(points);
  }

  /** One request of {@code bp_gauge} points from the test's one resource. */
  private static ExportMetricsServiceRequest gauges(NumberDataPoint... points) {
    return Otlp.request("backpressure", "bp-1", List.of(Otlp.gauge("bp_gauge", points)));
  }

  private static Labels labels(int r, int i) {
    return Labels.of(
        "__name__",
        "bp_gauge",
        "job",
        "backpressure",
        "instance",
        "bp-1",
        "series",
        Integer.toString(r * SERIES_PER_REQUEST + i));
  }
}
