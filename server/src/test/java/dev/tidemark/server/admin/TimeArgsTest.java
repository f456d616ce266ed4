package dev.tidemark.server.admin;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Instant;
import org.junit.jupiter.api.Test;

class TimeArgsTest {
  static final Instant NOW = Instant.parse("2026-11-22T04:00:00Z");
  static final long NOW_MS = NOW.toEpochMilli();

  @Test
  void rfc3339() {
    assertThat(TimeArgs.parse("2026-11-22T03:00:00Z", NOW)).isEqualTo(NOW_MS - 3_600_000);
    assertThat(TimeArgs.parse("2026-11-22T04:00:00.250+01:00", NOW))
        .isEqualTo(NOW_MS - 3_600_000 + 250);
  }

  @Test
  void millisNowAndRelative() {
    assertThat(TimeArgs.parse("1700000000000", NOW)).isEqualTo(1_700_000_000_000L);
    assertThat(TimeArgs.parse("0", NOW)).isZero();
    assertThat(TimeArgs.parse("now", NOW)).isEqualTo(NOW_MS);
    assertThat(TimeArgs.parse("-1h", NOW)).isEqualTo(NOW_MS - 3_600_000);
    assertThat(TimeArgs.parse("now-1h30m", NOW)).isEqualTo(NOW_MS - 5_400_000);
    assertThat(TimeArgs.parse("+5m", NOW)).isEqualTo(NOW_MS + 300_000);
    assertThat(TimeArgs.parse(" now+1d ", NOW)).isEqualTo(NOW_MS + 86_400_000);
  }

  @Test
  void badTimesSayWhatIsAccepted() {
    for (String bad :
        new String[] {
          "",
          "yesterday",
          "-1x",
          "now-",
          "2026-11-22",
          "2026-11-22T03:00:00",
          "99999999999999999999"
        }) {
      assertThatThrownBy(() -> TimeArgs.parse(bad, NOW))
          .as(bad)
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("invalid time '" + bad + "'")
          .hasMessageContaining("RFC 3339");
    }
  }

  @Test
  void formatIsUtcWithMillis() {
    assertThat(TimeArgs.format(NOW_MS + 5)).isEqualTo("2026-11-22T04:00:00.005Z");
  }
}
