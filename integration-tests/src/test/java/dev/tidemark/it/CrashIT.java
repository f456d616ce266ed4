package dev.tidemark.it;

import static org.assertj.core.api.Assertions.assertThat;

import dev.tidemark.it.StoredData.Sample;
import dev.tidemark.rocksdb.RocksDbKvStore;
import dev.tidemark.tsdb.codec.Keys;
import dev.tidemark.tsdb.engine.StoreVerifier;
import dev.tidemark.tsdb.engine.VerifyReport;
import dev.tidemark.tsdb.kv.KvCursor;
import dev.tidemark.tsdb.model.Labels;
import io.grpc.ManagedChannel;
import io.grpc.StatusRuntimeException;
import io.opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest;
import io.opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceResponse;
import io.opentelemetry.proto.collector.metrics.v1.MetricsServiceGrpc;
import io.opentelemetry.proto.metrics.v1.AggregationTemporality;
import io.opentelemetry.proto.metrics.v1.ExponentialHistogram;
import io.opentelemetry.proto.metrics.v1.ExponentialHistogramDataPoint;
import io.opentelemetry.proto.metrics.v1.Metric;
import io.opentelemetry.proto.metrics.v1.NumberDataPoint;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.NavigableSet;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentSkipListSet;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * A server process receives a stream of Export requests over OTLP/gRPC ({@value #SENDERS} senders,
 * each sending one request at a time and waiting for its response) and, at a random moment, is
 * killed with SIGKILL (three times) or stopped with SIGTERM (graceful stop: in-flight requests
 * finish, exit code 0), then restarted on the same data folder ({@link #ENDINGS}). After one kill
 * the unanswered requests are retried (a client's retry after a crash: same points, accepted as
 * duplicates of identical value if they were stored). The last cycle ends with SIGTERM and the
 * folder is read back.
 *
 * <p>Request {@code r} carries {@value #SERIES} gauge points {@code crash_gauge{series="i"}} =
 * {@code r * 1000 + i} and one counter point {@code crash_requests_total} = {@code r + 1}, all at
 * {@code base + r} ms (two senders interleave, so some points arrive slightly out of order, inside
 * the window; the stream crosses an hour boundary, so two head buckets are recovered). Every
 * request whose Export returned OK (without rejections) must be stored exactly; each request that
 * got no answer must be stored entirely or not at all; nothing else may be stored. The kill moments
 * come from a seeded random (system property {@code tidemark.it.seed}; the seed is in every
 * message).
 *
 * <p>The second test runs the same with {@code --head-freeze-samples 2}: the head freezes its
 * series every two samples and writes each frozen part as a HeadChunk record (issue #22, item 5),
 * so every SIGKILL lands while parts are being written. Before each restart the folder is opened
 * without an engine: the parts the killed server left must verify (they decode and name known
 * series) and parts must have been there at some kill; after the restarts, which delete them and
 * rebuild the head from the head log, the same exactness holds: nothing acknowledged lost, no
 * sample (so no part) counted twice.
 *
 * <p>The third runs it with {@code --exponential-histogram-mode native} and one exponential
 * histogram point {@code crash_latency} (count {@code r + 1}) in every request (issue #25): the
 * translator stores it as a native histogram sample, which the head log carries in a record of
 * format 0x03 beside the request's float samples, in the same write; acknowledged histograms must
 * be stored exactly, unanswered requests all or nothing, histograms included.
 */
@ExtendWith(ServerLogs.class)
class CrashIT {
  static final int SERIES = 8;

  enum Ending {
    SIGKILL,
    SIGTERM
  }

  /**
   * How each streaming cycle ends. The SIGTERM in the middle seals the head, so the next cycle
   * writes into reopened buckets that the following SIGKILL leaves for recovery to rebuild.
   */
  static final Ending[] ENDINGS = {
    Ending.SIGKILL, Ending.SIGTERM, Ending.SIGKILL, Ending.SIGKILL, Ending.SIGTERM
  };

  /** After the restart that follows this cycle, the cycle's unanswered requests are retried. */
  static final int RETRY_AFTER = 3;

  static final int SENDERS = 2;

  @TempDir Path tmp;

  private final AtomicInteger next = new AtomicInteger();
  private final NavigableSet<Integer> acked = new ConcurrentSkipListSet<>();
  private final NavigableSet<Integer> inDoubt = new ConcurrentSkipListSet<>();
  private long base;
  private String seedText;

  /** Whether requests carry an exponential histogram point (stored as a native histogram). */
  private boolean histograms;

  @Test
  void acknowledgedExportsSurviveSigkillAndSigterm() throws Exception {
    run(List.of(), false);
  }

  @Test
  void acknowledgedExportsSurviveSigkillWhileFrozenPartsAreWritten() throws Exception {
    run(List.of("--head-freeze-samples", "2"), true);
  }

  @Test
  void acknowledgedNativeHistogramsSurviveSigkillAndSigterm() throws Exception {
    histograms = true;
    run(List.of("--exponential-histogram-mode", "native"), false);
  }

  /** HeadChunk records in the folder of a killed server, after checking the store verifies. */
  private long frozenPartsLeft(Path dataDir) {
    try (RocksDbKvStore store = RocksDbKvStore.open(dataDir)) {
      VerifyReport v = StoreVerifier.verify(store);
      assertThat(v.clean()).as("store after SIGKILL (%s): %s", seedText, v.format()).isTrue();
      byte[][] range = Keys.headChunkRange();
      long n = 0;
      try (KvCursor c = store.scan(range[0], range[1])) {
        while (c.next()) {
          n++;
        }
      }
      return n;
    }
  }

  private void run(List<String> serverArgs, boolean countParts) throws Exception {
    long seed = Long.getLong("tidemark.it.seed", System.nanoTime());
    seedText = "seed " + seed + " (rerun with -Dtidemark.it.seed=" + seed + ")";
    SplittableRandom random = new SplittableRandom(seed);
    // The stream crosses an hour boundary after ~300 requests: two head buckets to recover.
    long hour = Duration.ofHours(1).toMillis();
    base =
        Math.floorDiv(System.currentTimeMillis() - Duration.ofMinutes(20).toMillis(), hour) * hour
            - 300;

    ScheduledExecutorService killer = Executors.newSingleThreadScheduledExecutor();
    ExecutorService senders = Executors.newFixedThreadPool(SENDERS);
    ServerProcess server = ServerProcess.start(tmp.resolve("data"), serverArgs);
    long partsAtKills = 0;
    try {
      for (int cycle = 1; cycle <= ENDINGS.length; cycle++) {
        boolean sigterm = ENDINGS[cycle - 1] == Ending.SIGTERM;
        long afterMillis = 300 + random.nextInt(1200);
        ServerProcess victim = server;
        int ackedBefore = acked.size();
        TreeSet<Integer> doubtBefore = new TreeSet<>(inDoubt);
        int exit =
            stream(
                server,
                killer,
                senders,
                afterMillis,
                () -> {
                  if (sigterm) {
                    long t0 = System.nanoTime();
                    int code = victim.stop();
                    System.out.printf(
                        "CrashIT: SIGTERM stop took %d ms%n", (System.nanoTime() - t0) / 1_000_000);
                    return code;
                  }
                  victim.kill();
                  return -1;
                });
        TreeSet<Integer> unanswered = new TreeSet<>(inDoubt);
        unanswered.removeAll(doubtBefore);
        System.out.printf(
            "CrashIT %s: %s after %d ms; %d requests acknowledged in this cycle, unanswered %s%n",
            seedText,
            sigterm ? "SIGTERM" : "SIGKILL",
            afterMillis,
            acked.size() - ackedBefore,
            unanswered);
        assertThat(acked.size() - ackedBefore)
            .as("acknowledged exports in cycle %d (%s)", cycle, seedText)
            .isPositive();
        if (sigterm) {
          assertThat(exit).as("exit code after SIGTERM under load (%s)", seedText).isZero();
        }
        if (cycle == ENDINGS.length) {
          break;
        }
        if (countParts && !sigterm) {
          long parts = frozenPartsLeft(server.dataDir());
          System.out.printf(
              "CrashIT %s: %d frozen parts in the store at the kill%n", seedText, parts);
          partsAtKills += parts;
        }
        long t0 = System.nanoTime();
        server = server.restart();
        System.out.printf("CrashIT: restart took %d ms%n", (System.nanoTime() - t0) / 1_000_000);
        if (cycle == RETRY_AFTER) {
          retry(server, unanswered);
        }
      }
    } finally {
      killer.shutdownNow();
      senders.shutdownNow();
      server.close();
    }

    if (countParts) {
      assertThat(partsAtKills)
          .as("frozen parts in the store at the kills (%s)", seedText)
          .isPositive();
    }
    StoredData stored = StoredData.read(server.dataDir());
    List<Sample> firstSeries = stored.samples(gaugeLabels(0));
    Map<Labels, List<Sample>> expected = new TreeMap<>();
    List<String> expectedHistograms = new ArrayList<>();
    for (int r = 0; r < next.get(); r++) {
      boolean present;
      if (acked.contains(r)) {
        present = true;
      } else if (inDoubt.contains(r)) {
        present = firstSeries != null && firstSeries.contains(Sample.of(base + r, r * 1000.0));
        System.out.printf(
            "CrashIT %s: unanswered request %d %s%n",
            seedText, r, present ? "stored" : "not stored");
      } else {
        throw new AssertionError("request " + r + " neither acknowledged nor unanswered");
      }
      if (present) {
        for (int i = 0; i < SERIES; i++) {
          expected
              .computeIfAbsent(gaugeLabels(i), k -> new ArrayList<>())
              .add(Sample.of(base + r, r * 1000.0 + i));
        }
        expected
            .computeIfAbsent(counterLabels(), k -> new ArrayList<>())
            .add(Sample.of(base + r, r + 1.0));
        if (histograms) {
          expected.computeIfAbsent(latencyLabels(), k -> new ArrayList<>()); // no float samples
          expectedHistograms.add((base + r) + "=" + (r + 1));
        }
      }
    }
    if (histograms) {
      assertThat(stored.histograms(latencyLabels()))
          .as(
              "native histograms: acknowledged exports all there, each unanswered one all or"
                  + " nothing (%s; unanswered %s)",
              seedText, inDoubt)
          .containsExactlyElementsOf(expectedHistograms);
    }
    assertThat(stored.all().keySet())
        .as("stored series (%s)", seedText)
        .containsExactlyInAnyOrderElementsOf(expected.keySet());
    for (Map.Entry<Labels, List<Sample>> e : expected.entrySet()) {
      assertThat(stored.samples(e.getKey()))
          .as(
              "samples of %s: acknowledged exports all there, each unanswered one all or nothing (%s; unanswered %s)",
              e.getKey(), seedText, inDoubt)
          .containsExactlyElementsOf(e.getValue());
    }
  }

  /**
   * Streams requests from {@value #SENDERS} senders until {@code end} (run after {@code
   * afterMillis}) has stopped the server; returns what {@code end} returned. A request failing
   * before {@code end} started fails the test.
   */
  private int stream(
      ServerProcess server,
      ScheduledExecutorService killer,
      ExecutorService senders,
      long afterMillis,
      Callable<Integer> end)
      throws Exception {
    AtomicBoolean ending = new AtomicBoolean();
    ManagedChannel channel = Otlp.channel(server.grpcPort());
    try {
      MetricsServiceGrpc.MetricsServiceBlockingStub stub =
          MetricsServiceGrpc.newBlockingStub(channel);
      send(stub, next.getAndIncrement()); // connect before the clock starts
      ScheduledFuture<Integer> ended =
          killer.schedule(
              () -> {
                ending.set(true);
                return end.call();
              },
              afterMillis,
              TimeUnit.MILLISECONDS);
      List<Future<?>> running = new ArrayList<>();
      for (int s = 0; s < SENDERS; s++) {
        running.add(
            senders.submit(
                () -> {
                  while (true) {
                    int r = next.getAndIncrement();
                    try {
                      send(stub, r);
                    } catch (StatusRuntimeException e) {
                      if (!ending.get()) {
                        throw new AssertionError(
                            "request "
                                + r
                                + " failed before the stop ("
                                + seedText
                                + "): "
                                + e.getStatus(),
                            e);
                      }
                      inDoubt.add(r);
                      return null;
                    }
                  }
                }));
      }
      for (Future<?> f : running) {
        f.get(120, TimeUnit.SECONDS);
      }
      return ended.get(120, TimeUnit.SECONDS);
    } finally {
      channel.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
    }
  }

  /** Sends the unanswered requests again: each must now succeed without rejections. */
  private void retry(ServerProcess server, TreeSet<Integer> unanswered)
      throws InterruptedException {
    ManagedChannel channel = Otlp.channel(server.grpcPort());
    try {
      MetricsServiceGrpc.MetricsServiceBlockingStub stub =
          MetricsServiceGrpc.newBlockingStub(channel);
      for (int r : unanswered) {
        send(stub, r);
        inDoubt.remove(r);
      }
    } finally {
      channel.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
    }
  }

  /** Exports request {@code r}; on an OK answer without rejections, records it as acknowledged. */
  private void send(MetricsServiceGrpc.MetricsServiceBlockingStub stub, int r) {
    ExportMetricsServiceResponse resp =
        stub.withDeadlineAfter(30, TimeUnit.SECONDS).export(request(r, base, histograms));
    assertThat(resp.getPartialSuccess().getRejectedDataPoints())
        .as(
            "request %d rejected points (%s): %s",
            r, seedText, resp.getPartialSuccess().getErrorMessage())
        .isZero();
    acked.add(r);
  }

  static ExportMetricsServiceRequest request(int r, long base, boolean histograms) {
    long t = base + r;
    NumberDataPoint[] points = new NumberDataPoint[SERIES];
    for (int i = 0; i < SERIES; i++) {
      points[i] = Otlp.point(t, r * 1000.0 + i, "series", Integer.toString(i));
    }
    List<Metric> metrics = new ArrayList<>();
    metrics.add(Otlp.gauge("crash_gauge", points));
    metrics.add(Otlp.counter("crash_requests", Otlp.point(t, r + 1.0)));
    if (histograms) {
      // r + 1 observations in the bucket (1, 2] of scale 0, cumulative
      metrics.add(
          Metric.newBuilder()
              .setName("crash_latency")
              .setExponentialHistogram(
                  ExponentialHistogram.newBuilder()
                      .setAggregationTemporality(
                          AggregationTemporality.AGGREGATION_TEMPORALITY_CUMULATIVE)
                      .addDataPoints(
                          ExponentialHistogramDataPoint.newBuilder()
                              .setTimeUnixNano(t * 1_000_000L)
                              .setStartTimeUnixNano((base - 60_000) * 1_000_000L)
                              .setScale(0)
                              .setCount(r + 1)
                              .setSum(1.5 * (r + 1))
                              .setPositive(
                                  ExponentialHistogramDataPoint.Buckets.newBuilder()
                                      .setOffset(0)
                                      .addBucketCounts(r + 1))))
              .build());
    }
    return Otlp.request("crash", "crash-1", metrics);
  }

  static Labels latencyLabels() {
    return Labels.of("__name__", "crash_latency", "job", "crash", "instance", "crash-1");
  }

  static Labels gaugeLabels(int series) {
    return Labels.of(
        "__name__",
        "crash_gauge",
        "job",
        "crash",
        "instance",
        "crash-1",
        "series",
        Integer.toString(series));
  }

  static Labels counterLabels() {
    return Labels.of("__name__", "crash_requests_total", "job", "crash", "instance", "crash-1");
  }
}
