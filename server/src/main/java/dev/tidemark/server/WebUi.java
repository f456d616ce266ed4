package dev.tidemark.server;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Map;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpStatus;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;

/**
 * The web UI on the HTTP API port: {@code /} (the page), {@code /app.js} and {@code /app.css}, the
 * bundle {@code ui/build.mjs} builds from {@code ui/src} into this jar's resources ({@code
 * dev/tidemark/server/ui/}). The files are read once, at construction, and answered from memory
 * with an {@code ETag} (a hash of the bytes) and {@code Cache-Control: no-cache}, so a browser
 * revalidates and sees a new version at once. Every answer carries a {@code
 * Content-Security-Policy} that lets the page reach only the server that served it. Prometheus' own
 * UI paths, {@code /graph?g0.expr=...} (the links its UI and Grafana's "explore in Prometheus"
 * write), redirect to the query page with the same parameters.
 */
final class WebUi {

  static final String RESOURCES = "/dev/tidemark/server/ui/";

  /**
   * Only this origin: scripts and styles from its files (CodeMirror and uPlot set styles inline),
   * requests to its API.
   */
  static final String CONTENT_SECURITY_POLICY =
      "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; connect-src 'self';"
          + " img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

  private record File(byte[] bytes, String contentType, String etag) {}

  private final Map<String, File> files;

  WebUi() {
    files =
        Map.of(
            "/", load("index.html", "text/html; charset=utf-8"),
            "/index.html", load("index.html", "text/html; charset=utf-8"),
            "/app.js", load("app.js", "text/javascript; charset=utf-8"),
            "/app.css", load("app.css", "text/css; charset=utf-8"));
  }

  private static File load(String name, String contentType) {
    try (InputStream in = WebUi.class.getResourceAsStream(RESOURCES + name)) {
      if (in == null) {
        throw new IllegalStateException(
            "the web UI's " + name + " is missing from the jar: run ui/build.mjs");
      }
      byte[] bytes = in.readAllBytes();
      byte[] hash = MessageDigest.getInstance("SHA-256").digest(bytes);
      return new File(bytes, contentType, "\"" + HexFormat.of().formatHex(hash, 0, 12) + "\"");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  /** Whether {@code path} is the UI's: one of its files, or Prometheus' {@code /graph}. */
  boolean serves(String path) {
    return files.containsKey(path) || path.equals("/graph");
  }

  /**
   * Answers a GET or HEAD of a path {@link #serves} accepts.
   *
   * @param headOnly a HEAD request: headers without the body
   */
  void handle(
      String path, Request request, Response response, Callback callback, boolean headOnly) {
    response.getHeaders().put("Content-Security-Policy", CONTENT_SECURITY_POLICY);
    response.getHeaders().put("X-Content-Type-Options", "nosniff");
    if (path.equals("/graph")) {
      String query = request.getHttpURI().getQuery();
      response.setStatus(HttpStatus.FOUND_302);
      response
          .getHeaders()
          .put(HttpHeader.LOCATION, "./#/query" + (query == null ? "" : "?" + query));
      response.getHeaders().put(HttpHeader.CONTENT_LENGTH, 0);
      response.write(true, null, callback);
      return;
    }
    File f = files.get(path);
    response.getHeaders().put(HttpHeader.CACHE_CONTROL, "no-cache");
    response.getHeaders().put(HttpHeader.ETAG, f.etag());
    String match = request.getHeaders().get(HttpHeader.IF_NONE_MATCH);
    if (match != null && match.contains(f.etag())) {
      response.setStatus(HttpStatus.NOT_MODIFIED_304);
      response.write(true, null, callback);
      return;
    }
    response.setStatus(HttpStatus.OK_200);
    response.getHeaders().put(HttpHeader.CONTENT_TYPE, f.contentType());
    response.getHeaders().put(HttpHeader.CONTENT_LENGTH, f.bytes().length);
    response.write(true, headOnly ? null : ByteBuffer.wrap(f.bytes()), callback);
  }
}
