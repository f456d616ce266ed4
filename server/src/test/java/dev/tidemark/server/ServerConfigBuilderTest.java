package dev.tidemark.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The builder keeps each value under its declaration in {@link Settings}, with no copy of it. */
class ServerConfigBuilderTest {

  @Test
  void aNewBuilderHoldsEveryDeclaredDefault() {
    ServerConfig.Builder b = ServerConfig.builder();
    for (Setting<?> s : Settings.ALL) {
      if (!s.hasComputedDefault() && !s.name().equals("admin-token")) {
        Object kept = b.get(s);
        if (kept != null) { // the translator's settings live in its own builder
          assertThat(kept).as(s.name()).isEqualTo(s.defaultValue());
        }
      }
    }
    assertThat(b.get(Settings.RETENTION)).isEqualTo(Settings.RETENTION.defaultValue());
    assertThat(b.get(Settings.ADMIN_TOKEN)).isNull();
  }

  @Test
  void typedSettersAndTextLandUnderTheSameDeclaration() {
    ServerConfig.Builder b = ServerConfig.builder().retention(Duration.ofHours(2));
    assertThat(b.get(Settings.RETENTION)).isEqualTo(Duration.ofHours(2));
    b.set("retention", "3h", "test");
    assertThat(b.get(Settings.RETENTION)).isEqualTo(Duration.ofHours(3));
    assertThat(b.anyFreePorts().build().engineConfig().retention()).isEqualTo(Duration.ofHours(3));
  }

  @Test
  void onlyASettingWhoseDefaultIsNullTakesNull() {
    assertThat(Settings.ADMIN_TOKEN.nullable()).isTrue();
    assertThat(Settings.RETENTION.nullable()).isFalse();
    assertThatThrownBy(() -> ServerConfig.builder().retention(null))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("retention");
  }
}
