package dev.tidemark.translator;

import static dev.tidemark.translator.Otlp.CUMULATIVE;
import static dev.tidemark.translator.Otlp.SEC;
import static dev.tidemark.translator.Otlp.T0;
import static dev.tidemark.translator.Otlp.buckets;
import static dev.tidemark.translator.Otlp.dp;
import static dev.tidemark.translator.Otlp.edp;
import static dev.tidemark.translator.Otlp.expHistogram;
import static dev.tidemark.translator.Otlp.gauge;
import static dev.tidemark.translator.Otlp.hdp;
import static dev.tidemark.translator.Otlp.histogram;
import static dev.tidemark.translator.Otlp.kv;
import static dev.tidemark.translator.Otlp.request;
import static dev.tidemark.translator.Otlp.sum;
import static org.assertj.core.api.Assertions.assertThat;

import dev.tidemark.tsdb.model.Labels;
import org.junit.jupiter.api.Test;

class StrategiesAndEdgesTest extends TranslatorTestBase {

  @Test
  void utf8StrategyKeepsNamesVerbatimAndAddsSuffixes() {
    reconfigure(
        TranslatorConfig.builder()
            .translationStrategy(TranslationStrategy.NO_UTF8_ESCAPING_WITH_SUFFIXES)
            .build());
    translate(
        request(
            histogram(
                "http.server.request.duration",
                "s",
                CUMULATIVE,
                hdp(T0, new double[] {1}, new long[] {1, 1}, 2.0, kv("http.method", "GET")))));
    Labels l = appender.only("http.server.request.duration_seconds_count").labels();
    assertThat(l.get("http.method")).isEqualTo("GET");
    assertThat(appender.only("target_info").labels().get("host.name")).isEqualTo("h1");
    assertThat(
            translator.metadata().get("http.server.request.duration_seconds").orElseThrow().unit())
        .isEqualTo("seconds");
  }

  @Test
  void noTranslationAndWithoutSuffixes() {
    reconfigure(
        TranslatorConfig.builder().translationStrategy(TranslationStrategy.NO_TRANSLATION).build());
    translate(request(sum("a.b", "s", CUMULATIVE, true, dp(T0, 1))));
    assertThat(appender.named("a.b")).hasSize(1);

    reconfigure(
        TranslatorConfig.builder()
            .translationStrategy(TranslationStrategy.UNDERSCORE_ESCAPING_WITHOUT_SUFFIXES)
            .build());
    translate(request(sum("a..b__c", "s", CUMULATIVE, true, dp(T0 + SEC, 1))));
    assertThat(appender.named("a_b__c")).hasSize(1);
  }

  @Test
  void namespacePrefixesMetricsAndTargetInfo() {
    reconfigure(TranslatorConfig.builder().namespace("app").build());
    translate(request(sum("requests", "1/s", CUMULATIVE, true, dp(T0, 1))));
    assertThat(appender.named("app_requests_per_second_total")).hasSize(1);
    assertThat(appender.named("app_target_info")).hasSize(1);
  }

  @Test
  void highResolutionExponentialHistogramIsDownscaled() {
    // Scale 20: index k covers (2^(k/2^20), 2^((k+1)/2^20)]; index 2^20 starts at 2.
    translate(
        request(
            expHistogram(
                "e", "", CUMULATIVE, edp(T0, 20, 0, 0, buckets(1 << 20, 3, 4), buckets(0), 10.0))));
    // At target scale 2 both buckets fall into (2, 2^(1/4)*2].
    assertThat(appender.named("e_bucket"))
        .extracting(s -> s.labels().get("le") + "=" + (long) s.value())
        .containsExactly("0=0", "2.378414230005442=7", "+Inf=7");
  }

  @Test
  void summaryValuesAreCanonicalisedToo() {
    translate(
        request(
            Otlp.summary(
                "s",
                "",
                Otlp.sdp(
                    T0,
                    1,
                    Double.NaN,
                    new double[] {0.5},
                    new double[] {Double.longBitsToDouble(0x7ff0000000000002L)}))));
    assertThat(appender.find("s", "quantile", "0.5").valueBits()).isEqualTo(0x7ff8000000000001L);
    assertThat(appender.only("s_sum").valueBits()).isEqualTo(0x7ff8000000000001L);
  }

  @Test
  void attributeCalledLeIsOverwrittenOnBucketsOnly() {
    translate(
        request(
            histogram(
                "h",
                "",
                CUMULATIVE,
                hdp(T0, new double[] {1}, new long[] {1, 1}, 2.0, kv("le", "x")))));
    assertThat(appender.named("h_bucket"))
        .extracting(s -> s.labels().get("le"))
        .containsExactly("1", "+Inf");
    assertThat(appender.only("h_count").labels().get("le")).isEqualTo("x");
  }

  @Test
  void attributeCalledNameIsIgnored() {
    translate(request(gauge("g", "", dp(T0, 1, kv("__name__", "evil")))));
    assertThat(appender.only("g").labels().get("__name__")).isEqualTo("g");
  }
}
