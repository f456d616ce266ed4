package dev.tidemark.benchmarks;

import dev.tidemark.promql.engine.PromqlEngine;
import dev.tidemark.promql.engine.QueryResult;
import dev.tidemark.rocksdb.RocksDbKvStore;
import dev.tidemark.tsdb.append.SampleBatch;
import dev.tidemark.tsdb.engine.Engine;
import dev.tidemark.tsdb.engine.EngineConfig;
import dev.tidemark.tsdb.model.Labels;
import dev.tidemark.tsdb.model.MetricMetadata;
import dev.tidemark.tsdb.model.MetricType;
import dev.tidemark.tsdb.model.Temporality;
import dev.tidemark.tsdb.time.ManualClock;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * PromQL range queries over data held by the real engine, sealed in RocksDB: 100 hosts × 8 CPUs × 8
 * modes = 6,400 {@code node_cpu_seconds_total} counters and 100 {@code node_load1} gauges, 6 h at a
 * 15 s scrape interval (9.3M samples). Two queries of issue #10:
 *
 * <ul>
 *   <li>{@code CPU}: {@code sum by (instance) (rate(node_cpu_seconds_total{mode!="idle"}[5m]))}
 *       over the 6 h at a 60 s step (5,600 series read, 8.1M samples);
 *   <li>{@code LOAD}: {@code avg(node_load1)} over the 6 h at a 15 s step (100 series, 144k
 *       samples).
 * </ul>
 *
 * <p>One operation is one whole query. The setup prints {@code samples read per query}; samples per
 * second is that divided by the time per operation, and bytes allocated per sample is {@code -prof
 * gc}'s {@code gc.alloc.rate.norm} divided by it. Run:
 *
 * <pre>
 * java -jar benchmarks/target/benchmarks.jar PromqlBenchmark -f 1 -wi 2 -w 5 -i 5 -r 5 -t 1 -prof gc
 * </pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
public class PromqlBenchmark {
  static final long START = 1_700_000_400_000L - 1_700_000_400_000L % 3_600_000L;
  static final long HOURS = 6;
  static final long SCRAPE = 15_000;
  static final int HOSTS = 100;
  static final int CPUS = 8;
  static final String[] MODES = {
    "idle", "user", "system", "iowait", "irq", "softirq", "steal", "nice"
  };

  /** The two queries of issue #10. */
  public enum Query {
    CPU("sum by (instance) (rate(node_cpu_seconds_total{mode!=\"idle\"}[5m]))", 60_000),
    LOAD("avg(node_load1)", 15_000);

    final String expr;
    final long stepMillis;

    Query(String expr, long stepMillis) {
      this.expr = expr;
      this.stepMillis = stepMillis;
    }
  }

  @Param({"CPU", "LOAD"})
  public Query query;

  private Path dir;
  private RocksDbKvStore store;
  private Engine engine;
  private final PromqlEngine promql = new PromqlEngine();
  private final long end = START + HOURS * 3_600_000L - SCRAPE;

  @Setup(Level.Trial)
  public void load() throws IOException {
    dir = Files.createTempDirectory("tidemark-promql-bench");
    store = RocksDbKvStore.open(dir);
    ManualClock clock = new ManualClock(end + 60_000);
    engine =
        Engine.open(
            store,
            EngineConfig.builder()
                .clock(clock)
                .retention(Duration.ofDays(30))
                .retentionInterval(Duration.ZERO)
                .build());
    MetricMetadata counter = new MetricMetadata(MetricType.SUM, "s", Temporality.CUMULATIVE, true);
    MetricMetadata gauge = new MetricMetadata(MetricType.GAUGE, "", Temporality.UNSPECIFIED, false);
    Labels[] cpu = new Labels[HOSTS * CPUS * MODES.length];
    double[] total = new double[cpu.length];
    Labels[] load = new Labels[HOSTS];
    for (int h = 0; h < HOSTS; h++) {
      String instance = "host-" + h + ":9100";
      load[h] = Labels.of("__name__", "node_load1", "instance", instance, "job", "node");
      for (int c = 0; c < CPUS; c++) {
        for (int m = 0; m < MODES.length; m++) {
          cpu[(h * CPUS + c) * MODES.length + m] =
              Labels.of(
                  "__name__",
                  "node_cpu_seconds_total",
                  "cpu",
                  Integer.toString(c),
                  "instance",
                  instance,
                  "job",
                  "node",
                  "mode",
                  MODES[m]);
        }
      }
    }
    SplittableRandom rnd = new SplittableRandom(42);
    SampleBatch batch = new SampleBatch(8192);
    long samples = 0;
    for (long t = START; t <= end; t += SCRAPE) {
      for (int i = 0; i < cpu.length; i++) {
        total[i] +=
            Math.round(rnd.nextDouble(0, 15) * 100) / 100.0; // 2-decimal seconds, as node_exporter
        batch.addPoint(cpu[i], counter, t + rnd.nextInt(-20, 21), total[i]);
        if (batch.size() == 8192) {
          engine.append(batch);
          samples += batch.size();
          batch.clear();
        }
      }
      for (Labels l : load) {
        batch.addPoint(l, gauge, t, Math.round(rnd.nextDouble(0, 8) * 100) / 100.0);
      }
      engine.append(batch);
      samples += batch.size();
      batch.clear();
    }
    engine.flush();
    store.compactRange(null, null);
    QueryResult warm = promql.rangeQuery(engine, query.expr, START, end, query.stepMillis);
    System.out.printf(
        "%nloaded %,d samples; %s: samples read per query %,d; result %s%n",
        samples,
        query,
        query == Query.CPU ? 5_600L * (HOURS * 240) : (long) HOSTS * HOURS * 240,
        warm.value().getClass().getSimpleName());
  }

  @Benchmark
  public QueryResult rangeQuery() {
    return promql.rangeQuery(engine, query.expr, START, end, query.stepMillis);
  }

  @TearDown(Level.Trial)
  public void close() throws IOException {
    engine.close();
    store.close();
    try (Stream<Path> files = Files.walk(dir)) {
      files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    }
  }
}
