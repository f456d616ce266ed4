package dev.tidemark.translator;

import static dev.tidemark.translator.Otlp.CUMULATIVE;
import static dev.tidemark.translator.Otlp.DELTA;
import static dev.tidemark.translator.Otlp.SEC;
import static dev.tidemark.translator.Otlp.T0;
import static dev.tidemark.translator.Otlp.T0_MS;
import static dev.tidemark.translator.Otlp.dp;
import static dev.tidemark.translator.Otlp.gauge;
import static dev.tidemark.translator.Otlp.hdp;
import static dev.tidemark.translator.Otlp.histogram;
import static dev.tidemark.translator.Otlp.kv;
import static dev.tidemark.translator.Otlp.request;
import static dev.tidemark.translator.Otlp.sdp;
import static dev.tidemark.translator.Otlp.sum;
import static dev.tidemark.translator.Otlp.summary;
import static org.assertj.core.api.Assertions.assertThat;

import dev.tidemark.tsdb.model.FamilyMetadata;
import dev.tidemark.tsdb.model.Labels;
import dev.tidemark.tsdb.model.MetricMetadata;
import dev.tidemark.tsdb.model.MetricType;
import dev.tidemark.tsdb.model.PromType;
import dev.tidemark.tsdb.model.Temporality;
import io.opentelemetry.proto.common.v1.AnyValue;
import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.metrics.v1.AggregationTemporality;
import io.opentelemetry.proto.metrics.v1.Metric;
import io.opentelemetry.proto.metrics.v1.NumberDataPoint;
import org.junit.jupiter.api.Test;

class MetricTypesTest extends TranslatorTestBase {

  @Test
  void gaugeWithFullLabelSet() {
    TranslationResult r =
        translate(
            request(gauge("jvm.memory.used", "By", dp(T0 + 1_999_999, 42.5, kv("pool", "eden")))));
    assertThat(r.totalDataPoints()).isEqualTo(1);
    assertThat(r.isFullSuccess()).isTrue();
    assertThat(r.partialSuccessMessage()).isEmpty();
    RecordingAppender.Sample s = appender.only("jvm_memory_used_bytes");
    assertThat(s.labels())
        .isEqualTo(
            Labels.of(
                "__name__",
                "jvm_memory_used_bytes",
                "pool",
                "eden",
                "job",
                "svc",
                "instance",
                "i1",
                "otel_scope_name",
                "lib",
                "otel_scope_version",
                "1.0"));
    assertThat(s.timestampMillis()).isEqualTo(T0_MS + 1); // ns → ms truncates
    assertThat(s.value()).isEqualTo(42.5);
    assertThat(s.meta())
        .isEqualTo(new MetricMetadata(MetricType.GAUGE, "By", Temporality.UNSPECIFIED, false));
    assertThat(translator.metadata().get("jvm_memory_used_bytes"))
        .contains(new FamilyMetadata("jvm_memory_used_bytes", PromType.GAUGE, "bytes", ""));
  }

  @Test
  void gaugeUnitOneGetsRatioAndIntValues() {
    NumberDataPoint p = NumberDataPoint.newBuilder().setTimeUnixNano(T0).setAsInt(7).build();
    translate(request(gauge("system.cpu.utilization", "1", p)));
    assertThat(appender.only("system_cpu_utilization_ratio").value()).isEqualTo(7.0);
    assertThat(translator.metadata().get("system_cpu_utilization_ratio").orElseThrow().unit())
        .isEmpty();
  }

  @Test
  void gaugeWithPrometheusTypeUnknown() {
    Metric m =
        gauge("legacy", "1", dp(T0, 1)).toBuilder()
            .addMetadata(
                KeyValue.newBuilder()
                    .setKey("prometheus.type")
                    .setValue(AnyValue.newBuilder().setStringValue("unknown")))
            .build();
    translate(request(m));
    assertThat(appender.only("legacy").value()).isEqualTo(1.0);
    assertThat(translator.metadata().get("legacy").orElseThrow().type())
        .isEqualTo(PromType.UNKNOWN);
  }

  @Test
  void cumulativeMonotonicSumIsCounter() {
    translate(request(sum("process.cpu.time", "s", CUMULATIVE, true, dp(T0 - 60 * SEC, T0, 12.5))));
    RecordingAppender.Sample s = appender.only("process_cpu_time_seconds_total");
    assertThat(s.value()).isEqualTo(12.5);
    assertThat(s.meta())
        .isEqualTo(new MetricMetadata(MetricType.SUM, "s", Temporality.CUMULATIVE, true));
    assertThat(translator.metadata().get("process_cpu_time_seconds_total").orElseThrow().type())
        .isEqualTo(PromType.COUNTER);
  }

  @Test
  void cumulativeNonMonotonicSumIsGauge() {
    translate(request(sum("cpu.utilization", "1", CUMULATIVE, false, dp(T0, 0.25))));
    assertThat(appender.only("cpu_utilization").value()).isEqualTo(0.25);
    assertThat(translator.metadata().get("cpu_utilization").orElseThrow().type())
        .isEqualTo(PromType.GAUGE);
  }

  @Test
  void deltaMonotonicSumIsAccumulatedIntoCounter() {
    translate(
        request(
            sum(
                "requests",
                "",
                DELTA,
                true,
                dp(T0, T0 + 10 * SEC, 5),
                dp(T0 + 10 * SEC, T0 + 20 * SEC, 3))));
    translate(request(sum("requests", "", DELTA, true, dp(T0 + 20 * SEC, T0 + 30 * SEC, 2))));
    assertThat(appender.named("requests_total"))
        .extracting(RecordingAppender.Sample::value)
        .containsExactly(5.0, 8.0, 10.0);
    assertThat(appender.named("requests_total").get(0).meta())
        .isEqualTo(new MetricMetadata(MetricType.SUM, "", Temporality.CUMULATIVE, true));
    assertThat(translator.metadata().get("requests_total").orElseThrow().type())
        .isEqualTo(PromType.COUNTER);
  }

  @Test
  void deltaNonMonotonicSumIsAccumulatedIntoGauge() {
    translate(
        request(
            sum(
                "queue.change",
                "",
                DELTA,
                false,
                dp(T0, T0 + 10 * SEC, 5),
                dp(T0 + 10 * SEC, T0 + 20 * SEC, -7))));
    assertThat(appender.named("queue_change"))
        .extracting(RecordingAppender.Sample::value)
        .containsExactly(5.0, -2.0);
    assertThat(translator.metadata().get("queue_change").orElseThrow().type())
        .isEqualTo(PromType.GAUGE);
  }

  @Test
  void unspecifiedTemporalityIsRejected() {
    TranslationResult r =
        translate(
            request(
                sum(
                    "x",
                    "",
                    AggregationTemporality.AGGREGATION_TEMPORALITY_UNSPECIFIED,
                    true,
                    dp(T0, 1),
                    dp(T0 + SEC, 2))));
    assertThat(r.rejectedDataPoints()).isEqualTo(2);
    assertThat(r.rejected(RejectionReason.INVALID_TEMPORALITY)).isEqualTo(2);
    assertThat(r.partialSuccessMessage()).contains("aggregation_temporality 0");
    assertThat(appender.samples).isEmpty();
    assertThat(appender.calls).isZero();
  }

  @Test
  void deltaRejectedWhenConfigured() {
    reconfigure(TranslatorConfig.builder().deltaMode(TranslatorConfig.DeltaMode.REJECT).build());
    TranslationResult r = translate(request(sum("x", "", DELTA, true, dp(T0, 1))));
    assertThat(r.rejected(RejectionReason.UNSUPPORTED_DELTA)).isEqualTo(1);
  }

  @Test
  void explicitHistogram() {
    translate(
        request(
            histogram(
                "http.server.request.duration",
                "s",
                CUMULATIVE,
                hdp(
                    T0,
                    new double[] {0.005, 0.5, 1, 1e21},
                    new long[] {1, 2, 3, 4, 5},
                    12.5,
                    kv("route", "/a")))));
    String f = "http_server_request_duration_seconds";
    assertThat(appender.find(f + "_bucket", "le", "0.005").value()).isEqualTo(1);
    assertThat(appender.find(f + "_bucket", "le", "0.5").value()).isEqualTo(3);
    assertThat(appender.find(f + "_bucket", "le", "1").value()).isEqualTo(6);
    assertThat(appender.find(f + "_bucket", "le", "1000000000000000000000").value()).isEqualTo(10);
    assertThat(appender.find(f + "_bucket", "le", "+Inf").value()).isEqualTo(15);
    assertThat(appender.only(f + "_sum").value()).isEqualTo(12.5);
    assertThat(appender.only(f + "_count").value()).isEqualTo(15);
    assertThat(appender.samples.stream().filter(s -> !s.name().equals("target_info")).toList())
        .hasSize(7)
        .allMatch(s -> s.batchPoint() == 0);
    assertThat(appender.only(f + "_count").labels().get("route")).isEqualTo("/a");
    assertThat(translator.metadata().get(f).orElseThrow().type()).isEqualTo(PromType.HISTOGRAM);
  }

  @Test
  void histogramWithoutSumOrBuckets() {
    translate(
        request(
            histogram(
                "h",
                "",
                CUMULATIVE,
                hdp(T0, new double[0], new long[0], null).toBuilder().setCount(4).build())));
    assertThat(appender.named("h_sum")).isEmpty();
    assertThat(appender.only("h_count").value()).isEqualTo(4);
    assertThat(appender.only("h_bucket").labels().get("le")).isEqualTo("+Inf");
    assertThat(appender.only("h_bucket").value()).isEqualTo(4);
  }

  @Test
  void infPlusBucketIsCountNotSumOfBuckets() {
    translate(
        request(
            histogram(
                "h",
                "",
                CUMULATIVE,
                hdp(T0, new double[] {1}, new long[] {1, 1}, 3.0).toBuilder()
                    .setCount(5)
                    .build())));
    assertThat(appender.find("h_bucket", "le", "+Inf").value()).isEqualTo(5);
  }

  @Test
  void malformedHistogramsAreRejected() {
    TranslationResult r =
        translate(
            request(
                histogram(
                    "h",
                    "",
                    CUMULATIVE,
                    hdp(T0, new double[] {1, 2}, new long[] {1, 1}, 3.0),
                    hdp(T0, new double[] {2, 1}, new long[] {1, 1, 1}, 3.0),
                    hdp(T0, new double[] {1, Double.POSITIVE_INFINITY}, new long[] {1, 1, 1}, 3.0),
                    hdp(T0, new double[] {1, 2}, new long[] {1, 1, 1}, 3.0))));
    assertThat(r.rejected(RejectionReason.INVALID_HISTOGRAM)).isEqualTo(3);
    assertThat(r.acceptedDataPoints()).isEqualTo(1);
    assertThat(r.partialSuccessMessage())
        .contains("INVALID_HISTOGRAM")
        .contains("bucket_counts has 2 entries");
  }

  @Test
  void leFormatOpenMetrics() {
    reconfigure(TranslatorConfig.builder().leFormat(TranslatorConfig.LeFormat.OPENMETRICS).build());
    translate(
        request(
            histogram(
                "h", "", CUMULATIVE, hdp(T0, new double[] {1, 2.5}, new long[] {1, 1, 1}, 3.0))));
    assertThat(appender.named("h_bucket"))
        .extracting(s -> s.labels().get("le"))
        .containsExactly("1.0", "2.5", "+Inf");
  }

  @Test
  void summaryQuantilesSumCount() {
    translate(
        request(
            summary(
                "rpc.duration",
                "ms",
                sdp(
                    T0,
                    10,
                    55.5,
                    new double[] {0.5, 0.99, 1},
                    new double[] {3, 9, 12},
                    kv("m", "get")))));
    assertThat(appender.find("rpc_duration_milliseconds", "quantile", "0.5").value()).isEqualTo(3);
    assertThat(appender.find("rpc_duration_milliseconds", "quantile", "0.99").value()).isEqualTo(9);
    assertThat(appender.find("rpc_duration_milliseconds", "quantile", "1").value()).isEqualTo(12);
    assertThat(appender.only("rpc_duration_milliseconds_sum").value()).isEqualTo(55.5);
    assertThat(appender.only("rpc_duration_milliseconds_count").value()).isEqualTo(10);
    assertThat(appender.only("rpc_duration_milliseconds_count").meta().temporality())
        .isEqualTo(Temporality.CUMULATIVE);
    assertThat(translator.metadata().get("rpc_duration_milliseconds").orElseThrow().type())
        .isEqualTo(PromType.SUMMARY);
  }

  @Test
  void emptyMetricIsIgnoredWithWarning() {
    TranslationResult r = translate(request(Metric.newBuilder().setName("nothing").build()));
    assertThat(r.totalDataPoints()).isZero();
    assertThat(r.rejectedDataPoints()).isZero();
    assertThat(r.warnings()).anyMatch(w -> w.contains("nothing"));
  }

  @Test
  void startTimeZeroInjection() {
    reconfigure(
        TranslatorConfig.builder()
            .startTimeMode(TranslatorConfig.StartTimeMode.INJECT_ZERO)
            .build());
    translate(
        request(
            sum("c", "", CUMULATIVE, true, dp(T0 - 30 * SEC, T0, 4)),
            sum("same", "", CUMULATIVE, true, dp(T0, T0, 4)),
            gauge("g", "", dp(T0 - 30 * SEC, T0, 4))));
    assertThat(appender.named("c_total"))
        .extracting(RecordingAppender.Sample::timestampMillis, RecordingAppender.Sample::value)
        .containsExactly(
            org.assertj.core.groups.Tuple.tuple(T0_MS - 30_000, 0.0),
            org.assertj.core.groups.Tuple.tuple(T0_MS, 4.0));
    assertThat(appender.named("same_total")).hasSize(1); // ST == T: no injection
    assertThat(appender.named("g")).hasSize(1); // never for gauges
    assertThat(appender.named("c_total").get(0).batchPoint())
        .isNotEqualTo(appender.named("c_total").get(1).batchPoint());
  }
}
