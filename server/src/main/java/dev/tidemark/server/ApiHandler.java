package dev.tidemark.server;

import dev.tidemark.server.api.PrometheusApi;
import io.prometheus.metrics.expositionformats.ExpositionFormatWriter;
import io.prometheus.metrics.expositionformats.ExpositionFormats;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpStatus;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;

/**
 * The HTTP API port: {@code GET /metrics} (Prometheus text format, or what the {@code Accept}
 * header asks for among the formats of {@link ExpositionFormats}; {@code le} and {@code quantile}
 * in Prometheus' forms, {@link ExpositionBounds}), {@code GET /-/healthy} (200 while the process
 * serves HTTP) and {@code GET /-/ready} (200 once the server has started; 503 while it starts or
 * stops, and while every write is refused, the body naming why). {@code HEAD} is answered like
 * {@code GET} without a body; other methods get 405, other paths 404. Paths under {@code /api/v1/}
 * go to the {@link PrometheusApi} once the store is open (503 before). The web UI ({@link WebUi})
 * is served at {@code /}, {@code /app.js} and {@code /app.css}.
 */
final class ApiHandler extends Handler.Abstract {

  static final String HEALTHY = "Tidemark is Healthy.\n";
  static final String READY = "Tidemark is Ready.\n";
  static final String NOT_READY = "Tidemark is not ready.\n";
  static final String LIFECYCLE_OFF =
      "Lifecycle API is not enabled (start with --web-enable-lifecycle).\n";

  /** The body of {@code /-/ready} while writes are refused, before the reason. */
  static final String WRITES_REFUSED = "Tidemark is not ready: writes are refused: ";

  private static final String TEXT = "text/plain; charset=utf-8";

  private final PrometheusRegistry registry;
  private final BooleanSupplier ready;
  private final Supplier<String> writeRefusal;

  /** Reloads the configuration (null when it worked, else the error); null: lifecycle API off. */
  private final Supplier<String> reload;

  private final ExpositionFormats formats = ExpositionFormats.init();
  private final WebUi ui = new WebUi();

  /** The query API once the store is open; until then its paths answer 503. */
  private volatile PrometheusApi api;

  /**
   * @param ready whether the server has started and is not stopping
   * @param writeRefusal why every write is refused now (the heap guard, the head's budget), or null
   *     while writes are taken; asked only while {@code ready}
   * @param reload reloads the configuration and answers null or the error, for {@code POST
   *     /-/reload}; null when the lifecycle API is off ({@code web-enable-lifecycle}): 403
   */
  ApiHandler(
      PrometheusRegistry registry,
      BooleanSupplier ready,
      Supplier<String> writeRefusal,
      Supplier<String> reload) {
    this.registry = registry;
    this.ready = ready;
    this.writeRefusal = writeRefusal;
    this.reload = reload;
  }

  /**
   * {@code /-/reload} as Prometheus answers it: 403 without the lifecycle API, 405 for a method
   * other than POST and PUT, 500 with the error when the files are refused, else 200.
   */
  private void reload(String method, Response response, Callback callback) {
    if (reload == null) {
      send(response, callback, HttpStatus.FORBIDDEN_403, TEXT, bytes(LIFECYCLE_OFF), false);
      return;
    }
    if (!method.equals("POST") && !method.equals("PUT")) {
      response.getHeaders().put(HttpHeader.ALLOW, "POST, PUT");
      send(
          response,
          callback,
          HttpStatus.METHOD_NOT_ALLOWED_405,
          TEXT,
          bytes("Only POST or PUT requests allowed\n"),
          false);
      return;
    }
    String error = reload.get();
    if (error == null) {
      send(response, callback, HttpStatus.OK_200, TEXT, new byte[0], false);
    } else {
      send(
          response,
          callback,
          HttpStatus.INTERNAL_SERVER_ERROR_500,
          TEXT,
          bytes("failed to reload config: " + error + "\n"),
          false);
    }
  }

  /** Serves the query API from now on. */
  void api(PrometheusApi api) {
    this.api = api;
  }

  @Override
  public boolean handle(Request request, Response response, Callback callback) throws Exception {
    String path = Request.getPathInContext(request);
    String method = request.getMethod();
    boolean head = method.equals("HEAD");
    if (path.startsWith(PrometheusApi.PREFIX)) {
      PrometheusApi a = api;
      if (a == null) {
        send(
            response,
            callback,
            HttpStatus.SERVICE_UNAVAILABLE_503,
            "application/json",
            bytes(
                "{\"status\":\"error\",\"errorType\":\"unavailable\",\"error\":\"Service Unavailable\"}"),
            head);
        return true;
      }
      if (a.handle(request, response, callback)) {
        return true;
      }
      send(response, callback, HttpStatus.NOT_FOUND_404, TEXT, bytes("404 page not found\n"), head);
      return true;
    }
    if (path.equals(PrometheusApi.FEDERATE_PATH)) {
      PrometheusApi a = api;
      if (a == null) {
        send(
            response,
            callback,
            HttpStatus.SERVICE_UNAVAILABLE_503,
            TEXT,
            bytes("starting\n"),
            head);
      } else {
        a.federate(request, response, callback);
      }
      return true;
    }
    if (path.equals("/-/reload")) {
      reload(method, response, callback);
      return true;
    }
    boolean uiPath = ui.serves(path);
    if (!uiPath
        && !path.equals("/metrics")
        && !path.equals("/-/healthy")
        && !path.equals("/-/ready")) {
      send(response, callback, HttpStatus.NOT_FOUND_404, TEXT, bytes("404 page not found\n"), head);
      return true;
    }
    if (!head && !method.equals("GET")) {
      response.getHeaders().put(HttpHeader.ALLOW, "GET, HEAD");
      send(
          response,
          callback,
          HttpStatus.METHOD_NOT_ALLOWED_405,
          TEXT,
          bytes(method + " is not allowed; use GET\n"),
          false);
      return true;
    }
    if (uiPath) {
      ui.handle(path, request, response, callback, head);
      return true;
    }
    switch (path) {
      case "/-/healthy":
        send(response, callback, HttpStatus.OK_200, TEXT, bytes(HEALTHY), head);
        break;
      case "/-/ready":
        String notReady = notReady();
        if (notReady == null) {
          send(response, callback, HttpStatus.OK_200, TEXT, bytes(READY), head);
        } else {
          send(response, callback, HttpStatus.SERVICE_UNAVAILABLE_503, TEXT, bytes(notReady), head);
        }
        break;
      default:
        ExpositionFormatWriter writer =
            formats.findWriter(request.getHeaders().get(HttpHeader.ACCEPT));
        ByteArrayOutputStream out = new ByteArrayOutputStream(16 * 1024);
        writer.write(out, registry.scrape());
        String type = writer.getContentType();
        byte[] body = out.toByteArray();
        if (type.startsWith("text/plain") || type.startsWith("application/openmetrics-text")) {
          body = ExpositionBounds.rewrite(body, type.startsWith("application/openmetrics-text"));
        }
        send(response, callback, HttpStatus.OK_200, type, body, head);
    }
    return true;
  }

  /** The body of a 503 from {@code /-/ready}, or null when ready. */
  private String notReady() {
    if (!ready.getAsBoolean()) {
      return NOT_READY;
    }
    String refusal = writeRefusal.get();
    return refusal == null ? null : WRITES_REFUSED + refusal + "\n";
  }

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static void send(
      Response response,
      Callback callback,
      int status,
      String contentType,
      byte[] body,
      boolean headOnly) {
    response.setStatus(status);
    response.getHeaders().put(HttpHeader.CONTENT_TYPE, contentType);
    response.getHeaders().put(HttpHeader.CONTENT_LENGTH, body.length);
    response.write(true, headOnly ? null : ByteBuffer.wrap(body), callback);
  }
}
