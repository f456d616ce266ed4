package dev.tidemark.translator;

import static dev.tidemark.translator.Otlp.T0;
import static dev.tidemark.translator.Otlp.T0_MS;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.google.protobuf.ByteString;
import com.google.protobuf.CodedOutputStream;
import dev.tidemark.tsdb.append.RejectReason;
import dev.tidemark.tsdb.time.ManualClock;
import io.opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest;
import io.opentelemetry.proto.common.v1.AnyValue;
import io.opentelemetry.proto.common.v1.ArrayValue;
import io.opentelemetry.proto.common.v1.InstrumentationScope;
import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.common.v1.KeyValueList;
import io.opentelemetry.proto.metrics.v1.Exemplar;
import io.opentelemetry.proto.metrics.v1.ExponentialHistogram;
import io.opentelemetry.proto.metrics.v1.ExponentialHistogramDataPoint;
import io.opentelemetry.proto.metrics.v1.Gauge;
import io.opentelemetry.proto.metrics.v1.Histogram;
import io.opentelemetry.proto.metrics.v1.HistogramDataPoint;
import io.opentelemetry.proto.metrics.v1.Metric;
import io.opentelemetry.proto.metrics.v1.NumberDataPoint;
import io.opentelemetry.proto.metrics.v1.ResourceMetrics;
import io.opentelemetry.proto.metrics.v1.ScopeMetrics;
import io.opentelemetry.proto.metrics.v1.Sum;
import io.opentelemetry.proto.metrics.v1.Summary;
import io.opentelemetry.proto.metrics.v1.SummaryDataPoint;
import io.opentelemetry.proto.resource.v1.Resource;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The in-place path against the tree path ({@link Equivalence}) on generated requests: the
 * translator's conformance names as metrics and attributes, a seeded random generator (every metric
 * kind and temporality, every attribute value type, duplicate keys, over-long values, missing
 * values, stale flags, several resources and scopes, exemplars), each request re-encoded at random
 * (repeated scalars unpacked, unknown fields of every wire type, fields reordered or repeated),
 * truncated at every byte and with bytes flipped. (Every request the other translator tests build
 * goes through the same check, see {@link TranslatorTestBase}.)
 */
class InPlaceEquivalenceTest {
  private static final long SEC = Otlp.SEC;

  private final ManualClock clock = new ManualClock(T0_MS + Duration.ofMinutes(1).toMillis());
  private final RecordingAppender rules = new RecordingAppender();
  private int compared;

  private Equivalence.Twin twin(TranslatorConfig c) {
    return new Equivalence.Twin(c, clock, rules);
  }

  private void both(Equivalence.Twin t, byte[] bytes) {
    t.translateBoth(bytes);
    compared++;
  }

  // ---------------------------------------------------------------- conformance names

  @Test
  void conformanceNamesAsMetricsAndAttributes() throws IOException {
    JsonNode root;
    try (InputStream in =
        InPlaceEquivalenceTest.class.getResourceAsStream("/otlptranslator-cases.json")) {
      root = new ObjectMapper().readTree(in);
    }
    for (TranslationStrategy s : TranslationStrategy.values()) {
      Equivalence.Twin t = twin(TranslatorConfig.builder().translationStrategy(s).build());
      long time = T0;
      for (JsonNode c : root.get("metric_namer_cases")) {
        JsonNode m = c.get("metric");
        time += SEC;
        NumberDataPoint p = Otlp.dp(time, 1, Otlp.kv("k", "v"));
        Metric metric =
            switch (m.get("type").asText()) {
              case "monotonic_counter" ->
                  Otlp.sum(
                      m.get("name").asText(), m.get("unit").asText(), Otlp.CUMULATIVE, true, p);
              case "non_monotonic_counter" ->
                  Otlp.sum(
                      m.get("name").asText(), m.get("unit").asText(), Otlp.CUMULATIVE, false, p);
              case "histogram" ->
                  Otlp.histogram(
                      m.get("name").asText(),
                      m.get("unit").asText(),
                      Otlp.CUMULATIVE,
                      Otlp.hdp(time, new double[] {1}, new long[] {1, 2}, 3.0, Otlp.kv("k", "v")));
              case "summary" ->
                  Otlp.summary(
                      m.get("name").asText(),
                      m.get("unit").asText(),
                      Otlp.sdp(
                          time, 2, 3, new double[] {0.5}, new double[] {1}, Otlp.kv("k", "v")));
              default -> Otlp.gauge(m.get("name").asText(), m.get("unit").asText(), p);
            };
        both(t, Otlp.request(metric).toByteArray());
      }
      for (JsonNode c : root.get("label_cases")) {
        time += SEC;
        both(
            t,
            Otlp.request(
                    Otlp.gauge("g", "", Otlp.dp(time, 1, Otlp.kv(c.get("label").asText(), "v"))))
                .toByteArray());
      }
      assertThat(t.requests).isEqualTo(100);
    }
  }

  // ---------------------------------------------------------------- concurrency

  /** ConcurrencyTest's workload through the in-place path: shared caches, per-thread scratch. */
  @Test
  void concurrentRequestsInPlace() throws Exception {
    RecordingAppender appender = new RecordingAppender();
    Translator translator = new Translator(appender, TranslatorConfig.defaults(), clock);
    int threads = 4;
    int requests = 200;
    java.util.concurrent.ExecutorService pool =
        java.util.concurrent.Executors.newFixedThreadPool(threads);
    try {
      List<java.util.concurrent.Future<Integer>> futures = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        String me = "t" + t;
        futures.add(
            pool.submit(
                () -> {
                  int rejected = 0;
                  for (int i = 0; i < requests; i++) {
                    long time = T0 + (i + 1) * SEC;
                    TranslationResult r =
                        translator.translate(
                            Otlp.request(
                                    Otlp.sum(
                                        "work",
                                        "",
                                        Otlp.DELTA,
                                        true,
                                        Otlp.dp(time - SEC, time, 1, Otlp.kv("thread", me))),
                                    Otlp.gauge("shared", "", Otlp.dp(time, i, Otlp.kv("k", "v"))),
                                    Otlp.histogram(
                                        "lat",
                                        "s",
                                        Otlp.CUMULATIVE,
                                        Otlp.hdp(
                                            time,
                                            new double[] {1, 2},
                                            new long[] {i, 1, 1},
                                            1.0,
                                            Otlp.kv("thread", me))))
                                .toByteArray());
                    assertThat(r.totalDataPoints()).isEqualTo(3);
                    rejected += r.rejectedDataPoints();
                  }
                  return rejected;
                }));
      }
      for (java.util.concurrent.Future<Integer> f : futures) {
        assertThat(f.get()).isZero();
      }
    } finally {
      pool.shutdownNow();
    }
    for (int t = 0; t < threads; t++) {
      String me = "t" + t;
      List<Double> values =
          appender.named("work_total").stream()
              .filter(x -> me.equals(x.labels().get("thread")))
              .map(RecordingAppender.Sample::value)
              .toList();
      assertThat(values).hasSize(requests);
      assertThat(values.get(requests - 1)).isEqualTo(requests);
    }
    assertThat(appender.named("shared")).hasSize(threads * requests);
    assertThat(translator.deltaStreamCount()).isEqualTo(threads);
    assertThat(translator.metadata().size()).isEqualTo(4);
  }

  // ---------------------------------------------------------------- random requests

  @Test
  void randomRequestsDefaultConfig() {
    random(TranslatorConfig.defaults(), 1, 600);
  }

  @Test
  void randomRequestsOtherConfigs() {
    random(
        TranslatorConfig.builder()
            .translationStrategy(TranslationStrategy.values()[2])
            .exponentialHistogramMode(TranslatorConfig.ExponentialHistogramMode.COUNT_SUM_ONLY)
            .startTimeMode(TranslatorConfig.StartTimeMode.INJECT_ZERO)
            .zeroTimestampPolicy(TranslatorConfig.ZeroTimestampPolicy.USE_RECEIVE_TIME)
            .build(),
        2,
        300);
    random(
        TranslatorConfig.builder()
            .deltaMode(TranslatorConfig.DeltaMode.REJECT)
            .seriesCacheSize(16)
            .exponentialHistogramMode(TranslatorConfig.ExponentialHistogramMode.DROP)
            .build(),
        3,
        300);
  }

  @Test
  void appenderRejectionsAndFailures() {
    rules.rejectWhen(s -> s.timestampMillis() % 7 == 0, RejectReason.OUT_OF_ORDER);
    random(TranslatorConfig.defaults(), 4, 200);
    rules.unavailable = true;
    random(TranslatorConfig.defaults(), 5, 20);
  }

  private void random(TranslatorConfig config, long seed, int requests) {
    Random rnd = new Random(seed);
    Equivalence.Twin t = twin(config);
    Gen g = new Gen(rnd);
    for (int i = 0; i < requests; i++) {
      g.now = T0 + i * 10 * SEC;
      clock.set(g.now / 1_000_000 + 30_000);
      byte[] bytes = g.request().toByteArray();
      both(t, rnd.nextInt(3) == 0 ? bytes : rewrite(bytes, 0, bytes.length, OtlpWire.REQUEST, rnd));
    }
    System.out.printf(
        "in-place equivalence, seed %d: %d requests, %d points accepted, %d rejected %s, %d undecodable%n",
        seed, t.requests, t.accepted, t.rejected, t.byReason, t.undecodable);
    assertThat(t.requests).isEqualTo(requests);
    if (!rules.unavailable) {
      assertThat(t.accepted).isGreaterThan(requests);
      assertThat(t.rejected).isGreaterThan(requests / 10);
    }
  }

  @Test
  void truncatedAtEveryByteAndFlippedBytes() {
    Random rnd = new Random(7);
    Gen g = new Gen(rnd);
    Equivalence.Twin t = twin(TranslatorConfig.defaults());
    int truncated = 0;
    for (int i = 0; i < 6; i++) {
      g.now = T0 + i * 10 * SEC;
      byte[] bytes = g.request().toByteArray();
      if (i % 2 == 1) {
        bytes = rewrite(bytes, 0, bytes.length, OtlpWire.REQUEST, rnd);
      }
      for (int n = 0; n < bytes.length && n < 3000; n++) {
        both(t, java.util.Arrays.copyOf(bytes, n));
        truncated++;
      }
      for (int k = 0; k < 300; k++) {
        byte[] b = bytes.clone();
        b[rnd.nextInt(b.length)] ^= (byte) (1 << rnd.nextInt(8));
        both(t, b);
      }
    }
    // Hand-made malformed input: bad tags, wire types, lengths, varints, groups, UTF-8.
    byte[][] bad = {
      {0x00},
      {0x0f},
      {0x0e, 0x00},
      {0x0c},
      {0x0a, (byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xff, 0x0f},
      {
        (byte) 0x80,
        (byte) 0x80,
        (byte) 0x80,
        (byte) 0x80,
        (byte) 0x80,
        (byte) 0x80,
        (byte) 0x80,
        (byte) 0x80,
        (byte) 0x80,
        (byte) 0x80,
        0x01
      },
      {0x1b, 0x08, 0x01, 0x1c},
      {0x1b, 0x08, 0x01, 0x24},
      {0x1b, 0x08, 0x01},
      {0x0a, 0x05, 0x1a, 0x03, (byte) 0xed, (byte) 0xa0, (byte) 0x80},
      {0x0a, 0x04, 0x1a, 0x02, (byte) 0xc0, (byte) 0x80},
      {0x0a, 0x05, 0x1a, 0x03, 'a', 'b', 'c'},
    };
    for (byte[] b : bad) {
      both(t, b);
    }
    System.out.printf(
        "in-place equivalence, malformed: %d requests (%d truncated), %d undecodable, %d points accepted%n",
        t.requests, truncated, t.undecodable, t.accepted);
    assertThat(truncated).isGreaterThan(1000);
    assertThat(t.undecodable).isGreaterThan(truncated / 2);
  }

  /** Random OTLP requests over small pools, so streams repeat across requests. */
  private static final class Gen {
    final Random rnd;
    long now;
    final String[] keys = {
      "a",
      "b",
      "method",
      "k.x",
      "k_x",
      "le",
      "__name__",
      "",
      "é",
      "quantile",
      "service.name",
      "0abc"
    };
    final String[] names = {
      "m", "http.requests", "lat_seconds", "", "0bad", "g", "m", "requests.total", "size"
    };
    final String[] units = {"", "s", "By", "{req}", "ms", "1"};

    Gen(Random rnd) {
      this.rnd = rnd;
    }

    ExportMetricsServiceRequest request() {
      ExportMetricsServiceRequest.Builder b = ExportMetricsServiceRequest.newBuilder();
      int nr = 1 + rnd.nextInt(3);
      for (int r = 0; r < nr; r++) {
        ResourceMetrics.Builder rm = ResourceMetrics.newBuilder();
        if (rnd.nextInt(8) != 0) {
          rm.setResource(resource());
        }
        int ns = 1 + rnd.nextInt(2);
        for (int s = 0; s < ns; s++) {
          ScopeMetrics.Builder sm = ScopeMetrics.newBuilder();
          if (rnd.nextInt(4) != 0) {
            InstrumentationScope.Builder sc =
                InstrumentationScope.newBuilder()
                    .setName(pick("", "lib", "io.otel"))
                    .setVersion(pick("", "1.0"));
            if (rnd.nextBoolean()) {
              sc.addAttributes(kv());
            }
            sm.setScope(sc);
          }
          if (rnd.nextInt(5) == 0) {
            sm.setSchemaUrl("https://opentelemetry.io/schemas/1.21.0");
          }
          int nm = 1 + rnd.nextInt(5);
          for (int m = 0; m < nm; m++) {
            sm.addMetrics(metric());
          }
          rm.addScopeMetrics(sm);
        }
        b.addResourceMetrics(rm);
      }
      return b.build();
    }

    String pick(String... s) {
      return s[rnd.nextInt(s.length)];
    }

    Resource resource() {
      Resource.Builder r = Resource.newBuilder();
      int v = rnd.nextInt(4);
      if (v != 3) {
        r.addAttributes(Otlp.kv("service.name", "svc" + v));
      }
      if (v != 2) {
        r.addAttributes(Otlp.kv("service.instance.id", "i" + rnd.nextInt(2)));
      }
      if (rnd.nextBoolean()) {
        r.addAttributes(Otlp.kv("host.name", "h" + rnd.nextInt(2)));
      }
      if (rnd.nextInt(10) == 0) {
        r.addAttributes(kv());
      }
      if (rnd.nextInt(10) == 0) {
        r.setDroppedAttributesCount(3);
      }
      return r.build();
    }

    AnyValue value(int depth) {
      AnyValue.Builder v = AnyValue.newBuilder();
      switch (rnd.nextInt(depth > 1 ? 6 : 10)) {
        case 0, 1, 2 -> v.setStringValue(pick("x", "y", "", "GET", "ünï", "a;b", "z"));
        case 3 -> v.setIntValue(rnd.nextInt(3) - 1);
        case 4 -> v.setBoolValue(rnd.nextBoolean());
        case 5 -> v.setDoubleValue(pick(0.5, -0.0, Double.NaN, 1e300));
        case 6 -> {
          ArrayValue.Builder a = ArrayValue.newBuilder();
          for (int i = rnd.nextInt(3); i > 0; i--) {
            a.addValues(value(depth + 1));
          }
          v.setArrayValue(a);
        }
        case 7 -> {
          KeyValueList.Builder l = KeyValueList.newBuilder();
          for (int i = rnd.nextInt(3); i > 0; i--) {
            l.addValues(KeyValue.newBuilder().setKey(pick("p", "q")).setValue(value(depth + 1)));
          }
          v.setKvlistValue(l);
        }
        case 8 -> v.setBytesValue(ByteString.copyFrom(new byte[] {1, (byte) 0xff, 0}));
        default -> {} // no value
      }
      return v.build();
    }

    double pick(double... d) {
      return d[rnd.nextInt(d.length)];
    }

    KeyValue kv() {
      if (rnd.nextInt(200) == 0) {
        return Otlp.kv("long", "v".repeat(70_000)); // over the label value limit
      }
      KeyValue.Builder k = KeyValue.newBuilder().setKey(keys[rnd.nextInt(keys.length)]);
      if (rnd.nextInt(15) != 0) {
        k.setValue(value(0));
      }
      return k.build();
    }

    List<KeyValue> attrs() {
      List<KeyValue> l = new ArrayList<>();
      int n = rnd.nextInt(5);
      for (int i = 0; i < n; i++) {
        l.add(
            rnd.nextInt(3) == 0
                ? kv()
                : Otlp.kv(pick("method", "route", "code"), pick("GET", "POST", "/a", "200")));
      }
      return l;
    }

    long time() {
      return switch (rnd.nextInt(30)) {
        case 0 -> 0;
        case 1 -> now + 3600 * SEC; // too far in the future
        case 2 -> -5; // beyond 2262 (unsigned)
        default -> now - rnd.nextInt(5) * SEC;
      };
    }

    int temporality() {
      return switch (rnd.nextInt(10)) {
        case 0 -> 0;
        case 1 -> 7;
        case 2, 3, 4 -> 1;
        default -> 2;
      };
    }

    int flags() {
      return rnd.nextInt(12) == 0 ? 1 : 0;
    }

    void exemplar(java.util.function.Consumer<Exemplar> add) {
      if (rnd.nextInt(6) == 0) {
        add.accept(
            Exemplar.newBuilder()
                .setAsDouble(1)
                .setTimeUnixNano(now)
                .addFilteredAttributes(Otlp.kv("trace", "t"))
                .setSpanId(ByteString.copyFrom(new byte[8]))
                .build());
      }
    }

    Metric metric() {
      int kind = rnd.nextInt(11);
      // Mostly a name of the kind's own (accepted points), sometimes a shared one (TYPE_CONFLICT).
      String name = names[rnd.nextInt(names.length)];
      Metric.Builder m =
          Metric.newBuilder()
              .setName(rnd.nextInt(3) == 0 || name.isEmpty() ? name : "k" + kind / 2 + "." + name)
              .setUnit(units[rnd.nextInt(units.length)]);
      if (rnd.nextInt(6) == 0) {
        m.setDescription(pick("help", "other help"));
      }
      int np = rnd.nextInt(4);
      switch (kind) {
        case 0, 1 -> {
          Gauge.Builder g = Gauge.newBuilder();
          for (int i = 0; i < np; i++) {
            g.addDataPoints(number());
          }
          m.setGauge(g);
          if (rnd.nextInt(5) == 0) {
            m.addMetadata(Otlp.kv("prometheus.type", "unknown"));
          }
        }
        case 2, 3, 4 -> {
          Sum.Builder s =
              Sum.newBuilder()
                  .setAggregationTemporalityValue(temporality())
                  .setIsMonotonic(rnd.nextBoolean());
          for (int i = 0; i < np; i++) {
            s.addDataPoints(number());
          }
          m.setSum(s);
        }
        case 5, 6 -> {
          Histogram.Builder h =
              Histogram.newBuilder().setAggregationTemporalityValue(temporality());
          for (int i = 0; i < np; i++) {
            h.addDataPoints(histogram());
          }
          m.setHistogram(h);
        }
        case 7, 8 -> {
          ExponentialHistogram.Builder h =
              ExponentialHistogram.newBuilder().setAggregationTemporalityValue(temporality());
          for (int i = 0; i < np; i++) {
            h.addDataPoints(exponential());
          }
          m.setExponentialHistogram(h);
        }
        case 9 -> {
          Summary.Builder s = Summary.newBuilder();
          for (int i = 0; i < np; i++) {
            s.addDataPoints(summary());
          }
          m.setSummary(s);
        }
        default -> {} // no data
      }
      return m.build();
    }

    NumberDataPoint number() {
      NumberDataPoint.Builder p =
          NumberDataPoint.newBuilder()
              .setTimeUnixNano(time())
              .setFlags(flags())
              .addAllAttributes(attrs());
      if (rnd.nextBoolean()) {
        p.setStartTimeUnixNano(now - 100 * SEC);
      }
      switch (rnd.nextInt(8)) {
        case 0 -> {} // missing value
        case 1, 2, 3 -> p.setAsInt(rnd.nextInt(100));
        default -> p.setAsDouble(rnd.nextInt(1000) / 10.0);
      }
      exemplar(p::addExemplars);
      return p.build();
    }

    HistogramDataPoint histogram() {
      HistogramDataPoint.Builder p =
          HistogramDataPoint.newBuilder()
              .setTimeUnixNano(time())
              .setFlags(flags())
              .addAllAttributes(attrs());
      int nb = rnd.nextInt(4);
      double b = 0;
      for (int i = 0; i < nb; i++) {
        b += rnd.nextInt(5) == 0 ? 0 : 0.5 + rnd.nextInt(3);
        p.addExplicitBounds(b);
      }
      int nc = rnd.nextInt(10) == 0 ? nb : nb + 1;
      long count = 0;
      for (int i = 0; i < nc; i++) {
        long c = rnd.nextInt(5);
        count += c;
        p.addBucketCounts(c);
      }
      p.setCount(rnd.nextInt(10) == 0 ? count + 1 : count);
      if (rnd.nextBoolean()) {
        p.setSum(count * 1.5);
      }
      if (rnd.nextBoolean()) {
        p.setStartTimeUnixNano(now - 100 * SEC);
      }
      exemplar(p::addExemplars);
      return p.build();
    }

    ExponentialHistogramDataPoint exponential() {
      ExponentialHistogramDataPoint.Builder p =
          ExponentialHistogramDataPoint.newBuilder()
              .setTimeUnixNano(time())
              .setFlags(flags())
              .addAllAttributes(attrs())
              .setScale(rnd.nextInt(12) == 0 ? 25 : rnd.nextInt(8) - 3)
              .setZeroCount(rnd.nextInt(3))
              .setZeroThreshold(rnd.nextBoolean() ? 0 : 0.001);
      long count = p.getZeroCount();
      for (int side = 0; side < 2; side++) {
        ExponentialHistogramDataPoint.Buckets.Builder bk =
            ExponentialHistogramDataPoint.Buckets.newBuilder().setOffset(rnd.nextInt(20) - 10);
        for (int i = rnd.nextInt(6); i > 0; i--) {
          long c = rnd.nextInt(4);
          count += c;
          bk.addBucketCounts(c);
        }
        if (side == 0) {
          p.setPositive(bk);
        } else if (rnd.nextBoolean()) {
          p.setNegative(bk);
        }
      }
      p.setCount(rnd.nextInt(10) == 0 ? count + 2 : count);
      if (rnd.nextBoolean()) {
        p.setSum(count * 0.25);
      }
      if (rnd.nextBoolean()) {
        p.setStartTimeUnixNano(now - 100 * SEC);
      }
      exemplar(p::addExemplars);
      return p.build();
    }

    SummaryDataPoint summary() {
      SummaryDataPoint.Builder p =
          SummaryDataPoint.newBuilder()
              .setTimeUnixNano(time())
              .setFlags(flags())
              .addAllAttributes(attrs())
              .setCount(rnd.nextInt(10))
              .setSum(rnd.nextInt(100));
      for (int i = rnd.nextInt(3); i > 0; i--) {
        p.addQuantileValues(
            SummaryDataPoint.ValueAtQuantile.newBuilder()
                .setQuantile(pick(0.5, 0.9, 0.99))
                .setValue(rnd.nextInt(9)));
      }
      return p.build();
    }
  }

  // ---------------------------------------------------------------- re-encoding

  /**
   * Re-encodes one message of {@code type}: sub-messages recursively; at random repeated scalars
   * unpacked, unknown fields (every wire type, groups included) inserted, fields reordered (fields
   * of one number keep their order) and a field repeated.
   */
  static byte[] rewrite(byte[] b, int off, int end, int type, Random rnd) {
    record Field(int number, byte[] bytes) {}
    List<Field> fields = new ArrayList<>();
    OtlpWire.Reader r = new OtlpWire.Reader(b, off, end);
    try {
      while (r.pos < end) {
        int start = r.pos;
        int tag = r.tag(end);
        int field = tag >>> 3;
        int k = OtlpWire.kind(type, tag);
        ByteArrayOutputStream bo = new ByteArrayOutputStream();
        CodedOutputStream out = CodedOutputStream.newInstance(bo);
        boolean packedFixed =
            type == OtlpWire.HISTOGRAM_DP
                && (field == 6 || field == 7)
                && (tag & 7) == OtlpWire.WT_LEN;
        boolean packedVarint =
            type == OtlpWire.BUCKETS && field == 2 && (tag & 7) == OtlpWire.WT_LEN;
        if (k >= 0) {
          int n = r.length(end);
          byte[] inner = rewrite(b, r.pos, r.pos + n, k, rnd);
          r.pos += n;
          out.writeByteArray(field, inner);
        } else if ((packedFixed || packedVarint) && rnd.nextBoolean()) {
          int n = r.length(end);
          int stop = r.pos + n;
          while (r.pos < stop) {
            if (packedFixed) {
              out.writeFixed64(field, r.fixed64(stop));
            } else {
              out.writeUInt64(field, r.varint(stop));
            }
          }
        } else {
          r.skip(tag, end, 0);
          out.writeRawBytes(b, start, r.pos - start);
        }
        out.flush();
        fields.add(new Field(field, bo.toByteArray()));
      }
      if (rnd.nextInt(4) == 0) {
        ByteArrayOutputStream bo = new ByteArrayOutputStream();
        CodedOutputStream out = CodedOutputStream.newInstance(bo);
        int f = 50 + rnd.nextInt(2000);
        switch (rnd.nextInt(5)) {
          case 0 -> out.writeUInt64(f, rnd.nextLong());
          case 1 -> out.writeFixed64(f, rnd.nextLong());
          case 2 -> out.writeByteArray(f, new byte[] {1, 2, 3});
          case 3 -> out.writeFixed32(f, 7);
          default -> {
            out.writeTag(f, OtlpWire.WT_START_GROUP);
            out.writeUInt64(1, 5);
            out.writeTag(f, OtlpWire.WT_END_GROUP);
          }
        }
        out.flush();
        fields.add(rnd.nextInt(fields.size() + 1), new Field(f, bo.toByteArray()));
      }
      if (!fields.isEmpty() && rnd.nextInt(12) == 0) {
        Field f = fields.get(rnd.nextInt(fields.size()));
        fields.add(f); // a repeated occurrence: last wins, repeated fields grow, messages merge
      }
      if (rnd.nextInt(3) == 0) {
        Map<Integer, Integer> order = new HashMap<>();
        for (Field f : fields) {
          order.computeIfAbsent(f.number(), x -> rnd.nextInt());
        }
        fields.sort(Comparator.comparingInt(f -> order.get(f.number())));
      }
      ByteArrayOutputStream all = new ByteArrayOutputStream();
      for (Field f : fields) {
        all.write(f.bytes());
      }
      return all.toByteArray();
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }
}
