package dev.tidemark.it;

import static org.assertj.core.api.Assertions.assertThat;

import dev.tidemark.it.StoredData.Sample;
import dev.tidemark.rocksdb.RocksDbKvStore;
import dev.tidemark.tsdb.codec.BucketListValue;
import dev.tidemark.tsdb.codec.Keys;
import dev.tidemark.tsdb.codec.TimeBucket;
import dev.tidemark.tsdb.engine.StoreVerifier;
import dev.tidemark.tsdb.engine.VerifyReport;
import dev.tidemark.tsdb.model.Labels;
import io.grpc.ManagedChannel;
import io.opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceResponse;
import io.opentelemetry.proto.collector.metrics.v1.MetricsServiceGrpc;
import io.opentelemetry.proto.metrics.v1.NumberDataPoint;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * SIGKILL during bucket compaction, repeated: a server (default settings but for the compactor's
 * interval: compaction into 8-hour buckets, the background compactor every {@value
 * #COMPACTION_INTERVAL} rather than every minute, so the test waits less) receives {@value #HOURS}
 * hours of old data for {@value #SERIES} series, which seals the first eight hours; when its log
 * says a compaction started, it is killed after a random moment and restarted, {@value #KILLS}
 * times; then the compaction is let finish and the server stopped. Every acknowledged sample must
 * be stored once, nothing else; the store must hold the 8-hour bucket and verify clean (no records
 * left of the interrupted compactions). The kill moments come from a seeded random ({@code
 * tidemark.it.seed}).
 */
@ExtendWith(ServerLogs.class)
class CompactionCrashIT {
  static final int SERIES = 2000;
  static final int HOURS = 9;
  static final long STEP_MILLIS = 60_000;
  static final int KILLS = 3;
  static final long KILL_WITHIN_MILLIS = 120;
  static final long EIGHT_HOURS = Duration.ofHours(8).toMillis();
  static final String COMPACTION_INTERVAL = "10s";
  static final Duration COMPACTOR_WAIT = Duration.ofSeconds(150);

  @TempDir Path tmp;

  @Test
  void sigkillDuringCompactionLosesAndDuplicatesNothing() throws Exception {
    long seed = Long.getLong("tidemark.it.seed", System.nanoTime());
    String seedText = "seed " + seed + " (rerun with -Dtidemark.it.seed=" + seed + ")";
    SplittableRandom random = new SplittableRandom(seed);
    long base =
        Math.floorDiv(System.currentTimeMillis() - Duration.ofDays(3).toMillis(), EIGHT_HOURS)
            * EIGHT_HOURS;

    ServerProcess server =
        ServerProcess.start(tmp.resolve("data"), "--compaction-interval", COMPACTION_INTERVAL);
    int killedMidway = 0;
    boolean done = false;
    try {
      send(server, base, seedText);
      for (int kill = 1; kill <= KILLS; kill++) {
        if (!waitForLog(server, "compacting ")) {
          System.out.printf(
              "CompactionCrashIT %s: no compaction after restart %d: finished before the kill%n",
              seedText, kill - 1);
          done = true;
          break;
        }
        // The group (2,000 series x 8 h) merges in about 200-400 ms on this machine when it is
        // otherwise idle: kill within the first 120 ms so the kill lands mid-compaction (a delay
        // of up to 700 ms let an idle run's compaction finish before every kill).
        long delay = random.nextLong(0, KILL_WITHIN_MILLIS);
        Thread.sleep(delay);
        boolean finished = server.log().contains("compacted ");
        server.kill();
        if (!finished) {
          killedMidway++;
        }
        System.out.printf(
            "CompactionCrashIT %s: SIGKILL %d ms after the compaction started (%s)%n",
            seedText, delay, finished ? "it had finished" : "mid-compaction");
        server = server.restart();
      }
      if (!done) {
        assertThat(waitForLog(server, "compacted "))
            .as("the last server finishes the compaction (%s)", seedText)
            .isTrue();
      }
      assertThat(server.stop()).as("exit code after SIGTERM (%s)", seedText).isZero();
    } finally {
      server.close();
    }
    assertThat(killedMidway)
        .as("kills that landed during a compaction (%s)", seedText)
        .isPositive();

    try (RocksDbKvStore store = RocksDbKvStore.open(server.dataDir())) {
      List<TimeBucket> buckets = BucketListValue.decode(store.get(Keys.bucketList()));
      assertThat(buckets)
          .as("buckets (%s)", seedText)
          .contains(new TimeBucket(4, (int) (base / 60_000)));
      VerifyReport report = StoreVerifier.verify(store);
      assertThat(report.clean()).as("verify %s (%s)", report.counts(), seedText).isTrue();
    }
    StoredData stored = StoredData.read(server.dataDir());
    Map<Labels, List<Sample>> all = stored.all();
    assertThat(all).as("series (%s)", seedText).hasSize(SERIES);
    for (int i = 0; i < SERIES; i++) {
      List<Sample> want = new ArrayList<>();
      for (int m = 0; m < HOURS * 60; m++) {
        want.add(Sample.of(base + m * STEP_MILLIS, value(m, i)));
      }
      assertThat(stored.samples(labels(i)))
          .as("samples of series %d (%s)", i, seedText)
          .isEqualTo(want);
    }
  }

  private static double value(int minute, int series) {
    return minute * 10_000.0 + series + (minute % 4) / 4.0;
  }

  static Labels labels(int series) {
    return Labels.of(
        "__name__",
        "compaction_gauge",
        "job",
        "compaction",
        "instance",
        "c-1",
        "series",
        Integer.toString(series));
  }

  /**
   * Every minute of {@link #HOURS} hours, one request per minute with all series; all acknowledged.
   */
  private static void send(ServerProcess server, long base, String seedText)
      throws InterruptedException {
    ManagedChannel channel = Otlp.channel(server.grpcPort());
    try {
      MetricsServiceGrpc.MetricsServiceBlockingStub stub =
          MetricsServiceGrpc.newBlockingStub(channel);
      for (int m = 0; m < HOURS * 60; m++) {
        NumberDataPoint[] points = new NumberDataPoint[SERIES];
        for (int i = 0; i < SERIES; i++) {
          points[i] =
              Otlp.point(base + m * STEP_MILLIS, value(m, i), "series", Integer.toString(i));
        }
        ExportMetricsServiceResponse resp =
            stub.withDeadlineAfter(30, TimeUnit.SECONDS)
                .export(
                    Otlp.request(
                        "compaction", "c-1", List.of(Otlp.gauge("compaction_gauge", points))));
        assertThat(resp.getPartialSuccess().getRejectedDataPoints())
            .as(
                "minute %d rejected (%s): %s",
                m, seedText, resp.getPartialSuccess().getErrorMessage())
            .isZero();
      }
    } finally {
      channel.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
    }
  }

  /** Waits up to {@link #COMPACTOR_WAIT} for {@code text} in the server's log. */
  private static boolean waitForLog(ServerProcess server, String text) throws InterruptedException {
    long deadline = System.nanoTime() + COMPACTOR_WAIT.toNanos();
    while (System.nanoTime() < deadline) {
      if (server.log().contains(text)) {
        return true;
      }
      Thread.sleep(10);
    }
    return false;
  }
}
