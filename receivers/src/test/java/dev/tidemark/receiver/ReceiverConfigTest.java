package dev.tidemark.receiver;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class ReceiverConfigTest {

  @Test
  void defaults() {
    ReceiverConfig c = ReceiverConfig.defaults();
    assertThat(c.maxGrpcMessageBytes())
        .isEqualTo(4 * 1024 * 1024)
        .isEqualTo(ReceiverConfig.DEFAULT_MAX_GRPC_MESSAGE_BYTES);
    assertThat(c.maxHttpBodyBytes()).isEqualTo(64L * 1024 * 1024);
    assertThat(c.maxInFlightBytes()).isEqualTo(256L * 1024 * 1024);
    assertThat(c.retryAfter()).isEqualTo(Duration.ofSeconds(1));
    assertThat(c.retryAfterSeconds()).isEqualTo(1);
  }

  @Test
  void builderSetsEveryField() {
    ReceiverConfig c =
        ReceiverConfig.builder()
            .maxGrpcMessageBytes(10)
            .maxHttpBodyBytes(20)
            .maxInFlightBytes(30)
            .retryAfter(Duration.ofMillis(1500))
            .build();
    assertThat(c).isEqualTo(new ReceiverConfig(10, 20, 30, Duration.ofMillis(1500)));
    assertThat(c.retryAfterSeconds()).isEqualTo(2);
    assertThat(
            ReceiverConfig.builder().retryAfter(Duration.ofMillis(1)).build().retryAfterSeconds())
        .isEqualTo(1);
  }

  @Test
  void badValuesAreNamedWithTheValue() {
    assertThatThrownBy(() -> ReceiverConfig.builder().maxGrpcMessageBytes(0).build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("maxGrpcMessageBytes must be positive, was 0");
    assertThatThrownBy(() -> ReceiverConfig.builder().maxHttpBodyBytes(-5).build())
        .hasMessageContaining("maxHttpBodyBytes")
        .hasMessageContaining("was -5");
    assertThatThrownBy(() -> ReceiverConfig.builder().maxHttpBodyBytes(Long.MAX_VALUE).build())
        .hasMessageContaining("maxHttpBodyBytes")
        .hasMessageContaining("was " + Long.MAX_VALUE);
    assertThatThrownBy(() -> ReceiverConfig.builder().maxInFlightBytes(0).build())
        .hasMessage("maxInFlightBytes must be positive, was 0");
    assertThatThrownBy(() -> ReceiverConfig.builder().retryAfter(Duration.ZERO).build())
        .hasMessage("retryAfter must be positive, was PT0S");
    assertThatThrownBy(() -> ReceiverConfig.builder().retryAfter(Duration.ofSeconds(-1)).build())
        .hasMessage("retryAfter must be positive, was PT-1S");
  }
}
