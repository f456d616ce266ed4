package dev.tidemark.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest;
import io.opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceResponse;
import io.opentelemetry.proto.collector.metrics.v1.MetricsServiceGrpc;
import io.opentelemetry.proto.metrics.v1.NumberDataPoint;
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
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Overload end to end: {@value #SENDERS} concurrent OTLP/gRPC senders, each as fast as it can, at a
 * server whose in-flight budget ({@code --otlp-max-in-flight-size 64KiB}) holds about two of their
 * requests, so that most requests meet a full server for {@value #RUN_SECONDS} s. Refused requests
 * must be refused retryably ({@code UNAVAILABLE}) and store nothing; every acknowledged one must be
 * stored whole, read back through the query API, and still there after a SIGKILL and a restart; the
 * server answers {@code /-/ready} throughout and takes a normal export afterwards.
 *
 * <p>This is overload by admission limit, not by raw rate: a test on a 2-core machine cannot send
 * twice what the server ingests there (the sender shares the cores), so the limit is made small
 * instead; the mechanics under test (admission, refusal, acknowledge-only-when-durable) are the
 * same at any rate.
 */
@ExtendWith(ServerLogs.class)
class OverloadIT {
  static final int SENDERS = 8;
  static final int SERIES_PER_REQUEST = 500;
  static final int RUN_SECONDS = 12;
  static final int MAX_REQUESTS_PER_SENDER = 6_000;
  static final ObjectMapper JSON = new ObjectMapper();

  @TempDir Path tmp;

  private final HttpClient http = HttpClient.newHttpClient();

  @Test
  void refusesRetryablyStaysReadyAndKeepsEveryAcknowledgedSample() throws Exception {
    // Sender i's request n carries every series at t0 + n * 10 ms: the senders' times stay within
    // a minute of each other, inside the out-of-order window.
    long t0 = (System.currentTimeMillis() / 60_000 - 90) * 60_000;
    ServerProcess server =
        ServerProcess.start(
            tmp.resolve("data"), "--otlp-max-in-flight-size", "64KiB", "--otlp-retry-after", "1s");
    long[] acked = new long[SENDERS];
    long[] refused = new long[SENDERS];
    ManagedChannel channel = Otlp.channel(server.grpcPort());
    ExecutorService pool = Executors.newFixedThreadPool(SENDERS);
    try {
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(RUN_SECONDS);
      List<Future<?>> running = new ArrayList<>();
      for (int s = 0; s < SENDERS; s++) {
        int sender = s;
        running.add(
            pool.submit(
                () -> {
                  MetricsServiceGrpc.MetricsServiceBlockingStub stub =
                      MetricsServiceGrpc.newBlockingStub(channel);
                  for (int n = 0;
                      n < MAX_REQUESTS_PER_SENDER && System.nanoTime() < deadline;
                      n++) {
                    try {
                      ExportMetricsServiceResponse r =
                          stub.withDeadlineAfter(30, TimeUnit.SECONDS)
                              .export(request(sender, t0 + n * 10L, n));
                      assertThat(r.getPartialSuccess().getRejectedDataPoints())
                          .as("sender %d request %d: %s", sender, n, r)
                          .isZero();
                      acked[sender]++;
                    } catch (StatusRuntimeException e) {
                      assertThat(e.getStatus().getCode())
                          .as("sender %d request %d: %s", sender, n, e.getStatus())
                          .isEqualTo(Status.Code.UNAVAILABLE);
                      refused[sender]++;
                    }
                  }
                  return null;
                }));
      }
      // Ready throughout the storm.
      int readyChecks = 0;
      while (running.stream().anyMatch(f -> !f.isDone())) {
        assertThat(status(server.apiUrl("/-/ready"))).as("/-/ready during overload").isEqualTo(200);
        readyChecks++;
        Thread.sleep(500);
      }
      for (Future<?> f : running) {
        f.get(); // a sender's assertion fails the test here
      }
      long totalAcked = 0;
      long totalRefused = 0;
      for (int s = 0; s < SENDERS; s++) {
        totalAcked += acked[s];
        totalRefused += refused[s];
      }
      System.out.printf(
          "OverloadIT: %d requests of %d series acknowledged, %d refused, %d readiness checks%n",
          totalAcked, SERIES_PER_REQUEST, totalRefused, readyChecks);
      assertThat(totalRefused).as("requests refused (was the server overloaded?)").isPositive();
      assertThat(totalAcked).as("requests acknowledged").isPositive();

      // After the storm a normal export goes through.
      MetricsServiceGrpc.newBlockingStub(channel)
          .withDeadlineAfter(30, TimeUnit.SECONDS)
          .export(request(SENDERS, t0, 0));
    } finally {
      pool.shutdownNow();
      channel.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
    }

    long at = t0 / 1000 + 3600; // every sample is within (at - 2h, at]
    assertThat(storedPerSender(server, at)).isEqualTo(expected(acked));
    server.kill();
    server = server.restart();
    assertThat(storedPerSender(server, at)).as("after SIGKILL").isEqualTo(expected(acked));
    assertThat(server.stop()).isZero();
  }

  private static ExportMetricsServiceRequest request(int sender, long timeMillis, int n) {
    NumberDataPoint[] points = new NumberDataPoint[SERIES_PER_REQUEST];
    for (int i = 0; i < SERIES_PER_REQUEST; i++) {
      points[i] =
          Otlp.point(timeMillis, n, "sender", Integer.toString(sender), "s", Integer.toString(i));
    }
    return Otlp.request(
        "overload", "sender-" + sender, List.of(Otlp.gauge("overload_test", points)));
  }

  private static TreeMap<String, Long> expected(long[] acked) {
    TreeMap<String, Long> want = new TreeMap<>();
    for (int s = 0; s < acked.length; s++) {
      if (acked[s] > 0) {
        want.put(Integer.toString(s), acked[s] * SERIES_PER_REQUEST);
      }
    }
    want.merge(Integer.toString(SENDERS), (long) SERIES_PER_REQUEST, Long::sum);
    return want;
  }

  /** Samples stored per sender, counted through the query API. */
  private TreeMap<String, Long> storedPerSender(ServerProcess server, long atSeconds)
      throws Exception {
    String q =
        URLEncoder.encode(
            "sum by (sender) (count_over_time(overload_test[2h]))", StandardCharsets.UTF_8);
    HttpResponse<String> r =
        http.send(
            HttpRequest.newBuilder(
                    URI.create(server.apiUrl("/api/v1/query?query=" + q + "&time=" + atSeconds)))
                .timeout(Duration.ofSeconds(60))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
    TreeMap<String, Long> got = new TreeMap<>();
    for (JsonNode s : JSON.readTree(r.body()).at("/data/result")) {
      got.put(
          s.at("/metric/sender").asText(), (long) Double.parseDouble(s.at("/value/1").asText()));
    }
    return got;
  }

  private int status(String url) throws Exception {
    return http.send(
            HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(10)).build(),
            HttpResponse.BodyHandlers.discarding())
        .statusCode();
  }
}
