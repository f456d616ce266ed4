package dev.tidemark.translator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class TranslatorConfigTest {

  @Test
  void defaultsMatchTheContract() {
    TranslatorConfig c = TranslatorConfig.defaults();
    assertThat(c.translationStrategy())
        .isEqualTo(TranslationStrategy.UNDERSCORE_ESCAPING_WITH_SUFFIXES);
    assertThat(c.promoteScopeMetadata()).isTrue();
    assertThat(c.labelNameUnderscoreSanitization()).isTrue();
    assertThat(c.labelNamePreserveMultipleUnderscores()).isTrue();
    assertThat(c.keepIdentifyingResourceAttributes()).isFalse();
    assertThat(c.maxStale()).isEqualTo(Duration.ofMinutes(5));
    assertThat(c.maxFutureSkew()).isEqualTo(Duration.ofMinutes(10));
    assertThat(c.lookbackDelta()).isEqualTo(Duration.ofMinutes(5));
    assertThat(c.exponentialHistogramMode())
        .isEqualTo(TranslatorConfig.ExponentialHistogramMode.CLASSIC);
    assertThat(c.exponentialHistogramMaxBuckets()).isEqualTo(160);
    assertThat(c.startTimeMode()).isEqualTo(TranslatorConfig.StartTimeMode.IGNORE);
    assertThat(c.zeroTimestampPolicy()).isEqualTo(TranslatorConfig.ZeroTimestampPolicy.REJECT);
    assertThat(c.leFormat()).isEqualTo(TranslatorConfig.LeFormat.GO);
    assertThat(c.deltaMode()).isEqualTo(TranslatorConfig.DeltaMode.ACCUMULATE);
  }

  @Test
  void promotionListsAreTrimmed() {
    TranslatorConfig c =
        TranslatorConfig.builder().promoteResourceAttributes(List.of(" a ", "b")).build();
    assertThat(c.promoteResourceAttributes()).containsExactly("a", "b");
  }

  @Test
  void badValuesAreNamedInTheMessage() {
    assertThatThrownBy(() -> TranslatorConfig.builder().maxStreams(-1).build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("maxStreams must be positive, was -1");
    assertThatThrownBy(() -> TranslatorConfig.builder().maxStale(Duration.ZERO).build())
        .hasMessage("maxStale must be positive, was PT0S");
    assertThatThrownBy(
            () -> TranslatorConfig.builder().maxFutureSkew(Duration.ofSeconds(-1)).build())
        .hasMessage("maxFutureSkew must not be negative, was PT-1S");
    assertThatThrownBy(() -> TranslatorConfig.builder().exponentialHistogramScale(9).build())
        .hasMessage("exponentialHistogramScale must be between -4 and 8, was 9");
    assertThatThrownBy(() -> TranslatorConfig.builder().exponentialHistogramMaxBuckets(1).build())
        .hasMessage("exponentialHistogramMaxBuckets must be at least 2, was 1");
    assertThatThrownBy(() -> TranslatorConfig.builder().seriesCacheSize(0).build())
        .hasMessage("seriesCacheSize must be positive, was 0");
    assertThatThrownBy(
            () -> TranslatorConfig.builder().lookbackDelta(Duration.ofMinutes(-5)).build())
        .hasMessage("lookbackDelta must be positive, was PT-5M");
  }

  @Test
  void promotionRules() {
    assertThatThrownBy(
            () -> TranslatorConfig.builder().promoteResourceAttributes(List.of("a", " ")).build())
        .hasMessage("promoteResourceAttributes has an empty entry, was [a,  ]");
    assertThatThrownBy(
            () -> TranslatorConfig.builder().promoteResourceAttributes(List.of("a", " a")).build())
        .hasMessage("promoteResourceAttributes has a duplicate entry 'a', was [a,  a]");
    assertThatThrownBy(
            () ->
                TranslatorConfig.builder()
                    .promoteResourceAttributes(List.of("a"))
                    .promoteAllResourceAttributes(true)
                    .build())
        .hasMessageContaining("mutually exclusive");
    assertThatThrownBy(
            () -> TranslatorConfig.builder().ignoreResourceAttributes(List.of("a")).build())
        .hasMessage("ignoreResourceAttributes needs promoteAllResourceAttributes=true, got [a]");
  }

  @Test
  void externalLabelsMustBeValid() {
    assertThatThrownBy(() -> TranslatorConfig.builder().externalLabels(Map.of("a.b", "x")).build())
        .hasMessage("externalLabels name is not a valid label name, was 'a.b'");
    assertThatThrownBy(() -> TranslatorConfig.builder().externalLabels(Map.of("a", "")).build())
        .hasMessage("externalLabels value of a must not be empty");
  }
}
