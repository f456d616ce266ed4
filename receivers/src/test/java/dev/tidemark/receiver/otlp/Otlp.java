package dev.tidemark.receiver.otlp;

import io.opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest;
import io.opentelemetry.proto.common.v1.AnyValue;
import io.opentelemetry.proto.common.v1.InstrumentationScope;
import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.metrics.v1.AggregationTemporality;
import io.opentelemetry.proto.metrics.v1.Gauge;
import io.opentelemetry.proto.metrics.v1.Metric;
import io.opentelemetry.proto.metrics.v1.NumberDataPoint;
import io.opentelemetry.proto.metrics.v1.ResourceMetrics;
import io.opentelemetry.proto.metrics.v1.ScopeMetrics;
import io.opentelemetry.proto.metrics.v1.Sum;
import io.opentelemetry.proto.resource.v1.Resource;
import java.util.List;

/** OTLP request builders for receiver tests. */
public final class Otlp {
  private Otlp() {}

  public static final long SEC = 1_000_000_000L;

  /** 2026-01-01T00:00:00Z in ns: the time of every test point. */
  public static final long T0 = 1_767_225_600L * SEC;

  public static final long T0_MS = T0 / 1_000_000;

  public static KeyValue kv(String k, String v) {
    return KeyValue.newBuilder()
        .setKey(k)
        .setValue(AnyValue.newBuilder().setStringValue(v))
        .build();
  }

  public static Resource resource() {
    return Resource.newBuilder()
        .addAttributes(kv("service.name", "svc"))
        .addAttributes(kv("service.instance.id", "i1"))
        .build();
  }

  public static ExportMetricsServiceRequest request(Metric... metrics) {
    return ExportMetricsServiceRequest.newBuilder()
        .addResourceMetrics(
            ResourceMetrics.newBuilder()
                .setResource(resource())
                .addScopeMetrics(
                    ScopeMetrics.newBuilder()
                        .setScope(
                            InstrumentationScope.newBuilder().setName("lib").setVersion("1.0"))
                        .addAllMetrics(List.of(metrics))))
        .build();
  }

  public static NumberDataPoint dp(long timeNanos, double v, KeyValue... attrs) {
    return NumberDataPoint.newBuilder()
        .setTimeUnixNano(timeNanos)
        .setAsDouble(v)
        .addAllAttributes(List.of(attrs))
        .build();
  }

  /** A gauge with one point at {@link #T0} per value, each with attribute {@code i=<index>}. */
  public static Metric gauge(String name, double... values) {
    Gauge.Builder g = Gauge.newBuilder();
    for (int i = 0; i < values.length; i++) {
      g.addDataPoints(dp(T0, values[i], kv("i", Integer.toString(i))));
    }
    return Metric.newBuilder().setName(name).setGauge(g).build();
  }

  public static Metric gauge(String name, NumberDataPoint... pts) {
    return Metric.newBuilder()
        .setName(name)
        .setGauge(Gauge.newBuilder().addAllDataPoints(List.of(pts)))
        .build();
  }

  public static Metric counter(String name, double value) {
    return Metric.newBuilder()
        .setName(name)
        .setSum(
            Sum.newBuilder()
                .setAggregationTemporality(
                    AggregationTemporality.AGGREGATION_TEMPORALITY_CUMULATIVE)
                .setIsMonotonic(true)
                .addDataPoints(dp(T0, value)))
        .build();
  }

  /**
   * A gauge with {@code points} points of {@code attrBytes}-long attribute values: a request of
   * roughly chosen size.
   */
  public static ExportMetricsServiceRequest bigRequest(String name, int points, int attrBytes) {
    Gauge.Builder g = Gauge.newBuilder();
    String pad = "x".repeat(attrBytes);
    for (int i = 0; i < points; i++) {
      g.addDataPoints(dp(T0, i, kv("i", Integer.toString(i)), kv("pad", pad)));
    }
    return request(Metric.newBuilder().setName(name).setGauge(g).build());
  }
}
