package dev.tidemark.benchmarks;

import dev.tidemark.rocksdb.RocksDbConfig;
import dev.tidemark.rocksdb.RocksDbKvStore;
import dev.tidemark.translator.Translator;
import dev.tidemark.translator.TranslatorConfig;
import dev.tidemark.tsdb.append.Appender;
import dev.tidemark.tsdb.engine.Engine;
import dev.tidemark.tsdb.engine.EngineConfig;
import dev.tidemark.tsdb.time.ManualClock;
import io.opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest;
import io.opentelemetry.proto.common.v1.AnyValue;
import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.metrics.v1.AggregationTemporality;
import io.opentelemetry.proto.metrics.v1.Gauge;
import io.opentelemetry.proto.metrics.v1.Metric;
import io.opentelemetry.proto.metrics.v1.NumberDataPoint;
import io.opentelemetry.proto.metrics.v1.ResourceMetrics;
import io.opentelemetry.proto.metrics.v1.ScopeMetrics;
import io.opentelemetry.proto.metrics.v1.Sum;
import io.opentelemetry.proto.resource.v1.Resource;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;

/**
 * The in-place translation path at the scale of issue #22: {@code instances} resources of 100
 * streams each (the peer harness' shape: 64 CPU counters with {@code cpu} and {@code mode}
 * attributes, gauges and device counters; the instance is a resource attribute), one request per
 * instance and step, translated on one thread. Reports thread CPU nanoseconds per data point per
 * step, so the cost of finding a known stream among a million is visible without the network, gRPC
 * or a second core's noise. With {@code engine}, the points go into a real engine on RocksDB in a
 * temporary folder (the whole write path); with {@code noop}, into an appender that accepts
 * everything (the translator alone).
 *
 * <pre>
 * java -Xmx6g -cp benchmarks/target/benchmarks.jar dev.tidemark.benchmarks.TranslatorScaleHarness noop 10000 6
 * java -Xmx6g -Dcreate=true -cp benchmarks/target/benchmarks.jar dev.tidemark.benchmarks.TranslatorScaleHarness engine 2000 6
 * </pre>
 *
 * <p>With {@code -Dcreate=true} each step's instances are new, so every point creates its series
 * (the cost of a fleet's first export, warm after the first step).
 */
public final class TranslatorScaleHarness {
  private static final long SEC = 1_000_000_000L;
  private static final String[] MODES = {
    "idle", "user", "system", "iowait", "irq", "softirq", "steal", "nice"
  };

  private TranslatorScaleHarness() {}

  public static void main(String[] args) throws Exception {
    String mode = args.length > 0 ? args[0] : "noop";
    int instances = args.length > 1 ? Integer.parseInt(args[1]) : 10_000;
    int steps = args.length > 2 ? Integer.parseInt(args[2]) : 6;
    long t0Ms = (System.currentTimeMillis() / 3_600_000L) * 3_600_000L + 60_000L;
    ManualClock clock = new ManualClock(t0Ms);
    Path dir = null;
    RocksDbKvStore store = null;
    Engine engine = null;
    Appender appender;
    if (mode.equals("engine")) {
      dir = Files.createTempDirectory("tm-scale");
      store = RocksDbKvStore.open(dir, RocksDbConfig.defaults());
      engine = Engine.open(store, EngineConfig.builder().clock(clock).maxActiveSeries(0).build());
      appender = engine;
    } else {
      appender = new TranslatorBenchmark.NoOpAppender();
    }
    Translator translator =
        new Translator(
            appender,
            TranslatorConfig.builder().seriesCacheSize(instances * 100 + 1000).build(),
            clock);
    com.sun.management.ThreadMXBean mx =
        (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    long tid = Thread.currentThread().getId();
    byte[][] reqs = new byte[instances][];
    // With -Dcreate=true every step sends new instances (series creation at every step, warm
    // after the first); otherwise the same instances every step (known series after the first).
    boolean create = Boolean.getBoolean("create");
    for (int step = 0; step < steps; step++) {
      long tMs = t0Ms + step * 15_000L;
      for (int i = 0; i < instances; i++) {
        int instance = create ? step * instances + i : i;
        reqs[i] = request(instance, tMs * 1_000_000L, step).toByteArray();
      }
      clock.set(tMs + 1_000L);
      long cpu0 = mx.getCurrentThreadCpuTime();
      long alloc0 = mx.getThreadAllocatedBytes(tid);
      long rejected = 0;
      for (byte[] r : reqs) {
        rejected += translator.translate(r).rejectedDataPoints();
      }
      long cpu = mx.getCurrentThreadCpuTime() - cpu0;
      long alloc = mx.getThreadAllocatedBytes(tid) - alloc0;
      double points = instances * 100.0;
      System.gc();
      long used = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
      System.out.printf(
          Locale.ROOT,
          "%s step %d: %.0f ns/point (thread CPU), %.1f B/point allocated, rejected %d, heap"
              + " after GC %.0f MB%n",
          mode,
          step,
          cpu / points,
          alloc / points,
          rejected,
          used / 1e6);
    }
    if (engine != null) {
      engine.close();
      store.close();
      try (var w = Files.walk(dir)) {
        w.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
      }
    }
  }

  /** One instance's 100 points at {@code tNanos}. */
  static ExportMetricsServiceRequest request(int instance, long tNanos, int step) {
    String inst = String.format(Locale.ROOT, "node-%05d.prod.example:9100", instance);
    Resource res =
        Resource.newBuilder()
            .addAttributes(kv("service.name", "node"))
            .addAttributes(kv("service.instance.id", inst))
            .build();
    ScopeMetrics.Builder scope = ScopeMetrics.newBuilder();
    Sum.Builder cpu =
        Sum.newBuilder()
            .setIsMonotonic(true)
            .setAggregationTemporality(AggregationTemporality.AGGREGATION_TEMPORALITY_CUMULATIVE);
    for (int c = 0; c < 8; c++) {
      for (String m : MODES) {
        cpu.addDataPoints(
            NumberDataPoint.newBuilder()
                .setStartTimeUnixNano(tNanos - 3600 * SEC)
                .setTimeUnixNano(tNanos)
                .addAttributes(kv("cpu", Integer.toString(c)))
                .addAttributes(kv("mode", m))
                .setAsDouble(1000.0 + step * 15.0 * (c + 1) / 8 + instance % 97));
      }
    }
    scope.addMetrics(Metric.newBuilder().setName("node_cpu_seconds_total").setSum(cpu));
    for (int g = 0; g < 20; g++) {
      scope.addMetrics(
          Metric.newBuilder()
              .setName("node_memory_part" + g + "_bytes")
              .setGauge(
                  Gauge.newBuilder()
                      .addDataPoints(
                          NumberDataPoint.newBuilder()
                              .setTimeUnixNano(tNanos)
                              .setAsDouble(
                                  4096.0 * (1000 + (instance * 31 + step * 7 + g) % 500)))));
    }
    for (String dev : new String[] {"eth0", "eth1"}) {
      Sum.Builder net =
          Sum.newBuilder()
              .setIsMonotonic(true)
              .setAggregationTemporality(AggregationTemporality.AGGREGATION_TEMPORALITY_CUMULATIVE);
      for (int k = 0; k < 8; k++) {
        net.addDataPoints(
            NumberDataPoint.newBuilder()
                .setStartTimeUnixNano(tNanos - 3600 * SEC)
                .setTimeUnixNano(tNanos)
                .addAttributes(kv("device", dev))
                .addAttributes(kv("direction", k % 2 == 0 ? "receive" : "transmit"))
                .addAttributes(kv("kind", "k" + k / 2))
                .setAsInt(1_000_000L + step * 1500L * (k + 1) + instance));
      }
      scope.addMetrics(Metric.newBuilder().setName("node_network_total").setSum(net));
    }
    return ExportMetricsServiceRequest.newBuilder()
        .addResourceMetrics(ResourceMetrics.newBuilder().setResource(res).addScopeMetrics(scope))
        .build();
  }

  private static KeyValue kv(String k, String v) {
    return KeyValue.newBuilder()
        .setKey(k)
        .setValue(AnyValue.newBuilder().setStringValue(v))
        .build();
  }
}
