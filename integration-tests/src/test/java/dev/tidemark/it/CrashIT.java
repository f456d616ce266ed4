package dev.tidemark.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import dev.tidemark.it.StoredData.Sample;
import dev.tidemark.tsdb.model.Labels;
import io.grpc.ManagedChannel;
import io.grpc.StatusRuntimeException;
import io.opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest;
import io.opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceResponse;
import io.opentelemetry.proto.collector.metrics.v1.MetricsServiceGrpc;
import io.opentelemetry.proto.metrics.v1.NumberDataPoint;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * A server process receives a stream of Export requests over OTLP/gRPC (one at a time, each
 * waiting for its response) and is killed with SIGKILL at a random moment; it is restarted on the
 * same data folder, {@value #KILLS} times, then stopped cleanly and the folder is read back.
 *
 * <p>Request {@code r} carries {@value #SERIES} gauge points {@code crash_gauge{series="i"}} =
 * {@code r * 1000 + i} and one counter point {@code crash_requests_total} = {@code r + 1}, all at
 * {@code base + r} ms. Every request whose Export returned OK (no rejection) must be stored
 * exactly; the one request per kill that got no answer must be stored entirely or not at all;
 * nothing else may be stored. The kill moments come from a seeded random (system property {@code
 * tidemark.it.seed}; the seed is in every message).
 */
@ExtendWith(ServerLogs.class)
class CrashIT {
  static final int SERIES = 8;
  static final int KILLS = 3;
  /** Requests sent after the last restart, before the clean stop. */
  static final int AFTER_LAST_RESTART = 50;

  @TempDir Path tmp;

  @Test
  void acknowledgedExportsSurviveSigkill() throws Exception {
    long seed = Long.getLong("tidemark.it.seed", System.nanoTime());
    String seedText = "seed " + seed + " (rerun with -Dtidemark.it.seed=" + seed + ")";
    SplittableRandom random = new SplittableRandom(seed);
    long base = System.currentTimeMillis() - Duration.ofMinutes(15).toMillis();

    TreeSet<Integer> acked = new TreeSet<>();
    TreeSet<Integer> inDoubt = new TreeSet<>();
    int next = 0;
    ScheduledExecutorService killer = Executors.newSingleThreadScheduledExecutor();
    ServerProcess server = ServerProcess.start(tmp.resolve("data"));
    try {
      for (int kill = 1; kill <= KILLS; kill++) {
        long killAfterMillis = 300 + random.nextInt(1200);
        AtomicBoolean killed = new AtomicBoolean();
        ServerProcess victim = server;
        ManagedChannel channel = Otlp.channel(server.grpcPort());
        int ackedBefore = acked.size();
        try {
          MetricsServiceGrpc.MetricsServiceBlockingStub stub = MetricsServiceGrpc.newBlockingStub(channel);
          // Warm the connection before the clock starts so every cycle gets some acknowledgements.
          next = sendOne(stub, next, base, acked, seedText);
          CompletableFuture<Void> killDone = new CompletableFuture<>();
          killer.schedule(
              () -> {
                killed.set(true);
                try {
                  victim.kill();
                  killDone.complete(null);
                } catch (Throwable t) {
                  killDone.completeExceptionally(t);
                }
              },
              killAfterMillis,
              TimeUnit.MILLISECONDS);
          while (true) {
            int r = next++;
            try {
              ExportMetricsServiceResponse resp =
                  stub.withDeadlineAfter(30, TimeUnit.SECONDS).export(request(r, base));
              assertThat(resp.getPartialSuccess().getRejectedDataPoints())
                  .as("request %d rejected points (%s): %s", r, seedText, resp.getPartialSuccess().getErrorMessage())
                  .isZero();
              acked.add(r);
            } catch (StatusRuntimeException e) {
              if (!killed.get()) {
                fail("request " + r + " failed before the kill (" + seedText + "): " + e.getStatus(), e);
              }
              inDoubt.add(r);
              break;
            }
          }
          killDone.get(60, TimeUnit.SECONDS);
        } finally {
          channel.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
        }
        assertThat(acked.size() - ackedBefore)
            .as("acknowledged exports in kill cycle %d (%s)", kill, seedText)
            .isGreaterThan(1);
        System.out.printf(
            "CrashIT %s: kill %d after %d ms, %d requests acknowledged so far, in doubt %s%n",
            seedText, kill, killAfterMillis, acked.size(), inDoubt);
        server = server.restart();
      }
      ManagedChannel channel = Otlp.channel(server.grpcPort());
      try {
        MetricsServiceGrpc.MetricsServiceBlockingStub stub = MetricsServiceGrpc.newBlockingStub(channel);
        for (int i = 0; i < AFTER_LAST_RESTART; i++) {
          next = sendOne(stub, next, base, acked, seedText);
        }
      } finally {
        channel.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
      }
      assertThat(server.stop()).as("exit code after SIGTERM").isZero();
    } finally {
      killer.shutdownNow();
      server.close();
    }

    StoredData stored = StoredData.read(server.dataDir());
    Map<Labels, List<Sample>> expected = new TreeMap<>();
    for (int r = 0; r < next; r++) {
      boolean present;
      if (acked.contains(r)) {
        present = true;
      } else if (inDoubt.contains(r)) {
        present = stored.samples(gaugeLabels(0)) != null
            && stored.samples(gaugeLabels(0)).contains(Sample.of(base + r, r * 1000.0));
        System.out.printf("CrashIT %s: unanswered request %d %s%n", seedText, r, present ? "stored" : "not stored");
      } else {
        present = false;
      }
      if (present) {
        for (int i = 0; i < SERIES; i++) {
          expected.computeIfAbsent(gaugeLabels(i), k -> new ArrayList<>()).add(Sample.of(base + r, r * 1000.0 + i));
        }
        expected.computeIfAbsent(counterLabels(), k -> new ArrayList<>()).add(Sample.of(base + r, r + 1.0));
      }
    }
    assertThat(stored.all().keySet()).as("stored series (%s)", seedText).containsExactlyInAnyOrderElementsOf(expected.keySet());
    for (Map.Entry<Labels, List<Sample>> e : expected.entrySet()) {
      assertThat(stored.samples(e.getKey()))
          .as("samples of %s: acknowledged exports all there, each unanswered one all or nothing (%s; in doubt %s)",
              e.getKey(), seedText, inDoubt)
          .containsExactlyElementsOf(e.getValue());
    }
  }

  private static int sendOne(
      MetricsServiceGrpc.MetricsServiceBlockingStub stub, int r, long base, TreeSet<Integer> acked, String seedText) {
    ExportMetricsServiceResponse resp = stub.withDeadlineAfter(30, TimeUnit.SECONDS).export(request(r, base));
    assertThat(resp.getPartialSuccess().getRejectedDataPoints())
        .as("request %d rejected points (%s): %s", r, seedText, resp.getPartialSuccess().getErrorMessage())
        .isZero();
    acked.add(r);
    return r + 1;
  }

  static ExportMetricsServiceRequest request(int r, long base) {
    long t = base + r;
    NumberDataPoint[] points = new NumberDataPoint[SERIES];
    for (int i = 0; i < SERIES; i++) {
      points[i] = Otlp.point(t, r * 1000.0 + i, "series", Integer.toString(i));
    }
    return Otlp.request(
        "crash", "crash-1", List.of(Otlp.gauge("crash_gauge", points), Otlp.counter("crash_requests", Otlp.point(t, r + 1.0))));
  }

  static Labels gaugeLabels(int series) {
    return Labels.of("__name__", "crash_gauge", "job", "crash", "instance", "crash-1", "series", Integer.toString(series));
  }

  static Labels counterLabels() {
    return Labels.of("__name__", "crash_requests_total", "job", "crash", "instance", "crash-1");
  }
}
