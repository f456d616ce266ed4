package dev.tidemark.server.admin;

import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Objects;

/**
 * Bearer-token authentication for the admin service: a call whose metadata lacks {@code
 * authorization: Bearer <token>} with the configured token is closed with {@code UNAUTHENTICATED}
 * before its handler runs (the message says whether the token was missing or wrong, never what it
 * should be). The comparison takes the same time whatever the mismatch ({@link
 * MessageDigest#isEqual}). The scheme name is case-insensitive, as in RFC 9110.
 *
 * <p>Installed on {@code AdminService} only: the gRPC health service and server reflection on the
 * admin port stay open (they reveal no data, and probes and generic tools need them). Thread-safe.
 */
public final class AdminAuthInterceptor implements ServerInterceptor {

  /**
   * Environment variable holding the token, read by the server (when {@code --admin-token} is not
   * given) and by {@code tidemark admin} (when {@code --token} is not given), so that the token
   * need not appear in a process list.
   */
  public static final String TOKEN_ENV = "TIDEMARK_ADMIN_TOKEN";

  static final Metadata.Key<String> AUTHORIZATION =
      Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);

  private static final String SCHEME = "bearer ";

  private final byte[] token;

  /**
   * @param token the expected bearer token, not empty
   */
  public AdminAuthInterceptor(String token) {
    Objects.requireNonNull(token, "token");
    if (token.isEmpty()) {
      throw new IllegalArgumentException("admin token must not be empty");
    }
    this.token = token.getBytes(StandardCharsets.UTF_8);
  }

  @Override
  public <Q, R> ServerCall.Listener<Q> interceptCall(
      ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
    String problem = problem(headers.get(AUTHORIZATION));
    if (problem != null) {
      call.close(Status.UNAUTHENTICATED.withDescription(problem), new Metadata());
      return new ServerCall.Listener<>() {};
    }
    return next.startCall(call, headers);
  }

  /** Null if {@code authorization} carries the token, else why not. */
  String problem(String authorization) {
    if (authorization == null || authorization.isBlank()) {
      return "this admin API needs a token: send 'authorization: Bearer <token>'"
          + " (tidemark admin --token or TIDEMARK_ADMIN_TOKEN)";
    }
    String a = authorization.strip();
    if (a.length() < SCHEME.length() || !a.regionMatches(true, 0, SCHEME, 0, SCHEME.length())) {
      return "the authorization header must be 'Bearer <token>'";
    }
    byte[] given = a.substring(SCHEME.length()).strip().getBytes(StandardCharsets.UTF_8);
    if (!MessageDigest.isEqual(given, token)) {
      return "invalid admin token";
    }
    return null;
  }
}
