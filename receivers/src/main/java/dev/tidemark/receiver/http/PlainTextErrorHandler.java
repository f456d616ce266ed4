package dev.tidemark.receiver.http;

import dev.tidemark.receiver.ErrorMessages;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.eclipse.jetty.http.HttpException;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpMethod;
import org.eclipse.jetty.http.HttpStatus;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.handler.ErrorHandler;
import org.eclipse.jetty.util.Callback;

/**
 * Jetty's error pages as one line of plain text ({@code text/plain; charset=utf-8}), in the style
 * of Go's {@code http.Error} that Prometheus answers with: {@code 404 page not found} for an
 * unknown path, {@code 400 Bad Request: <what Jetty's parser objected to>}, {@code 414 URI Too
 * Long}, {@code 431 Request Header Fields Too Large}, {@code 503 Service Unavailable} while
 * stopping, {@code 500 Server Error}. Register with {@link Server#setErrorHandler}; Jetty calls it
 * for every error it answers itself (no handler took the request, an unparsable request, a handler
 * that threw). Never HTML, never a Java class name or stack trace: a 4xx detail is kept without
 * class names, a 5xx has none. {@code HEAD} and statuses without a body get no body. Stateless and
 * thread-safe.
 */
public final class PlainTextErrorHandler implements Request.Handler {
  /** The 404 body, as Prometheus (Go's {@code http.NotFound}) writes it. */
  public static final String NOT_FOUND = "404 page not found\n";

  private static final String TEXT = "text/plain; charset=utf-8";
  private static final int MAX_DETAIL_CHARS = 200;

  @Override
  public boolean handle(Request request, Response response, Callback callback) {
    int code = response.getStatus();
    String message =
        request.getAttribute(ErrorHandler.ERROR_MESSAGE) instanceof String m ? m : null;
    if (request.getAttribute(ErrorHandler.ERROR_EXCEPTION) instanceof HttpException e) {
      code = e.getCode();
      response.setStatus(code);
      if (message == null) {
        message = e.getReason();
      }
    }
    response.getHeaders().put(ErrorHandler.ERROR_CACHE_CONTROL);
    if (HttpStatus.hasNoBody(code) || HttpMethod.HEAD.is(request.getMethod())) {
      callback.succeeded();
      return true;
    }
    byte[] body = text(code, message).getBytes(StandardCharsets.UTF_8);
    response.getHeaders().put(HttpHeader.CONTENT_TYPE, TEXT);
    response.getHeaders().put(HttpHeader.CONTENT_LENGTH, body.length);
    response.write(true, ByteBuffer.wrap(body), callback);
    return true;
  }

  /** The body for {@code code}: status and reason, and for a 4xx the detail if it adds one. */
  static String text(int code, String message) {
    if (code == HttpStatus.NOT_FOUND_404) {
      return NOT_FOUND;
    }
    String reason = HttpStatus.getMessage(code);
    StringBuilder sb = new StringBuilder().append(code).append(' ').append(reason);
    if (HttpStatus.isClientError(code) && message != null) {
      String detail = ErrorMessages.clean(message, "").replaceAll("[\\p{Cntrl}]", " ").strip();
      if (detail.length() > MAX_DETAIL_CHARS) {
        detail = detail.substring(0, MAX_DETAIL_CHARS) + "...";
      }
      if (!detail.isEmpty()
          && !detail.equalsIgnoreCase(reason)
          && !detail.equals(Integer.toString(code))) {
        sb.append(": ").append(detail);
      }
    }
    return sb.append('\n').toString();
  }
}
