package dev.tidemark.receiver;

import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * Logs at most one line per key and interval; the next line that gets through says how many were
 * suppressed in between. Messages are built lazily, so a suppressed line costs a map lookup and two
 * atomic operations. Thread-safe.
 *
 * <p>Keys must come from a small fixed set (outcomes, rejection reasons), never from request data.
 */
public final class RateLimitedLogger {
  /** The default interval between two lines of the same key. */
  public static final long DEFAULT_INTERVAL_NANOS = 10_000_000_000L;

  private final Logger logger;
  private final long intervalNanos;
  private final LongSupplier nanoTime;
  private final ConcurrentHashMap<String, KeyState> keys = new ConcurrentHashMap<>();

  public RateLimitedLogger(Logger logger) {
    this(logger, DEFAULT_INTERVAL_NANOS, System::nanoTime);
  }

  /**
   * @param intervalNanos minimum distance between two lines of one key
   * @param nanoTime a monotonic clock in nanoseconds (injected by tests)
   */
  public RateLimitedLogger(Logger logger, long intervalNanos, LongSupplier nanoTime) {
    this.logger = Objects.requireNonNull(logger, "logger");
    if (intervalNanos < 0) {
      throw new IllegalArgumentException(
          "intervalNanos must not be negative, was " + intervalNanos);
    }
    this.intervalNanos = intervalNanos;
    this.nanoTime = Objects.requireNonNull(nanoTime, "nanoTime");
  }

  /**
   * Logs {@code message} under {@code key} unless a line of that key was logged within the
   * interval.
   */
  public void log(String key, Level level, Supplier<String> message) {
    log(key, level, message, null);
  }

  /**
   * As {@link #log(String, Level, Supplier)}, with a throwable.
   *
   * @return true if the line was written
   */
  public boolean log(String key, Level level, Supplier<String> message, Throwable thrown) {
    if (!logger.isLoggable(level)) {
      return false;
    }
    KeyState s = keys.computeIfAbsent(key, k -> new KeyState());
    long now = nanoTime.getAsLong();
    long next = s.nextAllowed.get();
    if ((s.logged && now - next < 0) || !s.nextAllowed.compareAndSet(next, now + intervalNanos)) {
      s.suppressed.incrementAndGet();
      return false;
    }
    s.logged = true;
    long suppressed = s.suppressed.getAndSet(0);
    String text = message.get();
    if (suppressed > 0) {
      text =
          text
              + " ("
              + suppressed
              + " similar message"
              + (suppressed == 1 ? "" : "s")
              + " suppressed)";
    }
    if (thrown == null) {
      logger.log(level, text);
    } else {
      logger.log(level, text, thrown);
    }
    return true;
  }

  private static final class KeyState {
    final AtomicLong nextAllowed = new AtomicLong();
    final AtomicLong suppressed = new AtomicLong();
    volatile boolean logged;
  }
}
