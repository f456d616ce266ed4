package dev.tidemark.receiver.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import com.google.protobuf.CodedOutputStream;
import dev.tidemark.receiver.InFlightBytes;
import dev.tidemark.receiver.ReceiverConfig;
import dev.tidemark.receiver.TestAppender;
import dev.tidemark.receiver.remotewrite.RemoteWriteIngestor;
import dev.tidemark.receiver.remotewrite.proto.Label;
import dev.tidemark.receiver.remotewrite.proto.MetricMetadata;
import dev.tidemark.receiver.remotewrite.proto.Sample;
import dev.tidemark.receiver.remotewrite.proto.TimeSeries;
import dev.tidemark.receiver.remotewrite.proto.WriteRequest;
import dev.tidemark.receiver.remotewrite.proto.v2.Request;
import dev.tidemark.tsdb.append.Appender;
import dev.tidemark.tsdb.append.RejectReason;
import dev.tidemark.tsdb.append.SampleBatch;
import dev.tidemark.tsdb.engine.Engine;
import dev.tidemark.tsdb.engine.EngineConfig;
import dev.tidemark.tsdb.kv.InMemoryKvStore;
import dev.tidemark.tsdb.model.FamilyMetadata;
import dev.tidemark.tsdb.model.IntegerHistogram;
import dev.tidemark.tsdb.model.Labels;
import dev.tidemark.tsdb.model.MetadataRegistry;
import dev.tidemark.tsdb.model.MetricType;
import dev.tidemark.tsdb.model.PromType;
import dev.tidemark.tsdb.query.HistogramIterator;
import dev.tidemark.tsdb.query.LabelMatcher;
import dev.tidemark.tsdb.query.SampleIterator;
import dev.tidemark.tsdb.query.Series;
import dev.tidemark.tsdb.time.ManualClock;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.ByteArrayOutputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.xerial.snappy.Snappy;

/**
 * The remote-write receiver on a real Jetty server on 127.0.0.1 over the real engine (in-memory
 * store), read back through the engine's querier; bodies built with the generated protobuf classes
 * of Prometheus' definitions, or by hand where those refuse (invalid UTF-8).
 */
class RemoteWriteHandlerTest {
  static final long MIN = 60_000;
  static final long T0 = 1_700_000_000_000L;
  static final String V1 = "application/x-protobuf";
  static final String V2 = "application/x-protobuf;proto=io.prometheus.write.v2.Request";
  static final long MAX_BODY = 256 * 1024;
  static final long IDLE_TIMEOUT_MILLIS = 60_000;

  private final ManualClock clock = new ManualClock(T0 + 10 * MIN);
  private final MetadataRegistry metadata = new MetadataRegistry();
  private final PrometheusRegistry registry = new PrometheusRegistry();
  private Engine engine;
  private Server server;
  private URI uri;
  private final HttpClient client =
      HttpClient.newBuilder()
          .version(HttpClient.Version.HTTP_1_1)
          .connectTimeout(Duration.ofSeconds(10))
          .build();

  private void start() throws Exception {
    engine = Engine.open(new InMemoryKvStore(), EngineConfig.builder().clock(clock).build());
    start(engine, new InFlightBytes(64L << 20));
  }

  private void start(Appender appender, InFlightBytes inFlight) throws Exception {
    ReceiverConfig config =
        ReceiverConfig.builder()
            .maxHttpBodyBytes(MAX_BODY)
            .retryAfter(Duration.ofSeconds(2))
            .build();
    RemoteWriteIngestor ingestor =
        new RemoteWriteIngestor(appender, metadata, inFlight, 1000, registry);
    server = new Server(new QueuedThreadPool(16, 4));
    ServerConnector connector = new ServerConnector(server, 1, 1);
    connector.setHost("127.0.0.1");
    connector.setPort(0);
    connector.setIdleTimeout(IDLE_TIMEOUT_MILLIS);
    server.addConnector(connector);
    server.setHandler(new RemoteWriteHandler(ingestor, config));
    server.start();
    uri = URI.create("http://127.0.0.1:" + connector.getLocalPort() + "/api/v1/write");
  }

  @AfterEach
  void stop() throws Exception {
    if (server != null) {
      server.stop();
    }
    if (engine != null) {
      engine.close();
    }
  }

  // ------------------------------------------------------------------ 1.0

  @Test
  void v1FloatsStaleMarkersAndMetadataAreReadBackBitForBit() throws Exception {
    start();
    long nanBits = 0x7ff8000000000123L;
    WriteRequest req =
        WriteRequest.newBuilder()
            .addTimeseries(
                series(
                    List.of("__name__", "http_requests_total", "job", "shop", "code", "200"),
                    T0,
                    1.5,
                    T0 + 15_000,
                    -0.0,
                    T0 + 30_000,
                    Double.longBitsToDouble(nanBits)))
            .addTimeseries(
                TimeSeries.newBuilder()
                    .addLabels(label("job", "shop"))
                    .addLabels(label("__name__", "temp_celsius"))
                    .addLabels(label("empty", ""))
                    .addSamples(sample(T0, 21))
                    .addSamples(
                        Sample.newBuilder()
                            .setTimestamp(T0 + 15_000)
                            .setValue(Double.longBitsToDouble(SampleBatch.STALE_NAN_BITS))))
            .addMetadata(
                MetricMetadata.newBuilder()
                    .setType(MetricMetadata.MetricType.COUNTER)
                    .setMetricFamilyName("http_requests_total")
                    .setHelp("Requests served.")
                    .setUnit(""))
            .build();
    HttpResponse<String> r = post(V1, "snappy", Snappy.compress(req.toByteArray()));
    assertThat(r.statusCode()).as(r.body()).isEqualTo(204);
    assertThat(r.headers().firstValue("X-Prometheus-Remote-Write-Samples-Written")).isEmpty();
    Labels requests = Labels.of("__name__", "http_requests_total", "job", "shop", "code", "200");
    assertThat(read(requests))
        .containsExactly(
            T0 + "=" + bits(1.5), (T0 + 15_000) + "=" + bits(-0.0), (T0 + 30_000) + "=" + nanBits);
    Labels temp = Labels.of("__name__", "temp_celsius", "job", "shop");
    assertThat(read(temp))
        .containsExactly(T0 + "=" + bits(21), (T0 + 15_000) + "=" + SampleBatch.STALE_NAN_BITS);
    assertThat(metadata.get("http_requests_total"))
        .hasValue(
            new FamilyMetadata("http_requests_total", PromType.COUNTER, "", "Requests served."));
    assertThat(counter("tidemark_remote_write_samples_written", "1.0")).isEqualTo(5);
  }

  @Test
  void v1SeriesSentBeforeTheirMetadataStoreItFromTheNextBucketOn() throws Exception {
    start();
    long hour = 3_600_000;
    long nextHour = (T0 / hour + 1) * hour;
    List<String> labels = List.of("__name__", "jobs_done_total", "job", "a");
    assertThat(post(V1, "snappy", body(series(labels, T0, 1))).statusCode()).isEqualTo(204);
    // Prometheus sends metadata on its own, every minute.
    WriteRequest md =
        WriteRequest.newBuilder()
            .addMetadata(
                MetricMetadata.newBuilder()
                    .setType(MetricMetadata.MetricType.COUNTER)
                    .setMetricFamilyName("jobs_done_total")
                    .setUnit("jobs"))
            .build();
    assertThat(post(V1, "snappy", Snappy.compress(md.toByteArray())).statusCode()).isEqualTo(204);
    clock.set(nextHour + MIN);
    assertThat(post(V1, "snappy", body(series(labels, nextHour + 1000, 2))).statusCode())
        .isEqualTo(204);
    List<LabelMatcher> m = List.of(LabelMatcher.equal("__name__", "jobs_done_total"));
    Series first = engine.select(T0, T0, m).toList().get(0);
    assertThat(first.metadata().type()).isEqualTo(MetricType.UNKNOWN);
    Series next = engine.select(nextHour, nextHour + hour - 1, m).toList().get(0);
    assertThat(next.metadata().type()).isEqualTo(MetricType.SUM);
    assertThat(next.metadata().unit()).isEqualTo("jobs");
    assertThat(next.metadata().monotonic()).isTrue();
  }

  @Test
  void aRequestWithoutContentTypeOrEncodingIsSnappy10() throws Exception {
    start();
    WriteRequest req =
        WriteRequest.newBuilder()
            .addTimeseries(series(List.of("__name__", "up", "job", "a"), T0, 1))
            .build();
    HttpResponse<String> r = post(null, null, Snappy.compress(req.toByteArray()));
    assertThat(r.statusCode()).isEqualTo(204);
    assertThat(read(Labels.of("__name__", "up", "job", "a"))).containsExactly(T0 + "=" + bits(1));
  }

  @Test
  void badSamplesAndSeriesAreListedAndEverythingElseIsWritten() throws Exception {
    start();
    Labels dup = Labels.of("__name__", "dup", "job", "a");
    assertThat(post(V1, "snappy", body(series(List.of("__name__", "dup", "job", "a"), T0, 1))))
        .satisfies(r -> assertThat(r.statusCode()).isEqualTo(204));
    // Series in one request: a good one, a duplicate sample beside a new one, a series without a
    // name, one with a label name twice, one with invalid UTF-8, one too far in the future.
    ByteArrayOutputStream raw = new ByteArrayOutputStream();
    CodedOutputStream out = CodedOutputStream.newInstance(raw);
    out.writeMessage(1, series(List.of("__name__", "good", "job", "a"), T0, 7));
    out.writeMessage(1, series(List.of("__name__", "dup", "job", "a"), T0, 2, T0 + 15_000, 3));
    out.writeMessage(1, series(List.of("job", "nameless"), T0, 1));
    out.writeMessage(1, series(List.of("__name__", "twice", "job", "a", "job", "b"), T0, 1));
    out.writeByteArray(
        1,
        concat(
            field(1, labelBytes("__name__".getBytes(), "bad_utf8".getBytes())),
            field(1, labelBytes("job".getBytes(), new byte[] {(byte) 0xC3, (byte) 0x28})),
            field(2, sample(T0, 1).toByteArray())));
    out.writeMessage(1, series(List.of("__name__", "future", "job", "a"), T0 + 60 * MIN, 1));
    out.flush();

    HttpResponse<String> r = post(V1, "snappy", Snappy.compress(raw.toByteArray()));
    assertThat(r.statusCode()).isEqualTo(400);
    assertThat(r.headers().firstValue("Content-Type")).hasValue("text/plain; charset=utf-8");
    assertThat(r.body().split("\n"))
        .containsExactlyInAnyOrder(
            "invalid metric name or labels, got {job=\"nameless\"}",
            "invalid metric name or labels, got {__name__=\"twice\", job=\"a\", job=\"b\"},"
                + " duplicated label job",
            "invalid metric name or labels, got {__name__=\"bad_utf8\", job=\"\uFFFD(\"}",
            "duplicate sample for timestamp for series {__name__=\"dup\", job=\"a\"} at " + T0,
            "out of bounds: timestamp is too far in the future for series"
                + " {__name__=\"future\", job=\"a\"} at "
                + (T0 + 60 * MIN));
    assertThat(read(Labels.of("__name__", "good", "job", "a"))).containsExactly(T0 + "=" + bits(7));
    assertThat(read(dup)).containsExactly(T0 + "=" + bits(1), (T0 + 15_000) + "=" + bits(3));
    assertThat(counter("tidemark_remote_write_samples_written", "1.0")).isEqualTo(3);
    assertThat(refused("invalid_labels")).isEqualTo(3);
    assertThat(refused("duplicate")).isEqualTo(1);
    assertThat(refused("too_far_in_future")).isEqualTo(1);
  }

  @Test
  void newSeriesBeyondTheSeriesLimitAreRefusedOneByOneAndKnownOnesWritten() throws Exception {
    engine =
        Engine.open(
            new InMemoryKvStore(), EngineConfig.builder().clock(clock).maxActiveSeries(2).build());
    start(engine, new InFlightBytes(64L << 20));
    assertThat(
            post(
                    V1,
                    "snappy",
                    body(
                        series(List.of("__name__", "a"), T0, 1),
                        series(List.of("__name__", "b"), T0, 2)))
                .statusCode())
        .isEqualTo(204);

    HttpResponse<String> r =
        post(
            V1,
            "snappy",
            body(
                series(List.of("__name__", "c"), T0, 3),
                series(List.of("__name__", "a"), T0 + 15_000, 4),
                series(List.of("__name__", "d"), T0, 5, T0 + 15_000, 6)));
    assertThat(r.statusCode()).isEqualTo(400);
    String why =
        "series limit reached (the head holds 2 active series, the --max-active-series limit: new"
            + " series are refused until some stop, series already in the head are still"
            + " accepted) for series ";
    assertThat(r.body())
        .isEqualTo(
            why
                + "{__name__=\"c\"} at "
                + T0
                + "\n"
                + why
                + "{__name__=\"d\"} at "
                + T0
                + "\n"
                + why
                + "{__name__=\"d\"} at "
                + (T0 + 15_000)
                + "\n");
    assertThat(read(Labels.of("__name__", "a")))
        .containsExactly(T0 + "=" + bits(1), (T0 + 15_000) + "=" + bits(4));
    assertThat(select(Labels.of("__name__", "c"))).isEmpty();
    assertThat(select(Labels.of("__name__", "d"))).isEmpty();
    assertThat(refused("series_limit")).isEqualTo(3);
  }

  /** An integer histogram message: {@code n} in the bucket (0, 1] of schema 0, sum n / 2. */
  static dev.tidemark.receiver.remotewrite.proto.Histogram.Builder histogram(long t, long n) {
    return dev.tidemark.receiver.remotewrite.proto.Histogram.newBuilder()
        .setCountInt(n)
        .setSum(n / 2.0)
        .setSchema(0)
        .setZeroThreshold(1e-128)
        .addPositiveSpans(
            dev.tidemark.receiver.remotewrite.proto.BucketSpan.newBuilder()
                .setOffset(0)
                .setLength(1))
        .addPositiveDeltas(n)
        .setTimestamp(t);
  }

  /** The histogram samples of series {@code l}: {@code t=count/sum}. */
  private List<String> readHistograms(Labels l) {
    List<Series> found = select(l);
    assertThat(found).as("series " + l).hasSize(1);
    List<String> out = new ArrayList<>();
    HistogramIterator it = found.get(0).histogramIterator();
    while (it.next()) {
      IntegerHistogram h = (IntegerHistogram) it.histogram();
      out.add(it.timestampMillis() + "=" + h.count() + "/" + h.sum());
    }
    return out;
  }

  @Test
  void nativeHistogramsAreStoredAndInvalidOnesRefusedByThemselves() throws Exception {
    start();
    TimeSeries latency =
        series(List.of("__name__", "latency", "job", "a")).toBuilder()
            .addHistograms(histogram(T0, 3))
            .addHistograms(histogram(T0 + 15_000, 5))
            .build();
    TimeSeries bad =
        series(List.of("__name__", "latency", "job", "b")).toBuilder()
            .addHistograms(histogram(T0, 3).setCountInt(2)) // fewer than its buckets hold
            .build();
    // a series holds one kind of sample in an hour: the histogram beside a float is refused
    TimeSeries mixed =
        series(List.of("__name__", "latency", "job", "c"), T0, 4).toBuilder()
            .addHistograms(histogram(T0 + 1000, 1))
            .build();
    HttpResponse<String> r = post(V1, "snappy", body(latency, bad, mixed));
    assertThat(r.statusCode()).isEqualTo(400);
    assertThat(r.body().split("\n"))
        .containsExactly(
            "invalid histogram: 3 observations found in buckets, but the Count field is 2:"
                + " histogram's observation count should equal the number of observations found"
                + " in the buckets (in absence of NaN) for series"
                + " {__name__=\"latency\", job=\"b\"}",
            RejectReason.KIND_CONFLICT.description()
                + " for series {__name__=\"latency\", job=\"c\"} at "
                + (T0 + 1000));
    assertThat(readHistograms(Labels.of("__name__", "latency", "job", "a")))
        .containsExactly(T0 + "=3/1.5", (T0 + 15_000) + "=5/2.5");
    assertThat(select(Labels.of("__name__", "latency", "job", "b"))).isEmpty();
    assertThat(read(Labels.of("__name__", "latency", "job", "c")))
        .containsExactly(T0 + "=" + bits(4));
    assertThat(refused("invalid")).isEqualTo(1);
    assertThat(refused("kind_conflict")).isEqualTo(1);
  }

  @Test
  void v2HistogramsAreStoredAndCountedInTheirHeader() throws Exception {
    start();
    Request req =
        Request.newBuilder()
            .addAllSymbols(List.of("", "__name__", "latency"))
            .addTimeseries(
                dev.tidemark.receiver.remotewrite.proto.v2.TimeSeries.newBuilder()
                    .addAllLabelsRefs(List.of(1, 2))
                    .addHistograms(
                        dev.tidemark.receiver.remotewrite.proto.v2.Histogram.parseFrom(
                            histogram(T0, 7).build().toByteArray())))
            .build();
    HttpResponse<String> r = post(V2, "snappy", Snappy.compress(req.toByteArray()));
    assertThat(r.statusCode()).as(r.body()).isEqualTo(204);
    assertThat(r.headers().firstValue("X-Prometheus-Remote-Write-Samples-Written")).hasValue("0");
    assertThat(r.headers().firstValue("X-Prometheus-Remote-Write-Histograms-Written"))
        .hasValue("1");
    assertThat(readHistograms(Labels.of("__name__", "latency"))).containsExactly(T0 + "=7/3.5");
  }

  // ------------------------------------------------------------------ 2.0

  @Test
  void v2SymbolsMetadataAndTheWrittenHeaders() throws Exception {
    start();
    Request req =
        Request.newBuilder()
            .addAllSymbols(
                List.of(
                    "",
                    "__name__",
                    "queue_length",
                    "job",
                    "shop",
                    "Items waiting.",
                    "items",
                    "bytes_total"))
            .addTimeseries(
                dev.tidemark.receiver.remotewrite.proto.v2.TimeSeries.newBuilder()
                    .addAllLabelsRefs(List.of(1, 2, 3, 4))
                    .addSamples(v2sample(T0, 3))
                    .addSamples(v2sample(T0 + 15_000, 5))
                    .setMetadata(
                        dev.tidemark.receiver.remotewrite.proto.v2.Metadata.newBuilder()
                            .setType(
                                dev.tidemark.receiver.remotewrite.proto.v2.Metadata.MetricType
                                    .METRIC_TYPE_GAUGE)
                            .setHelpRef(5)
                            .setUnitRef(6)))
            .addTimeseries(
                dev.tidemark.receiver.remotewrite.proto.v2.TimeSeries.newBuilder()
                    .addAllLabelsRefs(List.of(1, 7, 3, 4))
                    .addSamples(v2sample(T0, 1024))
                    .setMetadata(
                        dev.tidemark.receiver.remotewrite.proto.v2.Metadata.newBuilder()
                            .setType(
                                dev.tidemark.receiver.remotewrite.proto.v2.Metadata.MetricType
                                    .METRIC_TYPE_COUNTER)))
            .build();
    HttpResponse<String> r = post(V2, "snappy", Snappy.compress(req.toByteArray()));
    assertThat(r.statusCode()).as(r.body()).isEqualTo(204);
    assertThat(r.headers().firstValue("X-Prometheus-Remote-Write-Samples-Written")).hasValue("3");
    assertThat(r.headers().firstValue("X-Prometheus-Remote-Write-Histograms-Written"))
        .hasValue("0");
    assertThat(r.headers().firstValue("X-Prometheus-Remote-Write-Exemplars-Written")).hasValue("0");
    Labels q = Labels.of("__name__", "queue_length", "job", "shop");
    assertThat(read(q)).containsExactly(T0 + "=" + bits(3), (T0 + 15_000) + "=" + bits(5));
    Series s = select(q).get(0);
    assertThat(s.metadata().type()).isEqualTo(MetricType.GAUGE);
    assertThat(s.metadata().unit()).isEqualTo("items");
    Series b = select(Labels.of("__name__", "bytes_total", "job", "shop")).get(0);
    assertThat(b.metadata().type()).isEqualTo(MetricType.SUM);
    assertThat(b.metadata().monotonic()).isTrue();
    assertThat(metadata.get("queue_length"))
        .hasValue(new FamilyMetadata("queue_length", PromType.GAUGE, "items", "Items waiting."));
    assertThat(metadata.get("bytes_total").orElseThrow().type()).isEqualTo(PromType.COUNTER);
  }

  @Test
  void v2BadReferencesAndEmptySeriesAreRefusedTheRestWritten() throws Exception {
    start();
    Request req =
        Request.newBuilder()
            .addAllSymbols(List.of("", "__name__", "ok", "empty"))
            .addTimeseries(
                dev.tidemark.receiver.remotewrite.proto.v2.TimeSeries.newBuilder()
                    .addAllLabelsRefs(List.of(1, 2))
                    .addSamples(v2sample(T0, 1)))
            .addTimeseries(
                dev.tidemark.receiver.remotewrite.proto.v2.TimeSeries.newBuilder()
                    .addAllLabelsRefs(List.of(1, 9))
                    .addSamples(v2sample(T0, 1)))
            .addTimeseries(
                dev.tidemark.receiver.remotewrite.proto.v2.TimeSeries.newBuilder()
                    .addAllLabelsRefs(List.of(1, 2, 3)))
            .addTimeseries(
                dev.tidemark.receiver.remotewrite.proto.v2.TimeSeries.newBuilder()
                    .addAllLabelsRefs(List.of(1, 3)))
            .build();
    HttpResponse<String> r = post(V2, "snappy", Snappy.compress(req.toByteArray()));
    assertThat(r.statusCode()).isEqualTo(400);
    assertThat(r.headers().firstValue("X-Prometheus-Remote-Write-Samples-Written")).hasValue("1");
    assertThat(r.body().split("\n"))
        .containsExactly(
            "invalid series: labels_refs (9) out of range of the 4 symbols",
            "invalid series: labels_refs has an odd number of entries (3)",
            "TimeSeries must contain at least one sample or histogram for series"
                + " {__name__=\"empty\"}");
    assertThat(read(Labels.of("__name__", "ok"))).containsExactly(T0 + "=" + bits(1));
  }

  // ------------------------------------------------------------------ refusals of the whole

  @Test
  void unusableBodiesAreRefusedAndWriteNothing() throws Exception {
    start();
    HttpResponse<String> garbage =
        post(V1, "snappy", Snappy.compress(new byte[] {0x0a, 0x7f, 0x01, 0x02}));
    assertThat(garbage.statusCode()).isEqualTo(400);
    assertThat(garbage.body())
        .startsWith("cannot decode protobuf prometheus.WriteRequest (4 bytes): length 127");
    HttpResponse<String> v2garbage =
        post(V2, "snappy", Snappy.compress(new byte[] {0x2a, 0x03, 0x01}));
    assertThat(v2garbage.statusCode()).isEqualTo(400);
    assertThat(v2garbage.body())
        .startsWith("cannot decode protobuf io.prometheus.write.v2.Request");
    HttpResponse<String> notSnappy =
        post(V1, "snappy", "this is not snappy".getBytes(StandardCharsets.UTF_8));
    assertThat(notSnappy.statusCode()).isEqualTo(400);
    assertThat(notSnappy.body()).isEqualTo("snappy: corrupt input\n");
    assertThat(engine.labelNames(0, Long.MAX_VALUE / 2, List.of())).isEmpty();
  }

  @Test
  void contentTypesAndEncodingsAreCheckedWithPrometheusMessages() throws Exception {
    start();
    byte[] body = body(series(List.of("__name__", "up"), T0, 1));
    HttpResponse<String> yolo = post("yolo", "snappy", body);
    assertThat(yolo.statusCode()).isEqualTo(415);
    assertThat(yolo.body())
        .isEqualTo(
            "expected application/x-protobuf as the first (media) part, got yolo content-type\n");
    HttpResponse<String> proto = post("application/x-protobuf;proto=yolo", "snappy", body);
    assertThat(proto.statusCode()).isEqualTo(415);
    assertThat(proto.body())
        .isEqualTo(
            "got application/x-protobuf;proto=yolo content type; unknown type for remote write"
                + " protobuf message yolo, supported: prometheus.WriteRequest,"
                + " io.prometheus.write.v2.Request\n");
    HttpResponse<String> br = post(V2, "br", body);
    assertThat(br.statusCode()).isEqualTo(415);
    assertThat(br.body())
        .isEqualTo(
            "br encoding (compression) is not accepted by this server; accepted: snappy (the"
                + " protocol's), zstd, gzip, deflate, x-snappy-framed\n");
    assertThat(br.headers().firstValue("Accept-Encoding"))
        .hasValue("gzip, deflate, zstd, snappy, x-snappy-framed, identity");
    assertThat(br.headers().firstValue("X-Prometheus-Remote-Write-Samples-Written")).isEmpty();
    HttpResponse<String> get =
        client.send(
            HttpRequest.newBuilder(uri).GET().build(), HttpResponse.BodyHandlers.ofString());
    assertThat(get.statusCode()).isEqualTo(405);
    assertThat(get.headers().firstValue("Allow")).hasValue("POST");
    assertThat(engine.labelNames(0, Long.MAX_VALUE / 2, List.of())).isEmpty();
  }

  @Test
  void bodiesInOtherCodingsAreDecodedIntoTheSameLimit() throws Exception {
    start();
    byte[] raw =
        WriteRequest.newBuilder()
            .addTimeseries(series(List.of("__name__", "coded", "job", "a"), T0, 1))
            .build()
            .toByteArray();
    java.io.ByteArrayOutputStream gz = new java.io.ByteArrayOutputStream();
    try (java.util.zip.GZIPOutputStream g = new java.util.zip.GZIPOutputStream(gz)) {
      g.write(raw);
    }
    java.io.ByteArrayOutputStream framed = new java.io.ByteArrayOutputStream();
    try (org.xerial.snappy.SnappyFramedOutputStream f =
        new org.xerial.snappy.SnappyFramedOutputStream(framed)) {
      f.write(raw);
    }
    assertThat(post(V1, "zstd", com.github.luben.zstd.Zstd.compress(raw)).statusCode())
        .isEqualTo(204);
    assertThat(post(V1, "gzip", gz.toByteArray()).statusCode()).isEqualTo(204);
    assertThat(post(V1, "x-snappy-framed", framed.toByteArray()).statusCode()).isEqualTo(204);
    assertThat(post(V1, "snappy", framed.toByteArray()).statusCode())
        .as("framed under the protocol's name")
        .isEqualTo(204);
    assertThat(read(Labels.of("__name__", "coded", "job", "a")))
        .containsExactly(T0 + "=" + bits(1));
    HttpResponse<String> bomb =
        post(V1, "zstd", com.github.luben.zstd.Zstd.compress(new byte[(int) MAX_BODY * 8]));
    assertThat(bomb.statusCode()).isEqualTo(413);
    HttpResponse<String> broken = post(V1, "gzip", new byte[] {0x1f, (byte) 0x8b, 8, 0});
    assertThat(broken.statusCode()).isEqualTo(400);
    assertThat(broken.body()).startsWith("gzip: ");
  }

  @Test
  void bodiesOverTheLimitBeforeOrAfterDecompressionAre413() throws Exception {
    start();
    byte[] big = new byte[(int) MAX_BODY + 1];
    HttpResponse<String> compressed = post(V1, "snappy", big);
    assertThat(compressed.statusCode()).isEqualTo(413);
    // Zeros compress ~20x: small on the wire, over the limit once decompressed.
    HttpResponse<String> inflated = post(V1, "snappy", Snappy.compress(big));
    assertThat(inflated.statusCode()).isEqualTo(413);
    assertThat(inflated.body()).contains("after decompression exceeds the limit of 262144 bytes");
  }

  @Test
  void aDeclaredLengthFarOverTheLimitIsAnswered413AtOnceNotAtTheIdleTimeout() throws Exception {
    start();
    try (java.net.Socket socket = new java.net.Socket("127.0.0.1", uri.getPort())) {
      socket.setSoTimeout((int) (IDLE_TIMEOUT_MILLIS / 2));
      java.io.OutputStream out = socket.getOutputStream();
      out.write(
          ("POST /api/v1/write HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: "
                  + V1
                  + "\r\nContent-Encoding: snappy\r\nContent-Length: 100000000\r\n\r\n0123456789")
              .getBytes(StandardCharsets.US_ASCII));
      out.flush(); // 10 bytes of the announced 100 MB, then silence
      long sent = System.nanoTime();
      java.io.InputStream in = socket.getInputStream();
      StringBuilder head = new StringBuilder();
      while (!head.toString().endsWith("\r\n\r\n")) {
        int c = in.read();
        assertThat(c).as("the answer's head, then the body").isNotNegative();
        head.append((char) c);
      }
      long waitedMillis = (System.nanoTime() - sent) / 1_000_000;
      String h = head.toString();
      int length = Integer.parseInt(h.replaceAll("(?s).*Content-Length: (\\d+).*", "$1").trim());
      String body = new String(in.readNBytes(length), StandardCharsets.UTF_8);
      assertThat(h).startsWith("HTTP/1.1 413 ");
      assertThat(body)
          .isEqualTo(
              "request body of 100000000 bytes exceeds the limit of " + MAX_BODY + " bytes\n");
      assertThat(waitedMillis)
          .as("answered long before the %d ms idle timeout", IDLE_TIMEOUT_MILLIS)
          .isLessThan(IDLE_TIMEOUT_MILLIS / 4);
    }
    assertThat(engine.labelNames(0, Long.MAX_VALUE / 2, List.of())).isEmpty();
  }

  @Test
  void storageTroubleIs503WithRetryAfterAndNothingIsAcknowledged() throws Exception {
    TestAppender appender = new TestAppender();
    appender.unavailable(true);
    start(appender, new InFlightBytes(64L << 20));
    HttpResponse<String> r = post(V1, "snappy", body(series(List.of("__name__", "up"), T0, 1)));
    assertThat(r.statusCode()).isEqualTo(503);
    assertThat(r.headers().firstValue("Retry-After")).hasValue("2");
    assertThat(r.body()).startsWith("storage unavailable");
    assertThat(appender.samples()).isEmpty();
  }

  @Test
  void overloadIs503WithRetryAfterAndTheHeldBytesAreReleased() throws Exception {
    TestAppender appender = new TestAppender();
    appender.holdOn("held");
    InFlightBytes inFlight = new InFlightBytes(100);
    start(appender, inFlight);
    CompletableFuture<HttpResponse<String>> first =
        client.sendAsync(
            request(V1, "snappy", body(series(List.of("__name__", "held"), T0, 1))),
            HttpResponse.BodyHandlers.ofString());
    assertThat(appender.awaitHeld()).isTrue();
    HttpResponse<String> second =
        post(V1, "snappy", body(series(List.of("__name__", "other"), T0, 1)));
    assertThat(second.statusCode()).isEqualTo(503);
    assertThat(second.headers().firstValue("Retry-After")).hasValue("2");
    assertThat(second.body()).startsWith("receiver overloaded");
    appender.release();
    assertThat(first.get().statusCode()).isEqualTo(204);
    assertThat(inFlight.current()).isZero();
  }

  @Test
  void aBodyCutShortIs503WithRetryAfterNot400() throws Exception {
    start();
    try (java.net.Socket socket = new java.net.Socket("127.0.0.1", uri.getPort())) {
      socket.setSoTimeout(10_000);
      java.io.OutputStream out = socket.getOutputStream();
      out.write(
          ("POST /api/v1/write HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: "
                  + V1
                  + "\r\nContent-Encoding: snappy\r\nContent-Length: 1000\r\n\r\n0123456789")
              .getBytes(StandardCharsets.US_ASCII));
      out.flush();
      socket.shutdownOutput(); // the body ends 990 bytes early
      String answer =
          new String(socket.getInputStream().readAllBytes(), StandardCharsets.ISO_8859_1);
      assertThat(answer).startsWith("HTTP/1.1 503 ");
      assertThat(answer).contains("Retry-After: 2");
      assertThat(answer)
          .contains(
              "cannot read the request body: the connection was closed or reset before the body"
                  + " was complete; retry later");
    }
    assertThat(engine.labelNames(0, Long.MAX_VALUE / 2, List.of())).isEmpty();
  }

  // ------------------------------------------------------------------ helpers

  private HttpResponse<String> post(String contentType, String encoding, byte[] body)
      throws Exception {
    return client.send(request(contentType, encoding, body), HttpResponse.BodyHandlers.ofString());
  }

  private HttpRequest request(String contentType, String encoding, byte[] body) {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(uri).POST(HttpRequest.BodyPublishers.ofByteArray(body));
    if (contentType != null) {
      b.header("Content-Type", contentType);
    }
    if (encoding != null) {
      b.header("Content-Encoding", encoding);
    }
    return b.build();
  }

  static byte[] body(TimeSeries... series) throws Exception {
    return Snappy.compress(
        WriteRequest.newBuilder().addAllTimeseries(List.of(series)).build().toByteArray());
  }

  static Label label(String name, String value) {
    return Label.newBuilder().setName(name).setValue(value).build();
  }

  static Sample sample(long t, double v) {
    return Sample.newBuilder().setTimestamp(t).setValue(v).build();
  }

  static dev.tidemark.receiver.remotewrite.proto.v2.Sample v2sample(long t, double v) {
    return dev.tidemark.receiver.remotewrite.proto.v2.Sample.newBuilder()
        .setTimestamp(t)
        .setValue(v)
        .build();
  }

  /** A series with labels in the given order and samples as (t, v) pairs. */
  static TimeSeries series(List<String> labels, double... samples) {
    TimeSeries.Builder b = TimeSeries.newBuilder();
    for (int i = 0; i < labels.size(); i += 2) {
      b.addLabels(label(labels.get(i), labels.get(i + 1)));
    }
    for (int i = 0; i < samples.length; i += 2) {
      b.addSamples(sample((long) samples[i], samples[i + 1]));
    }
    return b.build();
  }

  static byte[] labelBytes(byte[] name, byte[] value) throws Exception {
    return concat(field(1, name), field(2, value));
  }

  static byte[] field(int number, byte[] bytes) throws Exception {
    ByteArrayOutputStream raw = new ByteArrayOutputStream();
    CodedOutputStream out = CodedOutputStream.newInstance(raw);
    out.writeBytes(number, ByteString.copyFrom(bytes));
    out.flush();
    return raw.toByteArray();
  }

  static byte[] concat(byte[]... parts) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    for (byte[] p : parts) {
      out.writeBytes(p);
    }
    return out.toByteArray();
  }

  static long bits(double v) {
    return Double.doubleToRawLongBits(v);
  }

  private List<Series> select(Labels l) {
    List<LabelMatcher> m = new ArrayList<>();
    for (int i = 0; i < l.size(); i++) {
      m.add(LabelMatcher.equal(l.name(i), l.value(i)));
    }
    List<Series> found = new ArrayList<>();
    for (Series s : engine.select(0, Long.MAX_VALUE / 2, m).toList()) {
      if (s.labels().equals(l)) {
        found.add(s);
      }
    }
    return found;
  }

  /** The series' samples as "t=bits". */
  private List<String> read(Labels l) {
    List<Series> found = select(l);
    assertThat(found).as("series " + l).hasSize(1);
    List<String> out = new ArrayList<>();
    SampleIterator it = found.get(0).iterator();
    while (it.next()) {
      out.add(it.timestampMillis() + "=" + it.valueBits());
    }
    return out;
  }

  private double counter(String name, String version) {
    return value(name, "version", version);
  }

  private double refused(String reason) {
    return value("tidemark_remote_write_samples_refused", "reason", reason);
  }

  private double value(String name, String label, String labelValue) {
    double sum = 0;
    for (var s : registry.scrape()) {
      if (s instanceof io.prometheus.metrics.model.snapshots.CounterSnapshot c
          && c.getMetadata().getName().equals(name)) {
        for (var d : c.getDataPoints()) {
          if (labelValue.equals(d.getLabels().get(label))) {
            sum += d.getValue();
          }
        }
      }
    }
    return sum;
  }
}
