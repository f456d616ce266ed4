package dev.tidemark.receiver;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.List;
import java.util.ResourceBundle;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class RateLimitedLoggerTest {

  /** Collects lines. */
  static final class ListLogger implements Logger {
    final List<String> lines = new ArrayList<>();

    @Override
    public String getName() {
      return "test";
    }

    @Override
    public boolean isLoggable(Level level) {
      return true;
    }

    @Override
    public void log(Level level, ResourceBundle bundle, String msg, Throwable thrown) {
      lines.add(level + " " + msg);
    }

    @Override
    public void log(Level level, ResourceBundle bundle, String format, Object... params) {
      lines.add(level + " " + format);
    }
  }

  @Test
  void oneLinePerKeyAndIntervalWithSuppressedCount() {
    ListLogger out = new ListLogger();
    AtomicLong now = new AtomicLong(1_000);
    RateLimitedLogger log = new RateLimitedLogger(out, 100, now::get);
    int[] built = {0};

    assertThat(log.log("a", Level.WARNING, () -> "first " + ++built[0], null)).isTrue();
    for (int i = 0; i < 5; i++) {
      assertThat(log.log("a", Level.WARNING, () -> "again " + ++built[0], null)).isFalse();
    }
    assertThat(log.log("b", Level.WARNING, () -> "other key", null)).isTrue();
    now.addAndGet(99);
    assertThat(log.log("a", Level.WARNING, () -> "too early", null)).isFalse();
    now.addAndGet(1);
    assertThat(log.log("a", Level.WARNING, () -> "later", null)).isTrue();

    assertThat(out.lines)
        .containsExactly(
            "WARNING first 1",
            "WARNING other key",
            "WARNING later (6 similar messages suppressed)");
    assertThat(built[0]).as("suppressed messages are never built").isEqualTo(1);
  }
}
