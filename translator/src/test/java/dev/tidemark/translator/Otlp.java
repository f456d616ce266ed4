package dev.tidemark.translator;

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
import io.opentelemetry.proto.metrics.v1.Summary;
import io.opentelemetry.proto.metrics.v1.SummaryDataPoint;
import io.opentelemetry.proto.resource.v1.Resource;
import java.util.List;

/** Builders for OTLP test requests. */
final class Otlp {
  private Otlp() {}

  static final long SEC = 1_000_000_000L;

  /** 2026-01-01T00:00:00Z in ns. */
  static final long T0 = 1_767_225_600L * SEC;

  static final long T0_MS = T0 / 1_000_000;

  static final AggregationTemporality CUMULATIVE =
      AggregationTemporality.AGGREGATION_TEMPORALITY_CUMULATIVE;
  static final AggregationTemporality DELTA = AggregationTemporality.AGGREGATION_TEMPORALITY_DELTA;

  static KeyValue kv(String k, String v) {
    return KeyValue.newBuilder()
        .setKey(k)
        .setValue(AnyValue.newBuilder().setStringValue(v))
        .build();
  }

  static KeyValue kv(String k, AnyValue v) {
    return KeyValue.newBuilder().setKey(k).setValue(v).build();
  }

  static List<KeyValue> attrs(KeyValue... kvs) {
    return List.of(kvs);
  }

  /** A resource with service.name=svc, service.instance.id=i1, host.name=h1. */
  static Resource defaultResource() {
    return Resource.newBuilder()
        .addAttributes(kv("service.name", "svc"))
        .addAttributes(kv("service.instance.id", "i1"))
        .addAttributes(kv("host.name", "h1"))
        .build();
  }

  static ExportMetricsServiceRequest request(Metric... metrics) {
    return request(defaultResource(), metrics);
  }

  static ExportMetricsServiceRequest request(Resource resource, Metric... metrics) {
    return ExportMetricsServiceRequest.newBuilder()
        .addResourceMetrics(resourceMetrics(resource, metrics))
        .build();
  }

  static ResourceMetrics resourceMetrics(Resource resource, Metric... metrics) {
    return ResourceMetrics.newBuilder()
        .setResource(resource)
        .addScopeMetrics(
            ScopeMetrics.newBuilder()
                .setScope(InstrumentationScope.newBuilder().setName("lib").setVersion("1.0"))
                .addAllMetrics(List.of(metrics)))
        .build();
  }

  static NumberDataPoint dp(long timeNanos, double v, KeyValue... attrs) {
    return NumberDataPoint.newBuilder()
        .setTimeUnixNano(timeNanos)
        .setAsDouble(v)
        .addAllAttributes(List.of(attrs))
        .build();
  }

  static NumberDataPoint dp(long startNanos, long timeNanos, double v, KeyValue... attrs) {
    return dp(timeNanos, v, attrs).toBuilder().setStartTimeUnixNano(startNanos).build();
  }

  static NumberDataPoint staleDp(long timeNanos, KeyValue... attrs) {
    return NumberDataPoint.newBuilder()
        .setTimeUnixNano(timeNanos)
        .setFlags(1)
        .addAllAttributes(List.of(attrs))
        .build();
  }

  static Metric gauge(String name, String unit, NumberDataPoint... pts) {
    return Metric.newBuilder()
        .setName(name)
        .setUnit(unit)
        .setGauge(Gauge.newBuilder().addAllDataPoints(List.of(pts)))
        .build();
  }

  static Metric sum(
      String name,
      String unit,
      AggregationTemporality t,
      boolean monotonic,
      NumberDataPoint... pts) {
    return Metric.newBuilder()
        .setName(name)
        .setUnit(unit)
        .setSum(
            Sum.newBuilder()
                .setAggregationTemporality(t)
                .setIsMonotonic(monotonic)
                .addAllDataPoints(List.of(pts)))
        .build();
  }

  static HistogramDataPoint hdp(
      long timeNanos, double[] bounds, long[] counts, Double sum, KeyValue... attrs) {
    HistogramDataPoint.Builder b =
        HistogramDataPoint.newBuilder().setTimeUnixNano(timeNanos).addAllAttributes(List.of(attrs));
    long count = 0;
    for (long c : counts) {
      count += c;
      b.addBucketCounts(c);
    }
    for (double d : bounds) {
      b.addExplicitBounds(d);
    }
    b.setCount(count);
    if (sum != null) {
      b.setSum(sum);
    }
    return b.build();
  }

  static Metric histogram(
      String name, String unit, AggregationTemporality t, HistogramDataPoint... pts) {
    return Metric.newBuilder()
        .setName(name)
        .setUnit(unit)
        .setHistogram(
            Histogram.newBuilder().setAggregationTemporality(t).addAllDataPoints(List.of(pts)))
        .build();
  }

  static ExponentialHistogramDataPoint.Buckets buckets(int offset, long... counts) {
    ExponentialHistogramDataPoint.Buckets.Builder b =
        ExponentialHistogramDataPoint.Buckets.newBuilder().setOffset(offset);
    for (long c : counts) {
      b.addBucketCounts(c);
    }
    return b.build();
  }

  static ExponentialHistogramDataPoint edp(
      long timeNanos,
      int scale,
      long zeroCount,
      double zeroThreshold,
      ExponentialHistogramDataPoint.Buckets pos,
      ExponentialHistogramDataPoint.Buckets neg,
      Double sum,
      KeyValue... attrs) {
    long count = zeroCount;
    for (long c : pos.getBucketCountsList()) {
      count += c;
    }
    for (long c : neg.getBucketCountsList()) {
      count += c;
    }
    ExponentialHistogramDataPoint.Builder b =
        ExponentialHistogramDataPoint.newBuilder()
            .setTimeUnixNano(timeNanos)
            .setScale(scale)
            .setZeroCount(zeroCount)
            .setZeroThreshold(zeroThreshold)
            .setPositive(pos)
            .setNegative(neg)
            .setCount(count)
            .addAllAttributes(List.of(attrs));
    if (sum != null) {
      b.setSum(sum);
    }
    return b.build();
  }

  static Metric expHistogram(
      String name, String unit, AggregationTemporality t, ExponentialHistogramDataPoint... pts) {
    return Metric.newBuilder()
        .setName(name)
        .setUnit(unit)
        .setExponentialHistogram(
            ExponentialHistogram.newBuilder()
                .setAggregationTemporality(t)
                .addAllDataPoints(List.of(pts)))
        .build();
  }

  static Metric summary(String name, String unit, SummaryDataPoint... pts) {
    return Metric.newBuilder()
        .setName(name)
        .setUnit(unit)
        .setSummary(Summary.newBuilder().addAllDataPoints(List.of(pts)))
        .build();
  }

  static SummaryDataPoint sdp(
      long timeNanos, long count, double sum, double[] qs, double[] vs, KeyValue... attrs) {
    SummaryDataPoint.Builder b =
        SummaryDataPoint.newBuilder()
            .setTimeUnixNano(timeNanos)
            .setCount(count)
            .setSum(sum)
            .addAllAttributes(List.of(attrs));
    for (int i = 0; i < qs.length; i++) {
      b.addQuantileValues(
          SummaryDataPoint.ValueAtQuantile.newBuilder().setQuantile(qs[i]).setValue(vs[i]));
    }
    return b.build();
  }
}
