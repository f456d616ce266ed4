package dev.tidemark.benchmarks;

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
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;

/**
 * The synthetic node-exporter-like dataset of {@link OtlpLoadGenerator}, pre-encoded as OTLP
 * ExportMetricsServiceRequest bodies.
 *
 * <p>Each instance is one {@code ResourceMetrics} ({@code service.name=node}, {@code
 * service.instance.id=host-NNNN:9100}, empty scope) with {@value #SERIES_PER_INSTANCE} series in 28
 * metric families: CPU seconds by cpu and mode, memory, network and disk counters, filesystem
 * gauges, load, processes, file descriptors. Counters are monotonic cumulative Sums named without
 * {@code _total} (the translation adds it), gauges are Gauges; units are empty. Every point carries
 * six host attributes (env, region, zone, rack, os, arch) plus its family's own (cpu, mode, device,
 * fstype, mountpoint), so a translated series has 8 to 11 labels, about 10 on average. Values are
 * deterministic functions of (instance, series, step): counters grow by realistic increments,
 * gauges wander, sizes stay constant.
 *
 * <p>The data is cut into groups of {@code instancesPerRequest} consecutive instances; one request
 * holds one group for {@code stepsPerRequest} consecutive steps, so every series appears in exactly
 * one group and a group's requests are in time order.
 */
final class OtlpLoadDataset {

  static final int SERIES_PER_INSTANCE = 100;

  /** One series of an instance: its OTLP metric, point attributes and value model. */
  record SeriesDef(
      String metric, boolean counter, List<KeyValue> attributes, int model, double scale) {}

  /** Value models. */
  static final int CONST = 0;

  static final int COUNTER_INT = 1;
  static final int COUNTER_FRAC = 2;
  static final int GAUGE_INT = 3;
  static final int GAUGE_FRAC = 4;

  final int instances;

  /** Number of the first instance (a warm-up dataset uses instances the measured one does not). */
  final int instanceBase;

  final int steps;
  final long startMs;
  final long stepMs;
  final int instancesPerRequest;
  final int stepsPerRequest;
  final List<SeriesDef> defs;

  /** Families in order: metric name to the indexes of its series in {@link #defs}. */
  final Map<String, int[]> families;

  OtlpLoadDataset(
      int instances,
      int steps,
      long startMs,
      long stepMs,
      int instancesPerRequest,
      int stepsPerRequest) {
    this(0, instances, steps, startMs, stepMs, instancesPerRequest, stepsPerRequest);
  }

  OtlpLoadDataset(
      int instanceBase,
      int instances,
      int steps,
      long startMs,
      long stepMs,
      int instancesPerRequest,
      int stepsPerRequest) {
    this.instanceBase = instanceBase;
    if (instances % instancesPerRequest != 0) {
      throw new IllegalArgumentException("instances must be a multiple of instances per request");
    }
    this.instances = instances;
    this.steps = steps;
    this.startMs = startMs;
    this.stepMs = stepMs;
    this.instancesPerRequest = instancesPerRequest;
    this.stepsPerRequest = stepsPerRequest;
    this.defs = seriesDefs();
    if (defs.size() != SERIES_PER_INSTANCE) {
      throw new IllegalStateException("series per instance: " + defs.size());
    }
    Map<String, List<Integer>> fam = new LinkedHashMap<>();
    for (int i = 0; i < defs.size(); i++) {
      fam.computeIfAbsent(defs.get(i).metric(), k -> new ArrayList<>()).add(i);
    }
    this.families = new LinkedHashMap<>();
    fam.forEach((k, v) -> families.put(k, v.stream().mapToInt(Integer::intValue).toArray()));
  }

  long series() {
    return (long) instances * SERIES_PER_INSTANCE;
  }

  long samples() {
    return series() * steps;
  }

  int groups() {
    return instances / instancesPerRequest;
  }

  int stepChunks() {
    return (steps + stepsPerRequest - 1) / stepsPerRequest;
  }

  /** Points in the request of (group, chunk). */
  int points(int chunk) {
    int s0 = chunk * stepsPerRequest;
    int n = Math.min(stepsPerRequest, steps - s0);
    return n * instancesPerRequest * SERIES_PER_INSTANCE;
  }

  /**
   * Encodes every request, in (chunk, group) order, i.e. time order; index = chunk * groups() +
   * group. Built in parallel.
   */
  byte[][] encodeAll() {
    int g = groups();
    byte[][] out = new byte[stepChunks() * g][];
    IntStream.range(0, out.length)
        .parallel()
        .forEach(i -> out[i] = encode(i / g, i % g).toByteArray());
    return out;
  }

  ExportMetricsServiceRequest encode(int chunk, int group) {
    int s0 = chunk * stepsPerRequest;
    int s1 = Math.min(steps, s0 + stepsPerRequest);
    ExportMetricsServiceRequest.Builder req = ExportMetricsServiceRequest.newBuilder();
    for (int inst = instanceBase + group * instancesPerRequest;
        inst < instanceBase + (group + 1) * instancesPerRequest;
        inst++) {
      long bootNanos = (startMs - 86_400_000L - (mix(inst, -1, 0) & 0xffffff) * 10L) * 1_000_000L;
      ScopeMetrics.Builder scope = ScopeMetrics.newBuilder();
      for (Map.Entry<String, int[]> f : families.entrySet()) {
        SeriesDef first = defs.get(f.getValue()[0]);
        List<NumberDataPoint> points = new ArrayList<>(f.getValue().length * (s1 - s0));
        for (int step = s0; step < s1; step++) {
          long tNanos = (startMs + step * stepMs) * 1_000_000L;
          for (int si : f.getValue()) {
            SeriesDef d = defs.get(si);
            NumberDataPoint.Builder p =
                NumberDataPoint.newBuilder()
                    .addAllAttributes(d.attributes())
                    .setTimeUnixNano(tNanos)
                    .setAsDouble(value(inst, si, step));
            if (d.counter()) {
              p.setStartTimeUnixNano(bootNanos);
            }
            points.add(p.build());
          }
        }
        Metric.Builder m = Metric.newBuilder().setName(first.metric());
        if (first.counter()) {
          m.setSum(
              Sum.newBuilder()
                  .setIsMonotonic(true)
                  .setAggregationTemporality(
                      AggregationTemporality.AGGREGATION_TEMPORALITY_CUMULATIVE)
                  .addAllDataPoints(points));
        } else {
          m.setGauge(Gauge.newBuilder().addAllDataPoints(points));
        }
        scope.addMetrics(m);
      }
      req.addResourceMetrics(
          ResourceMetrics.newBuilder()
              .setResource(
                  Resource.newBuilder()
                      .addAttributes(kv("service.name", "node"))
                      .addAttributes(
                          kv("service.instance.id", String.format("host-%04d:9100", inst))))
              .addScopeMetrics(scope));
    }
    return req.build();
  }

  /** The value of series {@code si} of instance {@code inst} at {@code step}. */
  double value(int inst, int si, int step) {
    SeriesDef d = defs.get(si);
    long base = mix(inst, si, 0);
    double scale = d.scale();
    switch (d.model()) {
      case CONST:
        return Math.floor((1 + (base & 0xff) / 256.0) * scale);
      case COUNTER_INT:
        {
          // increments of 0..2*scale per step, integer
          double start = Math.floor((base & 0xfffff) * scale);
          return start + cumulative(inst, si, step, scale, true);
        }
      case COUNTER_FRAC:
        return Math.round(((base & 0xfffff) + cumulative(inst, si, step, scale, false)) * 100)
            / 100.0;
      case GAUGE_INT:
        {
          double mid = (1 + (base & 0xff) / 256.0) * scale;
          long n = mix(inst, si, step) & 0xffff;
          return Math.floor(mid * (0.9 + 0.2 * n / 65536.0) / 4096) * 4096;
        }
      default:
        {
          double mid = (1 + (base & 0xff) / 256.0) * scale;
          long n = mix(inst, si, step) & 0xffff;
          return Math.round(mid * (0.5 + n / 65536.0) * 100) / 100.0;
        }
    }
  }

  /**
   * Sum over steps 0..step of a per-step increment: a smooth per-series rate plus bounded noise, in
   * closed form (rate * step + a bounded wiggle that never decreases the total).
   */
  private static double cumulative(int inst, int si, int step, double scale, boolean integer) {
    long r = mix(inst, si, 1);
    double rate = (0.5 + (r & 0xff) / 256.0) * scale; // per step
    long n = mix(inst, si, step + 7) & 0xffff;
    double wiggle = rate * 0.4 * n / 65536.0; // < rate, so the total is monotonic
    double v = rate * step + wiggle;
    return integer ? Math.floor(v) : v;
  }

  static long mix(int a, int b, int c) {
    long x = a * 0x9E3779B97F4A7C15L + b * 0xC2B2AE3D27D4EB4FL + c * 0x165667B19E3779F9L;
    x ^= x >>> 33;
    x *= 0xff51afd7ed558ccdL;
    x ^= x >>> 33;
    x *= 0xc4ceb9fe1a85ec53L;
    x ^= x >>> 33;
    return x & Long.MAX_VALUE;
  }

  static KeyValue kv(String k, String v) {
    return KeyValue.newBuilder()
        .setKey(k)
        .setValue(AnyValue.newBuilder().setStringValue(v))
        .build();
  }

  private static List<SeriesDef> seriesDefs() {
    List<KeyValue> host =
        List.of(
            kv("env", "production"),
            kv("region", "eu-west-1"),
            kv("zone", "eu-west-1b"),
            kv("rack", "r12"),
            kv("os", "linux"),
            kv("arch", "amd64"));
    List<SeriesDef> out = new ArrayList<>();
    String[] modes = {"idle", "iowait", "irq", "nice", "softirq", "steal", "system", "user"};
    for (int cpu = 0; cpu < 4; cpu++) {
      for (String mode : modes) {
        out.add(
            def(
                "node_cpu_seconds",
                true,
                host,
                COUNTER_FRAC,
                mode.equals("idle") ? 14 : 1.5,
                "cpu",
                String.valueOf(cpu),
                "mode",
                mode));
      }
    }
    for (String m :
        new String[] {
          "MemTotal",
          "MemFree",
          "MemAvailable",
          "Buffers",
          "Cached",
          "SwapTotal",
          "SwapFree",
          "Active",
          "Inactive",
          "Dirty"
        }) {
      boolean fixed = m.endsWith("Total");
      out.add(
          def(
              "node_memory_" + m + "_bytes",
              false,
              host,
              fixed ? CONST : GAUGE_INT,
              fixed ? 8e9 : 1e9));
    }
    for (String dir : new String[] {"receive", "transmit"}) {
      for (String what : new String[] {"bytes", "packets", "errs", "drop"}) {
        for (String dev : new String[] {"eth0", "eth1", "lo"}) {
          double scale = what.equals("bytes") ? 2e6 : what.equals("packets") ? 3e3 : 0.02;
          out.add(
              def(
                  "node_network_" + dir + "_" + what,
                  true,
                  host,
                  COUNTER_INT,
                  scale,
                  "device",
                  dev));
        }
      }
    }
    String[][] fs = {
      {"/dev/sda1", "ext4", "/"}, {"/dev/sdb1", "xfs", "/data"}, {"tmpfs", "tmpfs", "/run"}
    };
    for (String what : new String[] {"size_bytes", "avail_bytes", "free_bytes", "files"}) {
      for (String[] f : fs) {
        boolean fixed = what.startsWith("size") || what.equals("files");
        out.add(
            def(
                "node_filesystem_" + what,
                false,
                host,
                fixed ? CONST : GAUGE_INT,
                fixed ? 1e11 : 5e10,
                "device",
                f[0],
                "fstype",
                f[1],
                "mountpoint",
                f[2]));
      }
    }
    for (String what :
        new String[] {
          "reads_completed", "writes_completed", "read_bytes", "written_bytes", "io_time_seconds"
        }) {
      for (String dev : new String[] {"sda", "sdb"}) {
        double scale = what.endsWith("bytes") ? 4e5 : what.endsWith("seconds") ? 0.3 : 50;
        out.add(
            def(
                "node_disk_" + what,
                true,
                host,
                what.endsWith("seconds") ? COUNTER_FRAC : COUNTER_INT,
                scale,
                "device",
                dev));
      }
    }
    for (String l : new String[] {"node_load1", "node_load5", "node_load15"}) {
      out.add(def(l, false, host, GAUGE_FRAC, 1.2));
    }
    for (String c : new String[] {"node_context_switches", "node_intr", "node_forks"}) {
      out.add(def(c, true, host, COUNTER_INT, c.equals("node_forks") ? 20 : 4e4));
    }
    out.add(def("node_procs_running", false, host, GAUGE_FRAC, 3));
    out.add(def("node_procs_blocked", false, host, GAUGE_FRAC, 0.5));
    out.add(def("node_boot_time_seconds", false, host, CONST, 1.7e9));
    out.add(def("node_filefd_allocated", false, host, GAUGE_FRAC, 3000));
    out.add(def("node_filefd_maximum", false, host, CONST, 9.2e18));
    out.add(def("node_nf_conntrack_entries", false, host, GAUGE_FRAC, 500));
    return out;
  }

  private static SeriesDef def(
      String metric,
      boolean counter,
      List<KeyValue> host,
      int model,
      double scale,
      String... attrs) {
    List<KeyValue> kvs = new ArrayList<>();
    for (int i = 0; i < attrs.length; i += 2) {
      kvs.add(kv(attrs[i], attrs[i + 1]));
    }
    kvs.addAll(host);
    return new SeriesDef(metric, counter, List.copyOf(kvs), model, scale);
  }
}
