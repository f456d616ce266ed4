package dev.tidemark.server.api;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.tidemark.tsdb.append.SampleBatch;
import dev.tidemark.tsdb.engine.Engine;
import dev.tidemark.tsdb.engine.EngineConfig;
import dev.tidemark.tsdb.kv.InMemoryKvStore;
import dev.tidemark.tsdb.model.FamilyMetadata;
import dev.tidemark.tsdb.model.Labels;
import dev.tidemark.tsdb.model.MetricMetadata;
import dev.tidemark.tsdb.model.PromType;
import dev.tidemark.tsdb.query.ForwardingQuerier;
import dev.tidemark.tsdb.query.LabelMatcher;
import dev.tidemark.tsdb.query.Querier;
import dev.tidemark.tsdb.query.QueryAbortedException;
import dev.tidemark.tsdb.query.QueryContext;
import dev.tidemark.tsdb.query.SeriesSet;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.server.handler.gzip.GzipHandler;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The query API over a real engine (in-memory store) behind a real Jetty server, through the JDK's
 * HTTP client: shapes, parameter forms, errors, limits, concurrency and cancellation.
 */
class PrometheusApiTest {
  static final long T0 = 1_790_000_000_000L; // 2026-09-21T14:13:20Z, a whole second
  static final ObjectMapper JSON = new ObjectMapper();

  private final HttpClient http = HttpClient.newHttpClient();
  private final List<AutoCloseable> open = new ArrayList<>();

  @AfterEach
  void close() throws Exception {
    for (int i = open.size() - 1; i >= 0; i--) {
      open.get(i).close();
    }
  }

  /** A server over an engine holding up{job=a|b} and http_requests_total every 15 s for 10 min. */
  String serve(QueryConfig config) throws Exception {
    Clock clock = Clock.fixed(Instant.ofEpochMilli(T0 + 600_000), ZoneOffset.UTC);
    Engine engine =
        Engine.open(
            new InMemoryKvStore(),
            EngineConfig.builder().clock(clock).retentionInterval(Duration.ZERO).build());
    open.add(engine);
    SampleBatch b = new SampleBatch();
    for (long t = T0; t <= T0 + 600_000; t += 15_000) {
      double k = (t - T0) / 15_000.0;
      b.addPoint(Labels.of("__name__", "up", "job", "a"), MetricMetadata.UNKNOWN, t, 1);
      b.addPoint(Labels.of("__name__", "up", "job", "b"), MetricMetadata.UNKNOWN, t, 0);
      b.addPoint(
          Labels.of("__name__", "http_requests_total", "job", "a", "code", "200"),
          MetricMetadata.UNKNOWN,
          t,
          10 * k);
      b.addPoint(Labels.of("__name__", "tiny", "job", "a"), MetricMetadata.UNKNOWN, t, 1e-7);
    }
    assertThat(engine.append(b).rejectedPoints()).isZero();
    return serve(engine, config, clock);
  }

  String serve(Querier querier, QueryConfig config, Clock clock) throws Exception {
    ApiBackend backend =
        new ApiBackend(
            querier,
            () ->
                Map.of(
                    "http_requests_total",
                    new FamilyMetadata(
                        "http_requests_total", PromType.COUNTER, "", "Requests served")),
            () -> new Engine.Stats(4, 1000, 1, 1, 164, 0, 5, T0 + 600_000, 0, 0, 0, 0, 0, 0, 0, 0),
            () -> querier instanceof Engine e ? e.bucketInfo() : List.of(),
            () ->
                new ConfigState(
                    Map.of("retention", "15d"),
                    "retention: 15d\n",
                    Duration.ofDays(15),
                    true,
                    Instant.ofEpochMilli(T0)),
            "9.9.9",
            Instant.ofEpochMilli(T0),
            clock);
    PrometheusApi api = new PrometheusApi(backend, config);
    Server server = new Server();
    ServerConnector c = new ServerConnector(server);
    c.setHost("127.0.0.1");
    c.setPort(0);
    server.addConnector(c);
    GzipHandler gzip = new GzipHandler(api);
    gzip.setIncludedMethods("GET", "POST");
    server.setHandler(gzip);
    server.start();
    open.add(server::stop);
    open.add(api);
    return "http://127.0.0.1:" + c.getLocalPort();
  }

  HttpResponse<String> get(String base, String pathAndQuery) throws Exception {
    return http.send(
        HttpRequest.newBuilder(URI.create(base + pathAndQuery))
            .timeout(Duration.ofSeconds(30)) // a read that ignores its deadline fails, not hangs
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  HttpResponse<String> post(String base, String path, String form) throws Exception {
    return http.send(
        HttpRequest.newBuilder(URI.create(base + path))
            .timeout(Duration.ofSeconds(30))
            .header("Content-Type", "application/x-www-form-urlencoded")
            .POST(HttpRequest.BodyPublishers.ofString(form))
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  static String enc(String s) {
    return URLEncoder.encode(s, StandardCharsets.UTF_8);
  }

  static JsonNode json(HttpResponse<String> r) throws Exception {
    return JSON.readTree(r.body());
  }

  long sec(long millis) {
    return millis / 1000;
  }

  @Test
  void instantQueryAnswersAVectorAsPrometheusWritesIt() throws Exception {
    String base = serve(QueryConfig.DEFAULTS);
    HttpResponse<String> r =
        get(base, "/api/v1/query?query=" + enc("up") + "&time=" + sec(T0 + 300_000));
    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(r.headers().firstValue("Content-Type")).hasValue("application/json");
    assertThat(r.body())
        .isEqualTo(
            "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":["
                + "{\"metric\":{\"__name__\":\"up\",\"job\":\"a\"},\"value\":[1790000300,\"1\"]},"
                + "{\"metric\":{\"__name__\":\"up\",\"job\":\"b\"},\"value\":[1790000300,\"0\"]}]}}");
    // fractions of a second, small values in Go's exponent form
    r = get(base, "/api/v1/query?query=tiny&time=1790000300.5");
    assertThat(r.body()).contains("\"value\":[1790000300.500,\"1e-07\"]");
    // RFC 3339 time, POST form, scalar and string results
    r = post(base, "/api/v1/query", "query=" + enc("1/0") + "&time=2026-09-21T14:18:20.123Z");
    assertThat(r.body())
        .isEqualTo(
            "{\"status\":\"success\",\"data\":{\"resultType\":\"scalar\",\"result\":[1790000300.123,\"+Inf\"]}}");
    r = get(base, "/api/v1/query?query=" + enc("\"hi\"") + "&time=0");
    assertThat(r.body())
        .isEqualTo(
            "{\"status\":\"success\",\"data\":{\"resultType\":\"string\",\"result\":[0,\"hi\"]}}");
    // no time: now (the clock)
    r = get(base, "/api/v1/query?query=" + enc("-0*up{job=\"a\"}"));
    assertThat(json(r).at("/data/result/0/value/0").asLong()).isEqualTo(sec(T0 + 600_000));
    assertThat(json(r).at("/data/result/0/value/1").asText()).isEqualTo("-0");
  }

  @Test
  void rangeQueryAnswersAMatrixSortedByLabels() throws Exception {
    String base = serve(QueryConfig.DEFAULTS);
    String q =
        "/api/v1/query_range?query="
            + enc("rate(http_requests_total[1m])")
            + "&start="
            + sec(T0 + 60_000)
            + "&end="
            + sec(T0 + 180_000)
            + "&step=1m";
    JsonNode j = json(get(base, q));
    assertThat(j.at("/data/resultType").asText()).isEqualTo("matrix");
    assertThat(j.at("/data/result/0/metric").toString())
        .isEqualTo("{\"code\":\"200\",\"job\":\"a\"}");
    assertThat(j.at("/data/result/0/values").toString())
        .isEqualTo(
            "[[1790000060,\"0.6666666666666666\"],[1790000120,\"0.6666666666666666\"],[1790000180,\"0.6666666666666666\"]]");
    // step as seconds with a fraction, POST
    HttpResponse<String> r =
        post(
            base,
            "/api/v1/query_range",
            "query=up&start=" + sec(T0) + "&end=" + (sec(T0) + 1000) + "&step=500.0");
    // T0 + 1000 s is past the last sample (T0 + 600 s) by more than the lookback delta
    assertThat(json(r).at("/data/result/0/values").toString())
        .isEqualTo("[[1790000000,\"1\"],[1790000500,\"1\"]]");
  }

  @Test
  void badParametersGetPrometheusMessages() throws Exception {
    String base = serve(QueryConfig.DEFAULTS);
    assertError(
        get(base, "/api/v1/query?query=" + enc("sum(")),
        400,
        "bad_data",
        "invalid parameter \"query\": 1:5: parse error: unclosed left parenthesis");
    assertError(
        get(base, "/api/v1/query?query=up&time=yesterday"),
        400,
        "bad_data",
        "invalid parameter \"time\": invalid time value for 'time': cannot parse \"yesterday\" to a valid timestamp");
    assertError(
        get(base, "/api/v1/query_range?query=up&end=10&step=1"),
        400,
        "bad_data",
        "invalid parameter \"start\": cannot parse \"\" to a valid timestamp");
    assertError(
        get(base, "/api/v1/query_range?query=up&start=10&end=5&step=1"),
        400,
        "bad_data",
        "invalid parameter \"end\": end timestamp must not be before start time");
    assertError(
        get(base, "/api/v1/query_range?query=up&start=0&end=10&step=0"),
        400,
        "bad_data",
        "invalid parameter \"step\": zero or negative query resolution step widths are not accepted. Try a positive integer");
    assertError(
        get(base, "/api/v1/query_range?query=up&start=0&end=11001&step=1"),
        400,
        "bad_data",
        "exceeded maximum resolution of 11,000 points per timeseries. Try decreasing the query resolution (?step=XX)");
    assertThat(get(base, "/api/v1/query_range?query=up&start=0&end=11000&step=1").statusCode())
        .isEqualTo(200);
    assertError(
        get(base, "/api/v1/query_range?query=up&start=0&end=10&step=x"),
        400,
        "bad_data",
        "invalid parameter \"step\": cannot parse \"x\" to a valid duration");
    assertError(
        get(base, "/api/v1/query?query=up&timeout=soon"),
        400,
        "bad_data",
        "invalid parameter \"timeout\": cannot parse \"soon\" to a valid duration");
    assertError(
        get(base, "/api/v1/query?query=up&limit=-1"),
        400,
        "bad_data",
        "invalid parameter \"limit\": limit must be non-negative");
    assertError(
        get(base, "/api/v1/query?query=up&limit=x"),
        400,
        "bad_data",
        "invalid parameter \"limit\": strconv.Atoi: parsing \"x\": invalid syntax");
    assertError(
        get(base, "/api/v1/query?query=up&lookback_delta=x"),
        400,
        "bad_data",
        "error parsing lookback delta duration: cannot parse \"x\" to a valid duration");
    assertError(
        get(base, "/api/v1/query_range?query=" + enc("up[5m]") + "&start=0&end=1&step=1"),
        400,
        "bad_data",
        "invalid parameter \"query\": invalid expression type \"range vector\" for range query, must be Scalar or instant Vector");
    assertError(
        get(
            base,
            "/api/v1/query?query="
                + enc("up + on(job) group_left http_requests_total")
                + "&time="
                + sec(T0 + 60_000)),
        200,
        null,
        null);
    assertError(get(base, "/api/v1/series"), 400, "bad_data", "no match[] parameter provided");
    assertError(
        get(base, "/api/v1/series?match[]=" + enc("{job=~\".*\"}")),
        400,
        "bad_data",
        "invalid parameter \"match[]\": match[] must contain at least one non-empty matcher");
    assertError(get(base, "/api/v1/labels?match[]=" + enc("up{")), 400, "bad_data", null);
    assertThat(get(base, "/api/v1/nonsense").statusCode()).isEqualTo(404);
    HttpResponse<String> del =
        http.send(
            HttpRequest.newBuilder(URI.create(base + "/api/v1/query?query=up")).DELETE().build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(del.statusCode()).isEqualTo(405);
    assertThat(post(base, "/api/v1/label/job/values", "").statusCode()).isEqualTo(405);
  }

  @Test
  void executionErrorsAre422AndTooManySamplesIsOne() throws Exception {
    String base =
        serve(new QueryConfig(Duration.ofMinutes(2), 10, 20, 100, Duration.ofMinutes(5), false));
    assertError(
        get(base, "/api/v1/query?query=" + enc("up[10m]") + "&time=" + sec(T0 + 600_000)),
        422,
        "execution",
        "query processing would load too many samples into memory in query execution");
    // experimental functions are off unless configured
    assertError(
        get(base, "/api/v1/query?query=" + enc("sort_by_label(up, \"job\")")),
        400,
        "bad_data",
        null);
  }

  @Test
  void aQueryOverTheSharedSampleBudgetIsA422NamingIt() throws Exception {
    // Each query may hold 1,000 samples, all of them together 10: one query alone passes the
    // shared budget, and gets Prometheus' text naming it.
    String base =
        serve(
            new QueryConfig(
                Duration.ofMinutes(2), 1_000, 20, 100, Duration.ofMinutes(5), false, 10));
    assertError(
        get(base, "/api/v1/query?query=" + enc("up[10m]") + "&time=" + sec(T0 + 600_000)),
        422,
        "execution",
        "query processing would load too many samples into memory in query execution: the"
            + " queries running now would hold more than the 10 samples the server allows at"
            + " once");
  }

  @Test
  void tenThousandLevelsOfNestingAreA400NotA500() throws Exception {
    String base = serve(QueryConfig.DEFAULTS);
    String tooDeep = "parse error: expression nested too deeply: more than 500 levels";
    String parens = "(".repeat(10_000) + "up" + ")".repeat(10_000);
    assertError(
        post(base, "/api/v1/query", "query=" + enc(parens)),
        400,
        "bad_data",
        "invalid parameter \"query\": 1:501: " + tooDeep);
    assertError(
        post(
            base,
            "/api/v1/query_range",
            "query="
                + enc("-".repeat(10_000) + "up")
                + "&start="
                + sec(T0)
                + "&end="
                + sec(T0 + 600_000)
                + "&step=60"),
        400,
        "bad_data",
        "invalid parameter \"query\": 1:501: " + tooDeep);
    String chain = "up" + " + up".repeat(10_000);
    for (String endpoint : List.of("query", "format_query", "parse_query")) {
      HttpResponse<String> r = post(base, "/api/v1/" + endpoint, "query=" + enc(chain));
      assertError(r, 400, "bad_data", null);
      assertThat(json(r).get("error").asText()).endsWith(tooDeep);
    }
    // just below the limit the query is answered, printed and its tree written
    for (String deepest :
        List.of(
            "(".repeat(499) + "up" + ")".repeat(499),
            "abs(".repeat(499) + "up" + ")".repeat(499),
            "up" + " + up".repeat(499))) {
      for (String endpoint : List.of("query", "format_query", "parse_query")) {
        HttpResponse<String> r = post(base, "/api/v1/" + endpoint, "query=" + enc(deepest));
        assertThat(r.statusCode()).as(endpoint + " " + r.body()).isEqualTo(200);
      }
    }
  }

  @Test
  void aSubqueryOverTheSampleLimitIsA422() throws Exception {
    // {job="a"} is 3 series; over 10 minutes at a 15 s step the subquery holds 3 x 41 samples
    String q = "last_over_time({job=\"a\"}[10m:15s])";
    String small =
        serve(new QueryConfig(Duration.ofMinutes(2), 100, 20, 100, Duration.ofMinutes(5), false));
    assertError(
        get(small, "/api/v1/query?query=" + enc(q) + "&time=" + sec(T0 + 600_000)),
        422,
        "execution",
        "query processing would load too many samples into memory in query execution");
    assertError(
        get(
            small,
            "/api/v1/query_range?query="
                + enc("sum(" + q + ")")
                + "&start="
                + sec(T0)
                + "&end="
                + sec(T0 + 600_000)
                + "&step=60"),
        422,
        "execution",
        "query processing would load too many samples into memory in query execution");
    String enough =
        serve(new QueryConfig(Duration.ofMinutes(2), 1000, 20, 100, Duration.ofMinutes(5), false));
    JsonNode j = json(get(enough, "/api/v1/query?query=" + enc(q) + "&time=" + sec(T0 + 600_000)));
    assertThat(j.at("/status").asText()).as(j.toString()).isEqualTo("success");
    assertThat(j.at("/data/result").size()).isEqualTo(3);
  }

  @Test
  void limitTruncatesWithAWarning() throws Exception {
    String base = serve(QueryConfig.DEFAULTS);
    JsonNode j = json(get(base, "/api/v1/query?query=up&limit=1&time=" + sec(T0 + 60_000)));
    assertThat(j.at("/data/result").size()).isEqualTo(1);
    assertThat(j.at("/warnings").toString()).isEqualTo("[\"results truncated due to limit\"]");
    j = json(get(base, "/api/v1/series?match[]=up&match[]=tiny&limit=2"));
    assertThat(j.at("/data").toString())
        .isEqualTo("[{\"__name__\":\"tiny\",\"job\":\"a\"},{\"__name__\":\"up\",\"job\":\"a\"}]");
    assertThat(j.at("/warnings/0").asText()).isEqualTo("results truncated due to limit");
  }

  @Test
  void lookupsAskTheQuerierForOneMoreThanTheLimitAndWarnWhenCut() throws Exception {
    Clock clock = Clock.fixed(Instant.ofEpochMilli(T0 + 600_000), ZoneOffset.UTC);
    Engine engine =
        Engine.open(
            new InMemoryKvStore(),
            EngineConfig.builder().clock(clock).retentionInterval(Duration.ZERO).build());
    open.add(engine);
    SampleBatch b = new SampleBatch();
    for (int i = 0; i < 100; i++) {
      b.addPoint(
          Labels.of("__name__", "m", "i", String.format("%03d", i)), MetricMetadata.UNKNOWN, T0, i);
    }
    assertThat(engine.append(b).rejectedPoints()).isZero();
    List<Integer> limits = new java.util.concurrent.CopyOnWriteArrayList<>();
    Querier recording =
        new ForwardingQuerier(engine) {
          @Override
          public List<Labels> series(
              long minT, long maxT, List<LabelMatcher> matchers, int limit, QueryContext ctx) {
            limits.add(limit);
            return super.series(minT, maxT, matchers, limit, ctx);
          }

          @Override
          public List<String> labelNames(
              long minT, long maxT, List<LabelMatcher> matchers, int limit, QueryContext ctx) {
            limits.add(limit);
            return super.labelNames(minT, maxT, matchers, limit, ctx);
          }

          @Override
          public List<String> labelValues(
              String name,
              long minT,
              long maxT,
              List<LabelMatcher> matchers,
              int limit,
              QueryContext ctx) {
            limits.add(limit);
            return super.labelValues(name, minT, maxT, matchers, limit, ctx);
          }
        };
    String base = serve(recording, QueryConfig.DEFAULTS, clock);
    JsonNode j = json(get(base, "/api/v1/series?match[]=m&limit=10"));
    assertThat(j.at("/data").size()).isEqualTo(10);
    assertThat(j.at("/warnings").toString()).isEqualTo("[\"results truncated due to limit\"]");
    j = json(get(base, "/api/v1/label/i/values?limit=10"));
    assertThat(j.at("/data").size()).isEqualTo(10);
    assertThat(j.at("/warnings").toString()).isEqualTo("[\"results truncated due to limit\"]");
    j = json(get(base, "/api/v1/labels?limit=1"));
    assertThat(j.at("/data").size()).isEqualTo(1);
    assertThat(j.at("/warnings").toString()).isEqualTo("[\"results truncated due to limit\"]");
    assertThat(limits).containsExactly(11, 11, 2);
    // exactly as many as the limit: no warning; no limit: the querier is asked for every one
    limits.clear();
    assertThat(get(base, "/api/v1/labels?limit=2").body())
        .isEqualTo("{\"status\":\"success\",\"data\":[\"__name__\",\"i\"]}");
    assertThat(json(get(base, "/api/v1/series?match[]=m")).at("/data").size()).isEqualTo(100);
    assertThat(limits).containsExactly(3, 0);
  }

  @Test
  void seriesLabelsValuesMetadataAndStatus() throws Exception {
    String base = serve(QueryConfig.DEFAULTS);
    assertThat(get(base, "/api/v1/series?match[]=up").body())
        .isEqualTo(
            "{\"status\":\"success\",\"data\":[{\"__name__\":\"up\",\"job\":\"a\"},{\"__name__\":\"up\",\"job\":\"b\"}]}");
    assertThat(post(base, "/api/v1/series", "match[]=tiny&match[]=" + enc("up{job=\"b\"}")).body())
        .isEqualTo(
            "{\"status\":\"success\",\"data\":[{\"__name__\":\"tiny\",\"job\":\"a\"},{\"__name__\":\"up\",\"job\":\"b\"}]}");
    assertThat(get(base, "/api/v1/labels").body())
        .isEqualTo("{\"status\":\"success\",\"data\":[\"__name__\",\"code\",\"job\"]}");
    assertThat(post(base, "/api/v1/labels", "match[]=up").body())
        .isEqualTo("{\"status\":\"success\",\"data\":[\"__name__\",\"job\"]}");
    assertThat(get(base, "/api/v1/label/__name__/values").body())
        .isEqualTo("{\"status\":\"success\",\"data\":[\"http_requests_total\",\"tiny\",\"up\"]}");
    assertThat(
            get(
                    base,
                    "/api/v1/label/job/values?match[]=up&start=" + sec(T0) + "&end=" + sec(T0 + 1))
                .body())
        .isEqualTo("{\"status\":\"success\",\"data\":[\"a\",\"b\"]}");
    assertThat(get(base, "/api/v1/label/nosuch/values").body())
        .isEqualTo("{\"status\":\"success\",\"data\":[]}");
    assertThat(get(base, "/api/v1/metadata").body())
        .isEqualTo(
            "{\"status\":\"success\",\"data\":{\"http_requests_total\":[{\"type\":\"counter\",\"help\":\"Requests served\",\"unit\":\"\"}]}}");
    assertThat(get(base, "/api/v1/metadata?metric=up").body())
        .isEqualTo("{\"status\":\"success\",\"data\":{}}");
    assertThat(json(get(base, "/api/v1/status/buildinfo")).at("/data/version").asText())
        .isEqualTo("9.9.9");
    assertThat(json(get(base, "/api/v1/status/runtimeinfo")).at("/data/storageRetention").asText())
        .isEqualTo("15d");
    assertThat(get(base, "/api/v1/status/flags").body())
        .isEqualTo("{\"status\":\"success\",\"data\":{\"retention\":\"15d\"}}");
    JsonNode tsdb = json(get(base, "/api/v1/status/tsdb?limit=2"));
    assertThat(tsdb.at("/data/headStats/numSeries").asInt()).isEqualTo(4);
    assertThat(tsdb.at("/data/seriesCountByMetricName").toString())
        .isEqualTo(
            "[{\"name\":\"up\",\"value\":2},{\"name\":\"http_requests_total\",\"value\":1}]");
    assertThat(tsdb.at("/data/newSeriesCountByMetricName").toString())
        .as("churn: every series is new in the newest hour")
        .isEqualTo(
            "[{\"name\":\"up\",\"value\":2},{\"name\":\"http_requests_total\",\"value\":1}]");
    assertThat(tsdb.at("/data/compaction/buckets").asInt()).isEqualTo(1);
    assertThat(tsdb.at("/data/buckets").isMissingNode()).as("only when asked").isTrue();
    JsonNode withBuckets = json(get(base, "/api/v1/status/tsdb?buckets=1"));
    assertThat(withBuckets.at("/data/buckets").size()).isEqualTo(1);
    assertThat(withBuckets.at("/data/buckets/0/series").asInt()).isEqualTo(4);
    assertThat(withBuckets.at("/data/buckets/0/durationSeconds").asInt()).isEqualTo(3600);
    assertThat(withBuckets.at("/data/buckets/0/open").asBoolean()).isTrue();
    assertError(
        get(base, "/api/v1/status/tsdb?buckets=maybe"),
        400,
        "bad_data",
        "buckets must be true or false");
    assertError(
        get(base, "/api/v1/status/tsdb?limit=0"),
        400,
        "bad_data",
        "limit must be a positive number");
    assertThat(get(base, "/api/v1/rules").body())
        .isEqualTo("{\"status\":\"success\",\"data\":{\"groups\":[]}}");
    assertThat(get(base, "/api/v1/alerts").body())
        .isEqualTo("{\"status\":\"success\",\"data\":{\"alerts\":[]}}");
    assertThat(json(get(base, "/api/v1/targets")).at("/data/activeTargets").size()).isZero();
    assertThat(get(base, "/api/v1/query_exemplars?query=up").body())
        .isEqualTo("{\"status\":\"success\",\"data\":[]}");
    assertThat(get(base, "/api/v1/format_query?query=" + enc("sum(rate(x[5m]))by(job)")).body())
        .isEqualTo("{\"status\":\"success\",\"data\":\"sum by (job) (rate(x[5m]))\"}");
    assertThat(
            json(get(base, "/api/v1/parse_query?query=" + enc("-up offset 5m")))
                .at("/data")
                .toString())
        .isEqualTo(
            "{\"type\":\"unaryExpr\",\"op\":\"-\",\"expr\":{\"type\":\"vectorSelector\",\"name\":\"up\",\"offset\":300000,"
                + "\"offsetExpr\":null,\"matchers\":[{\"name\":\"__name__\",\"value\":\"up\",\"type\":\"=\"}],\"timestamp\":null,"
                + "\"startOrEnd\":null,\"anchored\":false,\"smoothed\":false}}");
  }

  @Test
  void statsAndGzip() throws Exception {
    String base = serve(QueryConfig.DEFAULTS);
    JsonNode j = json(get(base, "/api/v1/query?query=up&stats=all&time=" + sec(T0 + 60_000)));
    assertThat(j.at("/data/stats/timings/evalTotalTime").isNumber()).isTrue();
    assertThat(j.at("/data/stats/samples/peakSamples").asLong()).isPositive();
    HttpResponse<byte[]> gz =
        http.send(
            HttpRequest.newBuilder(
                    URI.create(
                        base
                            + "/api/v1/query_range?query=up&start=0&end="
                            + sec(T0 + 600_000)
                            + "&step="
                            + (sec(T0 + 600_000) / 10000)))
                .header("Accept-Encoding", "gzip")
                .build(),
            HttpResponse.BodyHandlers.ofByteArray());
    assertThat(gz.headers().firstValue("Content-Encoding")).hasValue("gzip");
    String body =
        new String(
            new java.util.zip.GZIPInputStream(new java.io.ByteArrayInputStream(gz.body()))
                .readAllBytes(),
            StandardCharsets.UTF_8);
    assertThat(body).startsWith("{\"status\":\"success\",\"data\":{\"resultType\":\"matrix\"");
  }

  @Test
  void smallAnswersCarryTheirLengthLargeOnesAreStreamed() throws Exception {
    String base = serve(QueryConfig.DEFAULTS);
    HttpResponse<String> small = get(base, "/api/v1/label/job/values");
    assertThat(small.body()).isEqualTo("{\"status\":\"success\",\"data\":[\"a\",\"b\"]}");
    assertThat(small.headers().firstValue("Content-Length"))
        .hasValue(Integer.toString(small.body().length()));
    assertThat(small.headers().firstValue("Transfer-Encoding")).isEmpty();
    HttpResponse<String> error = get(base, "/api/v1/query?query=up(");
    assertThat(error.statusCode()).isEqualTo(400);
    assertThat(error.headers().firstValue("Content-Length"))
        .hasValue(Integer.toString(error.body().length()));
    // 4 series x 1,001 steps: well over AnswerStream.LIMIT
    HttpResponse<String> large =
        get(
            base,
            "/api/v1/query_range?query=%7B__name__%3D~%22.%2B%22%7D&start="
                + sec(T0)
                + "&end="
                + sec(T0 + 600_000)
                + "&step=0.6");
    assertThat(large.body().length()).isGreaterThan(AnswerStream.LIMIT);
    assertThat(large.headers().firstValue("Content-Length")).isEmpty();
    JsonNode j = json(large);
    assertThat(j.at("/data/result").size()).isEqualTo(4);
    assertThat(j.at("/data/result/0/values").size()).isEqualTo(1001);
  }

  /** A querier whose select waits until released: queries that occupy their slot. */
  static final class Gate extends ForwardingQuerier {
    final CountDownLatch entered = new CountDownLatch(1);
    final CountDownLatch release = new CountDownLatch(1);

    Gate(Querier inner) {
      super(inner);
    }

    @Override
    public SeriesSet select(long minT, long maxT, List<LabelMatcher> matchers, QueryContext ctx) {
      entered.countDown();
      try {
        release.await(20, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      return super.select(minT, maxT, matchers, ctx);
    }
  }

  Engine emptyEngine(Clock clock) {
    Engine engine =
        Engine.open(
            new InMemoryKvStore(),
            EngineConfig.builder().clock(clock).retentionInterval(Duration.ZERO).build());
    open.add(engine);
    return engine;
  }

  @Test
  void beyondConcurrencyAndQueueA503AndOtherEndpointsStillAnswer() throws Exception {
    Clock clock = Clock.fixed(Instant.ofEpochMilli(T0), ZoneOffset.UTC);
    Gate gate = new Gate(emptyEngine(clock));
    String base =
        serve(
            gate,
            new QueryConfig(Duration.ofMinutes(1), 1000, 1, 1, Duration.ofMinutes(5), false),
            clock);
    CompletableFuture<HttpResponse<String>> running =
        http.sendAsync(
            HttpRequest.newBuilder(URI.create(base + "/api/v1/query?query=up")).build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(gate.entered.await(10, TimeUnit.SECONDS)).isTrue();
    CompletableFuture<HttpResponse<String>> queued =
        http.sendAsync(
            HttpRequest.newBuilder(URI.create(base + "/api/v1/query?query=up")).build(),
            HttpResponse.BodyHandlers.ofString());
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (api().queuedQueries() < 1 && System.nanoTime() < deadline) {
      Thread.sleep(10);
    }
    assertError(
        get(base, "/api/v1/query?query=up"),
        503,
        "unavailable",
        "too many queries: 1 running and 1 waiting; try again later");
    // cheap endpoints do not wait for query slots
    assertThat(get(base, "/api/v1/status/buildinfo").statusCode()).isEqualTo(200);
    gate.release.countDown();
    assertThat(running.get(10, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
    assertThat(queued.get(10, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
  }

  @Test
  void timeoutCountsTheWaitAndAnswers503() throws Exception {
    Clock clock = Clock.fixed(Instant.ofEpochMilli(T0), ZoneOffset.UTC);
    Gate gate = new Gate(emptyEngine(clock));
    String base =
        serve(
            gate,
            new QueryConfig(Duration.ofMinutes(1), 1000, 1, 5, Duration.ofMinutes(5), false),
            clock);
    CompletableFuture<HttpResponse<String>> running =
        http.sendAsync(
            HttpRequest.newBuilder(URI.create(base + "/api/v1/query?query=up")).build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(gate.entered.await(10, TimeUnit.SECONDS)).isTrue();
    CompletableFuture<HttpResponse<String>> waiting =
        http.sendAsync(
            HttpRequest.newBuilder(URI.create(base + "/api/v1/query?query=up&timeout=0.2")).build(),
            HttpResponse.BodyHandlers.ofString());
    Thread.sleep(400);
    gate.release.countDown();
    assertError(
        waiting.get(10, TimeUnit.SECONDS), 503, "timeout", "query timed out in query queue");
    assertThat(running.get(10, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
  }

  @Test
  void aClientThatGoesAwayCancelsItsQuery() throws Exception {
    Clock clock = Clock.fixed(Instant.ofEpochMilli(T0), ZoneOffset.UTC);
    Gate gate = new Gate(emptyEngine(clock));
    String base = serve(gate, QueryConfig.DEFAULTS, clock);
    int port = URI.create(base).getPort();
    try (Socket s = new Socket("127.0.0.1", port)) {
      OutputStream out = s.getOutputStream();
      out.write(
          "GET /api/v1/query?query=up HTTP/1.1\r\nHost: x\r\n\r\n"
              .getBytes(StandardCharsets.US_ASCII));
      out.flush();
      assertThat(gate.entered.await(10, TimeUnit.SECONDS)).isTrue();
    }
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (System.nanoTime() < deadline && canceled() == 0) {
      Thread.sleep(20);
    }
    assertThat(canceled()).isEqualTo(1);
    gate.release.countDown();
  }

  /**
   * A querier whose series, label name and label value reads match for ever, checking only their
   * {@link QueryContext} (as a costly regex over many values does), and record why they stopped;
   * they also record the limit they were asked for.
   */
  static final class Spinning extends ForwardingQuerier {
    final CompletableFuture<QueryAbortedException.Reason> stopped = new CompletableFuture<>();
    final CountDownLatch started = new CountDownLatch(1);

    Spinning(Querier inner) {
      super(inner);
    }

    private <T> T spin(QueryContext ctx) {
      started.countDown();
      try {
        while (true) {
          ctx.check();
          Thread.onSpinWait();
        }
      } catch (QueryAbortedException e) {
        stopped.complete(e.reason());
        throw e;
      }
    }

    @Override
    public List<Labels> series(
        long minT, long maxT, List<LabelMatcher> matchers, int limit, QueryContext ctx) {
      return spin(ctx);
    }

    @Override
    public List<String> labelNames(
        long minT, long maxT, List<LabelMatcher> matchers, int limit, QueryContext ctx) {
      return spin(ctx);
    }

    @Override
    public List<String> labelValues(
        String name,
        long minT,
        long maxT,
        List<LabelMatcher> matchers,
        int limit,
        QueryContext ctx) {
      return spin(ctx);
    }
  }

  @Test
  void seriesAndLabelLookupsTimeOutWith503() throws Exception {
    Clock clock = Clock.fixed(Instant.ofEpochMilli(T0), ZoneOffset.UTC);
    String base = serve(new Spinning(emptyEngine(clock)), QueryConfig.DEFAULTS, clock);
    assertError(
        get(base, "/api/v1/series?match[]=" + enc("{job=~\".+\"}") + "&timeout=0.2"),
        503,
        "timeout",
        "query timed out in series lookup");
    assertError(
        get(base, "/api/v1/labels?timeout=0.2"),
        503,
        "timeout",
        "query timed out in label names lookup");
    assertError(
        get(base, "/api/v1/label/job/values?timeout=0.2"),
        503,
        "timeout",
        "query timed out in label values lookup");
    // the configured query timeout bounds them without a parameter
    String shortTimeout =
        serve(
            new Spinning(emptyEngine(clock)),
            new QueryConfig(Duration.ofMillis(200), 1000, 20, 100, Duration.ofMinutes(5), false),
            clock);
    assertError(
        get(shortTimeout, "/api/v1/labels"),
        503,
        "timeout",
        "query timed out in label names lookup");
  }

  @Test
  void aClientThatGoesAwayCancelsItsSeriesLookup() throws Exception {
    Clock clock = Clock.fixed(Instant.ofEpochMilli(T0), ZoneOffset.UTC);
    Spinning spinning = new Spinning(emptyEngine(clock));
    String base = serve(spinning, QueryConfig.DEFAULTS, clock);
    int port = URI.create(base).getPort();
    try (Socket s = new Socket("127.0.0.1", port)) {
      OutputStream out = s.getOutputStream();
      out.write(
          "GET /api/v1/series?match[]=up HTTP/1.1\r\nHost: x\r\n\r\n"
              .getBytes(StandardCharsets.US_ASCII));
      out.flush();
      assertThat(spinning.started.await(10, TimeUnit.SECONDS)).isTrue(); // the lookup is running
    }
    assertThat(spinning.stopped.get(10, TimeUnit.SECONDS))
        .isEqualTo(QueryAbortedException.Reason.CANCELED);
    assertThat(canceled()).isEqualTo(1);
  }

  private long canceled() {
    return api().canceledByClient();
  }

  private PrometheusApi api() {
    for (AutoCloseable c : open) {
      if (c instanceof PrometheusApi a) {
        return a;
      }
    }
    throw new AssertionError("no api");
  }

  static final String NOT_A_COUNTER =
      "PromQL info: metric might not be a counter, name does not end in"
          + " _total/_sum/_count/_bucket: \\\"up\\\"";

  /**
   * Annotations as Prometheus 3.14's API answers them: {@code warnings} then {@code infos} after
   * {@code data}, each present only when not empty, the texts Prometheus' with the position it
   * appends (line:column, the column in UTF-8 bytes), one message once.
   */
  @Test
  void annotationsAreWarningsAndInfosAsPrometheusAnswersThem() throws Exception {
    String base =
        serve(
            new QueryConfig(Duration.ofMinutes(2), 100_000, 20, 100, Duration.ofMinutes(5), false));
    String at = "&time=" + sec(T0 + 600_000);
    String info = get(base, "/api/v1/query?query=" + enc("rate(up[5m])") + at).body();
    assertThat(info)
        .startsWith("{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",")
        .endsWith("]},\"infos\":[\"" + NOT_A_COUNTER + " (1:6)\"]}")
        .doesNotContain("\"warnings\"");
    String range =
        get(
                base,
                "/api/v1/query_range?query="
                    + enc("rate(up[5m])")
                    + "&start="
                    + sec(T0 + 300_000)
                    + "&end="
                    + sec(T0 + 600_000)
                    + "&step=60")
            .body();
    assertThat(range)
        .contains("\"resultType\":\"matrix\"")
        .endsWith("]},\"infos\":[\"" + NOT_A_COUNTER + " (1:6)\"]}");
    String both = get(base, "/api/v1/query?query=" + enc("quantile(2, rate(up[5m]))") + at).body();
    assertThat(both)
        .endsWith(
            "},\"warnings\":[\"PromQL warning: quantile value should be between 0 and 1, got 2"
                + " (1:10)\"],\"infos\":[\""
                + NOT_A_COUNTER
                + " (1:18)\"]}");
    // the same message at two places is one annotation, at the later; "é" takes 2 bytes
    JsonNode twice =
        json(
            post(
                base,
                "/api/v1/query",
                "query=" + enc("rate(up{job!=\"é\"}[5m]) + rate(up[5m])") + at));
    assertThat(twice.get("infos").toString()).isEqualTo("[\"" + NOT_A_COUNTER + " (1:32)\"]");
    String none = get(base, "/api/v1/query?query=" + enc("up") + at).body();
    assertThat(none).doesNotContain("\"warnings\"").doesNotContain("\"infos\"");
  }

  /**
   * Without {@code --enable-feature=promql-delayed-name-removal}, as Prometheus 3.14 by default,
   * {@code rate()} removes {@code __name__} at once: {@code up{job="a"}} and {@code tiny{job="a"}}
   * collide before {@code sum} sees them; with the feature they are summed.
   */
  @Test
  void delayedNameRemovalIsOffUnlessEnabledAsInPrometheus() throws Exception {
    String q = "/api/v1/query?query=" + enc("sum(rate({job=\"a\",code=\"\"}[5m]))");
    String at = "&time=" + sec(T0 + 600_000);
    String byDefault = serve(QueryConfig.DEFAULTS);
    assertError(
        get(byDefault, q + at),
        422,
        "execution",
        "vector cannot contain metrics with the same labelset");
    String delayed =
        serve(
            new QueryConfig(
                Duration.ofMinutes(2),
                100_000,
                20,
                100,
                Duration.ofMinutes(5),
                new PromqlFeatures(false, false, true),
                100_000));
    JsonNode ok = json(get(delayed, q + at));
    assertThat(ok.at("/status").asText()).isEqualTo("success");
    assertThat(ok.at("/data/result/0/metric").toString()).isEqualTo("{}");
    assertThat(ok.at("/data/result/0/value/1").asText()).isEqualTo("0");
  }

  @Test
  void experimentalSyntaxFollowsTheFeaturesAndDurationExpressionsAreAlwaysOn() throws Exception {
    String at = "&time=" + sec(T0 + 600_000);
    String fill = "/api/v1/query?query=" + enc("up + on(job) fill(0) up") + at;
    String mad = "/api/v1/query?query=" + enc("mad_over_time(up[5m])") + at;
    String duration = "/api/v1/query?query=" + enc("rate(http_requests_total[2m * 2 + 1m])") + at;
    String byDefault = serve(QueryConfig.DEFAULTS);
    assertError(get(byDefault, fill), 400, "bad_data", null);
    assertThat(json(get(byDefault, fill)).get("error").asText())
        .contains("binop fill modifiers are experimental and not enabled");
    assertThat(json(get(byDefault, mad)).get("error").asText())
        .contains("function \"mad_over_time\" is not enabled");
    String plain = "/api/v1/query?query=" + enc("rate(http_requests_total[5m])") + at;
    assertThat(json(get(byDefault, duration)).at("/data/result").toString())
        .isEqualTo(json(get(byDefault, plain)).at("/data/result").toString())
        .contains("\"code\":\"200\"");
    String enabled =
        serve(
            new QueryConfig(
                Duration.ofMinutes(2),
                100_000,
                20,
                100,
                Duration.ofMinutes(5),
                new PromqlFeatures(true, true, false),
                100_000));
    assertThat(json(get(enabled, fill)).at("/data/result").size()).isEqualTo(2);
    assertThat(json(get(enabled, mad)).at("/status").asText()).isEqualTo("success");

    String anchored =
        "/api/v1/query?query=" + enc("increase(http_requests_total[5m] anchored)") + at;
    assertThat(json(get(enabled, anchored)).get("error").asText())
        .contains("anchored modifier is experimental and not enabled");
    String extended =
        serve(
            new QueryConfig(
                Duration.ofMinutes(2),
                100_000,
                20,
                100,
                Duration.ofMinutes(5),
                new PromqlFeatures(false, false, false, true),
                100_000));
    assertThat(json(get(extended, anchored)).at("/status").asText()).isEqualTo("success");
    assertThat(json(get(extended, anchored)).at("/data/result").size())
        .isEqualTo(json(get(extended, plain)).at("/data/result").size())
        .isPositive();
    String deriv = "/api/v1/query?query=" + enc("deriv(http_requests_total[5m] smoothed)") + at;
    assertError(get(extended, deriv), 422, "execution", null);
    assertThat(json(get(extended, deriv)).get("error").asText())
        .isEqualTo(
            "smoothed modifier can only be used with: delta, increase, rate - not with deriv");
  }

  @Test
  void buildInfoHasPrometheusFieldNames() throws Exception {
    String base = serve(QueryConfig.DEFAULTS);
    JsonNode data = json(get(base, "/api/v1/status/buildinfo")).get("data");
    List<String> names = new ArrayList<>();
    data.fieldNames().forEachRemaining(names::add);
    // Prometheus' PrometheusVersion, then what Tidemark adds
    assertThat(names)
        .containsExactly(
            "version", "revision", "branch", "buildUser", "buildDate", "goVersion", "application");
    data.fields().forEachRemaining(e -> assertThat(e.getValue().isTextual()).isTrue());
  }

  static void assertError(HttpResponse<String> r, int status, String type, String message)
      throws Exception {
    assertThat(r.statusCode()).as(r.body()).isEqualTo(status);
    if (type == null) {
      return;
    }
    JsonNode j = json(r);
    assertThat(j.get("status").asText()).isEqualTo("error");
    assertThat(j.get("errorType").asText()).isEqualTo(type);
    if (message != null) {
      assertThat(j.get("error").asText()).isEqualTo(message);
    }
    assertThat(r.headers().firstValue("Content-Type")).hasValue("application/json");
  }
}
