package dev.tidemark.receiver.http;

import static dev.tidemark.receiver.otlp.Otlp.T0;
import static dev.tidemark.receiver.otlp.Otlp.T0_MS;
import static dev.tidemark.receiver.otlp.Otlp.dp;
import static dev.tidemark.receiver.otlp.Otlp.kv;
import static dev.tidemark.receiver.otlp.Otlp.request;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.util.JsonFormat;
import dev.tidemark.receiver.InFlightBytes;
import dev.tidemark.receiver.ReceiverConfig;
import dev.tidemark.receiver.otlp.OtlpIngestor;
import dev.tidemark.receiver.remotewrite.RemoteWriteIngestor;
import dev.tidemark.receiver.remotewrite.proto.v2.Metadata;
import dev.tidemark.receiver.remotewrite.proto.v2.Request;
import dev.tidemark.receiver.remotewrite.proto.v2.Sample;
import dev.tidemark.receiver.remotewrite.proto.v2.TimeSeries;
import dev.tidemark.translator.Translator;
import dev.tidemark.translator.TranslatorConfig;
import dev.tidemark.tsdb.engine.Engine;
import dev.tidemark.tsdb.engine.EngineConfig;
import dev.tidemark.tsdb.kv.InMemoryKvStore;
import dev.tidemark.tsdb.model.Labels;
import dev.tidemark.tsdb.query.LabelMatcher;
import dev.tidemark.tsdb.query.SampleIterator;
import dev.tidemark.tsdb.query.Series;
import dev.tidemark.tsdb.time.ManualClock;
import io.opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest;
import io.opentelemetry.proto.metrics.v1.AggregationTemporality;
import io.opentelemetry.proto.metrics.v1.Gauge;
import io.opentelemetry.proto.metrics.v1.Histogram;
import io.opentelemetry.proto.metrics.v1.HistogramDataPoint;
import io.opentelemetry.proto.metrics.v1.Metric;
import io.opentelemetry.proto.metrics.v1.Sum;
import io.opentelemetry.proto.metrics.v1.Summary;
import io.opentelemetry.proto.metrics.v1.SummaryDataPoint;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.xerial.snappy.Snappy;

/**
 * Prometheus' {@code type-and-unit-labels} at ingest, through the real receivers on Jetty
 * (OTLP/HTTP protobuf, which takes the translator's in-place path, and OTLP/JSON, which takes its
 * tree path; remote write 2.0) into the real engine, read back from its querier.
 */
class TypeAndUnitLabelsTest {
  private final ManualClock clock = new ManualClock(T0_MS + 60_000);
  private final HttpClient client =
      HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
  private final List<Server> servers = new ArrayList<>();
  private Engine engine;

  @AfterEach
  void stop() throws Exception {
    for (Server s : servers) {
      s.stop();
    }
    if (engine != null) {
      engine.close();
    }
  }

  private URI serve(Handler h, String path) throws Exception {
    Server server = new Server(new QueuedThreadPool(8, 2));
    ServerConnector connector = new ServerConnector(server, 1, 1);
    connector.setHost("127.0.0.1");
    connector.setPort(0);
    server.addConnector(connector);
    server.setHandler(h);
    server.start();
    servers.add(server);
    return URI.create("http://127.0.0.1:" + connector.getLocalPort() + path);
  }

  /** OTLP/HTTP over a translator with type and unit labels on or off. */
  private URI otlp(boolean typeAndUnitLabels) throws Exception {
    engine = Engine.open(new InMemoryKvStore(), EngineConfig.builder().clock(clock).build());
    Translator translator =
        new Translator(
            engine,
            TranslatorConfig.builder().typeAndUnitLabels(typeAndUnitLabels).build(),
            Clock.fixed(Instant.ofEpochMilli(T0_MS + 60_000), ZoneOffset.UTC),
            engine.metadata());
    OtlpIngestor ingestor =
        new OtlpIngestor(translator, ReceiverConfig.defaults(), new PrometheusRegistry());
    return serve(new OtlpHttpHandler(ingestor), "/v1/metrics");
  }

  private int post(URI uri, String contentType, byte[] body) throws Exception {
    HttpResponse<String> r =
        client.send(
            HttpRequest.newBuilder(uri)
                .header("Content-Type", contentType)
                .POST(HttpRequest.BodyPublishers.ofByteArray(body))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    return r.statusCode();
  }

  static Metric metric(String name, String unit) {
    return Metric.newBuilder().setName(name).setUnit(unit).build();
  }

  static Sum.Builder sum(boolean monotonic, AggregationTemporality t, long timeNanos, double v) {
    return Sum.newBuilder()
        .setIsMonotonic(monotonic)
        .setAggregationTemporality(t)
        .addDataPoints(dp(timeNanos, v, kv("__type__", "bogus")));
  }

  /** One metric of each kind, every point at {@code timeNanos}. */
  static ExportMetricsServiceRequest everyKind(long timeNanos) {
    AggregationTemporality cumulative = AggregationTemporality.AGGREGATION_TEMPORALITY_CUMULATIVE;
    return request(
        metric("cpu.utilization", "1").toBuilder()
            .setGauge(Gauge.newBuilder().addDataPoints(dp(timeNanos, 0.5)))
            .build(),
        metric("http.requests", "{request}").toBuilder()
            .setSum(sum(true, cumulative, timeNanos, 7))
            .build(),
        metric("queue.delta", "").toBuilder()
            .setSum(sum(true, AggregationTemporality.AGGREGATION_TEMPORALITY_DELTA, timeNanos, 2))
            .build(),
        metric("memory.used", "By").toBuilder()
            .setSum(sum(false, cumulative, timeNanos, 1024))
            .build(),
        metric("odd", "$s").toBuilder()
            .setGauge(Gauge.newBuilder().addDataPoints(dp(timeNanos, 1)))
            .build(),
        metric("untyped", "By/s").toBuilder()
            .addMetadata(kv("prometheus.type", "unknown"))
            .setGauge(Gauge.newBuilder().addDataPoints(dp(timeNanos, 3)))
            .build(),
        metric("req.duration", "s").toBuilder()
            .setHistogram(
                Histogram.newBuilder()
                    .setAggregationTemporality(cumulative)
                    .addDataPoints(
                        HistogramDataPoint.newBuilder()
                            .setTimeUnixNano(timeNanos)
                            .setCount(3)
                            .setSum(1.5)
                            .addExplicitBounds(1)
                            .addBucketCounts(2)
                            .addBucketCounts(1)))
            .build(),
        metric("rpc.latency", "ms").toBuilder()
            .setSummary(
                Summary.newBuilder()
                    .addDataPoints(
                        SummaryDataPoint.newBuilder()
                            .setTimeUnixNano(timeNanos)
                            .setCount(2)
                            .setSum(10)
                            .addQuantileValues(
                                SummaryDataPoint.ValueAtQuantile.newBuilder()
                                    .setQuantile(0.5)
                                    .setValue(4))))
            .build());
  }

  /**
   * Every stored series' name with its __type__ and __unit__ ("-" when absent), and its samples.
   */
  private Map<String, String> typeAndUnitByName() {
    Map<String, String> out = new TreeMap<>();
    for (Series s :
        engine
            .select(0, Long.MAX_VALUE / 2, List.of(LabelMatcher.regex("__name__", ".+")))
            .toList()) {
      Labels l = s.labels();
      String key = l.metricName() + (l.get("le") != null ? "{le=" + l.get("le") + "}" : "");
      String type = l.get("__type__");
      String unit = l.get("__unit__");
      int samples = 0;
      SampleIterator it = s.iterator();
      while (it.next()) {
        samples++;
      }
      out.put(key, (type == null ? "-" : type) + " " + (unit == null ? "-" : unit) + " " + samples);
    }
    return out;
  }

  @Test
  void otlpSeriesCarryTheirMetricsTypeAndUnitOverBothPaths() throws Exception {
    URI uri = otlp(true);
    assertThat(post(uri, "application/x-protobuf", everyKind(T0).toByteArray())).isEqualTo(200);
    String json = JsonFormat.printer().print(everyKind(T0 + 15_000_000_000L));
    assertThat(post(uri, "application/json", json.getBytes(StandardCharsets.UTF_8))).isEqualTo(200);
    // Two samples each: the JSON request (tree path) found the same series as the protobuf one.
    assertThat(typeAndUnitByName())
        .containsExactlyInAnyOrderEntriesOf(
            Map.ofEntries(
                Map.entry("cpu_utilization_ratio", "gauge - 2"), // unit 1: no unit word
                Map.entry("http_requests_total", "counter - 2"), // {request}: none; attribute gone
                Map.entry("queue_delta_total", "counter - 2"), // delta, accumulated: a counter
                Map.entry("memory_used_bytes", "gauge bytes 2"),
                Map.entry("odd_s", "gauge seconds 2"), // $s cleans to s, which names seconds
                Map.entry("untyped_bytes_per_second", "- bytes_per_second 2"),
                Map.entry("req_duration_seconds_bucket{le=1}", "histogram seconds 2"),
                Map.entry("req_duration_seconds_bucket{le=+Inf}", "histogram seconds 2"),
                Map.entry("req_duration_seconds_sum", "histogram seconds 2"),
                Map.entry("req_duration_seconds_count", "histogram seconds 2"),
                Map.entry("rpc_latency_milliseconds", "summary milliseconds 2"),
                Map.entry("rpc_latency_milliseconds_sum", "summary milliseconds 2"),
                Map.entry("rpc_latency_milliseconds_count", "summary milliseconds 2")));
  }

  @Test
  void targetInfoGetsNeither() throws Exception {
    URI uri = otlp(true);
    ExportMetricsServiceRequest r = everyKind(T0);
    ExportMetricsServiceRequest.Builder b = r.toBuilder();
    b.getResourceMetricsBuilder(0).getResourceBuilder().addAttributes(kv("host.name", "h1"));
    assertThat(post(uri, "application/x-protobuf", b.build().toByteArray())).isEqualTo(200);
    assertThat(typeAndUnitByName()).containsEntry("target_info", "- - 1");
  }

  @Test
  void offByDefaultTheAttributesStayAndNothingIsAdded() throws Exception {
    URI uri = otlp(false);
    assertThat(post(uri, "application/x-protobuf", everyKind(T0).toByteArray())).isEqualTo(200);
    Map<String, String> got = typeAndUnitByName();
    assertThat(got).containsEntry("http_requests_total", "bogus - 1");
    assertThat(got).containsEntry("memory_used_bytes", "bogus - 1");
    assertThat(got).containsEntry("req_duration_seconds_sum", "- - 1");
  }

  // ------------------------------------------------------------------ remote write 2.0

  static TimeSeries v2(List<Integer> refs, Metadata.MetricType type, int unitRef) {
    return TimeSeries.newBuilder()
        .addAllLabelsRefs(refs)
        .addSamples(Sample.newBuilder().setTimestamp(T0_MS).setValue(1))
        .setMetadata(Metadata.newBuilder().setType(type).setUnitRef(unitRef))
        .build();
  }

  private URI remoteWrite(boolean typeAndUnitLabels) throws Exception {
    engine = Engine.open(new InMemoryKvStore(), EngineConfig.builder().clock(clock).build());
    RemoteWriteIngestor rw =
        new RemoteWriteIngestor(
            engine,
            engine.metadata(),
            new InFlightBytes(64L << 20),
            1000,
            new PrometheusRegistry(),
            typeAndUnitLabels);
    return serve(new RemoteWriteHandler(rw, ReceiverConfig.defaults()), "/api/v1/write");
  }

  private Request v2Request() {
    // symbols: 0 "", 1 __name__, 2 a_total, 3 __type__, 4 gauge, 5 seconds, 6 b, 7 __unit__,
    // 8 bytes, 9 c, 10 items, 11 d
    return Request.newBuilder()
        .addAllSymbols(
            List.of(
                "",
                "__name__",
                "a_total",
                "__type__",
                "gauge",
                "seconds",
                "b",
                "__unit__",
                "bytes",
                "c",
                "items",
                "d"))
        // counter in seconds; its own __type__ label gives way
        .addTimeseries(v2(List.of(1, 2, 3, 4), Metadata.MetricType.METRIC_TYPE_COUNTER, 5))
        // no metadata: its own labels stay
        .addTimeseries(v2(List.of(1, 6, 7, 8), Metadata.MetricType.METRIC_TYPE_UNSPECIFIED, 0))
        // a unit only: both own labels give way, and only __unit__ comes back
        .addTimeseries(
            v2(List.of(1, 9, 3, 4, 7, 8), Metadata.MetricType.METRIC_TYPE_UNSPECIFIED, 10))
        .addTimeseries(v2(List.of(1, 11), Metadata.MetricType.METRIC_TYPE_GAUGEHISTOGRAM, 0))
        .build();
  }

  @Test
  void remoteWriteV2SeriesTakeTheirMetadataAsLabels() throws Exception {
    URI uri = remoteWrite(true);
    assertThat(
            post(
                uri,
                "application/x-protobuf;proto=io.prometheus.write.v2.Request",
                Snappy.compress(v2Request().toByteArray())))
        .isEqualTo(204);
    assertThat(typeAndUnitByName())
        .containsExactlyInAnyOrderEntriesOf(
            Map.of(
                "a_total", "counter seconds 1",
                "b", "- bytes 1",
                "c", "- items 1",
                "d", "gaugehistogram - 1"));
  }

  @Test
  void remoteWriteV2WithoutTheFeatureKeepsTheLabelsAsSent() throws Exception {
    URI uri = remoteWrite(false);
    assertThat(
            post(
                uri,
                "application/x-protobuf;proto=io.prometheus.write.v2.Request",
                Snappy.compress(v2Request().toByteArray())))
        .isEqualTo(204);
    assertThat(typeAndUnitByName())
        .containsExactlyInAnyOrderEntriesOf(
            Map.of("a_total", "gauge - 1", "b", "- bytes 1", "c", "gauge bytes 1", "d", "- - 1"));
  }
}
