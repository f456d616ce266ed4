package dev.tidemark.server.web;

import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;

/**
 * {@link BasicAuth} for gRPC: a call whose {@code authorization} metadata (what an OTLP exporter's
 * {@code Authorization} header becomes) {@link BasicAuth} does not allow is closed with {@code
 * UNAUTHENTICATED} before its handler runs. Installed on the OTLP metrics service; the gRPC health
 * service and server reflection stay open, as on the admin port. Thread-safe.
 */
public final class BasicAuthInterceptor implements ServerInterceptor {

  static final Metadata.Key<String> AUTHORIZATION =
      Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);

  private final BasicAuth auth;

  public BasicAuthInterceptor(BasicAuth auth) {
    this.auth = auth;
  }

  @Override
  public <Q, R> ServerCall.Listener<Q> interceptCall(
      ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
    if (!auth.allows(headers.get(AUTHORIZATION))) {
      call.close(
          Status.UNAUTHENTICATED.withDescription(
              "this server needs basic authentication: send 'authorization: Basic"
                  + " base64(user:password)' of a user of its web config file"),
          new Metadata());
      return new ServerCall.Listener<>() {};
    }
    return next.startCall(call, headers);
  }
}
