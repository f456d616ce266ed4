package dev.tidemark.it;

import static org.assertj.core.api.Assertions.assertThat;

import dev.tidemark.it.StoredData.Sample;
import dev.tidemark.tsdb.model.Labels;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.metrics.DoubleCounter;
import io.opentelemetry.api.metrics.DoubleGauge;
import io.opentelemetry.api.metrics.DoubleHistogram;
import io.opentelemetry.api.metrics.LongCounter;
import io.opentelemetry.api.metrics.LongUpDownCounter;
import io.opentelemetry.api.metrics.Meter;
import io.opentelemetry.exporter.otlp.http.metrics.OtlpHttpMetricExporter;
import io.opentelemetry.exporter.otlp.metrics.OtlpGrpcMetricExporter;
import io.opentelemetry.sdk.common.Clock;
import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.metrics.Aggregation;
import io.opentelemetry.sdk.metrics.InstrumentSelector;
import io.opentelemetry.sdk.metrics.InstrumentType;
import io.opentelemetry.sdk.metrics.SdkMeterProvider;
import io.opentelemetry.sdk.metrics.View;
import io.opentelemetry.sdk.metrics.data.AggregationTemporality;
import io.opentelemetry.sdk.metrics.data.MetricData;
import io.opentelemetry.sdk.metrics.export.AggregationTemporalitySelector;
import io.opentelemetry.sdk.metrics.export.CollectionRegistration;
import io.opentelemetry.sdk.metrics.export.MetricExporter;
import io.opentelemetry.sdk.metrics.export.MetricReader;
import io.opentelemetry.sdk.resources.Resource;
import java.math.BigDecimal;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * The real OpenTelemetry Java SDK ({@code opentelemetry-sdk} + {@code opentelemetry-exporter-otlp})
 * exports to a server process over OTLP/gRPC and OTLP/http-protobuf, with CUMULATIVE and with DELTA
 * temporality ({@link AggregationTemporalitySelector#deltaPreferred()}); after a clean stop, every
 * series is read back from the data folder with its exact name, labels and values, and nothing else
 * is stored.
 *
 * <p>Four pipelines (gRPC or HTTP × cumulative or delta), each an {@link SdkMeterProvider} with its
 * own {@code service.instance.id}, record the same measurements in four collection cycles; the
 * server is stopped with SIGTERM and restarted on its folder before the fourth (its samples go into
 * the hour bucket the stop sealed, which reopens). The SDK runs on a controlled {@link Clock} so
 * point timestamps are known; a reader we drive ({@link ManualReader}) collects and we hand each
 * collection to the exporter, checking that the export succeeded. Expected series (contract {@code
 * docs/otlp-translation.md}): counter {@code requests_total} and {@code cpu_time_seconds_total},
 * up-down counter {@code queue_size}, gauges {@code temperature_celsius} and {@code
 * memory_utilization_ratio}, explicit histogram {@code latency_seconds_bucket{le}/_sum/_count},
 * exponential histogram converted to classic buckets at scale 2 ({@code
 * payload_size_bytes_bucket{le}/_sum/_count}), and {@code target_info}; labels {@code
 * job="shop/checkout"}, {@code instance}, {@code otel_scope_name}, {@code otel_scope_version} and
 * the sanitized attributes; delta points accumulated into the same cumulative values as the
 * cumulative pipelines (a delta cycle without measurements of a series exports no point, so that
 * series has no sample at that time; after the restart, which loses the accumulation state, delta
 * streams start again from zero: a counter reset). {@code /metrics} must count every point accepted
 * and none rejected.
 */
@ExtendWith(ServerLogs.class)
class OtelSdkIT {
  private static final String SCOPE = "dev.tidemark.it.otel";
  private static final String SCOPE_VERSION = "1.2.3";
  private static final String JOB = "shop/checkout";
  private static final int CYCLES = 4;

  /** The server is stopped (SIGTERM) and restarted on its folder before this cycle (0-based). */
  private static final int RESTART_BEFORE = 3;

  private static final long STEP_NANOS = TimeUnit.SECONDS.toNanos(15);

  private static final AttributeKey<String> METHOD = AttributeKey.stringKey("http.request.method");
  private static final AttributeKey<String> QUEUE = AttributeKey.stringKey("queue");
  private static final AttributeKey<String> ROOM = AttributeKey.stringKey("room");
  private static final AttributeKey<String> ROUTE = AttributeKey.stringKey("http.route");

  // Per-cycle measurements (index 0 = cycle 1). Binary fractions only: delta sums added up by the
  // server equal the SDK's cumulative sums bit for bit.
  private static final long[] GET_ADDS = {1, 3, 2, 4};
  private static final long[] POST_ADDS = {5, 0, 4, 1}; // 0: no measurement in cycle 2
  private static final double[] CPU_ADDS = {0.25, 1.5, 0.125, 0.5};
  private static final long[] QUEUE_ADDS = {5, -2, 3, -4};
  private static final double[] TEMPERATURES = {20.5, 21.25, 19.75, 22};
  private static final double[] MEMORY = {0.25, 0.5, 0.375, 0.125};
  private static final double[] LATENCY_BOUNDS = {0.25, 0.5, 1, 2.5};
  private static final double[][] LATENCIES = {
    {0.125, 0.5, 3}, {0.25, 1.5, 0.75}, {2.5, 10, 0.0625}, {0.5, 0.125}
  };

  /** Exponential histogram values; 0.75 in cycle 3 widens the bucket range downwards. */
  private static final double[][] PAYLOADS = {
    {0, 1, 3, 1000, 64}, {2, 5, 100}, {7, 10, 0.75, 0}, {3, 50}
  };

  /** The server's default target scale of the classic conversion. */
  private static final int TARGET_SCALE = 2;

  @TempDir Path tmp;

  @Test
  void sdkExportsOverGrpcAndHttpWithBothTemporalitiesAreStoredExactly() throws Exception {
    long t0Nanos =
        TimeUnit.SECONDS.toNanos(Instant.now().minus(Duration.ofMinutes(10)).getEpochSecond());
    ServerProcess server = ServerProcess.start(tmp.resolve("data"));
    Map<Labels, List<Sample>> expected = new TreeMap<>();
    List<Pipeline> pipelines = new ArrayList<>();
    try {
      for (String protocol : List.of("grpc", "http")) {
        for (boolean delta : new boolean[] {false, true}) {
          pipelines.add(new Pipeline(protocol, delta, t0Nanos));
          expect(expected, pipelines.get(pipelines.size() - 1).instance, delta, t0Nanos);
        }
      }
      for (int c = 0; c < CYCLES; c++) {
        if (c == RESTART_BEFORE) {
          // 8 points per cumulative cycle; the delta pipelines skip POST in cycle 2.
          checkSelfMetrics(server, 8 * c + 8 * c - 1);
          assertThat(server.stop()).as("exit code after SIGTERM").isZero();
          server = server.restart();
        }
        for (Pipeline p : pipelines) {
          p.cycle(c, server);
        }
      }
      checkSelfMetrics(server, 8 * (CYCLES - RESTART_BEFORE) * 2);
      // read back through the Prometheus HTTP API, as Grafana would
      OtelSdkQueries.check(server, expected, (t0Nanos + CYCLES * STEP_NANOS) / 1_000_000);
    } finally {
      for (Pipeline p : pipelines) {
        p.close();
      }
      assertThat(server.stop()).as("exit code after SIGTERM").isZero();
    }

    StoredData stored = StoredData.read(server.dataDir());
    Map<Labels, List<Sample>> actual = canonicalExponentialBounds(stored.all());
    Map<Labels, List<Sample>> want = canonicalExponentialBounds(expected);
    System.out.println("OtelSdkIT read back " + stored);
    assertThat(actual.keySet())
        .as("stored series")
        .containsExactlyInAnyOrderElementsOf(want.keySet());
    for (Map.Entry<Labels, List<Sample>> e : want.entrySet()) {
      assertThat(actual.get(e.getKey()))
          .as("samples of %s", e.getKey())
          .containsExactlyElementsOf(e.getValue());
    }
  }

  /** No rejected points, and {@code perProtocol} accepted points per protocol, per /metrics. */
  private static void checkSelfMetrics(ServerProcess server, int perProtocol) throws Exception {
    String metrics = server.apiGet("/metrics");
    String listing = grep(metrics, "tidemark_otlp_data_points");
    assertThat(counter(metrics, "tidemark_otlp_data_points_rejected_total", ""))
        .as("rejected points per /metrics:\n%s", listing)
        .isZero();
    assertThat(counter(metrics, "tidemark_otlp_data_points_accepted_total", "protocol=\"grpc\""))
        .as("accepted gRPC points per /metrics:\n%s", listing)
        .isEqualTo(perProtocol);
    assertThat(counter(metrics, "tidemark_otlp_data_points_accepted_total", "protocol=\"http\""))
        .as("accepted HTTP points per /metrics:\n%s", listing)
        .isEqualTo(perProtocol);
  }

  // ------------------------------------------------------------------ the SDK side

  private static MetricExporter exporter(ServerProcess server, String protocol, boolean delta) {
    AggregationTemporalitySelector temporality =
        delta
            ? AggregationTemporalitySelector.deltaPreferred()
            : AggregationTemporalitySelector.alwaysCumulative();
    if (protocol.equals("grpc")) {
      return OtlpGrpcMetricExporter.builder()
          .setEndpoint("http://127.0.0.1:" + server.grpcPort())
          .setTimeout(Duration.ofSeconds(20))
          .setAggregationTemporalitySelector(temporality)
          .setCompression(delta ? "none" : "gzip")
          .build();
    }
    return OtlpHttpMetricExporter.builder()
        .setEndpoint(server.otlpHttpUrl())
        .setTimeout(Duration.ofSeconds(20))
        .setAggregationTemporalitySelector(temporality)
        .setCompression(delta ? "gzip" : "none")
        .build();
  }

  /**
   * One SDK meter provider with its instruments, clock and reader; the exporter is built per server
   * process (ports change on restart), the provider lives across the restart.
   */
  private static final class Pipeline implements AutoCloseable {
    final String protocol;
    final boolean delta;
    final String instance;
    final long t0Nanos;
    final ManualClock clock;
    final ManualReader reader;
    final SdkMeterProvider provider;
    final LongCounter requests;
    final DoubleCounter cpu;
    final LongUpDownCounter queue;
    final DoubleGauge temperature;
    final double[] memory = new double[1];
    final DoubleHistogram latency;
    final DoubleHistogram payload;
    MetricExporter exporter;
    ServerProcess exporterServer;

    Pipeline(String protocol, boolean delta, long t0Nanos) {
      this.protocol = protocol;
      this.delta = delta;
      this.instance = protocol + "-" + (delta ? "delta" : "cumulative");
      this.t0Nanos = t0Nanos;
      clock = new ManualClock(t0Nanos);
      reader =
          new ManualReader(
              delta
                  ? AggregationTemporalitySelector.deltaPreferred()
                  : AggregationTemporalitySelector.alwaysCumulative());
      Resource resource =
          Resource.create(
              Attributes.builder()
                  .put("service.name", "checkout")
                  .put("service.namespace", "shop")
                  .put("service.instance.id", instance)
                  .put("deployment.environment.name", "it")
                  .build());
      provider =
          SdkMeterProvider.builder()
              .setClock(clock)
              .setResource(resource)
              .registerMetricReader(reader)
              .registerView(
                  InstrumentSelector.builder().setName("payload.size").build(),
                  View.builder()
                      .setAggregation(Aggregation.base2ExponentialBucketHistogram())
                      .build())
              .build();
      Meter meter = provider.meterBuilder(SCOPE).setInstrumentationVersion(SCOPE_VERSION).build();
      requests = meter.counterBuilder("requests").build();
      cpu = meter.counterBuilder("cpu.time").setUnit("s").ofDoubles().build();
      queue = meter.upDownCounterBuilder("queue.size").setUnit("{item}").build();
      temperature = meter.gaugeBuilder("temperature").setUnit("Cel").build();
      meter
          .gaugeBuilder("memory.utilization")
          .setUnit("1")
          .buildWithCallback(m -> m.record(memory[0]));
      latency =
          meter
              .histogramBuilder("latency")
              .setUnit("s")
              .setExplicitBucketBoundariesAdvice(boxed(LATENCY_BOUNDS))
              .build();
      payload = meter.histogramBuilder("payload.size").setUnit("By").build();
    }

    /**
     * Records cycle {@code c}'s measurements, collects at t0 + (c+1) * 15 s and exports to {@code
     * server}.
     */
    void cycle(int c, ServerProcess server) {
      if (exporterServer != server) {
        if (exporter != null) {
          exporter.shutdown().join(10, TimeUnit.SECONDS);
        }
        exporter = exporter(server, protocol, delta);
        exporterServer = server;
      }
      requests.add(GET_ADDS[c], Attributes.of(METHOD, "GET"));
      if (POST_ADDS[c] != 0) {
        requests.add(POST_ADDS[c], Attributes.of(METHOD, "POST"));
      }
      cpu.add(CPU_ADDS[c]);
      queue.add(QUEUE_ADDS[c], Attributes.of(QUEUE, "orders"));
      temperature.set(TEMPERATURES[c], Attributes.of(ROOM, "lab"));
      memory[0] = MEMORY[c];
      for (double v : LATENCIES[c]) {
        latency.record(v, Attributes.of(ROUTE, "/cart"));
      }
      for (double v : PAYLOADS[c]) {
        payload.record(v);
      }
      clock.set(t0Nanos + (c + 1) * STEP_NANOS);
      Collection<MetricData> collected = reader.collect();
      assertThat(collected).as("%s cycle %d collection", instance, c + 1).hasSize(7);
      CompletableResultCode result = exporter.export(collected).join(30, TimeUnit.SECONDS);
      assertThat(result.isSuccess())
          .as("%s cycle %d export succeeded (%s)", instance, c + 1, result.getFailureThrowable())
          .isTrue();
    }

    @Override
    public void close() {
      provider.shutdown().join(10, TimeUnit.SECONDS);
      if (exporter != null) {
        exporter.shutdown().join(10, TimeUnit.SECONDS);
      }
    }
  }

  private static List<Double> boxed(double[] a) {
    List<Double> out = new ArrayList<>();
    for (double d : a) {
      out.add(d);
    }
    return out;
  }

  /** The SDK's clock, set by the test: collections happen at known instants. */
  private static final class ManualClock implements Clock {
    private final AtomicLong nanos;

    ManualClock(long startNanos) {
      nanos = new AtomicLong(startNanos);
    }

    void set(long epochNanos) {
      nanos.set(epochNanos);
    }

    @Override
    public long now() {
      return nanos.get();
    }

    @Override
    public long nanoTime() {
      return nanos.get();
    }
  }

  /** A reader that collects only when asked, with the exporters' temporality. */
  private static final class ManualReader implements MetricReader {
    private final AggregationTemporalitySelector temporality;
    private volatile CollectionRegistration registration = CollectionRegistration.noop();

    ManualReader(AggregationTemporalitySelector temporality) {
      this.temporality = temporality;
    }

    @Override
    public void register(CollectionRegistration registration) {
      this.registration = registration;
    }

    Collection<MetricData> collect() {
      return registration.collectAllMetrics();
    }

    @Override
    public AggregationTemporality getAggregationTemporality(InstrumentType instrumentType) {
      return temporality.getAggregationTemporality(instrumentType);
    }

    @Override
    public CompletableResultCode forceFlush() {
      return CompletableResultCode.ofSuccess();
    }

    @Override
    public CompletableResultCode shutdown() {
      return CompletableResultCode.ofSuccess();
    }
  }

  // ------------------------------------------------------------------ the expected series

  private static void expect(
      Map<Labels, List<Sample>> out, String instance, boolean delta, long t0Nanos) {
    String[] base = {
      "job",
      JOB,
      "instance",
      instance,
      "otel_scope_name",
      SCOPE,
      "otel_scope_version",
      SCOPE_VERSION
    };
    long get = 0;
    long post = 0;
    double cpu = 0;
    long queue = 0;
    long[] latencyBuckets = new long[LATENCY_BOUNDS.length + 1];
    double latencySum = 0;
    long latencyCount = 0;
    TreeMap<Integer, Long> payloadBuckets = new TreeMap<>();
    long payloadZero = 0;
    double payloadSum = 0;
    long payloadCount = 0;
    for (int c = 0; c < CYCLES; c++) {
      long t = (t0Nanos + (c + 1) * STEP_NANOS) / 1_000_000;
      if (delta && c == RESTART_BEFORE) {
        // The restarted server has no accumulation state: delta streams start again from zero (a
        // counter reset, contract §3.7). The up-down counter stays cumulative under deltaPreferred.
        get = 0;
        post = 0;
        cpu = 0;
        java.util.Arrays.fill(latencyBuckets, 0);
        latencySum = 0;
        latencyCount = 0;
        payloadBuckets.clear();
        payloadZero = 0;
        payloadSum = 0;
        payloadCount = 0;
      }
      get += GET_ADDS[c];
      post += POST_ADDS[c];
      cpu += CPU_ADDS[c];
      queue += QUEUE_ADDS[c];
      add(out, labels(base, "requests_total", "http_request_method", "GET"), t, get);
      if (!(delta && POST_ADDS[c] == 0)) {
        add(out, labels(base, "requests_total", "http_request_method", "POST"), t, post);
      }
      add(out, labels(base, "cpu_time_seconds_total"), t, cpu);
      add(out, labels(base, "queue_size", "queue", "orders"), t, queue);
      add(out, labels(base, "temperature_celsius", "room", "lab"), t, TEMPERATURES[c]);
      add(out, labels(base, "memory_utilization_ratio"), t, MEMORY[c]);

      for (double v : LATENCIES[c]) {
        int i = 0;
        while (i < LATENCY_BOUNDS.length && v > LATENCY_BOUNDS[i]) {
          i++;
        }
        latencyBuckets[i]++;
        latencySum += v;
        latencyCount++;
      }
      long cum = 0;
      for (int i = 0; i < LATENCY_BOUNDS.length; i++) {
        cum += latencyBuckets[i];
        add(
            out,
            labels(
                base,
                "latency_seconds_bucket",
                "http_route",
                "/cart",
                "le",
                plain(LATENCY_BOUNDS[i])),
            t,
            cum);
      }
      add(
          out,
          labels(base, "latency_seconds_bucket", "http_route", "/cart", "le", "+Inf"),
          t,
          latencyCount);
      add(out, labels(base, "latency_seconds_sum", "http_route", "/cart"), t, latencySum);
      add(out, labels(base, "latency_seconds_count", "http_route", "/cart"), t, latencyCount);

      for (double v : PAYLOADS[c]) {
        if (v == 0) {
          payloadZero++;
        } else {
          payloadBuckets.merge(index(v), 1L, Long::sum);
        }
        payloadSum += v;
        payloadCount++;
      }
      // Classic conversion: le="0" (zero bucket), then every index from the lowest to the highest
      // seen so far (contiguous), le = base^(k+1); +Inf = count.
      cum = payloadZero;
      add(out, labels(base, "payload_size_bytes_bucket", "le", "0"), t, cum);
      for (int k = payloadBuckets.firstKey(); k <= payloadBuckets.lastKey(); k++) {
        cum += payloadBuckets.getOrDefault(k, 0L);
        add(out, labels(base, "payload_size_bytes_bucket", "le", expBound(k + 1)), t, cum);
      }
      add(out, labels(base, "payload_size_bytes_bucket", "le", "+Inf"), t, payloadCount);
      add(out, labels(base, "payload_size_bytes_sum"), t, payloadSum);
      add(out, labels(base, "payload_size_bytes_count"), t, payloadCount);

      add(
          out,
          Labels.of(
              "__name__",
              "target_info",
              "job",
              JOB,
              "instance",
              instance,
              "deployment_environment_name",
              "it"),
          t,
          1);
    }
  }

  private static Labels labels(String[] base, String name, String... more) {
    Labels.Builder b = Labels.builder().add(Labels.METRIC_NAME, name);
    for (int i = 0; i < base.length; i += 2) {
      b.add(base[i], base[i + 1]);
    }
    for (int i = 0; i < more.length; i += 2) {
      b.add(more[i], more[i + 1]);
    }
    return b.build();
  }

  private static void add(Map<Labels, List<Sample>> out, Labels l, long t, double v) {
    out.computeIfAbsent(l, k -> new ArrayList<>()).add(Sample.of(t, v));
  }

  /** Go's {@code FormatFloat(v, 'f', -1, 64)} for the short binary fractions used here. */
  private static String plain(double v) {
    return new BigDecimal(Double.toString(v)).stripTrailingZeros().toPlainString();
  }

  /** The scale-2 bucket index k of v > 0: base^k < v <= base^(k+1), base = 2^(1/4). */
  private static int index(double v) {
    int exponent = Math.getExponent(v);
    if (v == Math.scalb(1.0, exponent)) {
      return (exponent << TARGET_SCALE) - 1; // exact power of two: upper-inclusive
    }
    double x = Math.log(v) / Math.log(2) * (1 << TARGET_SCALE);
    assertThat(Math.abs(x - Math.rint(x)))
        .as("test value %s must not sit on a bucket bound", v)
        .isGreaterThan(1e-6);
    return (int) Math.ceil(x) - 1;
  }

  /**
   * The expected {@code le} of upper bound {@code base^j}: exact text for powers of two, else a
   * placeholder {@code ~j} that {@link #canonicalExponentialBounds} also produces for a stored
   * {@code le} within 1e-12 of {@code 2^(j/4)}.
   */
  private static String expBound(int j) {
    if (Math.floorMod(j, 1 << TARGET_SCALE) == 0) {
      return plain(Math.scalb(1.0, Math.floorDiv(j, 1 << TARGET_SCALE)));
    }
    return "~" + j;
  }

  /**
   * Rewrites the {@code le} of {@code payload_size_bytes_bucket} series that is not a power of two
   * into {@code ~j} when it is within 1e-12 (relative) of {@code 2^(j/4)} and written in plain
   * decimal notation (Go's 'f' format: no exponent, no trailing zeros); other labels unchanged.
   */
  private static Map<Labels, List<Sample>> canonicalExponentialBounds(
      Map<Labels, List<Sample>> in) {
    Map<Labels, List<Sample>> out = new TreeMap<>();
    in.forEach(
        (l, samples) -> {
          String le = l.get("le");
          if ("payload_size_bytes_bucket".equals(l.metricName())
              && le != null
              && !le.equals("+Inf")
              && !le.startsWith("~")) {
            double d = Double.parseDouble(le);
            double j = Math.log(d) / Math.log(2) * (1 << TARGET_SCALE);
            int jr = (int) Math.rint(j);
            double bound = Math.pow(2, jr / (double) (1 << TARGET_SCALE));
            boolean close = d > 0 && Math.abs(d - bound) <= 1e-12 * bound;
            boolean powerOfTwo = Math.floorMod(jr, 1 << TARGET_SCALE) == 0;
            boolean plainText =
                !le.contains("E") && !le.contains("e") && (!le.contains(".") || !le.endsWith("0"));
            if (close && !powerOfTwo && plainText) {
              l = l.toBuilder().set("le", "~" + jr).build();
            }
          }
          out.put(l, samples);
        });
    return out;
  }

  // ------------------------------------------------------------------ /metrics

  /** Sum of the samples of {@code name} whose label text contains {@code labelFilter}. */
  static double counter(String exposition, String name, String labelFilter) {
    double sum = 0;
    for (String line : exposition.split("\n")) {
      if (line.startsWith(name + "{") || line.startsWith(name + " ")) {
        if (!line.contains(labelFilter)) {
          continue;
        }
        String[] parts = line.trim().split(" ");
        sum += Double.parseDouble(parts[parts.length - 1]);
      }
    }
    return sum;
  }

  static String grep(String exposition, String prefix) {
    StringBuilder sb = new StringBuilder();
    for (String line : exposition.split("\n")) {
      if (line.startsWith(prefix)) {
        sb.append(line).append('\n');
      }
    }
    return sb.toString();
  }
}
