package dev.tidemark.tsdb.codec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.tidemark.tsdb.model.Labels;
import dev.tidemark.tsdb.model.MetricMetadata;
import dev.tidemark.tsdb.model.MetricType;
import dev.tidemark.tsdb.model.Temporality;
import org.junit.jupiter.api.Test;

/**
 * Each bound of {@link SeriesLimits}, at the edge, agrees with what {@link ForwardIndexValue} can
 * encode.
 */
class SeriesLimitsTest {

  private static final MetricMetadata META = MetricMetadata.UNKNOWN;

  @Test
  void theLongestStringsThatFitAreStorableAndEncode() {
    String max = "é".repeat(32_767) + "a"; // 65535 UTF-8 bytes
    Labels l = Labels.of("__name__", max, max, max);
    MetricMetadata unit = new MetricMetadata(MetricType.GAUGE, max, Temporality.UNSPECIFIED, false);
    assertThat(SeriesLimits.violation(l, unit)).isNull();
    assertThat(SeriesLimits.storable(l, unit)).isTrue();
    assertThat(ForwardIndexValue.decode(new ForwardIndexValue(unit, l).encode()).labels())
        .isEqualTo(l);
  }

  @Test
  void oneByteMoreIsRefusedNamingTheFieldAndTheLimit() {
    String over = "é".repeat(32_768); // 65536 UTF-8 bytes, 32768 chars
    assertRefused(
        Labels.of("__name__", over),
        META,
        "metric name of 65536 bytes exceeds the 65535-byte limit (\"" + "é".repeat(64) + "...\")");
    assertRefused(
        Labels.of("__name__", "m", "db_statement", over),
        META,
        "label value of 65536 bytes exceeds the 65535-byte limit (label \"db_statement\")");
    assertRefused(
        Labels.of("__name__", "m", over, "v"),
        META,
        "label name of 65536 bytes exceeds the 65535-byte limit (\"" + "é".repeat(64) + "...\")");
    assertRefused(
        Labels.of("__name__", "m"),
        new MetricMetadata(MetricType.GAUGE, over, Temporality.UNSPECIFIED, false),
        "metric unit of 65536 bytes exceeds the 65535-byte limit");
  }

  @Test
  void anUnpairedSurrogateInTheUnitIsRefused() {
    // Labels refuse unpaired surrogates when built; the unit comes from elsewhere.
    assertRefused(
        Labels.of("__name__", "m"),
        new MetricMetadata(MetricType.GAUGE, "s\ud800", Temporality.UNSPECIFIED, false),
        "metric unit \"s\\ud800\" is not valid UTF-8 (unpaired surrogate)");
    assertThat(SeriesLimits.violation(Labels.of("__name__", "m", "k", "\ud83d\ude00"), META))
        .isNull();
  }

  @Test
  void tooManyLabelsAndTooManyBytesInAllAreRefused() {
    Labels.Builder many = Labels.builder().add("__name__", "m");
    for (int i = 0; i < 65_535; i++) {
      many.add("l" + i, "v");
    }
    assertRefused(many.build(), META, "65536 labels exceed the 65535-label limit");

    Labels.Builder big = Labels.builder().add("__name__", "m");
    String value = "v".repeat(65_000);
    for (int i = 0; i < 260; i++) {
      big.add("l" + i, value);
    }
    Labels l = big.build();
    assertThat(SeriesLimits.violation(l, META))
        .startsWith("labels of 16")
        .endsWith("bytes in all exceed the 16777216-byte limit");
  }

  private static void assertRefused(Labels l, MetricMetadata meta, String message) {
    assertThat(SeriesLimits.violation(l, meta)).isEqualTo(message);
    assertThat(SeriesLimits.storable(l, meta)).isFalse();
    if (!message.contains("in all")) {
      assertThatThrownBy(() -> new ForwardIndexValue(meta, l).encode())
          .isInstanceOf(IllegalArgumentException.class);
    }
  }
}
