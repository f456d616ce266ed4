package dev.tidemark.server.api;

import dev.tidemark.promql.engine.QueryControl;
import dev.tidemark.promql.parser.Expr;
import dev.tidemark.promql.parser.ParseException;
import dev.tidemark.promql.parser.ParserOptions;
import dev.tidemark.promql.parser.PromqlParser;
import dev.tidemark.tsdb.query.QueryAbortedException;
import java.io.IOException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.server.FormFields;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.Fields;

/**
 * The Prometheus HTTP API under {@code /api/v1/} ({@code docs/querying/api.md} of Prometheus): the
 * query endpoints, series and label lookups, metadata and the status endpoints, with Prometheus'
 * parameter forms, JSON shapes, error types and HTTP statuses.
 *
 * <p>How a request runs: its parameters (URL query and, for POST, the form body) are read without
 * blocking a thread; cheap endpoints answer on the calling thread; anything that reads the store is
 * checked, then run through the {@link QueryPool} (bounded concurrency and queue; on the calling
 * thread while a slot is free and few queries run so, else on the pool's threads) so that HTTP
 * threads stay free for the others. A client that goes away cancels its query. Answers are streamed
 * with Jackson's generator as they are written.
 */
public final class PrometheusApi extends Handler.Abstract implements AutoCloseable {

  private static final System.Logger LOG = System.getLogger(PrometheusApi.class.getName());

  /** The path prefix this handler serves. */
  public static final String PREFIX = "/api/v1/";

  private static final String JSON = "application/json";

  /**
   * Most queries running at once on HTTP threads ({@link QueryPool}): half of the API server's 16,
   * so that its other endpoints always find threads.
   */
  static final int MAX_INLINE_QUERIES = 8;

  /** Most fields of a form body. */
  static final int MAX_FORM_FIELDS = 10_000;

  /** Most bytes of a form body: long PromQL expressions and many match[] fit. */
  static final int MAX_FORM_BYTES = 8 * 1024 * 1024;

  private final ApiBackend backend;
  private final QueryPool pool;
  private final DisconnectWatcher disconnects;
  private final QueryEndpoints queries;
  private final SeriesEndpoints series;
  private final StatusEndpoints status;
  private final Federation federation;
  private final RemoteRead remoteRead;
  private volatile TsdbAdmin admin;
  private volatile BulkTransfer bulk;
  private final ApiMetrics metrics = new ApiMetrics();
  private volatile QueryLog queryLog;
  private final ParserOptions parserOptions;
  private final long queryTimeoutMillis;
  private final java.util.concurrent.atomic.LongAdder canceledByClient =
      new java.util.concurrent.atomic.LongAdder();

  public PrometheusApi(ApiBackend backend, QueryConfig config) {
    this.backend = backend;
    this.pool = new QueryPool(config.maxConcurrency(), config.maxQueued(), MAX_INLINE_QUERIES);
    try {
      this.disconnects = new DisconnectWatcher();
    } catch (java.io.IOException e) {
      pool.close();
      throw new java.io.UncheckedIOException("cannot open a selector for the query API", e);
    }
    this.queries = new QueryEndpoints(backend, config);
    this.queries.timings(this::queryTimings);
    this.series = new SeriesEndpoints(backend.querier(), config);
    this.status = new StatusEndpoints(backend);
    this.federation = new Federation(backend.querier(), backend.clock(), config);
    this.remoteRead = new RemoteRead(backend.querier(), config);
    this.parserOptions = config.promql().parserOptions();
    this.queryTimeoutMillis = config.timeout().toMillis();
  }

  /** Registers the API's metrics ({@link ApiMetrics}) with {@code registry}. */
  public void register(io.prometheus.metrics.model.registry.PrometheusRegistry registry) {
    metrics.register(registry);
  }

  /** {@code callback}, observing the request's duration under {@code handler} when it completes. */
  private Callback timed(Callback callback, String handler, long arrivedNanos) {
    return Callback.from(
        () -> {
          observe(handler, arrivedNanos);
          callback.succeeded();
        },
        x -> {
          observe(handler, arrivedNanos);
          callback.failed(x);
        });
  }

  private void observe(String handler, long arrivedNanos) {
    metrics.requestDuration.labelValues(handler).observe((System.nanoTime() - arrivedNanos) / 1e9);
  }

  /**
   * Records an evaluated PromQL query: its timings, and a line of the query log if there is one.
   */
  void queryTimings(
      QueryEndpoints.Plan plan,
      QueryEndpoints.RequestInfo request,
      long queuedNanos,
      long evalNanos,
      long peakSamples) {
    metrics.queryDuration.labelValues("queue_time").observe(queuedNanos / 1e9);
    metrics.queryDuration.labelValues("inner_eval").observe(evalNanos / 1e9);
    QueryLog log = queryLog;
    if (log != null) {
      log.log(plan, request, queuedNanos, evalNanos, peakSamples);
    }
  }

  /** Writes every evaluated query to {@code log} from now on ({@code --query-log-file}). */
  public void queryLog(QueryLog log) {
    this.queryLog = log;
  }

  /**
   * Serves {@code /api/v1/export} and {@code /api/v1/import} ({@link BulkTransfer}) from now on,
   * writing imports through {@code appender}, bodies of at most {@code maxBodyBytes}.
   */
  public void bulk(dev.tidemark.tsdb.append.Appender appender, long maxBodyBytes) {
    this.bulk = new BulkTransfer(backend.querier(), appender, backend.clock(), maxBodyBytes);
  }

  /**
   * Serves the TSDB admin APIs through {@code admin} from now on ({@code --web-enable-admin-api}).
   */
  public void admin(TsdbAdmin admin) {
    this.admin = admin;
  }

  private void admin(String endpoint, Request request, Response response, Callback callback) {
    String method = request.getMethod();
    if (!method.equals("POST") && !method.equals("PUT")) {
      response.getHeaders().put(HttpHeader.ALLOW, "POST, PUT");
      Response.writeError(request, response, callback, 405, "Method Not Allowed");
      return;
    }
    java.util.Map<String, String> data;
    try {
      data =
          AdminEndpoints.run(
              admin,
              endpoint,
              new ApiParams(Request.extractQueryParameters(request, StandardCharsets.UTF_8)));
    } catch (ApiError e) {
      respondError(response, callback, e);
      return;
    } catch (RuntimeException e) {
      respondError(response, callback, asApiError(e));
      return;
    }
    if (data == null) {
      response.setStatus(204);
      callback.succeeded();
      return;
    }
    byte[] body;
    try {
      body =
          new com.fasterxml.jackson.databind.ObjectMapper()
              .writeValueAsBytes(java.util.Map.of("status", "success", "data", data));
    } catch (IOException e) {
      callback.failed(e);
      return;
    }
    response.setStatus(200);
    response.getHeaders().put(HttpHeader.CONTENT_TYPE, JSON);
    response.write(true, java.nio.ByteBuffer.wrap(body), callback);
  }

  /** {@code /federate} ({@link Federation}). */
  public static final String FEDERATE_PATH = Federation.PATH;

  /** Serves {@code /federate} ({@link Federation}). */
  public void federate(Request request, Response response, Callback callback) {
    federation.handle(request, response, timed(callback, Federation.PATH, System.nanoTime()));
  }

  @Override
  public boolean handle(Request request, Response response, Callback callback) {
    String path = Request.getPathInContext(request);
    if (!path.startsWith(PREFIX)) {
      return false;
    }
    String endpoint = path.substring(PREFIX.length());
    if (endpoint.equals(RemoteRead.ENDPOINT)) {
      remoteRead.handle(request, response, callback);
      return true;
    }
    if (endpoint.startsWith(AdminEndpoints.PREFIX)) {
      admin(endpoint, request, response, callback);
      return true;
    }
    if (endpoint.equals("export")
        || endpoint.equals("import")
        || endpoint.equals("import/prometheus")) {
      BulkTransfer b = bulk;
      long arrived = System.nanoTime();
      Callback timed = timed(callback, PREFIX + endpoint, arrived);
      if (b == null) {
        Federation.text(response, timed, 503, "export and import are not available yet");
        return true;
      }
      try {
        if (endpoint.equals("export")) {
          b.export(request, response, timed);
        } else {
          b.importLines(endpoint.equals("import/prometheus"), request, response, timed);
        }
      } catch (java.io.IOException | RuntimeException e) {
        timed.failed(e);
      }
      return true;
    }
    String method = request.getMethod();
    Route route = route(endpoint);
    if (route == null) {
      return false; // the caller answers 404
    }
    if (method.equals("OPTIONS")) {
      response.setStatus(204);
      response
          .getHeaders()
          .put(HttpHeader.ALLOW, route.post ? "GET, POST, OPTIONS" : "GET, OPTIONS");
      callback.succeeded();
      return true;
    }
    if (!method.equals("GET") && !(route.post && method.equals("POST"))) {
      response.getHeaders().put(HttpHeader.ALLOW, route.post ? "GET, POST" : "GET");
      Response.writeError(request, response, callback, 405, "Method Not Allowed");
      return true;
    }
    long arrived = System.nanoTime();
    callback = timed(callback, ApiMetrics.handler(route.name), arrived);
    Fields query = Request.extractQueryParameters(request, StandardCharsets.UTF_8);
    String contentType = request.getHeaders().get(HttpHeader.CONTENT_TYPE);
    if (!method.equals("POST")
        || contentType == null
        || !contentType
            .toLowerCase(java.util.Locale.ROOT)
            .startsWith("application/x-www-form-urlencoded")) {
      dispatch(route, endpoint, new ApiParams(query), request, response, callback, arrived);
      return true;
    }
    // A form body, read on this thread (forms are small; the connection's idle timeout bounds a
    // client that stalls). URL parameters come first, as in Go.
    Fields form;
    try {
      form = FormFields.getFields(request, MAX_FORM_FIELDS, MAX_FORM_BYTES);
    } catch (RuntimeException e) {
      respondError(
          response, callback, ApiError.badData("error parsing form values: " + describe(e)));
      return true;
    }
    Fields all = new Fields(true);
    for (Fields.Field f : query) {
      for (String v : f.getValues()) {
        all.add(f.getName(), v);
      }
    }
    for (Fields.Field f : form) {
      for (String v : f.getValues()) {
        all.add(f.getName(), v);
      }
    }
    dispatch(route, endpoint, new ApiParams(all), request, response, callback, arrived);
    return true;
  }

  /** An endpoint: whether it accepts POST, and whether it reads the store (runs in the pool). */
  private record Route(String name, boolean post, boolean heavy) {}

  private static Route route(String endpoint) {
    switch (endpoint) {
      case "query", "query_range", "series", "labels":
        return new Route(endpoint, true, true);
      case "query_exemplars":
        return new Route(endpoint, true, false);
      case "format_query", "parse_query":
        return new Route(endpoint, true, false);
      case "metadata",
      "status/buildinfo",
      "status/runtimeinfo",
      "status/flags",
      "status/config",
      "rules",
      "alerts",
      "targets":
        return new Route(endpoint, false, false);
      case "status/tsdb":
        return new Route(endpoint, false, true);
      default:
        if (endpoint.startsWith("label/")
            && endpoint.endsWith("/values")
            && endpoint.length() > "label//values".length()) {
          return new Route("label_values", false, true);
        }
        return null;
    }
  }

  private void dispatch(
      Route route,
      String endpoint,
      ApiParams p,
      Request request,
      Response response,
      Callback callback,
      long arrived) {
    try {
      if (!route.heavy) {
        respond(response, callback, light(route, p));
        return;
      }
      Function<QueryControl, Answer> work =
          plan(
              route,
              endpoint,
              p,
              arrived,
              new QueryEndpoints.RequestInfo(
                  Request.getRemoteAddr(request),
                  request.getMethod(),
                  Request.getPathInContext(request)));
      InFlight q = new InFlight();
      request.addFailureListener(t -> q.clientGone());
      // The connection's idle timeout must not cut off a client waiting for a long query; the
      // query's own timeout bounds the wait.
      request.addIdleTimeoutListener(t -> q.done.get());
      q.watch = disconnects.watch(request, q::clientGone);
      try {
        pool.submit(
            () -> {
              Answer a;
              try {
                if (q.control.isCanceled()) {
                  throw new ApiError(ApiError.Type.CANCELED, "query was canceled in query queue");
                }
                a = work.apply(q.control);
              } catch (RuntimeException | Error e) {
                q.finish();
                respondError(response, callback, asApiError(e));
                return;
              }
              q.finish();
              respond(response, callback, a);
            },
            () -> {
              q.finish();
              respondError(
                  response,
                  callback,
                  new ApiError(ApiError.Type.UNAVAILABLE, "the server is stopping"));
            });
      } catch (RuntimeException e) {
        q.finish();
        throw e;
      }
    } catch (RuntimeException | StackOverflowError e) {
      respondError(response, callback, asApiError(e));
    }
  }

  /** A query between its arrival and its answer: cancelled if its client goes away meanwhile. */
  private final class InFlight {
    final QueryControl control = new QueryControl();
    final AtomicBoolean done = new AtomicBoolean();
    volatile DisconnectWatcher.Watch watch;

    void clientGone() {
      if (!done.get()) {
        canceledByClient.increment();
        control.cancel();
      }
    }

    /** The query is over (answered, failed or never run): stop watching its client. */
    void finish() {
      done.set(true);
      DisconnectWatcher.Watch w = watch;
      if (w != null) {
        w.end();
      }
    }
  }

  /** Checks the parameters now (so that bad ones never wait for a slot) and returns the work. */
  private Function<QueryControl, Answer> plan(
      Route route, String endpoint, ApiParams p, long arrived, QueryEndpoints.RequestInfo info) {
    switch (route.name) {
      case "query":
        {
          QueryEndpoints.Plan plan = queries.planInstant(p);
          return c -> queries.run(plan, arrived, c, info);
        }
      case "query_range":
        {
          QueryEndpoints.Plan plan = queries.planRange(p);
          return c -> queries.run(plan, arrived, c, info);
        }
      case "series":
        {
          SeriesEndpoints.Plan plan = series.planSeries(p);
          return c -> series.series(plan, arrived, c);
        }
      case "labels":
        {
          SeriesEndpoints.Plan plan = series.planLabels(p, null);
          return c -> series.labelNames(plan, arrived, c);
        }
      case "label_values":
        {
          String raw =
              endpoint.substring("label/".length(), endpoint.length() - "/values".length());
          String name = SeriesEndpoints.labelName(URLDecoder.decode(raw, StandardCharsets.UTF_8));
          SeriesEndpoints.Plan plan = series.planLabels(p, name);
          return c -> series.labelValues(plan, arrived, c);
        }
      case "status/tsdb":
        {
          int limit = StatusEndpoints.tsdbLimit(p);
          boolean buckets = StatusEndpoints.tsdbBuckets(p);
          long timeout = queryTimeoutMillis;
          return c -> status.tsdb(limit, buckets, QueryEndpoints.readContext(arrived, timeout, c));
        }
      default:
        throw new AssertionError(route.name);
    }
  }

  private Answer light(Route route, ApiParams p) {
    switch (route.name) {
      case "format_query":
        {
          Expr e = parseQuery(p.get("query"));
          String text = e.toString();
          return Answer.of(json -> json.g.writeString(text));
        }
      case "parse_query":
        {
          Expr e = parseQuery(p.get("query"));
          return Answer.of(json -> AstJson.write(json.g, e));
        }
      case "query_exemplars":
        {
          long start = p.time("start", ApiParams.MIN_TIME);
          long end = p.time("end", ApiParams.MAX_TIME);
          if (end < start) {
            throw ApiError.badData("end timestamp must not be before start timestamp");
          }
          try {
            PromqlParser.parseExpr(p.get("query"), parserOptions);
          } catch (ParseException e) {
            throw ApiError.badData(e.getMessage());
          }
          // Exemplars are not stored (yet): every selector has none.
          return Answer.of(
              json -> {
                json.g.writeStartArray();
                json.g.writeEndArray();
              });
        }
      case "metadata":
        return status.metadata(p);
      case "status/buildinfo":
        return status.buildInfo();
      case "status/runtimeinfo":
        return status.runtimeInfo();
      case "status/flags":
        return status.flags();
      case "status/config":
        return status.config();
      case "rules":
        return status.rules();
      case "alerts":
        return status.alerts();
      case "targets":
        return status.targets();
      default:
        throw new AssertionError(route.name);
    }
  }

  private Expr parseQuery(String query) {
    try {
      return PromqlParser.parseExpr(query, parserOptions);
    } catch (ParseException e) {
      throw ApiError.invalidParam("query", e.getMessage());
    }
  }

  private static ApiError asApiError(Throwable e) {
    if (e instanceof ApiError a) {
      return a;
    }
    if (e instanceof QueryAbortedException q) { // a read stopped by its deadline or client
      return QueryEndpoints.aborted(q, "store read");
    }
    if (e instanceof StackOverflowError) { // the parser limits nesting; this is the safety net
      return new ApiError(ApiError.Type.EXECUTION, "query is nested too deeply to process");
    }
    LOG.log(System.Logger.Level.ERROR, "query API request failed", e);
    return new ApiError(ApiError.Type.INTERNAL, "internal error: " + describe(e));
  }

  /** A failure described without Java class names. */
  private static String describe(Throwable e) {
    String m = e.getMessage();
    return m == null || m.isBlank() ? "unexpected failure (see the server log)" : m;
  }

  private static void respond(Response response, Callback callback, Answer answer) {
    response.setStatus(200);
    response.getHeaders().put(HttpHeader.CONTENT_TYPE, JSON);
    AnswerStream out = new AnswerStream(response);
    try (ApiJson json = new ApiJson(out)) {
      json.beginSuccess();
      answer.writeData(json);
      json.endSuccess(answer.warnings(), answer.infos());
    } catch (IOException | RuntimeException e) {
      callback.failed(e);
      return;
    }
    out.finish(callback);
  }

  private static void respondError(Response response, Callback callback, ApiError e) {
    response.setStatus(e.type.status);
    response.getHeaders().put(HttpHeader.CONTENT_TYPE, JSON);
    AnswerStream out = new AnswerStream(response);
    try (ApiJson json = new ApiJson(out)) {
      json.error(e);
    } catch (IOException | RuntimeException x) {
      callback.failed(x);
      return;
    }
    out.finish(callback);
  }

  /** Queries canceled because their client went away (for metrics). */
  public long canceledByClient() {
    return canceledByClient.sum();
  }

  /** Queries running now (for metrics). */
  public int runningQueries() {
    return pool.running();
  }

  /** Queries waiting for a slot (for metrics). */
  public int queuedQueries() {
    return pool.queued();
  }

  /** Samples the running queries hold together (for metrics; query-max-samples-total bounds it). */
  public long samplesHeld() {
    return queries.samplesHeld();
  }

  @Override
  public void close() {
    pool.close();
    disconnects.close();
  }

  /**
   * Stops taking queries and waits up to {@code wait} for the running ones.
   *
   * @return true if none was still running
   */
  public boolean close(java.time.Duration wait) {
    boolean clean = pool.close(wait);
    disconnects.close();
    return clean;
  }
}
