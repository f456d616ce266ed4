package dev.tidemark.tsdb.query;

import java.util.function.BooleanSupplier;

/**
 * What a read may spend: a deadline and a cancellation flag, the part of Go's {@code
 * context.Context} that Prometheus' {@code storage.Querier} honours. Reads call {@link #check()}
 * inside their loops (every few hundred label values or series), so a query past its deadline, or
 * whose client went away, stops within milliseconds wherever it is, holding no engine lock.
 *
 * <p>Immutable; the cancellation flag is read through a supplier that may be called from any
 * thread. {@link #NONE} never stops.
 */
public final class QueryContext {

  /** A read that has no deadline and cannot be canceled (admin tools, tests, background work). */
  public static final QueryContext NONE = new QueryContext(Long.MAX_VALUE, false, () -> false);

  private final long deadlineNanos;
  private final boolean hasDeadline;
  private final BooleanSupplier canceled;

  private QueryContext(long deadlineNanos, boolean hasDeadline, BooleanSupplier canceled) {
    this.deadlineNanos = deadlineNanos;
    this.hasDeadline = hasDeadline;
    this.canceled = canceled;
  }

  /**
   * A read that must end by {@code deadlineNanos} (on {@link System#nanoTime()}'s scale) and stops
   * once {@code canceled} answers true.
   */
  public static QueryContext of(long deadlineNanos, BooleanSupplier canceled) {
    return new QueryContext(deadlineNanos, true, canceled);
  }

  /** A read that must end by {@code deadlineNanos} ({@link System#nanoTime()}'s scale). */
  public static QueryContext withDeadline(long deadlineNanos) {
    return of(deadlineNanos, () -> false);
  }

  /** The deadline on {@link System#nanoTime()}'s scale; meaningless when there is none. */
  public long deadlineNanos() {
    return deadlineNanos;
  }

  /** Whether there is a deadline. */
  public boolean hasDeadline() {
    return hasDeadline;
  }

  /**
   * Throws if the read should stop: canceled first (the client is gone, nobody reads a timeout),
   * then past the deadline.
   *
   * @throws QueryAbortedException naming the reason
   */
  public void check() {
    if (canceled.getAsBoolean()) {
      throw new QueryAbortedException(QueryAbortedException.Reason.CANCELED);
    }
    if (hasDeadline && System.nanoTime() - deadlineNanos > 0) {
      throw new QueryAbortedException(QueryAbortedException.Reason.TIMEOUT);
    }
  }
}
