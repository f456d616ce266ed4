package dev.tidemark.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.Any;
import com.google.rpc.RetryInfo;
import dev.tidemark.it.StoredData.Sample;
import dev.tidemark.tsdb.model.Labels;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.protobuf.StatusProto;
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
 * Back-pressure end to end (issue #5: "bounded ... head memory; beyond them UNAVAILABLE with
 * RetryInfo, never an unbounded queue or an out-of-memory error"): a server with a 1 MiB head
 * budget receives requests of {@value #SERIES_PER_REQUEST} new series each until the budget is
 * spent; from then on OTLP/gRPC answers {@code UNAVAILABLE} with {@code google.rpc.RetryInfo} and
 * OTLP/HTTP answers 503 with {@code Retry-After} and a {@code google.rpc.Status} carrying {@code
 * RetryInfo}; the server stays healthy ({@code /-/healthy} 200) but not ready ({@code /-/ready} 503
 * naming the head budget), stops cleanly, and the folder holds exactly the acknowledged requests
 * (the refused ones store nothing).
 */
@ExtendWith(ServerLogs.class)
class BackPressureIT {
  static final int SERIES_PER_REQUEST = 1000;
  static final int MAX_REQUESTS = 100;

  @TempDir Path tmp;

  @Test
  void overTheHeadBudgetExportsAreRefusedRetryablyAndNothingOfThemIsStored() throws Exception {
    long t = System.currentTimeMillis() - 60_000;
    ServerProcess server =
        ServerProcess.start(
            tmp.resolve("data"), "--head-memory-limit", "1MiB", "--otlp-retry-after", "2s");
    int acked = 0;
    try {
      ManagedChannel channel = Otlp.channel(server.grpcPort());
      try {
        MetricsServiceGrpc.MetricsServiceBlockingStub stub =
            MetricsServiceGrpc.newBlockingStub(channel);
        StatusRuntimeException refused = null;
        for (int r = 0; r < MAX_REQUESTS && refused == null; r++) {
          try {
            ExportMetricsServiceResponse resp =
                stub.withDeadlineAfter(30, TimeUnit.SECONDS).export(request(r, t));
            assertThat(resp.getPartialSuccess().getRejectedDataPoints())
                .as("request %d: %s", r, resp)
                .isZero();
            acked++;
          } catch (StatusRuntimeException e) {
            refused = e;
          }
        }
        assertThat(refused)
            .as("no refusal after %d requests of %d new series", MAX_REQUESTS, SERIES_PER_REQUEST)
            .isNotNull();
        assertThat(acked).as("requests accepted before the budget was spent").isPositive();
        System.out.printf(
            "BackPressureIT: %d requests of %d new series accepted, then %s%n",
            acked, SERIES_PER_REQUEST, refused.getStatus());
        assertThat(refused.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
        assertThat(refused.getStatus().getDescription()).contains("head memory");
        com.google.rpc.Status details = StatusProto.fromThrowable(refused);
        assertThat(details).as("grpc-status-details-bin").isNotNull();
        assertThat(retryDelaySeconds(details)).isEqualTo(2);

        // Still refused (nothing seals before the hour ends), over gRPC and over HTTP.
        ExportMetricsServiceRequest again = request(MAX_REQUESTS, t);
        try {
          stub.withDeadlineAfter(30, TimeUnit.SECONDS).export(again);
          throw new AssertionError("export accepted over the head budget");
        } catch (StatusRuntimeException e) {
          assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
        }
        HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
        HttpResponse<byte[]> r =
            http.send(
                HttpRequest.newBuilder(URI.create(server.otlpHttpUrl()))
                    .timeout(Duration.ofSeconds(30))
                    .header("Content-Type", "application/x-protobuf")
                    .POST(
                        HttpRequest.BodyPublishers.ofByteArray(
                            request(MAX_REQUESTS + 1, t).toByteArray()))
                    .build(),
                HttpResponse.BodyHandlers.ofByteArray());
        assertThat(r.statusCode()).isEqualTo(503);
        assertThat(r.headers().firstValue("Retry-After")).hasValue("2");
        com.google.rpc.Status body = com.google.rpc.Status.parseFrom(r.body());
        assertThat(body.getCode()).isEqualTo(Status.Code.UNAVAILABLE.value());
        assertThat(retryDelaySeconds(body)).isEqualTo(2);
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
      assertThat(ready.statusCode()).as("/-/ready over the head budget").isEqualTo(503);
      assertThat(ready.body())
          .isEqualTo(
              "Tidemark is not ready: writes are refused: head memory is over its budget of"
                  + " 1048576 bytes\n");
      String metrics = server.apiGet("/metrics");
      assertThat(
              OtelSdkIT.counter(
                  metrics, "tidemark_otlp_requests_total", "outcome=\"storage_unavailable\""))
          .as("refusals per /metrics:\n%s", OtelSdkIT.grep(metrics, "tidemark_otlp_requests_total"))
          .isEqualTo(3);
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
    assertThat(stored.all().size()).as("stored series").isEqualTo(expected.size());
    assertThat(stored.all()).containsExactlyInAnyOrderEntriesOf(expected);
  }

  private static long retryDelaySeconds(com.google.rpc.Status status) throws Exception {
    for (Any a : status.getDetailsList()) {
      if (a.is(RetryInfo.class)) {
        return a.unpack(RetryInfo.class).getRetryDelay().getSeconds();
      }
    }
    throw new AssertionError("no RetryInfo in " + status);
  }

  private static ExportMetricsServiceRequest request(int r, long t) {
    NumberDataPoint[] points = new NumberDataPoint[SERIES_PER_REQUEST];
    for (int i = 0; i < SERIES_PER_REQUEST; i++) {
      points[i] = Otlp.point(t, r, "series", Integer.toString(r * SERIES_PER_REQUEST + i));
    }
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
