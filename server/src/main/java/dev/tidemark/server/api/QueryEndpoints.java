package dev.tidemark.server.api;

import dev.tidemark.promql.engine.EngineOptions;
import dev.tidemark.promql.engine.PromqlEngine;
import dev.tidemark.promql.engine.QueryControl;
import dev.tidemark.promql.engine.QueryException;
import dev.tidemark.promql.engine.QueryMemory;
import dev.tidemark.promql.engine.QueryResult;
import dev.tidemark.promql.engine.Value;
import dev.tidemark.promql.parser.ParserOptions;
import dev.tidemark.tsdb.model.PromText;
import dev.tidemark.tsdb.query.QueryAbortedException;
import dev.tidemark.tsdb.query.QueryContext;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code /api/v1/query} and {@code /api/v1/query_range}: parameters checked in Prometheus' order
 * and with its messages, then the query evaluated by the PromQL engine within the request's
 * deadline and the server's sample limit.
 */
final class QueryEndpoints {

  /** Prometheus refuses a range query of more points than this per series. */
  static final long MAX_POINTS_PER_SERIES = 11_000;

  private final ApiBackend backend;
  private final QueryConfig config;
  private final ParserOptions parserOptions;

  /** The samples every query of this API holds together ({@link QueryConfig#maxSamplesTotal()}). */
  private final QueryMemory memory;

  /** Who asked for a query, for the query log. */
  record RequestInfo(String clientIp, String method, String path) {}

  /**
   * Receives each evaluated query with its request, its time waiting for a slot and evaluating
   * (nanoseconds) and its peak samples.
   */
  @FunctionalInterface
  interface Timings {
    void record(Plan plan, RequestInfo request, long queuedNanos, long evalNanos, long peakSamples);
  }

  private Timings timings = (p, r, q, e, s) -> {};

  void timings(Timings t) {
    this.timings = t;
  }

  QueryEndpoints(ApiBackend backend, QueryConfig config) {
    this.backend = backend;
    this.config = config;
    this.parserOptions = config.promql().parserOptions();
    this.memory = new QueryMemory(config.maxSamplesTotal());
  }

  /** Samples the queries running now hold. */
  long samplesHeld() {
    return memory.held();
  }

  /** What a query request asked for, parsed before it waits for a slot. */
  record Plan(
      String query,
      boolean range,
      long start,
      long end,
      long step,
      int limit,
      long timeoutMillis,
      long lookbackMillis,
      String stats) {}

  Plan planInstant(ApiParams p) {
    int limit = p.limit();
    long time = p.time("time", backend.clock().millis());
    long timeout = timeout(p);
    long lookback = lookback(p);
    return new Plan(p.get("query"), false, time, time, 0, limit, timeout, lookback, p.get("stats"));
  }

  Plan planRange(ApiParams p) {
    int limit = p.limit();
    long start = p.requiredTime("start");
    long end = p.requiredTime("end");
    if (end < start) {
      throw ApiError.invalidParam("end", "end timestamp must not be before start time");
    }
    long step = p.durationMillis("step");
    if (step <= 0) {
      throw ApiError.invalidParam(
          "step",
          "zero or negative query resolution step widths are not accepted. Try a positive integer");
    }
    if ((end - start) / step > MAX_POINTS_PER_SERIES) {
      throw ApiError.badData(
          "exceeded maximum resolution of 11,000 points per timeseries. Try decreasing the query"
              + " resolution (?step=XX)");
    }
    long timeout = timeout(p);
    long lookback = lookback(p);
    return new Plan(
        p.get("query"), true, start, end, step, limit, timeout, lookback, p.get("stats"));
  }

  private long timeout(ApiParams p) {
    return timeoutMillis(p, config);
  }

  /**
   * The request's budget in milliseconds: the configured query timeout, shortened (never
   * lengthened) by a {@code timeout} parameter.
   */
  static long timeoutMillis(ApiParams p, QueryConfig config) {
    long max = config.timeout().toMillis();
    if (p.get("timeout").isEmpty()) {
      return max;
    }
    return Math.min(max, Math.max(0, p.durationMillis("timeout")));
  }

  /**
   * What a store read of a request that arrived at {@code arrivedNanos} with {@code timeoutMillis}
   * may spend: the rest of its deadline, and {@code control}'s cancellation (its client went away).
   *
   * @throws ApiError timeout when the deadline passed while it waited for a slot
   */
  static QueryContext readContext(long arrivedNanos, long timeoutMillis, QueryControl control) {
    long deadline = arrivedNanos + timeoutMillis * 1_000_000;
    if (System.nanoTime() - deadline >= 0) {
      throw new ApiError(ApiError.Type.TIMEOUT, "query timed out in query queue");
    }
    return QueryContext.of(deadline, control::isCanceled);
  }

  /**
   * A store read stopped by its {@link QueryContext}, as Prometheus answers it: a timeout 503
   * {@code timeout}, a cancellation 499 {@code canceled}; {@code where} names the read.
   */
  static ApiError aborted(QueryAbortedException e, String where) {
    return e.reason() == QueryAbortedException.Reason.TIMEOUT
        ? new ApiError(ApiError.Type.TIMEOUT, "query timed out in " + where)
        : new ApiError(ApiError.Type.CANCELED, "query was canceled in " + where);
  }

  private long lookback(ApiParams p) {
    String s = p.get("lookback_delta");
    if (s.isEmpty()) {
      return config.lookbackDelta().toMillis();
    }
    try {
      return ApiParams.parseDurationMillis(s);
    } catch (IllegalArgumentException e) {
      throw ApiError.badData("error parsing lookback delta duration: " + e.getMessage());
    }
  }

  /**
   * Evaluates {@code plan}; {@code arrivedNanos} is when the request arrived, so that time spent
   * waiting for a slot counts against the timeout.
   */
  Answer run(Plan plan, long arrivedNanos, QueryControl control, RequestInfo request) {
    long queuedNanos = System.nanoTime() - arrivedNanos;
    long remaining = plan.timeoutMillis() - queuedNanos / 1_000_000;
    if (remaining <= 0) {
      throw new ApiError(ApiError.Type.TIMEOUT, "query timed out in query queue");
    }
    EngineOptions options =
        new EngineOptions(
            plan.lookbackMillis() > 0
                ? Duration.ofMillis(plan.lookbackMillis())
                : config.lookbackDelta(),
            config.maxSamples(),
            Duration.ofMillis(remaining),
            EngineOptions.DEFAULTS.defaultSubqueryStep(),
            QueryConfig.defaultQueryThreads(),
            config.promql().delayedNameRemoval(),
            config.promql().typeAndUnitLabels());
    PromqlEngine engine = new PromqlEngine(options, parserOptions, memory);
    long t0 = System.nanoTime();
    QueryResult result;
    try {
      result =
          plan.range()
              ? engine.rangeQuery(
                  backend.querier(), plan.query(), plan.start(), plan.end(), plan.step(), control)
              : engine.instantQuery(backend.querier(), plan.query(), plan.start(), control);
    } catch (QueryException e) {
      throw translate(e);
    }
    long evalNanos = System.nanoTime() - t0;
    timings.record(plan, request, queuedNanos, evalNanos, control.peakSamples());
    Value value = result.value();
    List<String> warnings = new ArrayList<>(result.annotations().warnings());
    int size =
        value instanceof Value.Vector v
            ? v.samples().size()
            : value instanceof Value.Matrix m ? m.series().size() : 0;
    if (plan.limit() > 0 && size > plan.limit()) {
      warnings.add("results truncated due to limit");
    }
    String stats = plan.stats();
    if (!stats.isEmpty() && !stats.equals("true") && !stats.equals("all")) {
      warnings.add(
          "value "
              + PromText.quote(stats)
              + " for parameter \"stats\" is deprecated and will be"
              + " rejected in the next major release, use \"true\" or \"all\"");
    }
    ApiJson.StatsWriter statsWriter =
        stats.isEmpty()
            ? null
            : g -> {
              g.writeStartObject();
              g.writeObjectFieldStart("timings");
              g.writeNumberField("evalTotalTime", evalNanos / 1e9);
              g.writeNumberField("resultSortTime", 0.0);
              g.writeNumberField("queryPreparationTime", 0.0);
              g.writeNumberField("innerEvalTime", evalNanos / 1e9);
              g.writeNumberField("execQueueTime", queuedNanos / 1e9);
              g.writeNumberField("execTotalTime", (queuedNanos + evalNanos) / 1e9);
              g.writeEndObject();
              g.writeObjectFieldStart("samples");
              g.writeNumberField("peakSamples", control.peakSamples());
              g.writeEndObject();
              g.writeEndObject();
            };
    return Answer.of(
        json -> json.queryData(value, plan.limit(), statsWriter),
        warnings,
        result.annotations().infos());
  }

  /** The engine's errors as Prometheus' API answers them; a parse error is a bad "query". */
  static ApiError translate(QueryException e) {
    return switch (e.errorType()) {
      case BAD_DATA -> ApiError.invalidParam("query", e.getMessage());
      case TIMEOUT -> new ApiError(ApiError.Type.TIMEOUT, e.getMessage());
      case CANCELED -> new ApiError(ApiError.Type.CANCELED, e.getMessage());
      default -> new ApiError(ApiError.Type.EXECUTION, e.getMessage());
    };
  }
}
