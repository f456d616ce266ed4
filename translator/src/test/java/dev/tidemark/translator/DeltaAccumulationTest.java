package dev.tidemark.translator;

import static dev.tidemark.translator.Otlp.DELTA;
import static dev.tidemark.translator.Otlp.SEC;
import static dev.tidemark.translator.Otlp.T0;
import static dev.tidemark.translator.Otlp.buckets;
import static dev.tidemark.translator.Otlp.dp;
import static dev.tidemark.translator.Otlp.edp;
import static dev.tidemark.translator.Otlp.expHistogram;
import static dev.tidemark.translator.Otlp.hdp;
import static dev.tidemark.translator.Otlp.histogram;
import static dev.tidemark.translator.Otlp.kv;
import static dev.tidemark.translator.Otlp.request;
import static dev.tidemark.translator.Otlp.sum;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.tidemark.tsdb.append.StorageUnavailableException;
import io.opentelemetry.proto.metrics.v1.NumberDataPoint;
import io.opentelemetry.proto.resource.v1.Resource;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class DeltaAccumulationTest extends TranslatorTestBase {

  private static io.opentelemetry.proto.metrics.v1.Metric counter(NumberDataPoint... pts) {
    return sum("req", "", DELTA, true, pts);
  }

  private List<Double> values() {
    return appender.named("req_total").stream().map(RecordingAppender.Sample::value).toList();
  }

  @Test
  void outOfOrderAndOlderSeriesPointsAreRejected() {
    translate(request(counter(dp(T0 + 10 * SEC, T0 + 20 * SEC, 5))));
    TranslationResult r =
        translate(
            request(
                counter(
                    dp(T0 + 10 * SEC, T0 + 20 * SEC, 1), // same time: not newer
                    dp(T0, T0 + 30 * SEC, 1), // starts before the stream's start
                    dp(T0 + 20 * SEC, T0 + 30 * SEC, 2))));
    assertThat(r.rejected(RejectionReason.DELTA_OUT_OF_ORDER)).isEqualTo(2);
    assertThat(r.exampleMetric(RejectionReason.DELTA_OUT_OF_ORDER)).isEqualTo("req_total");
    assertThat(values()).containsExactly(5.0, 7.0);
  }

  @Test
  void streamsAreKeyedByFullIdentity() {
    translate(
        request(counter(dp(T0, T0 + SEC, 1, kv("a", "1")), dp(T0, T0 + SEC, 10, kv("a", "2")))));
    translate(request(counter(dp(T0 + SEC, T0 + 2 * SEC, 1, kv("a", "1")))));
    Resource other = Otlp.defaultResource().toBuilder().addAttributes(kv("extra", "x")).build();
    translate(request(other, counter(dp(T0 + SEC, T0 + 2 * SEC, 100, kv("a", "1")))));
    assertThat(values()).containsExactly(1.0, 10.0, 2.0, 100.0);
    assertThat(translator.deltaStreamCount()).isEqualTo(3);
  }

  @Test
  void restartAfterStateLossStartsOver() {
    translate(request(counter(dp(T0, T0 + SEC, 5))));
    translator = new Translator(appender, config(), clock); // process restart: state lost
    translate(request(counter(dp(T0 + SEC, T0 + 2 * SEC, 3))));
    assertThat(values()).containsExactly(5.0, 3.0); // a counter reset downstream
  }

  @Test
  void gapResetsTheStreamWhenConfigured() {
    reconfigure(TranslatorConfig.builder().deltaResetOnGap(true).build());
    translate(request(counter(dp(T0, T0 + SEC, 5), dp(T0 + SEC, T0 + 2 * SEC, 1))));
    translate(
        request(
            counter(dp(T0 + 10 * SEC, T0 + 11 * SEC, 4)))); // started after the last end: restart
    assertThat(values()).containsExactly(5.0, 6.0, 4.0);

    appender.clear();
    reconfigure(TranslatorConfig.defaults());
    translate(request(counter(dp(T0, T0 + SEC, 5))));
    translate(request(counter(dp(T0 + 10 * SEC, T0 + 11 * SEC, 4))));
    assertThat(values()).containsExactly(5.0, 9.0);
  }

  @Test
  void idleStreamsAreEvictedAfterMaxStale() {
    translate(request(counter(dp(T0, T0 + SEC, 5))));
    assertThat(translator.deltaStreamCount()).isEqualTo(1);
    clock.advance(Duration.ofMinutes(4));
    translate(request(counter(dp(T0 + SEC, T0 + 2 * SEC, 1))));
    assertThat(values()).containsExactly(5.0, 6.0);
    clock.advance(Duration.ofMinutes(5).plusSeconds(1));
    translate(request(sum("other", "", DELTA, true, dp(T0, T0 + SEC, 1)))); // any request sweeps
    assertThat(translator.deltaStreamCount()).isEqualTo(1);
    translate(request(counter(dp(T0 + 2 * SEC, T0 + 3 * SEC, 2))));
    assertThat(values()).containsExactly(5.0, 6.0, 2.0);
  }

  @Test
  void newStreamsBeyondTheCapAreRejected() {
    reconfigure(TranslatorConfig.builder().maxStreams(2).build());
    TranslationResult r =
        translate(
            request(
                counter(
                    dp(T0, T0 + SEC, 1, kv("a", "1")),
                    dp(T0, T0 + SEC, 1, kv("a", "2")),
                    dp(T0, T0 + SEC, 1, kv("a", "3")))));
    assertThat(r.rejected(RejectionReason.DELTA_STREAM_LIMIT)).isEqualTo(1);
    assertThat(r.partialSuccessMessage()).contains("too many delta streams (DELTA_STREAM_LIMIT");
    // Existing streams keep working.
    r = translate(request(counter(dp(T0 + SEC, T0 + 2 * SEC, 1, kv("a", "1")))));
    assertThat(r.rejectedDataPoints()).isZero();
  }

  @Test
  void noRecordedValueWritesStaleAndForgetsTheStream() {
    translate(request(counter(dp(T0, T0 + SEC, 5))));
    translate(request(counter(Otlp.staleDp(T0 + 2 * SEC))));
    assertThat(appender.named("req_total").get(1).valueBits()).isEqualTo(0x7ff0000000000002L);
    assertThat(translator.deltaStreamCount()).isZero();
    translate(request(counter(dp(T0 + 2 * SEC, T0 + 3 * SEC, 2))));
    assertThat(appender.named("req_total").get(2).value()).isEqualTo(2.0);
  }

  @Test
  void failedAppendRollsBackSoRetriesAreNotCountedTwice() {
    translate(request(counter(dp(T0, T0 + SEC, 5))));
    appender.unavailable = true;
    assertThatThrownBy(
            () ->
                translate(
                    request(
                        counter(
                            dp(T0 + SEC, T0 + 2 * SEC, 3), dp(T0, T0 + SEC, 1, kv("new", "1"))))))
        .isInstanceOf(StorageUnavailableException.class);
    assertThat(translator.deltaStreamCount()).isEqualTo(1);
    appender.unavailable = false;
    translate(request(counter(dp(T0 + SEC, T0 + 2 * SEC, 3), dp(T0, T0 + SEC, 1, kv("new", "1")))));
    assertThat(values()).containsExactly(5.0, 8.0, 1.0);
  }

  @Test
  void histogramsAddBucketwiseAndResetWhenBoundsChange() {
    translate(
        request(
            histogram(
                "lat",
                "",
                DELTA,
                Otlp.hdp(T0 + SEC, new double[] {1, 2}, new long[] {1, 2, 3}, 10.0).toBuilder()
                    .setStartTimeUnixNano(T0)
                    .build(),
                Otlp.hdp(T0 + 2 * SEC, new double[] {1, 2}, new long[] {1, 0, 1}, 5.0).toBuilder()
                    .setStartTimeUnixNano(T0 + SEC)
                    .build())));
    assertThat(
            appender.named("lat_bucket").stream()
                .filter(s -> "1".equals(s.labels().get("le")))
                .map(RecordingAppender.Sample::value))
        .containsExactly(1.0, 2.0);
    assertThat(
            appender.named("lat_bucket").stream()
                .filter(s -> "+Inf".equals(s.labels().get("le")))
                .map(RecordingAppender.Sample::value))
        .containsExactly(6.0, 8.0);
    assertThat(appender.named("lat_sum"))
        .extracting(RecordingAppender.Sample::value)
        .containsExactly(10.0, 15.0);
    assertThat(appender.named("lat_count").get(0).meta().temporality())
        .isEqualTo(dev.tidemark.tsdb.model.Temporality.CUMULATIVE);
    // New bounds: the state is replaced.
    appender.clear();
    translate(
        request(
            histogram(
                "lat",
                "",
                DELTA,
                hdp(T0 + 3 * SEC, new double[] {5}, new long[] {4, 1}, 7.0).toBuilder()
                    .setStartTimeUnixNano(T0 + 2 * SEC)
                    .build())));
    assertThat(appender.find("lat_bucket", "le", "5").value()).isEqualTo(4.0);
    assertThat(appender.find("lat_bucket", "le", "+Inf").value()).isEqualTo(5.0);
    assertThat(appender.only("lat_sum").value()).isEqualTo(7.0);
  }

  @Test
  void deltasWithoutTimestampUseTheReceiveTimeWhenConfigured() {
    reconfigure(
        TranslatorConfig.builder()
            .zeroTimestampPolicy(TranslatorConfig.ZeroTimestampPolicy.USE_RECEIVE_TIME)
            .build());
    translate(request(counter(dp(0, 2))));
    clock.advance(Duration.ofSeconds(10));
    TranslationResult r = translate(request(counter(dp(0, 3))));
    assertThat(r.rejectedDataPoints()).isZero();
    assertThat(values()).containsExactly(2.0, 5.0);
  }

  @Test
  void histogramSumDisappearsWhenOneDeltaLacksIt() {
    translate(
        request(
            histogram(
                "lat",
                "",
                DELTA,
                hdp(T0 + SEC, new double[] {1}, new long[] {1, 1}, 2.0),
                hdp(T0 + 2 * SEC, new double[] {1}, new long[] {1, 1}, null))));
    assertThat(appender.named("lat_sum")).hasSize(1);
    assertThat(appender.named("lat_count"))
        .extracting(RecordingAppender.Sample::value)
        .containsExactly(2.0, 4.0);
  }

  @Test
  void exponentialDeltasMergeAtTheLowerScale() {
    reconfigure(TranslatorConfig.builder().exponentialHistogramScale(0).build());
    translate(
        request(
            expHistogram(
                "e",
                "",
                DELTA,
                edp(
                    T0 + SEC,
                    1,
                    0,
                    0,
                    buckets(0, 1, 1),
                    buckets(0),
                    3.0), // scale 1: (1,√2], (√2,2]
                edp(T0 + 2 * SEC, 0, 1, 0, buckets(1, 2), buckets(0), 6.0)))); // scale 0: (2,4]
    // Accumulated at scale 0: zero=1, (1,2]=2, (2,4]=2.
    List<RecordingAppender.Sample> last =
        appender.named("e_bucket").stream()
            .filter(s -> s.timestampMillis() == (T0 + 2 * SEC) / 1_000_000)
            .toList();
    assertThat(last)
        .extracting(s -> s.labels().get("le") + "=" + s.value())
        .containsExactly("0=1.0", "2=3.0", "4=5.0", "+Inf=5.0");
    assertThat(appender.named("e_sum"))
        .extracting(RecordingAppender.Sample::value)
        .containsExactly(3.0, 9.0);
  }

  @Test
  void expHistogramAddDownscalesToTheBucketCap() {
    ExpHistogram a = new ExpHistogram();
    a.scale = 3;
    a.posOffset = 0;
    a.posLen = 1;
    a.pos[0] = 1;
    a.count = 1;
    ExpHistogram b = a.copy();
    b.posOffset = 100;
    a.add(b, 20);
    assertThat(a.scale).isLessThan(3);
    assertThat(a.posLen).isLessThanOrEqualTo(20);
    assertThat(a.count).isEqualTo(2);
    assertThat(a.bucketTotal()).isEqualTo(2);
  }
}
