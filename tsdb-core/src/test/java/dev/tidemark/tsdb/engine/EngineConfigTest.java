package dev.tidemark.tsdb.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The retention rule's one home: {@link EngineConfig#retentionProblem} and what calls it. */
class EngineConfigTest {

  @Test
  void retentionOfAtLeastOneHourIsAllowed() {
    assertThat(EngineConfig.MIN_RETENTION).isEqualTo(Duration.ofHours(1));
    assertThat(EngineConfig.MIN_RETENTION_TEXT).isEqualTo("at least 1h");
    assertThat(EngineConfig.retentionProblem(Duration.ofHours(1))).isNull();
    assertThat(EngineConfig.retentionProblem(Duration.ofDays(15))).isNull();
    assertThat(EngineConfig.retentionProblem(Duration.ofMinutes(59)))
        .isEqualTo("must be at least 1h");
    assertThat(EngineConfig.retentionProblem(Duration.ofHours(-2)))
        .isEqualTo("must be at least 1h");
  }

  @Test
  void theConfigRefusesAShorterRetentionNamingTheValue() {
    assertThatThrownBy(() -> EngineConfig.builder().retention(Duration.ofMinutes(30)).build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("retention must be at least 1h, was PT30M");
    assertThat(EngineConfig.builder().retention(Duration.ofHours(1)).build().retention())
        .isEqualTo(Duration.ofHours(1));
  }
}
