package dev.tidemark.it;

import io.grpc.CallOptions;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.stub.ClientCalls;
import io.opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest;
import io.opentelemetry.proto.collector.metrics.v1.MetricsServiceGrpc;
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
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.List;

/** Hand-made OTLP requests and a raw-bytes gRPC Export call. */
final class Otlp {
  private Otlp() {}

  /** One resource ({@code service.name}, {@code service.instance.id}), one unnamed scope. */
  static ExportMetricsServiceRequest request(
      String serviceName, String instance, List<Metric> metrics) {
    return ExportMetricsServiceRequest.newBuilder()
        .addResourceMetrics(
            ResourceMetrics.newBuilder()
                .setResource(
                    Resource.newBuilder()
                        .addAttributes(attr("service.name", serviceName))
                        .addAttributes(attr("service.instance.id", instance)))
                .addScopeMetrics(
                    ScopeMetrics.newBuilder()
                        .setScope(InstrumentationScope.getDefaultInstance())
                        .addAllMetrics(metrics)))
        .build();
  }

  static KeyValue attr(String key, String value) {
    return KeyValue.newBuilder()
        .setKey(key)
        .setValue(AnyValue.newBuilder().setStringValue(value))
        .build();
  }

  static Metric gauge(String name, NumberDataPoint... points) {
    return Metric.newBuilder()
        .setName(name)
        .setGauge(Gauge.newBuilder().addAllDataPoints(List.of(points)))
        .build();
  }

  /** A cumulative monotonic sum. */
  static Metric counter(String name, NumberDataPoint... points) {
    return Metric.newBuilder()
        .setName(name)
        .setSum(
            Sum.newBuilder()
                .setIsMonotonic(true)
                .setAggregationTemporality(
                    AggregationTemporality.AGGREGATION_TEMPORALITY_CUMULATIVE)
                .addAllDataPoints(List.of(points)))
        .build();
  }

  /** A double point at {@code timeMillis} (0 gives time_unix_nano 0) with attribute pairs. */
  static NumberDataPoint point(long timeMillis, double value, String... attrs) {
    NumberDataPoint.Builder b =
        NumberDataPoint.newBuilder().setTimeUnixNano(timeMillis * 1_000_000L).setAsDouble(value);
    for (int i = 0; i < attrs.length; i += 2) {
      b.addAttributes(attr(attrs[i], attrs[i + 1]));
    }
    return b.build();
  }

  static ManagedChannel channel(int port) {
    return Grpc.newChannelBuilderForAddress("127.0.0.1", port, InsecureChannelCredentials.create())
        .build();
  }

  /**
   * The Export method with raw bytes both ways: lets a test send bytes that are not a valid
   * message.
   */
  static final MethodDescriptor<byte[], byte[]> RAW_EXPORT =
      MetricsServiceGrpc.getExportMethod().toBuilder(RawBytes.INSTANCE, RawBytes.INSTANCE).build();

  /** Sends {@code bytes} as the Export request message; returns the response bytes. */
  static byte[] exportRaw(ManagedChannel channel, CallOptions options, byte[] bytes) {
    return ClientCalls.blockingUnaryCall(channel, RAW_EXPORT, options, bytes);
  }

  private enum RawBytes implements MethodDescriptor.Marshaller<byte[]> {
    INSTANCE;

    @Override
    public InputStream stream(byte[] value) {
      return new ByteArrayInputStream(value);
    }

    @Override
    public byte[] parse(InputStream stream) {
      try {
        return stream.readAllBytes();
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
  }
}
