package dev.tidemark.server;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;

/**
 * The write paths of the HTTP API port ({@code /api/v1/write}, {@code /api/v1/otlp/v1/metrics}),
 * ahead of the query API and outside its gzip handler (the receivers read and answer compressed
 * bodies themselves). Before the store is open and once the server is stopping they answer 503 with
 * {@code Retry-After}, so senders keep their data and retry; {@link #close} waits for the writes in
 * progress, so the engine closes only after each has been answered.
 */
final class IngestRoutes extends Handler.Abstract {

  private final AtomicInteger active = new AtomicInteger();
  private final Set<String> paths;
  private final String retryAfterSeconds;

  /** Path → handler once the store is open; null before and after. */
  private volatile Map<String, Handler> routes;

  private volatile boolean closed;

  /**
   * @param paths the paths this handler answers (503 until {@link #open})
   */
  IngestRoutes(Set<String> paths, long retryAfterSeconds) {
    this.paths = Set.copyOf(paths);
    this.retryAfterSeconds = Long.toString(retryAfterSeconds);
  }

  /** Serves these paths (each one of the constructor's) from now on. */
  void open(Map<String, Handler> routes) {
    if (!paths.equals(routes.keySet())) {
      throw new IllegalArgumentException("routes " + routes.keySet() + " are not " + paths);
    }
    this.routes = Map.copyOf(routes);
  }

  @Override
  public boolean handle(Request request, Response response, Callback callback) throws Exception {
    String path = Request.getPathInContext(request);
    if (!paths.contains(path)) {
      return false;
    }
    active.incrementAndGet();
    Callback done = Callback.from(callback, active::decrementAndGet);
    Map<String, Handler> r = routes;
    Handler h = closed || r == null ? null : r.get(path);
    if (h == null) {
      response.setStatus(503);
      response.getHeaders().put(HttpHeader.RETRY_AFTER, retryAfterSeconds);
      response.getHeaders().put(HttpHeader.CONTENT_TYPE, "text/plain; charset=utf-8");
      byte[] body =
          ((closed ? "Tidemark is stopping" : "Tidemark is starting") + "; retry later\n")
              .getBytes(StandardCharsets.UTF_8);
      response.write(true, ByteBuffer.wrap(body), done);
      return true;
    }
    try {
      if (h.handle(request, response, done)) {
        return true;
      }
    } catch (Exception | Error e) {
      active.decrementAndGet();
      throw e;
    }
    active.decrementAndGet();
    return false;
  }

  /** Refuses new writes from now on (503 with {@code Retry-After}). */
  void refuse() {
    closed = true;
  }

  /**
   * Refuses new writes and waits up to {@code timeout} for those in progress to be answered.
   *
   * @return true if none was left
   */
  boolean close(Duration timeout) throws InterruptedException {
    closed = true;
    long deadline = System.nanoTime() + timeout.toNanos();
    while (active.get() > 0) {
      if (System.nanoTime() > deadline) {
        return false;
      }
      TimeUnit.MILLISECONDS.sleep(5);
    }
    return true;
  }
}
