package dev.tidemark.benchmarks;

import dev.tidemark.rocksdb.RocksDbConfig;
import dev.tidemark.rocksdb.RocksDbKvStore;
import dev.tidemark.tsdb.append.SampleBatch;
import dev.tidemark.tsdb.engine.Engine;
import dev.tidemark.tsdb.engine.EngineConfig;
import dev.tidemark.tsdb.model.Labels;
import dev.tidemark.tsdb.model.MetricMetadata;
import dev.tidemark.tsdb.model.MetricType;
import dev.tidemark.tsdb.model.Temporality;
import dev.tidemark.tsdb.time.ManualClock;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;

/**
 * The head's live heap per series at an hour boundary (issue #22; docs/benchmarks.md, session 16):
 * {@code --series} series (five labels each, held by the harness as a translator holds its streams'
 * label sets) get {@code --before} samples at 15 s at the end of hour H, then {@code --after}
 * samples at the start of hour H + 1 while H stays open (the out-of-order window is 30 minutes).
 * The engine runs on RocksDB in a fresh folder under {@code /tmp}, with a manual clock. After each
 * phase the harness waits for the engine's background work (freeze passes) to settle, runs a full
 * collection, prints the used heap and {@code tidemark_head_bytes}, and at the end sleeps {@code
 * --hold} seconds so that {@code jmap -histo:live <pid>} can look. A plain {@code main}, built
 * against any engine version with this API (used on the commits before and after item 5 alike).
 *
 * <pre>
 * java -Xmx4g -cp benchmarks/target/benchmarks.jar dev.tidemark.benchmarks.HourBoundaryHeapHarness \
 *     --series 1000000 --before 40 --after 4 --hold 60
 * </pre>
 */
public final class HourBoundaryHeapHarness {

  private static final MetricMetadata GAUGE =
      new MetricMetadata(MetricType.GAUGE, "", Temporality.UNSPECIFIED, false);

  private HourBoundaryHeapHarness() {}

  public static void main(String[] args) throws Exception {
    int series = 1_000_000;
    int before = 40;
    int after = 4;
    int hold = 0;
    for (int i = 0; i < args.length; i += 2) {
      switch (args[i]) {
        case "--series" -> series = Integer.parseInt(args[i + 1]);
        case "--before" -> before = Integer.parseInt(args[i + 1]);
        case "--after" -> after = Integer.parseInt(args[i + 1]);
        case "--hold" -> hold = Integer.parseInt(args[i + 1]);
        default -> throw new IllegalArgumentException("unknown option " + args[i]);
      }
    }
    long hour = 3_600_000L;
    long h1 = (System.currentTimeMillis() / hour - 3) * hour + hour; // hour H + 1 starts here
    long step = 15_000;
    ManualClock clock = new ManualClock(h1 - before * step);
    Path dir = Files.createTempDirectory("tidemark-boundary-");
    Labels[] labels = new Labels[series];
    for (int i = 0; i < series; i++) {
      labels[i] =
          Labels.of(
              "__name__",
              "node_metric_" + (i % 100),
              "job",
              "node",
              "instance",
              "host-" + (i / 100),
              "cpu",
              Integer.toString(i % 8),
              "mode",
              (i & 1) == 0 ? "user" : "system");
    }
    EngineConfig config =
        EngineConfig.builder()
            .clock(clock)
            .outOfOrderWindow(Duration.ofMinutes(30))
            .retention(Duration.ofDays(7))
            .maxActiveSeries(Math.max(series * 2, 1000))
            .build();
    try (RocksDbKvStore store = RocksDbKvStore.open(dir, RocksDbConfig.defaults());
        Engine engine = Engine.open(store, config)) {
      long t0 = System.nanoTime();
      for (int k = 0; k < before; k++) {
        long t = h1 - (before - k) * step;
        clock.set(t);
        append(engine, labels, t, k);
      }
      report("hour H (" + before + " samples a series)", engine, series, t0);
      t0 = System.nanoTime();
      for (int k = 0; k < after; k++) {
        long t = h1 + k * step;
        clock.set(t);
        append(engine, labels, t, before + k);
      }
      report("hour H + 1, H open (" + after + " samples a series)", engine, series, t0);
      if (hold > 0) {
        System.out.printf(
            "pid %d: holding %d s for jmap -histo:live%n", ProcessHandle.current().pid(), hold);
        Thread.sleep(hold * 1000L);
      }
    } finally {
      try (java.util.stream.Stream<Path> files = Files.walk(dir)) {
        files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
      }
    }
  }

  private static void append(Engine engine, Labels[] labels, long t, int k) {
    SampleBatch b = new SampleBatch();
    for (int i = 0; i < labels.length; i++) {
      // a two-decimal gauge moving a little, as node metrics do
      b.add(labels[i], GAUGE, t, ((i % 1000) * 100 + (k * 7 + i) % 13) / 100.0);
      b.endPoint();
      if (b.size() == 2_000) {
        engine.append(b);
        b = new SampleBatch();
      }
    }
    if (b.size() > 0) {
      engine.append(b);
    }
  }

  /** Waits until the head's byte count holds still (freeze passes done), then measures. */
  private static void report(String phase, Engine engine, int series, long t0)
      throws InterruptedException {
    double secs = (System.nanoTime() - t0) / 1e9;
    long last = -1;
    for (int stable = 0; stable < 3; ) {
      Thread.sleep(1000);
      long now = engine.stats().headBytes();
      stable = now == last ? stable + 1 : 0;
      last = now;
    }
    System.gc();
    Thread.sleep(500);
    System.gc();
    long used = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    System.out.printf(
        Locale.ROOT,
        "%s: ingest %.1f s; heap used after full GC %,d MB (%,d B a series);"
            + " tidemark_head_bytes %,d MB (%,d B a series)%n",
        phase,
        secs,
        used >> 20,
        used / series,
        last >> 20,
        last / series);
  }
}
