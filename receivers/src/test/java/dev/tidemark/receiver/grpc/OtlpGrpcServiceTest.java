package dev.tidemark.receiver.grpc;

import static dev.tidemark.receiver.otlp.Otlp.counter;
import static dev.tidemark.receiver.otlp.Otlp.dp;
import static dev.tidemark.receiver.otlp.Otlp.gauge;
import static dev.tidemark.receiver.otlp.Otlp.request;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.Any;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.rpc.RetryInfo;
import dev.tidemark.receiver.Outcome;
import dev.tidemark.receiver.ReceiverConfig;
import dev.tidemark.receiver.ReceiverFixture;
import dev.tidemark.receiver.otlp.Otlp;
import dev.tidemark.tsdb.append.RejectReason;
import io.grpc.BindableService;
import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.protobuf.StatusProto;
import io.grpc.stub.ClientCalls;
import io.opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest;
import io.opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceResponse;
import io.opentelemetry.proto.collector.metrics.v1.MetricsServiceGrpc;
import io.opentelemetry.proto.collector.metrics.v1.MetricsServiceGrpc.MetricsServiceBlockingStub;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** A real Netty gRPC server on 127.0.0.1 with the service, and a real client stub. */
class OtlpGrpcServiceTest {
  private static final int MAX_MESSAGE = 64 * 1024;

  private ReceiverFixture fixture;
  private Server server;
  private ManagedChannel channel;
  private ExecutorService executor;

  private MetricsServiceBlockingStub start(ReceiverConfig config, boolean generatedBinding)
      throws IOException {
    fixture = new ReceiverFixture(config);
    OtlpGrpcService service = new OtlpGrpcService(fixture.ingestor);
    executor = Executors.newFixedThreadPool(4);
    NettyServerBuilder b =
        NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
            .executor(executor)
            .maxInboundMessageSize(config.maxGrpcMessageBytes())
            .decompressorRegistry(GrpcDecompressors.registry()); // as the server configures it
    if (generatedBinding) {
      b.addService((BindableService) service);
    } else {
      b.addService(service.serviceDefinition());
    }
    server = b.build().start();
    channel = NettyChannelBuilder.forAddress("127.0.0.1", server.getPort()).usePlaintext().build();
    return MetricsServiceGrpc.newBlockingStub(channel).withDeadlineAfter(20, TimeUnit.SECONDS);
  }

  private MetricsServiceBlockingStub start() throws IOException {
    return start(
        ReceiverConfig.builder()
            .maxGrpcMessageBytes(MAX_MESSAGE)
            .retryAfter(Duration.ofMillis(2500))
            .build(),
        false);
  }

  @AfterEach
  void stop() throws InterruptedException {
    if (fixture != null) {
      fixture.appender.release();
    }
    if (channel != null) {
      channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
    if (server != null) {
      server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
    if (executor != null) {
      executor.shutdownNow();
    }
  }

  @Test
  void fullSuccessAnswersAnEmptyResponse() throws IOException {
    MetricsServiceBlockingStub stub = start();
    ExportMetricsServiceResponse r = stub.export(request(gauge("temp", 1, 2), counter("hits", 3)));
    assertThat(r).isEqualTo(ExportMetricsServiceResponse.getDefaultInstance());
    assertThat(r.hasPartialSuccess()).isFalse();
    assertThat(fixture.appender.named("temp")).hasSize(2);
    assertThat(fixture.appender.named("hits_total")).hasSize(1);
    assertThat(fixture.requests("grpc", Outcome.SUCCESS)).isEqualTo(1);
    assertThat(fixture.counter("tidemark_otlp_data_points_accepted", "protocol", "grpc"))
        .isEqualTo(3);
  }

  @Test
  void messageBuffersAreReusedWithoutStaleBytes() throws IOException {
    // A long message, then shorter ones: each lands in an array a longer one filled before (the
    // marshaller's pool), and only its own bytes are decoded. A stale tail would decode as more
    // points or fail to parse.
    MetricsServiceBlockingStub stub = start();
    stub.export(Otlp.bigRequest("long", 50, 20));
    for (int i = 0; i < 20; i++) {
      assertThat(stub.export(request(gauge("short" + i, 1, 2))).hasPartialSuccess()).isFalse();
    }
    for (int i = 0; i < 20; i++) {
      assertThat(fixture.appender.named("short" + i)).hasSize(2);
    }
    assertThat(fixture.counter("tidemark_otlp_data_points_accepted", "protocol", "grpc"))
        .isEqualTo(50 + 20 * 2);
  }

  @Test
  void emptyRequestSucceeds() throws IOException {
    MetricsServiceBlockingStub stub = start();
    assertThat(stub.export(ExportMetricsServiceRequest.getDefaultInstance()).hasPartialSuccess())
        .isFalse();
  }

  @Test
  void partialSuccessNamesEachReasonWithCountAndExampleAndStoresTheValidPoints()
      throws IOException {
    MetricsServiceBlockingStub stub = start();
    fixture.appender.reject("dup", RejectReason.DUPLICATE);
    ExportMetricsServiceResponse r =
        stub.export(
            request(gauge("good", 1, 2, 3), gauge("dup", 1, 2), gauge("no_time", dp(0, 5))));
    assertThat(r.getPartialSuccess().getRejectedDataPoints()).isEqualTo(3);
    assertThat(r.getPartialSuccess().getErrorMessage())
        .contains("2 duplicate sample for timestamp (DUPLICATE, e.g. metric \"dup\")")
        .contains(
            "1 data point without timestamp (time_unix_nano is 0) (ZERO_TIMESTAMP, e.g. metric \"no_time\")");
    assertThat(fixture.appender.named("good")).hasSize(3);
    assertThat(fixture.requests("grpc", Outcome.PARTIAL_SUCCESS)).isEqualTo(1);
    assertThat(
            fixture.counter(
                "tidemark_otlp_data_points_rejected", "protocol", "grpc", "reason", "duplicate"))
        .isEqualTo(2);
    assertThat(
            fixture.counter(
                "tidemark_otlp_data_points_rejected",
                "protocol",
                "grpc",
                "reason",
                "zero_timestamp"))
        .isEqualTo(1);
    assertThat(fixture.counter("tidemark_otlp_data_points_accepted", "protocol", "grpc"))
        .isEqualTo(3);
  }

  @Test
  void gzipRequestsAreDecompressed() throws IOException {
    MetricsServiceBlockingStub stub = start().withCompression("gzip");
    ExportMetricsServiceRequest req =
        Otlp.bigRequest("zipped", 200, 100); // ~30 KB, compresses well
    assertThat(stub.export(req).hasPartialSuccess()).isFalse();
    assertThat(fixture.appender.named("zipped")).hasSize(200);
  }

  @Test
  void zstdAndSnappyMessagesAreDecompressedAsTheCollectorSendsThem() throws Exception {
    start();
    io.grpc.CompressorRegistry compressors = io.grpc.CompressorRegistry.newEmptyInstance();
    compressors.register(
        new io.grpc.Compressor() {
          @Override
          public String getMessageEncoding() {
            return "zstd";
          }

          @Override
          public java.io.OutputStream compress(java.io.OutputStream os) throws IOException {
            return new com.github.luben.zstd.ZstdOutputStream(os);
          }
        });
    compressors.register(
        new io.grpc.Compressor() {
          @Override
          public String getMessageEncoding() {
            return "snappy";
          }

          @Override
          public java.io.OutputStream compress(java.io.OutputStream os) throws IOException {
            return new org.xerial.snappy.SnappyFramedOutputStream(os);
          }
        });
    io.grpc.ManagedChannel coded =
        NettyChannelBuilder.forAddress("127.0.0.1", server.getPort())
            .usePlaintext()
            .compressorRegistry(compressors)
            .build();
    try {
      for (String encoding : new String[] {"zstd", "snappy"}) {
        MetricsServiceBlockingStub stub =
            MetricsServiceGrpc.newBlockingStub(coded)
                .withDeadlineAfter(20, TimeUnit.SECONDS)
                .withCompression(encoding);
        assertThat(stub.export(Otlp.bigRequest(encoding, 200, 100)).hasPartialSuccess()).isFalse();
        assertThat(fixture.appender.named(encoding)).as(encoding).hasSize(200);
        // 700 series: over the message limit once decompressed, a few KB on the wire.
        assertThatThrownBy(() -> stub.export(Otlp.bigRequest("big", 700, 100)))
            .as(encoding)
            .isInstanceOfSatisfying(
                StatusRuntimeException.class,
                e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED));
      }
      assertThat(fixture.appender.named("big")).isEmpty();
    } finally {
      coded.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
  }

  @Test
  void oversizeMessageGetsResourceExhaustedWithoutRetryInfo() throws IOException {
    MetricsServiceBlockingStub stub = start();
    ExportMetricsServiceRequest big = Otlp.bigRequest("big", 700, 100);
    assertThat(big.getSerializedSize()).isGreaterThan(MAX_MESSAGE);
    assertThatThrownBy(() -> stub.export(big))
        .isInstanceOfSatisfying(
            StatusRuntimeException.class,
            e -> {
              assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
              assertThat(retryInfo(e)).isNull();
            });
    assertThat(fixture.appender.samples()).isEmpty();
  }

  @Test
  void oversizeAfterGzipDecompressionGetsResourceExhausted() throws IOException {
    MetricsServiceBlockingStub stub = start().withCompression("gzip");
    ExportMetricsServiceRequest big =
        Otlp.bigRequest("big", 700, 100); // ~90 KB, a few KB compressed
    assertThatThrownBy(() -> stub.export(big))
        .isInstanceOfSatisfying(
            StatusRuntimeException.class,
            e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED));
    assertThat(fixture.appender.samples()).isEmpty();
  }

  @Test
  void undecodableMessageGetsInvalidArgument() throws IOException {
    start();
    for (byte[] bad :
        new byte[][] {
          "this is not protobuf".getBytes(),
          truncated(request(gauge("temp", 1, 2, 3)).toByteArray())
        }) {
      assertThatThrownBy(
              () -> ClientCalls.blockingUnaryCall(channel, rawExport(), CallOptions.DEFAULT, bad))
          .isInstanceOfSatisfying(
              StatusRuntimeException.class,
              e -> {
                assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
                assertThat(e.getStatus().getDescription())
                    .contains("cannot decode ExportMetricsServiceRequest");
              });
    }
    assertThat(fixture.requests("grpc", Outcome.INVALID)).isEqualTo(2);
    assertThat(fixture.appender.samples()).isEmpty();
  }

  @Test
  void overloadGetsUnavailableWithRetryInfo() throws Exception {
    ExportMetricsServiceRequest held = Otlp.bigRequest("held", 100, 50);
    long size = held.getSerializedSize();
    MetricsServiceBlockingStub stub =
        start(
            ReceiverConfig.builder()
                .maxInFlightBytes(size + size / 2)
                .retryAfter(Duration.ofMillis(2500))
                .build(),
            false);
    fixture.appender.holdOn("held");
    Future<ExportMetricsServiceResponse> first = executor.submit(() -> stub.export(held));
    assertThat(fixture.appender.awaitHeld()).isTrue();
    assertThat(fixture.ingestor.inFlightBytes()).isEqualTo(size);

    ExportMetricsServiceRequest second = Otlp.bigRequest("second", 100, 50);
    assertThatThrownBy(() -> stub.export(second))
        .isInstanceOfSatisfying(
            StatusRuntimeException.class,
            e -> {
              assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
              assertThat(e.getStatus().getDescription()).contains("overloaded");
              RetryInfo info = retryInfo(e);
              assertThat(info).isNotNull();
              assertThat(info.getRetryDelay().getSeconds()).isEqualTo(2);
              assertThat(info.getRetryDelay().getNanos()).isEqualTo(500_000_000);
            });

    fixture.appender.release();
    assertThat(first.get(20, TimeUnit.SECONDS).hasPartialSuccess()).isFalse();
    assertThat(fixture.appender.named("held")).hasSize(100);
    assertThat(fixture.appender.named("second")).isEmpty();
    assertThat(fixture.requests("grpc", Outcome.OVERLOADED)).isEqualTo(1);
    assertThat(fixture.ingestor.inFlightBytes()).isZero();
    // Nothing is in flight any more: the same request now passes.
    assertThat(stub.export(second).hasPartialSuccess()).isFalse();
  }

  @Test
  void storageUnavailableGetsUnavailableWithRetryInfo() throws IOException {
    MetricsServiceBlockingStub stub = start();
    fixture.appender.unavailable(true);
    assertThatThrownBy(() -> stub.export(request(gauge("temp", 1))))
        .isInstanceOfSatisfying(
            StatusRuntimeException.class,
            e -> {
              assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
              assertThat(e.getStatus().getDescription()).contains("storage unavailable");
              assertThat(retryInfo(e)).isNotNull();
            });
    assertThat(fixture.requests("grpc", Outcome.STORAGE_UNAVAILABLE)).isEqualTo(1);

    fixture.appender.unavailable(false);
    assertThat(stub.export(request(gauge("temp", 1))).hasPartialSuccess()).isFalse();
  }

  @Test
  void generatedBindingWorksButAnswersUndecodableMessagesWithUnknown() throws IOException {
    MetricsServiceBlockingStub stub =
        start(ReceiverConfig.builder().maxGrpcMessageBytes(MAX_MESSAGE).build(), true);
    fixture.appender.reject("late", RejectReason.OUT_OF_ORDER);
    ExportMetricsServiceResponse r = stub.export(request(gauge("ok", 1), gauge("late", 1)));
    assertThat(r.getPartialSuccess().getRejectedDataPoints()).isEqualTo(1);
    assertThat(fixture.appender.named("ok")).hasSize(1);

    fixture.appender.unavailable(true);
    assertThatThrownBy(() -> stub.export(request(gauge("temp", 1))))
        .isInstanceOfSatisfying(
            StatusRuntimeException.class,
            e -> {
              assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
              assertThat(retryInfo(e)).isNotNull();
            });

    byte[] bad = "this is not protobuf".getBytes();
    assertThatThrownBy(
            () -> ClientCalls.blockingUnaryCall(channel, rawExport(), CallOptions.DEFAULT, bad))
        .isInstanceOfSatisfying(
            StatusRuntimeException.class,
            e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNKNOWN));
  }

  @Test
  void serviceDefinitionKeepsTheOtlpNamesAndSchema() {
    fixture = new ReceiverFixture();
    ServerServiceDefinition def = new OtlpGrpcService(fixture.ingestor).serviceDefinition();
    assertThat(def.getServiceDescriptor().getName())
        .isEqualTo("opentelemetry.proto.collector.metrics.v1.MetricsService");
    assertThat(def.getServiceDescriptor().getSchemaDescriptor())
        .isSameAs(MetricsServiceGrpc.getServiceDescriptor().getSchemaDescriptor());
    assertThat(def.getMethod("opentelemetry.proto.collector.metrics.v1.MetricsService/Export"))
        .isNotNull();
  }

  // ------------------------------------------------------------------ helpers

  private static RetryInfo retryInfo(StatusRuntimeException e) {
    com.google.rpc.Status status = StatusProto.fromThrowable(e);
    if (status == null) {
      return null;
    }
    for (Any any : status.getDetailsList()) {
      if (any.is(RetryInfo.class)) {
        try {
          return any.unpack(RetryInfo.class);
        } catch (InvalidProtocolBufferException ex) {
          throw new AssertionError(ex);
        }
      }
    }
    return null;
  }

  /** Cut inside the first (length-delimited) resource_metrics field: can never decode. */
  private static byte[] truncated(byte[] b) {
    byte[] t = new byte[b.length - 3];
    System.arraycopy(b, 0, t, 0, t.length);
    return t;
  }

  /**
   * The Export method with raw bytes both ways: lets the test send bytes that are not a request.
   */
  private static MethodDescriptor<byte[], byte[]> rawExport() {
    MethodDescriptor.Marshaller<byte[]> bytes =
        new MethodDescriptor.Marshaller<>() {
          @Override
          public InputStream stream(byte[] value) {
            return new ByteArrayInputStream(value);
          }

          @Override
          public byte[] parse(InputStream stream) {
            try {
              return stream.readAllBytes();
            } catch (IOException e) {
              throw new IllegalStateException(e);
            }
          }
        };
    return MetricsServiceGrpc.getExportMethod().toBuilder(bytes, bytes).build();
  }
}
