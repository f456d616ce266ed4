package dev.tidemark.benchmarks;

import dev.tidemark.translator.TranslationResult;
import dev.tidemark.translator.Translator;
import dev.tidemark.translator.TranslatorConfig;
import dev.tidemark.tsdb.append.AppendResult;
import dev.tidemark.tsdb.append.Appender;
import dev.tidemark.tsdb.append.RejectReason;
import dev.tidemark.tsdb.append.SampleBatch;
import dev.tidemark.tsdb.time.ManualClock;
import io.opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest;
import io.opentelemetry.proto.common.v1.AnyValue;
import io.opentelemetry.proto.common.v1.InstrumentationScope;
import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.metrics.v1.AggregationTemporality;
import io.opentelemetry.proto.metrics.v1.ExponentialHistogram;
import io.opentelemetry.proto.metrics.v1.ExponentialHistogramDataPoint;
import io.opentelemetry.proto.metrics.v1.Gauge;
import io.opentelemetry.proto.metrics.v1.Histogram;
import io.opentelemetry.proto.metrics.v1.HistogramDataPoint;
import io.opentelemetry.proto.metrics.v1.Metric;
import io.opentelemetry.proto.metrics.v1.NumberDataPoint;
import io.opentelemetry.proto.metrics.v1.ResourceMetrics;
import io.opentelemetry.proto.metrics.v1.ScopeMetrics;
import io.opentelemetry.proto.metrics.v1.Sum;
import io.opentelemetry.proto.resource.v1.Resource;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * OTLP → Prometheus translation throughput in data points/s (one operation is one OTLP data point:
 * {@code @OperationsPerInvocation(1000)}), into an appender that accepts everything and does
 * nothing.
 *
 * <p>The request is what an instrumented service exports: one resource (10 attributes), one scope,
 * 1,000 data points with 10 attributes each: 400 gauge points, 250 cumulative counter points, 150
 * delta counter points (accumulated), 150 explicit histogram points (12 bounds) and 50 exponential
 * histogram points (scale 3, ~30 buckets, converted to classic buckets at scale 2). The series are
 * steady: after warm-up every stream hits the translator's series cache, as in production where the
 * same series arrive every export interval. The requests are decoded protobuf objects built in
 * setup; decoding is the receiver's cost and not measured by {@link #translate()}. Because those
 * objects are reused, equal strings are identical objects there, which flatters the translator's
 * equality shortcuts a little; {@link #decodeAndTranslate()} decodes every request from bytes
 * (fresh strings, as in the receiver) and {@link #decodeOnly()} measures the decoding alone. {@link
 * #inPlace()} is what the protobuf receivers run: the same bytes translated in place, without the
 * message tree.
 *
 * <p>Delta points must move forward in time, so the delta part (a second ResourceMetrics of the
 * same resource, so that its timestamps do not stretch the first one's target_info range) comes
 * from {@value #DELTA_VARIANTS} pre-built variants with increasing timestamps. When the cycle
 * wraps, the benchmark clock jumps by more than {@code maxStale} so the delta streams are evicted
 * and start over (once per {@value #DELTA_VARIANTS} invocations). Run:
 *
 * <pre>
 * java -jar benchmarks/target/benchmarks.jar TranslatorBenchmark -f 1 -wi 3 -w 2 -i 5 -r 2 -prof gc
 * </pre>
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
public class TranslatorBenchmark {
  static final int POINTS = 1000;
  static final int DELTA_VARIANTS = 1024;
  static final long SEC = 1_000_000_000L;
  static final long T0 = 1_767_225_600L * SEC;

  private ExportMetricsServiceRequest[] requests;

  /** The requests, encoded (package-private for {@link TranslatorCpuTimeHarness}). */
  byte[][] encoded;

  Translator translator;
  private ManualClock clock;
  private int next;

  @Setup
  public void setup() {
    SplittableRandom rnd = new SplittableRandom(42);
    Resource resource =
        Resource.newBuilder()
            .addAttributes(kv("service.name", "checkout"))
            .addAttributes(kv("service.namespace", "shop"))
            .addAttributes(kv("service.instance.id", "checkout-7d9f8b6c5-x2x9k"))
            .addAttributes(kv("service.version", "1.42.0"))
            .addAttributes(kv("host.name", "ip-10-0-12-34"))
            .addAttributes(kv("cloud.region", "eu-west-1"))
            .addAttributes(kv("cloud.availability_zone", "eu-west-1b"))
            .addAttributes(kv("k8s.namespace.name", "shop"))
            .addAttributes(kv("k8s.pod.name", "checkout-7d9f8b6c5-x2x9k"))
            .addAttributes(kv("telemetry.sdk.language", "java"))
            .build();
    InstrumentationScope scope =
        InstrumentationScope.newBuilder()
            .setName("io.opentelemetry.http")
            .setVersion("2.1.0")
            .build();

    List<Metric> fixed = new ArrayList<>();
    for (int m = 0; m < 40; m++) {
      Gauge.Builder g = Gauge.newBuilder();
      for (int p = 0; p < 10; p++) {
        g.addDataPoints(
            NumberDataPoint.newBuilder()
                .setTimeUnixNano(T0)
                .addAllAttributes(attrs(m, p))
                .setAsDouble(rnd.nextDouble() * 100));
      }
      fixed.add(
          Metric.newBuilder()
              .setName("system.memory.usage." + m)
              .setUnit(m % 2 == 0 ? "By" : "1")
              .setGauge(g)
              .build());
    }
    for (int m = 0; m < 25; m++) {
      Sum.Builder s =
          Sum.newBuilder()
              .setIsMonotonic(true)
              .setAggregationTemporality(AggregationTemporality.AGGREGATION_TEMPORALITY_CUMULATIVE);
      for (int p = 0; p < 10; p++) {
        s.addDataPoints(
            NumberDataPoint.newBuilder()
                .setStartTimeUnixNano(T0 - 3600 * SEC)
                .setTimeUnixNano(T0)
                .addAllAttributes(attrs(m, p))
                .setAsInt(rnd.nextInt(1_000_000)));
      }
      fixed.add(
          Metric.newBuilder()
              .setName("http.server.requests." + m)
              .setUnit("{request}")
              .setSum(s)
              .build());
    }
    double[] bounds = {0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5};
    for (int m = 0; m < 15; m++) {
      Histogram.Builder h =
          Histogram.newBuilder()
              .setAggregationTemporality(AggregationTemporality.AGGREGATION_TEMPORALITY_CUMULATIVE);
      for (int p = 0; p < 10; p++) {
        HistogramDataPoint.Builder b =
            HistogramDataPoint.newBuilder()
                .setStartTimeUnixNano(T0 - 3600 * SEC)
                .setTimeUnixNano(T0)
                .addAllAttributes(attrs(m, p));
        long count = 0;
        for (double bound : bounds) {
          b.addExplicitBounds(bound);
        }
        for (int i = 0; i <= bounds.length; i++) {
          long c = rnd.nextInt(100);
          count += c;
          b.addBucketCounts(c);
        }
        h.addDataPoints(b.setCount(count).setSum(count * 0.3));
      }
      fixed.add(
          Metric.newBuilder()
              .setName("http.server.request.duration." + m)
              .setUnit("s")
              .setHistogram(h)
              .build());
    }
    for (int m = 0; m < 5; m++) {
      ExponentialHistogram.Builder e =
          ExponentialHistogram.newBuilder()
              .setAggregationTemporality(AggregationTemporality.AGGREGATION_TEMPORALITY_CUMULATIVE);
      for (int p = 0; p < 10; p++) {
        ExponentialHistogramDataPoint.Buckets.Builder pos =
            ExponentialHistogramDataPoint.Buckets.newBuilder().setOffset(-20);
        long count = 0;
        for (int i = 0; i < 30; i++) {
          long c = rnd.nextInt(50);
          count += c;
          pos.addBucketCounts(c);
        }
        e.addDataPoints(
            ExponentialHistogramDataPoint.newBuilder()
                .setStartTimeUnixNano(T0 - 3600 * SEC)
                .setTimeUnixNano(T0)
                .addAllAttributes(attrs(m, p))
                .setScale(3)
                .setPositive(pos)
                .setZeroCount(2)
                .setCount(count + 2)
                .setSum(count * 0.7));
      }
      fixed.add(
          Metric.newBuilder()
              .setName("rpc.client.duration." + m)
              .setUnit("ms")
              .setExponentialHistogram(e)
              .build());
    }

    requests = new ExportMetricsServiceRequest[DELTA_VARIANTS];
    ResourceMetrics fixedPart =
        ResourceMetrics.newBuilder()
            .setResource(resource)
            .addScopeMetrics(ScopeMetrics.newBuilder().setScope(scope).addAllMetrics(fixed))
            .build();
    for (int v = 0; v < DELTA_VARIANTS; v++) {
      ScopeMetrics.Builder sm = ScopeMetrics.newBuilder().setScope(scope);
      for (int m = 0; m < 15; m++) {
        Sum.Builder s =
            Sum.newBuilder()
                .setIsMonotonic(true)
                .setAggregationTemporality(AggregationTemporality.AGGREGATION_TEMPORALITY_DELTA);
        for (int p = 0; p < 10; p++) {
          s.addDataPoints(
              NumberDataPoint.newBuilder()
                  .setStartTimeUnixNano(T0 + v * 10 * SEC)
                  .setTimeUnixNano(T0 + (v + 1) * 10 * SEC)
                  .addAllAttributes(attrs(m, p))
                  .setAsInt(1 + rnd.nextInt(10)));
        }
        sm.addMetrics(
            Metric.newBuilder()
                .setName("messaging.process.count." + m)
                .setUnit("{message}")
                .setSum(s)
                .build());
      }
      requests[v] =
          ExportMetricsServiceRequest.newBuilder()
              .addResourceMetrics(fixedPart)
              .addResourceMetrics(
                  ResourceMetrics.newBuilder().setResource(resource).addScopeMetrics(sm))
              .build();
    }
    encoded = new byte[DELTA_VARIANTS][];
    for (int v = 0; v < DELTA_VARIANTS; v++) {
      encoded[v] = requests[v].toByteArray();
    }
    int points = 0;
    for (ResourceMetrics rm : requests[0].getResourceMetricsList()) {
      for (ScopeMetrics sm : rm.getScopeMetricsList()) {
        for (Metric m : sm.getMetricsList()) {
          points +=
              switch (m.getDataCase()) {
                case GAUGE -> m.getGauge().getDataPointsCount();
                case SUM -> m.getSum().getDataPointsCount();
                case HISTOGRAM -> m.getHistogram().getDataPointsCount();
                case EXPONENTIAL_HISTOGRAM -> m.getExponentialHistogram().getDataPointsCount();
                default -> 0;
              };
        }
      }
    }
    if (points != POINTS) {
      throw new IllegalStateException("request has " + points + " points, want " + POINTS);
    }
    clock = new ManualClock(T0 / 1_000_000 + DELTA_VARIANTS * 10_000L + 3_600_000L);
    translator = new Translator(new NoOpAppender(), TranslatorConfig.defaults(), clock);
    TranslationResult r = translator.translate(requests[0]);
    if (r.rejectedDataPoints() != 0) {
      throw new IllegalStateException("setup request rejected: " + r.partialSuccessMessage());
    }
    next = 1;
  }

  private static List<KeyValue> attrs(int metric, int point) {
    List<KeyValue> l = new ArrayList<>(10);
    l.add(kv("http.request.method", point % 3 == 0 ? "POST" : "GET"));
    l.add(
        kv(
            "http.response.status_code",
            AnyValue.newBuilder().setIntValue(200 + point % 5).build()));
    l.add(kv("http.route", "/api/v1/orders/{id}/items/" + point));
    l.add(kv("network.protocol.version", "1.1"));
    l.add(kv("region", "eu-west-1"));
    l.add(kv("server.address", "checkout.shop.svc.cluster.local"));
    l.add(kv("server.port", AnyValue.newBuilder().setIntValue(8080).build()));
    l.add(kv("shard", AnyValue.newBuilder().setIntValue(metric % 4).build()));
    l.add(kv("tenant", "tenant-" + (point % 7)));
    l.add(kv("url.scheme", "https"));
    return l;
  }

  private static KeyValue kv(String k, String v) {
    return KeyValue.newBuilder()
        .setKey(k)
        .setValue(AnyValue.newBuilder().setStringValue(v))
        .build();
  }

  private static KeyValue kv(String k, AnyValue v) {
    return KeyValue.newBuilder().setKey(k).setValue(v).build();
  }

  @Benchmark
  @OperationsPerInvocation(POINTS)
  public int translate() {
    if (next == DELTA_VARIANTS) {
      next = 0;
      clock.advance(6 * 60_000L); // past maxStale: the delta streams start over
    }
    TranslationResult r = translator.translate(requests[next++]);
    return r.rejectedDataPoints();
  }

  /**
   * Decoding plus translation: every string is a fresh object, as in the receiver, so the
   * translator's equality shortcuts compare contents instead of hitting identity.
   */
  @Benchmark
  @OperationsPerInvocation(POINTS)
  public int decodeAndTranslate() throws com.google.protobuf.InvalidProtocolBufferException {
    if (next == DELTA_VARIANTS) {
      next = 0;
      clock.advance(6 * 60_000L);
    }
    TranslationResult r =
        translator.translate(ExportMetricsServiceRequest.parseFrom(encoded[next++]));
    return r.rejectedDataPoints();
  }

  /**
   * The receivers' path: the serialized request translated in place ({@link
   * Translator#translate(byte[])}: wire walk and decoding included, no message tree; the
   * counterpart of {@link #decodeAndTranslate()}).
   */
  @Benchmark
  @OperationsPerInvocation(POINTS)
  public int inPlace() throws com.google.protobuf.InvalidProtocolBufferException {
    if (next == DELTA_VARIANTS) {
      next = 0;
      clock.advance(6 * 60_000L);
    }
    TranslationResult r = translator.translate(encoded[next++]);
    return r.rejectedDataPoints();
  }

  /** Decoding alone, to subtract from {@link #decodeAndTranslate()}. */
  @Benchmark
  @OperationsPerInvocation(POINTS)
  public ExportMetricsServiceRequest decodeOnly()
      throws com.google.protobuf.InvalidProtocolBufferException {
    if (next == DELTA_VARIANTS) {
      next = 0;
    }
    return ExportMetricsServiceRequest.parseFrom(encoded[next++]);
  }

  /** Accepts everything; reuses its (all-null) result arrays when the shape repeats. */
  static final class NoOpAppender implements Appender {
    private RejectReason[] points = new RejectReason[0];
    private RejectReason[] samples = new RejectReason[0];

    @Override
    public AppendResult append(SampleBatch batch) {
      if (points.length != batch.pointCount()) {
        points = new RejectReason[batch.pointCount()];
      }
      if (samples.length != batch.size()) {
        samples = new RejectReason[batch.size()];
      }
      return new AppendResult(points, samples);
    }
  }
}
