package dev.tidemark.server.web;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpStatus;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;

/**
 * Lets a request through to the wrapped handler only when {@link BasicAuth} allows its {@code
 * Authorization} header; otherwise answers as exporter-toolkit does: 401 {@code Unauthorized} with
 * {@code WWW-Authenticate: Basic}. Every path of the port is behind it, {@code /-/healthy} and
 * {@code /metrics} included, as in Prometheus. Thread-safe.
 */
public final class BasicAuthHandler extends Handler.Wrapper {

  private static final byte[] BODY = "Unauthorized\n".getBytes(StandardCharsets.UTF_8);

  private final BasicAuth auth;

  public BasicAuthHandler(BasicAuth auth, Handler next) {
    super(next);
    this.auth = auth;
  }

  @Override
  public boolean handle(Request request, Response response, Callback callback) throws Exception {
    if (auth.allows(request.getHeaders().get(HttpHeader.AUTHORIZATION))) {
      return super.handle(request, response, callback);
    }
    response.setStatus(HttpStatus.UNAUTHORIZED_401);
    response.getHeaders().put(HttpHeader.WWW_AUTHENTICATE, "Basic");
    response.getHeaders().put(HttpHeader.CONTENT_TYPE, "text/plain; charset=utf-8");
    response.getHeaders().put(HttpHeader.CONTENT_LENGTH, BODY.length);
    response.write(true, ByteBuffer.wrap(BODY), callback);
    return true;
  }
}
