package dev.tidemark.server.admin;

import io.grpc.ServerBuilder;
import io.grpc.protobuf.services.ProtoReflectionService;
import io.grpc.protobuf.services.ProtoReflectionServiceV1;

/**
 * gRPC server reflection on every gRPC port, in both versions of the protocol: {@code
 * grpc.reflection.v1} and {@code grpc.reflection.v1alpha}, which older grpcurl releases and Postman
 * still ask for.
 */
public final class Reflection {
  private Reflection() {}

  /** Adds both reflection services to {@code server}. */
  @SuppressWarnings("deprecation") // v1alpha: deprecated by gRPC, still what older clients call
  public static <T extends ServerBuilder<T>> T addTo(T server) {
    return server
        .addService(ProtoReflectionServiceV1.newInstance())
        .addService(ProtoReflectionService.newInstance());
  }
}
