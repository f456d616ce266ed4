package dev.tidemark.benchmarks;

import dev.tidemark.rocksdb.RocksDbKvStore;
import dev.tidemark.tsdb.append.SampleBatch;
import dev.tidemark.tsdb.engine.Engine;
import dev.tidemark.tsdb.engine.EngineConfig;
import dev.tidemark.tsdb.model.Labels;
import dev.tidemark.tsdb.model.MetricMetadata;
import dev.tidemark.tsdb.model.MetricType;
import dev.tidemark.tsdb.model.Temporality;
import dev.tidemark.tsdb.query.LabelMatcher;
import dev.tidemark.tsdb.time.ManualClock;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;

/**
 * Selects while appends run flat out, to see what readers pay for waiting on the engine's lock
 * behind writers (and what writers pay for fairness): {@code writers} threads append 1,000-sample
 * batches over 10,000 series into RocksDB (fsync off, background sealing on), one reader selects
 * one series over the last 5 minutes every 2 ms. Prints ingest samples/s, process CPU per sample
 * and select latency percentiles.
 *
 * <pre>
 * java -cp benchmarks/target/benchmarks.jar dev.tidemark.benchmarks.ReadUnderIngestHarness 20 2
 * </pre>
 *
 * (seconds, writer threads).
 */
public final class ReadUnderIngestHarness {
  private ReadUnderIngestHarness() {}

  public static void main(String[] args) throws Exception {
    int seconds = args.length > 0 ? Integer.parseInt(args[0]) : 20;
    int writers = args.length > 1 ? Integer.parseInt(args[1]) : 2;
    int series = 10_000;
    long start = PromqlBenchmark.START;
    Path dir = Files.createTempDirectory("tidemark-read-under-ingest");
    RocksDbKvStore store = RocksDbKvStore.open(dir);
    ManualClock clock = new ManualClock(start + Duration.ofDays(7).toMillis());
    Engine engine =
        Engine.open(
            store,
            EngineConfig.builder()
                .clock(clock)
                .retention(Duration.ofDays(30))
                .retentionInterval(Duration.ZERO)
                .build());
    MetricMetadata gauge = new MetricMetadata(MetricType.GAUGE, "", Temporality.UNSPECIFIED, false);
    Labels[] labels = new Labels[series];
    for (int i = 0; i < series; i++) {
      labels[i] = Labels.of("__name__", "m", "job", "j" + (i % 100), "instance", "i" + i);
    }
    AtomicBoolean stop = new AtomicBoolean();
    AtomicLong appended = new AtomicLong();
    AtomicLong newest = new AtomicLong(start);
    Thread[] ws = new Thread[writers];
    for (int w = 0; w < writers; w++) {
      int from = w * series / writers;
      int to = (w + 1) * series / writers;
      ws[w] =
          new Thread(
              () -> {
                SampleBatch batch = new SampleBatch(1000);
                for (long t = start; !stop.get(); t += 15_000) {
                  for (int i = from; i < to && !stop.get(); i++) {
                    batch.addPoint(labels[i], gauge, t, i + t % 1000);
                    if (batch.size() == 1000) {
                      engine.append(batch);
                      appended.addAndGet(batch.size());
                      batch.clear();
                    }
                  }
                  newest.accumulateAndGet(t, Math::max);
                }
              },
              "writer-" + w);
    }
    long[] latencies = new long[1 << 20];
    int[] reads = {0};
    Thread reader =
        new Thread(
            () -> {
              List<LabelMatcher> m =
                  List.of(
                      LabelMatcher.equal("instance", "i4242"), LabelMatcher.equal("__name__", "m"));
              while (!stop.get()) {
                long now = newest.get();
                long t0 = System.nanoTime();
                engine.select(now - 300_000, now, m).toList();
                long ns = System.nanoTime() - t0;
                if (reads[0] < latencies.length) {
                  latencies[reads[0]++] = ns;
                }
                try {
                  Thread.sleep(2);
                } catch (InterruptedException e) {
                  return;
                }
              }
            },
            "reader");
    for (Thread t : ws) {
      t.start();
    }
    Thread.sleep(3000); // warm-up
    appended.set(0);
    reads[0] = 0;
    com.sun.management.OperatingSystemMXBean os =
        (com.sun.management.OperatingSystemMXBean)
            java.lang.management.ManagementFactory.getOperatingSystemMXBean();
    long cpu0 = os.getProcessCpuTime();
    reader.start();
    long t0 = System.nanoTime();
    Thread.sleep(seconds * 1000L);
    stop.set(true);
    long elapsed = System.nanoTime() - t0;
    long samples = appended.get();
    long cpu = os.getProcessCpuTime() - cpu0;
    reader.join();
    for (Thread t : ws) {
      t.join();
    }
    long[] l = Arrays.copyOf(latencies, reads[0]);
    Arrays.sort(l);
    System.out.printf(
        "ingest %,.0f samples/s with %d writers (%.3f process CPU-s per M samples); %d selects: p50 %.2f p99 %.2f p99.9 %.2f max %.2f ms%n",
        samples / (elapsed / 1e9),
        writers,
        cpu / 1e9 / (samples / 1e6),
        l.length,
        l[l.length / 2] / 1e6,
        l[(int) (l.length * 0.99)] / 1e6,
        l[(int) (l.length * 0.999)] / 1e6,
        l[l.length - 1] / 1e6);
    engine.close();
    store.close();
    try (Stream<Path> files = Files.walk(dir)) {
      files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    }
  }
}
