package dev.tidemark.benchmarks;

import dev.tidemark.rocksdb.RocksDbConfig;
import dev.tidemark.rocksdb.RocksDbKvStore;
import dev.tidemark.tsdb.append.AppendResult;
import dev.tidemark.tsdb.append.SampleBatch;
import dev.tidemark.tsdb.codec.GorillaEncoder;
import dev.tidemark.tsdb.codec.Keys;
import dev.tidemark.tsdb.codec.RecordType;
import dev.tidemark.tsdb.codec.TimeBucket;
import dev.tidemark.tsdb.engine.Engine;
import dev.tidemark.tsdb.engine.EngineConfig;
import dev.tidemark.tsdb.kv.KvCursor;
import dev.tidemark.tsdb.model.Labels;
import dev.tidemark.tsdb.model.MetricMetadata;
import dev.tidemark.tsdb.model.MetricType;
import dev.tidemark.tsdb.model.Temporality;
import dev.tidemark.tsdb.query.LabelMatcher;
import dev.tidemark.tsdb.query.SampleIterator;
import dev.tidemark.tsdb.query.Series;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.lang.management.ThreadMXBean;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.BrokenBarrierException;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;

/**
 * Engine-level benchmark (no network): the {@link Engine} on a fresh {@link RocksDbKvStore} under
 * {@code /tmp}, fed with a synthetic but realistic workload. A plain {@code main}: the phases are
 * long-running, stateful and multi-process (the recovery phase kills a child JVM), which JMH's
 * iteration model does not fit; codec micro-benchmarks are in {@link GorillaBenchmark}.
 *
 * <h2>Phases</h2>
 *
 * <ul>
 *   <li><b>ingest</b>: {@code --series} active series (10 labels each), one sample per series every
 *       15 s for {@code --minutes} of data time, {@code --threads} writers appending batches of
 *       {@code --batch} points (one sample per point, like an OTLP request of gauges and sums). The
 *       engine's clock is a fake that follows data time. Reports samples/s over the wall clock of
 *       the whole ingest including the final {@code flush()} (sealing), process CPU-seconds per
 *       million samples, head bytes per series and heap after GC at the end of the first data hour,
 *       then (after {@code flush()} and a full {@code compactRange}) bytes/sample on disk and the
 *       raw record payload per record type.
 *   <li><b>recovery</b>: a child JVM ingests {@code --recovery-minutes} (default 20) without
 *       sealing and is killed with SIGKILL once it has reported its acknowledged samples; the
 *       parent reopens the store and reports the engine's recovery time and what was recovered.
 *   <li><b>select</b>: {@code --select-series} series × {@code --select-minutes} stored, then a
 *       select matching all of them ({@code __name__=~".+"}) over the whole range, decoding every
 *       sample through the iterator: median samples/s of {@code --runs} runs after {@code
 *       --warmup}, on head data (before flush) and on sealed data (after flush and compaction).
 * </ul>
 *
 * <h2>Run</h2>
 *
 * <pre>
 * java -Xms4g -Xmx4g -cp benchmarks/target/benchmarks.jar dev.tidemark.benchmarks.EngineBenchmark \
 *     --phases ingest,recovery,select --fsync false
 * # quick smoke run, seconds:
 * java -cp benchmarks/target/benchmarks.jar dev.tidemark.benchmarks.EngineBenchmark --smoke
 * </pre>
 *
 * Lines starting with {@code RESULT} are the figures; everything else is progress.
 */
public final class EngineBenchmark {

  /** Data time starts on an hour (bucket) boundary. */
  static final long START_MILLIS = Instant.parse("2026-11-01T00:00:00Z").toEpochMilli();

  static final long INTERVAL_MILLIS = 15_000;
  static final int METRICS = 50;
  static final int JITTER_MILLIS = 25;

  private EngineBenchmark() {}

  // ---------------------------------------------------------------------------------------------
  // Options

  static final class Options {
    int series = 100_000;
    int minutes = 120;
    int threads = 2;
    int batch = 1000;
    boolean fsync = false;
    Set<String> phases = new LinkedHashSet<>(List.of("ingest", "recovery", "select"));
    int recoveryMinutes = 20;
    int recoverySeries = -1; // default: --series
    int selectSeries = 10_000;
    int selectMinutes = 60;
    int warmup = 3;
    int runs = 7;
    Path root = Path.of("/tmp");
    boolean keep = false;
    boolean childIngest = false;
    Path childDir;

    /** Bucket compaction levels for the ingest phase's compaction step; one hour alone: no step. */
    List<java.time.Duration> compactLevels = EngineConfig.NO_COMPACTION;

    static Options parse(String[] args) {
      Options o = new Options();
      for (int i = 0; i < args.length; i++) {
        String a = args[i];
        String v = null;
        int eq = a.indexOf('=');
        if (eq > 0) {
          v = a.substring(eq + 1);
          a = a.substring(0, eq);
        }
        switch (a) {
          case "--smoke" -> {
            o.series = 10_000;
            o.minutes = 20;
            o.recoveryMinutes = 5;
            o.selectSeries = 2_000;
            o.selectMinutes = 20;
            o.warmup = 1;
            o.runs = 3;
          }
          case "--keep" -> o.keep = true;
          case "--child-ingest" -> o.childIngest = true;
          case "--help", "-h" -> {
            usage();
            System.exit(0);
          }
          default -> {
            if (v == null) {
              if (i + 1 >= args.length) {
                throw new IllegalArgumentException("option " + a + " needs a value");
              }
              v = args[++i];
            }
            switch (a) {
              case "--series" -> o.series = Integer.parseInt(v);
              case "--minutes" -> o.minutes = Integer.parseInt(v);
              case "--hours" -> o.minutes = Integer.parseInt(v) * 60;
              case "--threads" -> o.threads = Integer.parseInt(v);
              case "--batch" -> o.batch = Integer.parseInt(v);
              case "--fsync" -> o.fsync = Boolean.parseBoolean(v);
              case "--phases" -> o.phases = new LinkedHashSet<>(Arrays.asList(v.split(",")));
              case "--recovery-minutes" -> o.recoveryMinutes = Integer.parseInt(v);
              case "--recovery-series" -> o.recoverySeries = Integer.parseInt(v);
              case "--select-series" -> o.selectSeries = Integer.parseInt(v);
              case "--select-minutes" -> o.selectMinutes = Integer.parseInt(v);
              case "--warmup" -> o.warmup = Integer.parseInt(v);
              case "--runs" -> o.runs = Integer.parseInt(v);
              case "--dir" -> o.root = Path.of(v);
              case "--child-dir" -> o.childDir = Path.of(v);
              case "--head-freeze-samples" -> headFreezeSamples = Integer.parseInt(v);
              case "--compact-levels" -> {
                List<java.time.Duration> levels = new ArrayList<>();
                for (String h : v.split(",")) {
                  levels.add(
                      java.time.Duration.ofHours(Long.parseLong(h.strip().replace("h", ""))));
                }
                o.compactLevels = List.copyOf(levels);
              }
              default ->
                  throw new IllegalArgumentException("unknown option " + a + " (try --help)");
            }
          }
        }
      }
      for (String p : o.phases) {
        if (!Set.of("ingest", "recovery", "select").contains(p)) {
          throw new IllegalArgumentException(
              "unknown phase " + p + "; phases: ingest,recovery,select");
        }
      }
      if (o.recoverySeries < 0) {
        o.recoverySeries = o.series;
      }
      return o;
    }

    static void usage() {
      System.out.println(
          """
          EngineBenchmark [options]
            --phases ingest,recovery,select   which phases to run (default all)
            --series N          active series for ingest (default 100000)
            --minutes M | --hours H   data time to ingest (default 120 minutes)
            --threads T         writer threads (default 2)
            --batch B           points per append (default 1000)
            --fsync true|false  EngineConfig.fsync: group-commit fsync per append (default false)
            --recovery-minutes M, --recovery-series N   data for the kill/recover phase (20, --series)
            --select-series N, --select-minutes M       data for the select phase (10000, 60)
            --warmup W, --runs R                        select runs (3, 7)
            --compact-levels 1h,8h,64h   after the ingest phase's storage figures, compact the
                                buckets into these levels (Engine.compactNow) and measure storage
                                and query cost again (default: no compaction step)
            --head-freeze-samples N   EngineConfig.headFreezeSamples (default 96; 0: never)
            --dir PATH          parent folder of the fresh stores (default /tmp)
            --keep              keep the store folders
            --smoke             small sizes: finishes in seconds""");
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Workload

  /** Kinds of series values. */
  static final int COUNTER_INT = 0;

  static final int COUNTER_FRACTIONAL = 1;
  static final int GAUGE_2DEC = 2;
  static final int CONSTANT = 3;

  /** Metric name and value kind, 50 metrics like a Kubernetes service's exporters. */
  static final Object[][] METRIC_DEFS = {
    {"http_server_requests_total", COUNTER_INT},
    {"http_server_request_errors_total", COUNTER_INT},
    {"http_server_request_duration_seconds_sum", COUNTER_FRACTIONAL},
    {"http_server_request_duration_seconds_count", COUNTER_INT},
    {"http_client_requests_total", COUNTER_INT},
    {"http_server_active_requests", GAUGE_2DEC},
    {"grpc_server_handled_total", COUNTER_INT},
    {"grpc_server_started_total", COUNTER_INT},
    {"grpc_client_handled_total", COUNTER_INT},
    {"grpc_server_handling_seconds_sum", COUNTER_FRACTIONAL},
    {"process_cpu_seconds_total", COUNTER_FRACTIONAL},
    {"process_resident_memory_bytes", GAUGE_2DEC},
    {"process_open_fds", GAUGE_2DEC},
    {"process_max_fds", CONSTANT},
    {"process_start_time_seconds", CONSTANT},
    {"container_cpu_usage_seconds_total", COUNTER_FRACTIONAL},
    {"container_memory_working_set_bytes", GAUGE_2DEC},
    {"container_memory_rss", GAUGE_2DEC},
    {"container_network_receive_bytes_total", COUNTER_INT},
    {"container_network_transmit_bytes_total", COUNTER_INT},
    {"container_fs_reads_bytes_total", COUNTER_INT},
    {"container_fs_writes_bytes_total", COUNTER_INT},
    {"container_spec_memory_limit_bytes", CONSTANT},
    {"jvm_memory_used_bytes", GAUGE_2DEC},
    {"jvm_memory_committed_bytes", GAUGE_2DEC},
    {"jvm_threads_live", GAUGE_2DEC},
    {"jvm_gc_pause_seconds_sum", COUNTER_FRACTIONAL},
    {"jvm_gc_pause_seconds_count", COUNTER_INT},
    {"jvm_classes_loaded", GAUGE_2DEC},
    {"go_goroutines", GAUGE_2DEC},
    {"go_memstats_heap_alloc_bytes", GAUGE_2DEC},
    {"db_client_connections_usage", GAUGE_2DEC},
    {"db_client_connections_max", CONSTANT},
    {"db_client_queries_total", COUNTER_INT},
    {"db_client_query_duration_seconds_sum", COUNTER_FRACTIONAL},
    {"cache_hits_total", COUNTER_INT},
    {"cache_misses_total", COUNTER_INT},
    {"cache_size_bytes", GAUGE_2DEC},
    {"kafka_consumer_records_consumed_total", COUNTER_INT},
    {"kafka_consumer_lag", GAUGE_2DEC},
    {"kafka_producer_records_sent_total", COUNTER_INT},
    {"queue_depth", GAUGE_2DEC},
    {"queue_processed_total", COUNTER_INT},
    {"node_load1", GAUGE_2DEC},
    {"node_cpu_seconds_total", COUNTER_FRACTIONAL},
    {"node_disk_read_bytes_total", COUNTER_INT},
    {"node_disk_written_bytes_total", COUNTER_INT},
    {"node_filesystem_avail_bytes", GAUGE_2DEC},
    {"hw_temperature_celsius", GAUGE_2DEC},
    {"up", CONSTANT},
  };

  static final String[] REGIONS = {"us-east-1", "eu-west-1", "ap-southeast-2"};
  static final String[] NAMESPACES = {
    "default",
    "payments",
    "checkout",
    "catalog",
    "search",
    "identity",
    "notifications",
    "billing",
    "inventory",
    "shipping",
    "analytics",
    "ml-serving",
    "gateway",
    "monitoring",
    "logging",
    "kafka",
    "postgres",
    "redis",
    "batch",
    "frontend"
  };
  static final String[] SERVICE_WORDS = {
    "api", "worker", "web", "auth", "cart", "order", "user", "price", "stock", "mail", "push",
    "report", "feed", "rank", "index", "proxy", "router", "sched", "store", "ledger"
  };
  static final String[] CONTAINERS = {
    "app",
    "app",
    "app",
    "istio-proxy",
    "envoy",
    "server",
    "main",
    "sidecar",
    "metrics-exporter",
    "fluent-bit",
    "init-config",
    "jvm"
  };

  /** The 10th label: one of these names per metric, with a realistic value set each. */
  static final String[] EXTRA_NAMES = {"method", "status_code", "path", "device", "mode"};

  static final String[][] EXTRA_VALUES = {
    {"GET", "POST", "PUT", "DELETE", "PATCH"},
    {
      "200", "201", "204", "301", "304", "400", "401", "403", "404", "409", "429", "500", "502",
      "503"
    },
    {
      "/api/v1/users",
      "/api/v1/users/{id}",
      "/api/v1/orders",
      "/api/v1/orders/{id}",
      "/api/v1/items",
      "/api/v1/items/{id}",
      "/api/v1/cart",
      "/api/v1/checkout",
      "/api/v2/search",
      "/login",
      "/logout",
      "/healthz",
      "/readyz",
      "/metrics",
      "/static/{path}",
      "/graphql",
      "/webhooks/stripe",
      "/api/v1/prices",
      "/api/v1/inventory/{sku}",
      "/admin"
    },
    {"sda", "sdb", "nvme0n1", "nvme1n1", "xvda", "dm-0"},
    {"user", "system", "iowait", "idle", "irq", "softirq", "steal", "nice"},
  };

  /** Series labels, metadata and value state. Each writer thread touches only its own range. */
  static final class Workload {
    final int n;
    final Labels[] labels;
    final MetricMetadata[] meta;
    final int[] kind;
    final int[] phaseMillis;
    final double[] value;
    final long[] cents;
    final int[] rate;

    Workload(int n) {
      this.n = n;
      labels = new Labels[n];
      meta = new MetricMetadata[n];
      kind = new int[n];
      phaseMillis = new int[n];
      value = new double[n];
      cents = new long[n];
      rate = new int[n];
      SplittableRandom rnd = new SplittableRandom(42);
      MetricMetadata counter = new MetricMetadata(MetricType.SUM, "", Temporality.CUMULATIVE, true);
      MetricMetadata gauge =
          new MetricMetadata(MetricType.GAUGE, "", Temporality.UNSPECIFIED, false);
      int targets = (n + METRICS - 1) / METRICS;
      String[] pods = new String[targets];
      String[] jobs = new String[targets];
      String[] instances = new String[targets];
      int[] targetPhase = new int[targets];
      for (int p = 0; p < targets; p++) {
        // ~200 services (jobs), each with a few replicas (pods)
        int svc = (int) ((p * 2654435761L) % 200);
        String service = SERVICE_WORDS[svc % 20] + "-" + SERVICE_WORDS[(svc / 20 + 7) % 20];
        jobs[p] = service;
        pods[p] =
            service
                + "-"
                + Integer.toString(0x10000 + (int) ((p * 40503L) & 0xFFFFF), 36)
                + "-"
                + Integer.toString(36 * 36 * 36 + p % 40000, 36);
        instances[p] =
            "10."
                + (p >> 16 & 255)
                + "."
                + (p >> 8 & 255)
                + "."
                + (p & 255)
                + ":"
                + (8080 + svc % 3);
        targetPhase[p] = 1000 + rnd.nextInt(13_000); // scrape/export phase in the interval
      }
      Labels.Builder b = Labels.builder();
      for (int s = 0; s < n; s++) {
        int m = s % METRICS;
        int p = s / METRICS;
        int cluster = p % 6;
        String region = REGIONS[cluster % 3];
        int extra = m % EXTRA_NAMES.length;
        String[] extraValues = EXTRA_VALUES[extra];
        b.reset()
            .add(Labels.METRIC_NAME, (String) METRIC_DEFS[m][0])
            .add("region", region)
            .add("az", region + (char) ('a' + (p / 6) % 3))
            .add("cluster", "k8s-" + region + "-" + (cluster / 3 + 1))
            .add("namespace", NAMESPACES[(p / 18) % NAMESPACES.length])
            .add("job", jobs[p])
            .add("pod", pods[p])
            .add("instance", instances[p])
            .add("container", CONTAINERS[(p * 7 + m) % CONTAINERS.length])
            .add(EXTRA_NAMES[extra], extraValues[(p * 31 + m) % extraValues.length]);
        labels[s] = b.build();
        kind[s] = (int) METRIC_DEFS[m][1];
        meta[s] = kind[s] <= COUNTER_FRACTIONAL ? counter : gauge;
        phaseMillis[s] = targetPhase[p];
        switch (kind[s]) {
          case COUNTER_INT -> {
            value[s] = rnd.nextInt(1_000_000);
            // a third of the counters are flat (errors, rare events), the rest move at varied rates
            rate[s] = rnd.nextInt(3) == 0 ? 0 : 1 + (int) Math.pow(10, rnd.nextDouble(0, 4));
          }
          case COUNTER_FRACTIONAL -> {
            value[s] = rnd.nextInt(100_000) / 100.0;
            rate[s] = 1 + rnd.nextInt(300); // up to 3 s of CPU per 15 s, in 0.01 s
          }
          case GAUGE_2DEC -> {
            cents[s] = rnd.nextLong(1, 10_000_000);
            rate[s] = 1 + rnd.nextInt(200);
          }
          default -> value[s] = rnd.nextInt(4) == 0 ? 1.0 : 1 << (10 + rnd.nextInt(20));
        }
      }
    }

    /** Adds the samples of series {@code [from, to)} at interval {@code step}, one point each. */
    void fill(SampleBatch batch, int from, int to, int step, SplittableRandom rnd) {
      long base = START_MILLIS + step * INTERVAL_MILLIS;
      for (int s = from; s < to; s++) {
        long t = base + phaseMillis[s] + rnd.nextInt(-JITTER_MILLIS, JITTER_MILLIS + 1);
        double v;
        switch (kind[s]) {
          case COUNTER_INT -> v = rate[s] == 0 ? value[s] : (value[s] += rnd.nextInt(rate[s] + 1));
          case COUNTER_FRACTIONAL -> v = (value[s] += rnd.nextInt(rate[s] + 1) / 100.0);
          case GAUGE_2DEC -> {
            long c = cents[s] + rnd.nextInt(-rate[s], rate[s] + 1);
            cents[s] = Math.max(0, c);
            v = cents[s] / 100.0;
          }
          default -> v = value[s];
        }
        batch.addPoint(labels[s], meta[s], t, v);
      }
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Fake clock following data time

  static final class DataClock extends Clock {
    final AtomicLong millis = new AtomicLong(START_MILLIS);

    @Override
    public ZoneId getZone() {
      return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
      return this;
    }

    @Override
    public long millis() {
      return millis.get();
    }

    @Override
    public Instant instant() {
      return Instant.ofEpochMilli(millis());
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Ingest driver

  /** Called between intervals, with the writers paused. */
  interface Checkpoint {
    void at(int stepsDone);
  }

  static final class IngestResult {
    long accepted;
    long rejectedPoints;
    long wallNanos;
    long processCpuNanos;
    long writerCpuNanos;
    long pausedNanos;
    long pausedCpuNanos;
  }

  static final class Ctx {
    final Path dir;
    final DataClock clock = new DataClock();
    final RocksDbKvStore store;
    final Engine engine;

    Ctx(Path dir, boolean fsync) {
      this(dir, fsync, EngineConfig.NO_COMPACTION);
    }

    Ctx(Path dir, boolean fsync, List<java.time.Duration> compactLevels) {
      this.dir = dir;
      this.store = RocksDbKvStore.open(dir, RocksDbConfig.defaults());
      this.engine =
          Engine.open(
              store,
              engineConfig(clock, fsync).toBuilder()
                  .compactionLevels(compactLevels)
                  .compactionInterval(java.time.Duration.ZERO) // compacted on demand, measured
                  .compactionDelay(java.time.Duration.ZERO)
                  .build());
    }

    void close() {
      engine.close();
      store.close();
    }
  }

  /** {@code --head-freeze-samples} (EngineConfig's default unless given). */
  static int headFreezeSamples = EngineConfig.DEFAULT_HEAD_FREEZE_SAMPLES;

  static EngineConfig engineConfig(Clock clock, boolean fsync) {
    return EngineConfig.builder()
        .clock(clock)
        .fsync(fsync)
        .headFreezeSamples(headFreezeSamples)
        .build();
  }

  /**
   * Ingests {@code steps} intervals of all series of {@code wl} with {@code threads} writers. The
   * writers meet at a barrier before each interval; the barrier action advances the clock, prints
   * progress and runs {@code checkpoint} (its time is measured and reported as paused time).
   */
  static IngestResult ingest(
      Engine engine,
      DataClock clock,
      Workload wl,
      int steps,
      int threads,
      int batchSize,
      Checkpoint checkpoint,
      boolean quiet) {
    IngestResult r = new IngestResult();
    ThreadMXBean tmx = ManagementFactory.getThreadMXBean();
    AtomicLong accepted = new AtomicLong();
    AtomicLong rejected = new AtomicLong();
    AtomicLong writerCpu = new AtomicLong();
    AtomicReference<Throwable> failure = new AtomicReference<>();
    int[] stepsDone = {0};
    long[] lastProgress = {System.nanoTime(), 0};
    long started = System.nanoTime();
    long cpuStarted = processCpuNanos();
    CyclicBarrier barrier =
        new CyclicBarrier(
            threads,
            () -> {
              int done = stepsDone[0];
              if (checkpoint != null && done > 0) {
                long p0 = System.nanoTime();
                long c0 = processCpuNanos();
                checkpoint.at(done);
                r.pausedNanos += System.nanoTime() - p0;
                r.pausedCpuNanos += processCpuNanos() - c0;
              }
              if (!quiet && done > 0 && done % 40 == 0) {
                long now = System.nanoTime();
                long acc = accepted.get();
                System.out.printf(
                    Locale.ROOT,
                    "  data time %3d min: %,d samples, %.2f M samples/s over the last 10 min of data%n",
                    done / 4,
                    acc,
                    (acc - lastProgress[1]) * 1e3 / (now - lastProgress[0]));
                lastProgress[0] = now;
                lastProgress[1] = acc;
              }
              clock.millis.set(START_MILLIS + (done + 1) * INTERVAL_MILLIS);
              stepsDone[0] = done + 1;
            });
    List<Thread> writers = new ArrayList<>();
    for (int w = 0; w < threads; w++) {
      int lo = (int) ((long) wl.n * w / threads);
      int hi = (int) ((long) wl.n * (w + 1) / threads);
      int seed = w;
      Thread t =
          new Thread(
              () -> {
                SplittableRandom rnd = new SplittableRandom(1000 + seed);
                SampleBatch batch = new SampleBatch(batchSize);
                long acc = 0;
                long rej = 0;
                try {
                  for (int step = 0; step < steps; step++) {
                    barrier.await();
                    for (int from = lo; from < hi; from += batchSize) {
                      int to = Math.min(hi, from + batchSize);
                      batch.clear();
                      wl.fill(batch, from, to, step, rnd);
                      AppendResult res = engine.append(batch);
                      acc += res.acceptedPoints();
                      rej += res.rejectedPoints();
                      if (res.rejectedPoints() > 0 && rej == res.rejectedPoints()) {
                        System.out.println("  first rejection: " + res);
                      }
                    }
                    accepted.addAndGet(acc);
                    rejected.addAndGet(rej);
                    acc = 0;
                    rej = 0;
                  }
                  barrier.await(); // the final checkpoint
                } catch (InterruptedException | BrokenBarrierException e) {
                  failure.compareAndSet(null, e);
                } catch (Throwable e) {
                  failure.compareAndSet(null, e);
                  barrier.reset();
                } finally {
                  writerCpu.addAndGet(tmx.getCurrentThreadCpuTime());
                }
              },
              "writer-" + w);
      writers.add(t);
      t.start();
    }
    for (Thread t : writers) {
      try {
        t.join();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException(e);
      }
    }
    if (failure.get() != null) {
      throw new IllegalStateException("a writer failed", failure.get());
    }
    r.wallNanos = System.nanoTime() - started;
    r.processCpuNanos = processCpuNanos() - cpuStarted;
    r.writerCpuNanos = writerCpu.get();
    r.accepted = accepted.get();
    r.rejectedPoints = rejected.get();
    return r;
  }

  static long processCpuNanos() {
    return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
        .getProcessCpuTime();
  }

  static long heapUsedAfterGc() {
    MemoryMXBean mem = ManagementFactory.getMemoryMXBean();
    System.gc();
    System.gc();
    return mem.getHeapMemoryUsage().getUsed();
  }

  // ---------------------------------------------------------------------------------------------
  // Phases

  static final Map<String, String> RESULTS = new LinkedHashMap<>();

  static void result(String key, String fmt, Object... args) {
    String v = String.format(Locale.ROOT, fmt, args);
    RESULTS.put(key, v);
    System.out.println("RESULT " + key + " = " + v);
  }

  static void ingestPhase(Options o) throws IOException {
    System.out.printf(
        Locale.ROOT,
        "== ingest: %,d series x %d min, %d threads, batch %d, fsync=%s%n",
        o.series,
        o.minutes,
        o.threads,
        o.batch,
        o.fsync);
    Workload wl = new Workload(o.series);
    shapeReport(o.series);
    Path dir = Files.createTempDirectory(o.root, "tidemark-engine-bench-ingest-");
    Ctx ctx = new Ctx(dir, o.fsync, o.compactLevels);
    try {
      int steps = o.minutes * 4;
      int hourMark = Math.min(steps, 240);
      Engine.Stats[] atHour = new Engine.Stats[1];
      long[] heapAtHour = {0};
      IngestResult r =
          ingest(
              ctx.engine,
              ctx.clock,
              wl,
              steps,
              o.threads,
              o.batch,
              done -> {
                if (done == hourMark) {
                  atHour[0] = ctx.engine.stats();
                  heapAtHour[0] = heapUsedAfterGc();
                }
              },
              false);
      Engine.Stats beforeFlush = ctx.engine.stats();
      long f0 = System.nanoTime();
      long fc0 = processCpuNanos();
      ctx.engine.flush();
      long flushNanos = System.nanoTime() - f0;
      long flushCpu = processCpuNanos() - fc0;
      long samples = r.accepted;
      double wall = (r.wallNanos - r.pausedNanos + flushNanos) / 1e9;
      double cpu = (r.processCpuNanos - r.pausedCpuNanos + flushCpu) / 1e9;
      String tag = o.fsync ? "fsync=true" : "fsync=false";
      result(
          "ingest." + tag + ".samples",
          "%,d accepted, %,d rejected points",
          samples,
          r.rejectedPoints);
      result(
          "ingest." + tag + ".samples_per_s",
          "%,.0f (wall %.1f s incl. final flush %.1f s; without the flush %,.0f/s)",
          samples / wall,
          wall,
          flushNanos / 1e9,
          samples / ((r.wallNanos - r.pausedNanos) / 1e9));
      result(
          "ingest." + tag + ".cpu_s_per_M_samples",
          "%.2f process (%.1f CPU-s total, %.2f cores busy), writers' threads only %.2f",
          cpu / (samples / 1e6),
          cpu,
          cpu / wall,
          r.writerCpuNanos / 1e9 / (samples / 1e6));
      if (atHour[0] != null) {
        Engine.Stats s = atHour[0];
        result(
            "ingest." + tag + ".head_at_" + hourMark / 4 + "min",
            "%,d series, %,d head bytes, %,d bytes/series; heap after GC %,d MiB (%,d bytes/series)",
            s.headSeries(),
            s.headBytes(),
            s.headBytesPerSeries(),
            heapAtHour[0] >> 20,
            heapAtHour[0] / Math.max(1, s.headSeries()));
      }
      result(
          "ingest." + tag + ".head_before_flush",
          "%,d series in %d open buckets, %,d bytes/series",
          beforeFlush.headSeries(),
          beforeFlush.openBuckets(),
          beforeFlush.headBytesPerSeries());
      Map<String, Long> st = ctx.store.statistics();
      result(
          "ingest." + tag + ".rocksdb_io",
          "%.1f B/sample written to the WAL/memtables, flush %.1f B/sample, compaction read %.1f / written %.1f B/sample",
          st.get(RocksDbKvStore.STAT_BYTES_WRITTEN) / (double) samples,
          st.get(RocksDbKvStore.STAT_FLUSH_BYTES_WRITTEN) / (double) samples,
          st.get(RocksDbKvStore.STAT_COMPACTION_BYTES_READ) / (double) samples,
          st.get(RocksDbKvStore.STAT_COMPACTION_BYTES_WRITTEN) / (double) samples);
      storage(ctx, samples, tag);
      if (o.compactLevels.size() > 1) {
        compaction(ctx, samples, tag, o);
      }
    } finally {
      ctx.close();
      cleanup(o, dir);
    }
  }

  /** Gorilla bytes/sample of one-hour chunks (240 samples) per value kind of the workload. */
  static void shapeReport(int series) {
    Workload w = new Workload(Math.min(series, 5000));
    GorillaEncoder[] enc = new GorillaEncoder[w.n];
    for (int i = 0; i < w.n; i++) {
      enc[i] = new GorillaEncoder();
    }
    SampleBatch b = new SampleBatch(w.n);
    SplittableRandom rnd = new SplittableRandom(7);
    for (int step = 0; step < 240; step++) {
      b.clear();
      w.fill(b, 0, w.n, step, rnd);
      for (int i = 0; i < w.n; i++) {
        enc[i].append(b.timestampMillis(i), b.valueBits(i));
      }
    }
    String[] names = {"integer counters", "fractional counters", "2-decimal gauges", "constants"};
    long[] bytes = new long[4];
    long[] count = new long[4];
    for (int i = 0; i < w.n; i++) {
      bytes[w.kind[i]] += enc[i].encodedSizeBytes();
      count[w.kind[i]]++;
    }
    StringBuilder sb = new StringBuilder();
    for (int k = 0; k < 4; k++) {
      sb.append(
          String.format(
              Locale.ROOT,
              "%s %.0f%% of series %.2f B/sample; ",
              names[k],
              100.0 * count[k] / w.n,
              bytes[k] / (count[k] * 240.0)));
    }
    result("workload.gorilla_by_kind", "%s(1 h chunks, %,d series sampled)", sb, w.n);
  }

  static void storage(Ctx ctx, long samples, String tag) {
    long before = ctx.store.approximateSizeBytes();
    long c0 = System.nanoTime();
    ctx.store.compactRange(null, null);
    long compactNanos = System.nanoTime() - c0;
    long after = ctx.store.approximateSizeBytes();
    Map<String, Long> st = ctx.store.statistics();
    result(
        "storage." + tag + ".bytes_per_sample",
        "%.3f on disk after flush + full compaction (%,d bytes: SST %,d + WAL %,d; before compaction %,d; compaction %.1f s)",
        after / (double) samples,
        after,
        st.get(RocksDbKvStore.STAT_SST_BYTES),
        st.get(RocksDbKvStore.STAT_WAL_BYTES),
        before,
        compactNanos / 1e9);
    // Raw record payloads (keys + values, uncompressed) per record type.
    Map<RecordType, long[]> raw = new LinkedHashMap<>();
    for (TimeBucket b : ctx.engine.buckets()) {
      for (RecordType type : RecordType.values()) {
        if (!type.bucketScoped()) {
          continue;
        }
        try (KvCursor c = ctx.store.scanPrefix(Keys.bucketPrefix(type, b))) {
          long[] acc = raw.computeIfAbsent(type, k -> new long[3]);
          while (c.next()) {
            acc[0]++;
            acc[1] += c.key().length;
            acc[2] += c.value().length;
          }
        }
      }
    }
    StringBuilder sb = new StringBuilder();
    long total = 0;
    for (Map.Entry<RecordType, long[]> e : raw.entrySet()) {
      long[] a = e.getValue();
      total += a[1] + a[2];
      sb.append(
          String.format(Locale.ROOT, "%s %,d records %,d B; ", e.getKey(), a[0], a[1] + a[2]));
    }
    long[] ts = raw.getOrDefault(RecordType.TIME_SERIES, new long[3]);
    result(
        "storage." + tag + ".gorilla_bytes_per_sample",
        "%.3f (TimeSeries values incl. encoding byte; with keys %.3f)",
        ts[2] / (double) samples,
        (ts[1] + ts[2]) / (double) samples);
    result(
        "storage." + tag + ".raw_records",
        "%s total %,d B = %.3f B/sample",
        sb,
        total,
        total / (double) samples);
  }

  /**
   * The bucket compaction step: query cost on the hourly store, {@code compactNow()} into {@code
   * --compact-levels}, storage figures again, query cost again.
   */
  static void compaction(Ctx ctx, long samples, String tag, Options o) {
    String levels =
        o.compactLevels.stream()
            .map(d -> d.toHours() + "h")
            .reduce((a, b) -> a + "," + b)
            .orElse("");
    long hours = o.minutes / 60;
    long mid = START_MILLIS + (hours / 2) * 3_600_000L;
    long end = START_MILLIS + o.minutes * 60_000L;
    List<LabelMatcher> oneMetric =
        List.of(LabelMatcher.equal(Labels.METRIC_NAME, (String) METRIC_DEFS[0][0]));
    queryCost(ctx.engine, "hourly.one_metric_1h", mid, mid + 3_600_000L - 1, oneMetric, o);
    queryCost(ctx.engine, "hourly.one_metric_all", START_MILLIS, end, oneMetric, o);
    labelCost(ctx.engine, "hourly.label_values_instance_1h", mid, mid + 3_600_000L - 1, o);
    int bucketsBefore = ctx.engine.buckets().size();
    ctx.clock.millis.set(end + 3_600_000L); // the last group is due: its end is past the window
    long c0 = System.nanoTime();
    long cpu0 = processCpuNanos();
    int made = ctx.engine.compactNow();
    long nanos = System.nanoTime() - c0;
    long cpu = processCpuNanos() - cpu0;
    Engine.Stats s = ctx.engine.stats();
    result(
        "compaction." + levels,
        "%d buckets -> %d (%d coarse made), %.1f s wall, %.1f CPU-s, %,d bytes written (%.2f B/sample)",
        bucketsBefore,
        ctx.engine.buckets().size(),
        made,
        nanos / 1e9,
        cpu / 1e9,
        s.compactionBytesWritten(),
        s.compactionBytesWritten() / (double) samples);
    storage(ctx, samples, tag + ".compacted_" + levels);
    queryCost(ctx.engine, "compacted.one_metric_1h", mid, mid + 3_600_000L - 1, oneMetric, o);
    queryCost(ctx.engine, "compacted.one_metric_all", START_MILLIS, end, oneMetric, o);
    labelCost(ctx.engine, "compacted.label_values_instance_1h", mid, mid + 3_600_000L - 1, o);
  }

  /** A select and full decode, median of {@code --runs} after {@code --warmup}. */
  static void queryCost(
      Engine engine, String what, long minT, long maxT, List<LabelMatcher> matchers, Options o) {
    long expected = 0;
    for (Series sr : engine.select(minT, maxT, matchers).toList()) {
      SampleIterator it = sr.iterator();
      while (it.next()) {
        expected++;
      }
    }
    selectRuns(engine, "query." + what, minT, maxT, matchers, expected, o);
  }

  /** {@code labelValues("instance")} over the range, median time of {@code --runs}. */
  static void labelCost(Engine engine, String what, long minT, long maxT, Options o) {
    long[] times = new long[o.runs];
    int values = 0;
    for (int run = 0; run < o.warmup + o.runs; run++) {
      long t0 = System.nanoTime();
      values = engine.labelValues("instance", minT, maxT, List.of()).size();
      if (run >= o.warmup) {
        times[run - o.warmup] = System.nanoTime() - t0;
      }
    }
    Arrays.sort(times);
    result(
        "query." + what,
        "%.1f ms median of %d (%,d values)",
        times[times.length / 2] / 1e6,
        o.runs,
        values);
  }

  static void recoveryPhase(Options o) throws Exception {
    System.out.printf(
        Locale.ROOT,
        "== recovery: child JVM ingests %,d series x %d min without sealing, then SIGKILL%n",
        o.recoverySeries,
        o.recoveryMinutes);
    Path dir = Files.createTempDirectory(o.root, "tidemark-engine-bench-recovery-");
    try {
      List<String> cmd = new ArrayList<>();
      cmd.add(ProcessHandle.current().info().command().orElse("java"));
      for (String a : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
        if (!a.contains("FlightRecord") && !a.startsWith("-agent")) {
          cmd.add(a);
        }
      }
      cmd.addAll(
          List.of(
              "-cp",
              System.getProperty("java.class.path"),
              EngineBenchmark.class.getName(),
              "--child-ingest",
              "--child-dir",
              dir.toString(),
              "--series",
              Integer.toString(o.recoverySeries),
              "--minutes",
              Integer.toString(o.recoveryMinutes),
              "--threads",
              Integer.toString(o.threads),
              "--batch",
              Integer.toString(o.batch),
              "--head-freeze-samples",
              Integer.toString(headFreezeSamples)));
      Process child =
          new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
      long acknowledged = -1;
      try (BufferedReader in =
          new BufferedReader(
              new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8))) {
        String line;
        while ((line = in.readLine()) != null) {
          System.out.println("  child: " + line);
          if (line.startsWith("READY ")) {
            acknowledged = Long.parseLong(line.substring(6).trim());
            break;
          }
        }
        if (acknowledged < 0) {
          throw new IllegalStateException("child ended without READY, exit " + child.waitFor());
        }
        child.destroyForcibly(); // SIGKILL
        int exit = child.waitFor();
        System.out.println("  child killed, exit status " + exit);
      }
      long t0 = System.nanoTime();
      RocksDbKvStore store = RocksDbKvStore.open(dir, RocksDbConfig.defaults());
      long storeOpen = System.nanoTime() - t0;
      DataClock clock = new DataClock();
      clock.millis.set(START_MILLIS + o.recoveryMinutes * 60_000L);
      long t1 = System.nanoTime();
      Engine engine = Engine.open(store, engineConfig(clock, false));
      long engineOpen = System.nanoTime() - t1;
      Engine.Stats s = engine.stats();
      long recovered = 0;
      long series = 0;
      for (Series sr :
          engine
              .select(
                  START_MILLIS,
                  START_MILLIS + o.recoveryMinutes * 60_000L + 60_000,
                  List.of(LabelMatcher.regex(Labels.METRIC_NAME, ".+")))
              .toList()) {
        series++;
        SampleIterator it = sr.iterator();
        while (it.next()) {
          recovered++;
        }
      }
      result(
          "recovery.millis",
          "%,d engine recovery (stats().recoveryMillis; Engine.open wall %,d ms), RocksDB open %,d ms",
          s.recoveryMillis(),
          engineOpen / 1_000_000,
          storeOpen / 1_000_000);
      result(
          "recovery.recovered",
          "%,d series, %,d samples (child acknowledged %,d: %s), %,d head bytes/series",
          series,
          recovered,
          acknowledged,
          recovered == acknowledged ? "all" : "MISMATCH",
          s.headBytesPerSeries());
      long c0 = System.nanoTime();
      engine.close();
      result(
          "recovery.seal_after_recovery_s",
          "%.1f (close(): sealing the recovered bucket)",
          (System.nanoTime() - c0) / 1e9);
      store.close();
    } finally {
      cleanup(o, dir);
    }
  }

  /** The child of the recovery phase: ingest, report, wait to be killed. */
  static void childIngest(Options o) throws Exception {
    Workload wl = new Workload(o.series);
    DataClock clock = new DataClock();
    RocksDbKvStore store = RocksDbKvStore.open(o.childDir, RocksDbConfig.defaults());
    Engine engine = Engine.open(store, engineConfig(clock, false));
    IngestResult r = ingest(engine, clock, wl, o.minutes * 4, o.threads, o.batch, null, true);
    System.out.printf(
        Locale.ROOT, "ingested %,d samples in %.1f s%n", r.accepted, r.wallNanos / 1e9);
    System.out.println("READY " + r.accepted);
    System.out.flush();
    Thread.sleep(Long.MAX_VALUE);
  }

  static void selectPhase(Options o) throws IOException {
    System.out.printf(
        Locale.ROOT,
        "== select: %,d series x %d min, matcher __name__=~\".+\"%n",
        o.selectSeries,
        o.selectMinutes);
    Workload wl = new Workload(o.selectSeries);
    Path dir = Files.createTempDirectory(o.root, "tidemark-engine-bench-select-");
    Ctx ctx = new Ctx(dir, false);
    try {
      IngestResult r =
          ingest(ctx.engine, ctx.clock, wl, o.selectMinutes * 4, o.threads, o.batch, null, true);
      long expected = r.accepted;
      long minT = START_MILLIS;
      long maxT = START_MILLIS + o.selectMinutes * 60_000L + 60_000;
      List<LabelMatcher> matchers = List.of(LabelMatcher.regex(Labels.METRIC_NAME, ".+"));
      Engine.Stats s = ctx.engine.stats();
      if (s.openBuckets() == 0) {
        System.out.println(
            "  warning: the data was sealed during ingest; head figures are not head data");
      }
      selectRuns(ctx.engine, "head", minT, maxT, matchers, expected, o);
      ctx.engine.flush();
      ctx.store.compactRange(null, null);
      selectRuns(ctx.engine, "sealed", minT, maxT, matchers, expected, o);
    } finally {
      ctx.close();
      cleanup(o, dir);
    }
  }

  static void selectRuns(
      Engine engine,
      String what,
      long minT,
      long maxT,
      List<LabelMatcher> matchers,
      long expected,
      Options o) {
    int n = o.warmup + o.runs;
    long[] total = new long[o.runs];
    long[] selectOnly = new long[o.runs];
    long sink = 0;
    long series = 0;
    for (int run = 0; run < n; run++) {
      long t0 = System.nanoTime();
      List<Series> found = engine.select(minT, maxT, matchers).toList();
      long t1 = System.nanoTime();
      long count = 0;
      for (Series sr : found) {
        SampleIterator it = sr.iterator();
        while (it.next()) {
          sink += it.timestampMillis() ^ it.valueBits();
          count++;
        }
      }
      long t2 = System.nanoTime();
      if (count != expected) {
        throw new IllegalStateException(
            what + " select decoded " + count + " samples, expected " + expected);
      }
      series = found.size();
      if (run >= o.warmup) {
        total[run - o.warmup] = t2 - t0;
        selectOnly[run - o.warmup] = t1 - t0;
      }
    }
    long[] sorted = total.clone();
    Arrays.sort(sorted);
    long med = sorted[sorted.length / 2];
    long[] sel = selectOnly.clone();
    Arrays.sort(sel);
    long medSel = sel[sel.length / 2];
    result(
        "select." + what + ".samples_per_s",
        "%,.0f median of %d (%,d series, %,d samples, %.1f ms; select() %.1f ms, iteration %,.0f samples/s; min %,.0f max %,.0f)",
        expected / (med / 1e9),
        o.runs,
        series,
        expected,
        med / 1e6,
        medSel / 1e6,
        expected / ((med - medSel) / 1e9),
        expected / (sorted[sorted.length - 1] / 1e9),
        expected / (sorted[0] / 1e9));
    if (sink == 42) {
      System.out.println("(sink)");
    }
  }

  static void cleanup(Options o, Path dir) {
    if (o.keep) {
      System.out.println("  kept " + dir);
      return;
    }
    try (Stream<Path> files = Files.walk(dir)) {
      files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  public static void main(String[] args) throws Exception {
    Options o = Options.parse(args);
    if (o.childIngest) {
      childIngest(o);
      return;
    }
    System.out.printf(
        Locale.ROOT,
        "EngineBenchmark %s: %d CPUs, JVM %s, flags %s, max heap %,d MiB%n",
        Instant.now(),
        Runtime.getRuntime().availableProcessors(),
        System.getProperty("java.vm.version"),
        ManagementFactory.getRuntimeMXBean().getInputArguments(),
        Runtime.getRuntime().maxMemory() >> 20);
    if (o.phases.contains("ingest")) {
      ingestPhase(o);
    }
    if (o.phases.contains("recovery")) {
      recoveryPhase(o);
    }
    if (o.phases.contains("select")) {
      selectPhase(o);
    }
    System.out.println("== summary");
    RESULTS.forEach((k, v) -> System.out.println("  " + k + ": " + v));
  }
}
