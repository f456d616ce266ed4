package dev.tidemark.translator;

import static dev.tidemark.translator.Otlp.CUMULATIVE;
import static dev.tidemark.translator.Otlp.SEC;
import static dev.tidemark.translator.Otlp.T0;
import static dev.tidemark.translator.Otlp.T0_MS;
import static dev.tidemark.translator.Otlp.dp;
import static dev.tidemark.translator.Otlp.gauge;
import static dev.tidemark.translator.Otlp.hdp;
import static dev.tidemark.translator.Otlp.histogram;
import static dev.tidemark.translator.Otlp.kv;
import static dev.tidemark.translator.Otlp.request;
import static dev.tidemark.translator.Otlp.sum;
import static org.assertj.core.api.Assertions.assertThat;

import dev.tidemark.tsdb.append.RejectReason;
import dev.tidemark.tsdb.model.PromType;
import io.opentelemetry.proto.metrics.v1.ExponentialHistogramDataPoint;
import io.opentelemetry.proto.metrics.v1.NumberDataPoint;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class OutcomesTest extends TranslatorTestBase {

  @Test
  void zeroTimestampIsRejectedByDefault() {
    TranslationResult r = translate(request(gauge("g", "", dp(0, 1), dp(T0, 2))));
    assertThat(r.rejected(RejectionReason.ZERO_TIMESTAMP)).isEqualTo(1);
    assertThat(r.exampleMetric(RejectionReason.ZERO_TIMESTAMP)).isEqualTo("g");
    assertThat(appender.only("g").value()).isEqualTo(2);
  }

  @Test
  void zeroTimestampCanUseReceiveTime() {
    reconfigure(
        TranslatorConfig.builder()
            .zeroTimestampPolicy(TranslatorConfig.ZeroTimestampPolicy.USE_RECEIVE_TIME)
            .build());
    translate(request(gauge("g", "", dp(0, 1))));
    assertThat(appender.only("g").timestampMillis()).isEqualTo(clock.millis());
  }

  @Test
  void pointsTooFarInTheFutureAreRejected() {
    long now = clock.millis() * 1_000_000;
    TranslationResult r =
        translate(
            request(
                gauge(
                    "g",
                    "",
                    dp(now + Duration.ofMinutes(9).toNanos(), 1),
                    dp(now + Duration.ofMinutes(11).toNanos(), 2))));
    assertThat(r.rejected(RejectionReason.TOO_FAR_IN_FUTURE)).isEqualTo(1);
    assertThat(appender.only("g").value()).isEqualTo(1);
  }

  @Test
  void timestampsBeyondSignedRangeAreRejected() {
    TranslationResult r = translate(request(gauge("g", "", dp(-5, 1))));
    assertThat(r.rejected(RejectionReason.INVALID_TIMESTAMP)).isEqualTo(1);
  }

  @Test
  void everyNanIsCanonicalised() {
    NumberDataPoint forged =
        NumberDataPoint.newBuilder()
            .setTimeUnixNano(T0)
            .setAsDouble(Double.longBitsToDouble(0x7ff0000000000002L))
            .addAttributes(kv("k", "forged"))
            .build();
    NumberDataPoint payload =
        NumberDataPoint.newBuilder()
            .setTimeUnixNano(T0)
            .setAsDouble(Double.longBitsToDouble(0xfff8000000001234L))
            .addAttributes(kv("k", "payload"))
            .build();
    translate(
        request(gauge("g", "", forged, payload, dp(T0, Double.POSITIVE_INFINITY, kv("k", "inf")))));
    assertThat(appender.find("g", "k", "forged").valueBits()).isEqualTo(0x7ff8000000000001L);
    assertThat(appender.find("g", "k", "payload").valueBits()).isEqualTo(0x7ff8000000000001L);
    assertThat(appender.find("g", "k", "inf").valueBits())
        .isEqualTo(Double.doubleToRawLongBits(Double.POSITIVE_INFINITY));
  }

  @Test
  void noRecordedValueWritesTheStaleMarker() {
    translate(request(gauge("g", "", Otlp.staleDp(T0, kv("a", "b")))));
    assertThat(appender.only("g").valueBits()).isEqualTo(0x7ff0000000000002L);
  }

  @Test
  void staleHistogramMarksEveryBucketEverEmittedIncludingUnlistedBounds() {
    translate(
        request(
            histogram(
                "h", "", CUMULATIVE, hdp(T0, new double[] {1, 2}, new long[] {1, 1, 1}, 3.0))));
    translate(
        request(
            histogram(
                "h", "", CUMULATIVE, hdp(T0 + SEC, new double[] {5}, new long[] {1, 1}, 3.0))));
    appender.clear();
    translate(
        request(
            histogram(
                "h",
                "",
                CUMULATIVE,
                hdp(T0 + 2 * SEC, new double[] {5}, new long[0], null).toBuilder()
                    .clearBucketCounts()
                    .setFlags(1)
                    .build())));
    assertThat(appender.samples.stream().filter(s -> !s.name().equals("target_info")).toList())
        .allMatch(s -> s.valueBits() == 0x7ff0000000000002L)
        .extracting(
            s -> s.name() + (s.labels().get("le") == null ? "" : "{" + s.labels().get("le") + "}"))
        .containsExactlyInAnyOrder(
            "h_bucket{1}", "h_bucket{2}", "h_bucket{5}", "h_bucket{+Inf}", "h_sum", "h_count");
  }

  @Test
  void staleSummaryMarksQuantilesSumAndCount() {
    translate(
        request(
            Otlp.summary(
                "s", "", Otlp.sdp(T0, 1, 1, new double[] {0.5, 0.9}, new double[] {1, 2}))));
    appender.clear();
    translate(
        request(
            Otlp.summary(
                "s",
                "",
                Otlp.sdp(T0 + SEC, 0, 0, new double[0], new double[0]).toBuilder()
                    .setFlags(1)
                    .build())));
    assertThat(appender.samples.stream().filter(s -> !s.name().equals("target_info")).toList())
        .hasSize(4)
        .allMatch(s -> s.valueBits() == 0x7ff0000000000002L);
  }

  @Test
  void aStreamWhoseFirstPointIsStaleMarksOnlyWhatThePointNames() {
    // No bucket or quantile series was emitted before: the stream has no le/quantile memory yet.
    translate(
        request(
            Otlp.summary(
                "s",
                "",
                Otlp.sdp(T0, 0, 0, new double[0], new double[0]).toBuilder().setFlags(1).build()),
            Otlp.expHistogram(
                "e",
                "",
                CUMULATIVE,
                ExponentialHistogramDataPoint.newBuilder()
                    .setTimeUnixNano(T0)
                    .setFlags(1)
                    .build())));
    assertThat(appender.samples.stream().filter(s -> !s.name().equals("target_info")).toList())
        .allMatch(s -> s.valueBits() == 0x7ff0000000000002L)
        .extracting(
            s -> s.name() + (s.labels().get("le") == null ? "" : "{" + s.labels().get("le") + "}"))
        .containsExactlyInAnyOrder("s_sum", "s_count", "e_bucket{+Inf}", "e_count");
  }

  @Test
  void typeConflictRejectsTheLaterMetric() {
    translate(request(gauge("foo", "", dp(T0, 1))));
    TranslationResult r =
        translate(
            request(
                histogram(
                    "foo",
                    "",
                    CUMULATIVE,
                    hdp(T0, new double[] {1}, new long[] {1, 1}, 2.0),
                    hdp(T0 + SEC, new double[] {1}, new long[] {1, 1}, 2.0))));
    assertThat(r.rejected(RejectionReason.TYPE_CONFLICT)).isEqualTo(2);
    assertThat(r.partialSuccessMessage())
        .isEqualTo(
            "rejected 2 of 2 data points: 2 metric type conflicts with an earlier metric of the same name "
                + "(TYPE_CONFLICT, e.g. metric \"foo\": \"foo\" is a histogram but \"foo\" is already a gauge)");
    assertThat(translator.metadata().get("foo").orElseThrow().type()).isEqualTo(PromType.GAUGE);
  }

  @Test
  void typeConflictOnDerivedSeriesNames() {
    translate(
        request(
            histogram("foo", "", CUMULATIVE, hdp(T0, new double[] {1}, new long[] {1, 1}, 2.0))));
    TranslationResult r = translate(request(gauge("foo.count", "", dp(T0, 1))));
    assertThat(r.rejected(RejectionReason.TYPE_CONFLICT)).isEqualTo(1);
    assertThat(r.exampleMetric(RejectionReason.TYPE_CONFLICT)).isEqualTo("foo_count");
  }

  @Test
  void sameTypeDifferentHelpKeepsFirstAndWarns() {
    translate(request(gauge("foo", "", dp(T0, 1)).toBuilder().setDescription("first").build()));
    TranslationResult r =
        translate(
            request(
                gauge("foo", "", dp(T0 + SEC, 1)).toBuilder().setDescription("second").build()));
    assertThat(r.rejectedDataPoints()).isZero();
    assertThat(r.warnings()).anyMatch(w -> w.contains("conflicting UNIT or HELP"));
    assertThat(translator.metadata().get("foo").orElseThrow().help()).isEqualTo("first");
  }

  @Test
  void invalidMetricNameRejectsAllItsPoints() {
    TranslationResult r = translate(request(gauge("@#$%", "", dp(T0, 1), dp(T0, 2))));
    assertThat(r.rejected(RejectionReason.INVALID_METRIC_NAME)).isEqualTo(2);
    assertThat(r.exampleMetric(RejectionReason.INVALID_METRIC_NAME)).isEqualTo("@#$%");
    assertThat(r.detail(RejectionReason.INVALID_METRIC_NAME))
        .isEqualTo("normalization for metric \"@#$%\" resulted in empty name");
  }

  @Test
  void engineRejectionRejectsTheWholeOtlpPointAndCountsItOnce() {
    appender.rejectWhen(s -> "2".equals(s.labels().get("le")), RejectReason.OUT_OF_ORDER);
    TranslationResult r =
        translate(
            request(
                histogram(
                    "lat",
                    "s",
                    CUMULATIVE,
                    hdp(T0, new double[] {1, 2}, new long[] {1, 1, 1}, 3.0, kv("r", "a")),
                    hdp(T0, new double[] {1}, new long[] {1, 1}, 3.0, kv("r", "b"))),
                gauge("g", "", dp(T0, 1))));
    assertThat(r.totalDataPoints()).isEqualTo(3);
    assertThat(r.rejectedDataPoints()).isEqualTo(1);
    assertThat(r.rejected(RejectionReason.OUT_OF_ORDER)).isEqualTo(1);
    assertThat(appender.samples).noneMatch(s -> "a".equals(s.labels().get("r")));
    assertThat(appender.named("lat_seconds_count")).hasSize(1);
    assertThat(appender.named("g")).hasSize(1);
    assertThat(appender.calls).isEqualTo(1);
    assertThat(r.partialSuccessMessage())
        .isEqualTo(
            "rejected 1 of 3 data points: 1 out of order sample (OUT_OF_ORDER, e.g. metric \"lat_seconds\")");
  }

  @Test
  void messageMergesEngineAndTranslatorReasonsAndWarnings() {
    appender.rejectWhen(s -> "dup".equals(s.labels().get("k")), RejectReason.DUPLICATE);
    TranslationResult r =
        translate(
            request(
                gauge(
                    "g",
                    "",
                    dp(T0, 1, kv("k", "dup")),
                    dp(0, 1),
                    dp(0, 2),
                    dp(T0, 1, kv("a.b", "1"), kv("a_b", "2")))));
    assertThat(r.rejectedDataPoints()).isEqualTo(3);
    assertThat(r.rejectedByReason())
        .containsEntry(RejectionReason.DUPLICATE, 1)
        .containsEntry(RejectionReason.ZERO_TIMESTAMP, 2);
    String m = r.partialSuccessMessage();
    assertThat(m)
        .startsWith("rejected 3 of 4 data points: ")
        .contains("1 duplicate sample for timestamp (DUPLICATE, e.g. metric \"g\")")
        .contains(
            "2 data point without timestamp (time_unix_nano is 0) (ZERO_TIMESTAMP, e.g. metric \"g\")")
        .contains(
            ". warnings: metric \"g\": attributes \"a.b\" and \"a_b\" both map to label \"a_b\"");
  }

  @Test
  void targetInfoRejectionsAreNotCountedAsDataPoints() {
    appender.rejectWhen(s -> s.name().equals("target_info"), RejectReason.OUT_OF_ORDER);
    TranslationResult r = translate(request(gauge("g", "", dp(T0, 1))));
    assertThat(r.rejectedDataPoints()).isZero();
    assertThat(r.isFullSuccess()).isTrue();
  }

  @Test
  void emptyRequestIsFullSuccessWithoutAppending() {
    TranslationResult r =
        translate(
            io.opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest
                .getDefaultInstance());
    assertThat(r.totalDataPoints()).isZero();
    assertThat(r.isFullSuccess()).isTrue();
    assertThat(appender.calls).isZero();
  }

  @Test
  void samplesWrittenCountsAcceptedSamples() {
    TranslationResult r = translate(request(sum("c", "", CUMULATIVE, true, dp(T0, 1))));
    assertThat(r.samplesWritten()).isEqualTo(2); // the counter and target_info
    assertThat(appender.only("c_total").timestampMillis()).isEqualTo(T0_MS);
  }

  @Test
  void aPointWithoutValueIsRejectedNotStoredAsZero() {
    NumberDataPoint valueless =
        NumberDataPoint.newBuilder().setTimeUnixNano(T0).addAttributes(kv("k", "none")).build();
    TranslationResult r = translate(request(gauge("g", "", valueless, dp(T0, 2, kv("k", "two")))));
    assertThat(r.rejected(RejectionReason.MISSING_VALUE)).isEqualTo(1);
    assertThat(r.partialSuccessMessage())
        .contains("1 number data point without a value (MISSING_VALUE, e.g. metric \"g\")");
    assertThat(appender.named("g")).extracting(s -> s.labels().get("k")).containsExactly("two");
  }

  @Test
  void aValuelessNoRecordedValuePointIsStillAStaleMarker() {
    TranslationResult r = translate(request(gauge("g", "", Otlp.staleDp(T0, kv("a", "b")))));
    assertThat(r.isFullSuccess()).isTrue();
    assertThat(appender.only("g").valueBits()).isEqualTo(0x7ff0000000000002L);
  }

  @Test
  void anOverLongLabelValueRejectsItsPointOnlyNamingTheFieldAndLimit() {
    String statement = "s".repeat(70_000);
    TranslationResult r =
        translate(
            request(
                gauge(
                    "db_calls",
                    "",
                    dp(T0, 1, kv("db.statement", statement)),
                    dp(T0, 2, kv("db.statement", "select 1")))));
    assertThat(r.rejected(RejectionReason.LIMIT_EXCEEDED)).isEqualTo(1);
    assertThat(r.detail(RejectionReason.LIMIT_EXCEEDED))
        .isEqualTo(
            "label value of 70000 bytes exceeds the 65535-byte limit (label \"db_statement\")");
    assertThat(r.partialSuccessMessage()).hasSizeLessThan(1000);
    assertThat(appender.only("db_calls").labels().get("db_statement")).isEqualTo("select 1");
  }

  @Test
  void overLongMetricAndLabelNamesAreRejectedWithAShortExample() {
    String longName = "m".repeat(66_000);
    TranslationResult r =
        translate(
            request(
                gauge(longName, "", dp(T0, 1)),
                gauge("ok", "", dp(T0, 1, kv("k".repeat(65_536), "v")), dp(T0, 3))));
    assertThat(r.rejected(RejectionReason.LIMIT_EXCEEDED)).isEqualTo(2);
    assertThat(r.detail(RejectionReason.LIMIT_EXCEEDED))
        .startsWith("metric name of 66000 bytes exceeds the 65535-byte limit");
    assertThat(r.exampleMetric(RejectionReason.LIMIT_EXCEEDED)).hasSizeLessThan(300);
    assertThat(r.partialSuccessMessage()).hasSizeLessThan(1000);
    assertThat(appender.only("ok").value()).isEqualTo(3);
  }

  @Test
  void histogramSeriesAreCheckedWithTheirLongestName() {
    // 65530 bytes fit as a name, but not with "_bucket" appended.
    String name = "h".repeat(65_530);
    TranslationResult r =
        translate(
            request(
                histogram(
                    name, "", CUMULATIVE, hdp(T0, new double[] {1}, new long[] {1, 1}, 2.0))));
    assertThat(r.rejected(RejectionReason.LIMIT_EXCEEDED)).isEqualTo(1);
    assertThat(appender.samples).noneMatch(s -> s.name().startsWith("hhh"));
  }

  @Test
  void anOverLongResourceAttributeSkipsTargetInfoWithAWarning() {
    io.opentelemetry.proto.resource.v1.Resource resource =
        Otlp.defaultResource().toBuilder()
            .addAttributes(kv("host.description", "d".repeat(70_000)))
            .build();
    TranslationResult r = translate(request(resource, gauge("g", "", dp(T0, 1))));
    assertThat(r.rejectedDataPoints()).isZero();
    assertThat(r.partialSuccessMessage())
        .contains(
            "target_info not written: label value of 70000 bytes exceeds the 65535-byte limit");
    assertThat(appender.only("g").value()).isEqualTo(1);
  }

  @Test
  void aLoneSurrogateInAnAttributeFailsOnlyItsPoint() {
    // Only OTLP/JSON can carry one ("\ud800" escapes); protobuf refuses invalid UTF-8 on parse.
    TranslationResult r =
        translate(
            request(gauge("g", "", dp(T0, 1, kv("k", "a\ud800b")), dp(T0, 2, kv("k", "ok")))));
    assertThat(r.rejected(RejectionReason.INVALID_UTF8)).isEqualTo(1);
    assertThat(r.detail(RejectionReason.INVALID_UTF8))
        .isEqualTo("value of label k has an unpaired surrogate at index 1");
    assertThat(appender.named("g")).extracting(s -> s.labels().get("k")).containsExactly("ok");
  }
}
