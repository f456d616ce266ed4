package dev.tidemark.server.admin;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.Status;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

class AdminAuthInterceptorTest {
  private final AdminAuthInterceptor auth = new AdminAuthInterceptor("t0ken");

  @Test
  void acceptsTheTokenWithAnyCaseOfTheScheme() {
    assertThat(auth.problem("Bearer t0ken")).isNull();
    assertThat(auth.problem("bearer t0ken")).isNull();
    assertThat(auth.problem("  BEARER   t0ken ")).isNull();
  }

  @Test
  void refusesMissingMalformedAndWrongTokensWithoutRevealingIt() {
    assertThat(auth.problem(null)).contains("needs a token");
    assertThat(auth.problem("")).contains("needs a token");
    assertThat(auth.problem("Basic dXNlcjpwYXNz")).contains("must be 'Bearer <token>'");
    assertThat(auth.problem("Bearer")).contains("must be 'Bearer <token>'");
    assertThat(auth.problem("Bearer t0ke")).isEqualTo("invalid admin token");
    assertThat(auth.problem("Bearer t0kenX")).isEqualTo("invalid admin token");
    assertThat(auth.problem("t0ken")).doesNotContain("t0ken");
  }

  @Test
  void closesTheCallWithUnauthenticatedBeforeTheHandler() {
    AtomicReference<Status> closed = new AtomicReference<>();
    AtomicBoolean handled = new AtomicBoolean();
    ServerCall<Object, Object> call = new FakeCall(closed);
    ServerCallHandler<Object, Object> next =
        (c, h) -> {
          handled.set(true);
          return new ServerCall.Listener<>() {};
        };
    Metadata wrong = new Metadata();
    wrong.put(AdminAuthInterceptor.AUTHORIZATION, "Bearer nope");
    auth.interceptCall(call, wrong, next);
    assertThat(closed.get().getCode()).isEqualTo(Status.Code.UNAUTHENTICATED);
    assertThat(handled).isFalse();

    closed.set(null);
    Metadata right = new Metadata();
    right.put(AdminAuthInterceptor.AUTHORIZATION, "Bearer t0ken");
    auth.interceptCall(call, right, next);
    assertThat(closed.get()).isNull();
    assertThat(handled).isTrue();
  }

  @Test
  void anEmptyTokenIsAProgrammingError() {
    assertThatThrownBy(() -> new AdminAuthInterceptor(""))
        .isInstanceOf(IllegalArgumentException.class);
  }

  private static final class FakeCall extends ServerCall<Object, Object> {
    private final AtomicReference<Status> closed;

    FakeCall(AtomicReference<Status> closed) {
      this.closed = closed;
    }

    @Override
    public void request(int numMessages) {}

    @Override
    public void sendHeaders(Metadata headers) {}

    @Override
    public void sendMessage(Object message) {}

    @Override
    public void close(Status status, Metadata trailers) {
      closed.set(status);
    }

    @Override
    public boolean isCancelled() {
      return false;
    }

    @Override
    public io.grpc.MethodDescriptor<Object, Object> getMethodDescriptor() {
      return null;
    }
  }
}
