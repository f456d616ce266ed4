package dev.tidemark.receiver.grpc;

import com.google.protobuf.Any;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.rpc.RetryInfo;
import dev.tidemark.receiver.BufferPool;
import dev.tidemark.receiver.ErrorMessages;
import dev.tidemark.receiver.Outcome;
import dev.tidemark.receiver.otlp.ExportResult;
import dev.tidemark.receiver.otlp.OtlpIngestor;
import dev.tidemark.receiver.otlp.OtlpIngestor.Exchange;
import io.grpc.MethodDescriptor;
import io.grpc.ServerServiceDefinition;
import io.grpc.ServiceDescriptor;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.protobuf.StatusProto;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.ServerCalls;
import io.grpc.stub.StreamObserver;
import io.opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest;
import io.opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceResponse;
import io.opentelemetry.proto.collector.metrics.v1.MetricsServiceGrpc;
import java.time.Duration;
import java.util.Objects;

/**
 * OTLP/gRPC {@code opentelemetry.proto.collector.metrics.v1.MetricsService/Export} over an {@link
 * OtlpIngestor} (contract: {@code docs/otlp-translation.md} §5.2, §5.4).
 *
 * <p><b>Registering.</b> Prefer {@code serverBuilder.addService(service.serviceDefinition())}: that
 * binding takes the message bytes from the runtime and decodes them itself, after admission
 * control, so an undecodable message gets {@code INVALID_ARGUMENT}. {@code
 * serverBuilder.addService(service)} (the generated binding) also works, but grpc-java then decodes
 * before the service runs and answers an undecodable message with {@code UNKNOWN} ("Application
 * error processing RPC"), which clients also do not retry. The server configures on its builder:
 * {@code maxInboundMessageSize(config.maxGrpcMessageBytes())} (larger messages, also after gzip
 * decompression, get {@code RESOURCE_EXHAUSTED} without RetryInfo, so clients do not retry them);
 * gzip request decompression is built into grpc-java.
 *
 * <p><b>Answers.</b> Full success: an empty {@link ExportMetricsServiceResponse}. Partial success:
 * {@code partial_success{rejected_data_points, error_message}}, the message naming each reason with
 * its count and an example metric. Undecodable message: {@code INVALID_ARGUMENT}. Overload
 * (in-flight bytes limit, out of memory) and storage unavailable (engine failure, head memory
 * limit, shutdown): {@code UNAVAILABLE} with {@code google.rpc.RetryInfo{retry_delay =
 * config.retryAfter()}} in the trailers. Unexpected failure: {@code INTERNAL}. A call already
 * cancelled by the client when it reaches the service is not processed.
 *
 * <p><b>Threading.</b> {@code Export} blocks its thread until the accepted samples are durable (one
 * group commit, typically a few milliseconds); run the server with a bounded executor sized for the
 * concurrent exports expected.
 */
public final class OtlpGrpcService extends MetricsServiceGrpc.MetricsServiceImplBase {
  private final OtlpIngestor ingestor;
  private final com.google.protobuf.Duration retryDelay;

  /** The arrays messages are read into. */
  private final BufferPool buffers = BufferPool.forRequestBodies();

  public OtlpGrpcService(OtlpIngestor ingestor) {
    this.ingestor = Objects.requireNonNull(ingestor, "ingestor");
    Duration d = ingestor.config().retryAfter();
    this.retryDelay =
        com.google.protobuf.Duration.newBuilder()
            .setSeconds(d.getSeconds())
            .setNanos(d.getNano())
            .build();
  }

  /**
   * The Export method bound with a raw-bytes request marshaller: decoding after admission control,
   * {@code INVALID_ARGUMENT} for undecodable messages. Same service name, method name and schema
   * descriptor as the generated binding (server reflection sees the OTLP service).
   */
  public ServerServiceDefinition serviceDefinition() {
    MethodDescriptor<ExportMetricsServiceRequest, ExportMetricsServiceResponse> generated =
        MetricsServiceGrpc.getExportMethod();
    MethodDescriptor<RawRequest, ExportMetricsServiceResponse> method =
        generated.toBuilder(new RawRequest.Marshaller(buffers), generated.getResponseMarshaller())
            .build();
    ServiceDescriptor service = MetricsServiceGrpc.getServiceDescriptor();
    ServiceDescriptor descriptor =
        ServiceDescriptor.newBuilder(service.getName())
            .setSchemaDescriptor(service.getSchemaDescriptor())
            .addMethod(method)
            .build();
    return ServerServiceDefinition.builder(descriptor)
        .addMethod(method, ServerCalls.asyncUnaryCall(this::exportRaw))
        .build();
  }

  /** The generated binding's entry point: the runtime has decoded the message already. */
  @Override
  public void export(
      ExportMetricsServiceRequest request,
      StreamObserver<ExportMetricsServiceResponse> responseObserver) {
    if (cancelled(responseObserver)) {
      record(Outcome.CANCELLED);
      return;
    }
    ExportResult result;
    try (Exchange ex = ingestor.begin(OtlpIngestor.Protocol.GRPC)) {
      try {
        result = ex.reserve(request.getSerializedSize()) ? ex.export(request) : ex.overloaded();
      } catch (OutOfMemoryError e) {
        result = ex.outOfMemory(e);
      } catch (RuntimeException | Error e) {
        result = ex.internalError(e);
      }
    }
    answer(result, responseObserver);
  }

  private void exportRaw(
      RawRequest raw, StreamObserver<ExportMetricsServiceResponse> responseObserver) {
    if (cancelled(responseObserver)) {
      raw.release();
      record(Outcome.CANCELLED);
      return;
    }
    ExportResult result;
    try (Exchange ex = ingestor.begin(OtlpIngestor.Protocol.GRPC)) {
      try {
        result = process(ex, raw);
      } catch (OutOfMemoryError e) {
        result = ex.outOfMemory(e);
      } catch (RuntimeException | Error e) {
        result = ex.internalError(e);
      } finally {
        raw.release();
      }
    }
    answer(result, responseObserver);
  }

  private static ExportResult process(Exchange ex, RawRequest raw) {
    if (raw.error() != null) {
      Status s = raw.error();
      return ex.fail(
          s.getCode() == Status.Code.RESOURCE_EXHAUSTED ? Outcome.TOO_LARGE : Outcome.INVALID,
          ErrorMessages.clean(s.getDescription(), "cannot read the message"));
    }
    int length = raw.length();
    if (!ex.reserve(length)) {
      return ex.overloaded();
    }
    try {
      return ex.export(raw.bytes(), length); // decoded in place, straight into the translator
    } catch (InvalidProtocolBufferException e) {
      return ex.fail(
          Outcome.INVALID,
          "cannot decode ExportMetricsServiceRequest ("
              + length
              + " bytes): "
              + ErrorMessages.describe(e, "malformed"));
    }
  }

  private void record(Outcome outcome) {
    try (Exchange ex = ingestor.begin(OtlpIngestor.Protocol.GRPC)) {
      ex.fail(outcome, "call cancelled by the client before processing");
    }
  }

  private static boolean cancelled(StreamObserver<?> observer) {
    if (observer instanceof ServerCallStreamObserver<?> call) {
      // Without a handler, answering a call cancelled meanwhile throws; the answer is moot then.
      call.setOnCancelHandler(() -> {});
      return call.isCancelled();
    }
    return false;
  }

  private void answer(ExportResult result, StreamObserver<ExportMetricsServiceResponse> observer) {
    switch (result.outcome()) {
      case SUCCESS, PARTIAL_SUCCESS -> {
        observer.onNext(result.response());
        observer.onCompleted();
      }
      case OVERLOADED, STORAGE_UNAVAILABLE, BODY_UNREADABLE ->
          observer.onError(unavailable(result.message()));
      case INVALID ->
          observer.onError(
              Status.INVALID_ARGUMENT.withDescription(result.message()).asRuntimeException());
      case TOO_LARGE ->
          observer.onError(
              Status.RESOURCE_EXHAUSTED.withDescription(result.message()).asRuntimeException());
      case CANCELLED ->
          observer.onError(Status.CANCELLED.withDescription(result.message()).asRuntimeException());
      default ->
          observer.onError(Status.INTERNAL.withDescription(result.message()).asRuntimeException());
    }
  }

  /**
   * {@code UNAVAILABLE} with {@code google.rpc.RetryInfo} in the {@code grpc-status-details-bin}
   * trailer.
   */
  private StatusRuntimeException unavailable(String message) {
    com.google.rpc.Status status =
        com.google.rpc.Status.newBuilder()
            .setCode(Status.Code.UNAVAILABLE.value())
            .setMessage(message)
            .addDetails(Any.pack(RetryInfo.newBuilder().setRetryDelay(retryDelay).build()))
            .build();
    return StatusProto.toStatusRuntimeException(status);
  }
}
