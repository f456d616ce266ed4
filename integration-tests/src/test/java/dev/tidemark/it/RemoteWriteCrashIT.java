package dev.tidemark.it;

import static org.assertj.core.api.Assertions.assertThat;

import dev.tidemark.it.StoredData.Sample;
import dev.tidemark.receiver.remotewrite.proto.Label;
import dev.tidemark.receiver.remotewrite.proto.TimeSeries;
import dev.tidemark.receiver.remotewrite.proto.WriteRequest;
import dev.tidemark.tsdb.model.Labels;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.NavigableSet;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentSkipListSet;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.xerial.snappy.Snappy;

/**
 * A real server process receives a stream of remote-write 1.0 requests ({@value #SENDERS} senders,
 * one request at a time each, as Prometheus' shards send) and is killed with SIGKILL at a seeded
 * random moment, twice, restarted on the same folder each time; then stopped and its folder read
 * back. Every sample of every request answered 204 must be stored with its exact value; nothing
 * that was not sent may be stored (an unanswered request may be stored in part: remote write
 * promises nothing for those, and senders retry them).
 */
@ExtendWith(ServerLogs.class)
class RemoteWriteCrashIT {
  static final int SERIES = 20;
  static final int SENDERS = 2;
  static final int KILLS = 2;
  static final HttpClient HTTP =
      HttpClient.newBuilder()
          .version(HttpClient.Version.HTTP_1_1)
          .connectTimeout(Duration.ofSeconds(10))
          .build();

  @TempDir Path tmp;

  private final AtomicInteger next = new AtomicInteger();
  private final NavigableSet<Integer> acked = new ConcurrentSkipListSet<>();
  private final NavigableSet<Integer> unanswered = new ConcurrentSkipListSet<>();
  private long base;

  @Test
  void acknowledgedRemoteWritesSurviveSigkill() throws Exception {
    long seed = Long.getLong("tidemark.it.seed", System.nanoTime());
    String seedText = "seed " + seed + " (rerun with -Dtidemark.it.seed=" + seed + ")";
    SplittableRandom random = new SplittableRandom(seed);
    base = System.currentTimeMillis() - Duration.ofMinutes(20).toMillis();
    ExecutorService senders = Executors.newFixedThreadPool(SENDERS);
    ServerProcess server = ServerProcess.start(tmp.resolve("data"));
    try {
      for (int kill = 1; kill <= KILLS; kill++) {
        int before = acked.size();
        AtomicBoolean killed = new AtomicBoolean();
        String url = server.apiUrl("/api/v1/write");
        List<Future<?>> running = new ArrayList<>();
        for (int s = 0; s < SENDERS; s++) {
          running.add(
              senders.submit(
                  () -> {
                    while (true) {
                      int r = next.getAndIncrement();
                      try {
                        HttpResponse<String> resp = send(url, r);
                        assertThat(resp.statusCode())
                            .as("request %d: %s (%s)", r, resp.body(), seedText)
                            .isEqualTo(204);
                        acked.add(r);
                      } catch (java.io.IOException e) {
                        unanswered.add(r);
                        if (!killed.get()) {
                          throw new AssertionError("request " + r + " failed before the kill", e);
                        }
                        return null;
                      }
                    }
                  }));
        }
        long afterMillis = 500 + random.nextInt(1500);
        Thread.sleep(afterMillis);
        killed.set(true);
        server.kill();
        for (Future<?> f : running) {
          f.get(60, TimeUnit.SECONDS);
        }
        System.out.printf(
            "RemoteWriteCrashIT %s: SIGKILL after %d ms, %d requests acknowledged, unanswered %s%n",
            seedText, afterMillis, acked.size() - before, unanswered);
        assertThat(acked.size() - before).as("acknowledged in cycle %d", kill).isPositive();
        server = server.restart();
      }
      assertThat(server.stop()).isZero();
    } finally {
      senders.shutdownNow();
      server.close();
    }

    StoredData stored = StoredData.read(server.dataDir());
    Map<Labels, List<Sample>> all = stored.all();
    for (int i = 0; i < SERIES; i++) {
      Labels l = labels(i);
      List<Sample> samples = stored.samples(l);
      assertThat(samples).as("series %d (%s)", i, seedText).isNotNull();
      for (int r : acked) {
        assertThat(samples)
            .as("acknowledged request %d in series %d (%s)", r, i, seedText)
            .contains(Sample.of(base + r, value(r, i)));
      }
      for (Sample s : samples) {
        int r = (int) (s.t() - base);
        assertThat(acked.contains(r) || unanswered.contains(r))
            .as("stored sample %s of series %d was sent (%s)", s, i, seedText)
            .isTrue();
        assertThat(s).isEqualTo(Sample.of(base + r, value(r, i)));
      }
    }
    assertThat(all.keySet()).hasSize(SERIES);
  }

  private HttpResponse<String> send(String url, int r) throws Exception {
    WriteRequest.Builder b = WriteRequest.newBuilder();
    for (int i = 0; i < SERIES; i++) {
      b.addTimeseries(
          TimeSeries.newBuilder()
              .addLabels(Label.newBuilder().setName("__name__").setValue("rw_crash"))
              .addLabels(Label.newBuilder().setName("series").setValue(Integer.toString(i)))
              .addSamples(
                  dev.tidemark.receiver.remotewrite.proto.Sample.newBuilder()
                      .setTimestamp(base + r)
                      .setValue(value(r, i))));
    }
    return HTTP.send(
        HttpRequest.newBuilder(URI.create(url))
            .timeout(Duration.ofSeconds(30))
            .header("Content-Type", "application/x-protobuf")
            .header("Content-Encoding", "snappy")
            .POST(HttpRequest.BodyPublishers.ofByteArray(Snappy.compress(b.build().toByteArray())))
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  static double value(int r, int i) {
    return r * 1000.0 + i;
  }

  static Labels labels(int i) {
    return Labels.of("__name__", "rw_crash", "series", Integer.toString(i));
  }
}
