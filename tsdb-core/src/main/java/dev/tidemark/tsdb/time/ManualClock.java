package dev.tidemark.tsdb.time;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;

/**
 * A {@link Clock} that moves only when told to: for tests, benchmarks and simulations that inject
 * time into the engine and the translator (never {@code System.currentTimeMillis()} in logic under
 * test). Thread-safe; UTC.
 */
public final class ManualClock extends Clock {
  private volatile long millis;

  public ManualClock(long epochMillis) {
    this.millis = epochMillis;
  }

  /** Sets the time. */
  public void set(long epochMillis) {
    this.millis = epochMillis;
  }

  /** Moves the time by {@code deltaMillis} (may be negative). */
  public synchronized void advance(long deltaMillis) {
    millis += deltaMillis;
  }

  /** Moves the time by {@code delta}. */
  public void advance(Duration delta) {
    advance(delta.toMillis());
  }

  @Override
  public long millis() {
    return millis;
  }

  @Override
  public Instant instant() {
    return Instant.ofEpochMilli(millis);
  }

  @Override
  public ZoneId getZone() {
    return ZoneOffset.UTC;
  }

  @Override
  public Clock withZone(ZoneId zone) {
    return this;
  }
}
