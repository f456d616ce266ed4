package dev.tidemark.promql.engine;

import java.util.concurrent.atomic.AtomicLong;

/**
 * The samples all queries of one {@link PromqlEngine} hold at once, against one budget (issue #22:
 * "query memory has its own budget, so a query can never make the server refuse writes"). Each
 * query also keeps {@link EngineOptions#maxSamples()} for itself, as Prometheus does; this bounds
 * their sum, which Prometheus leaves to the number of concurrent queries. A query that would take
 * the sum over it fails as one over its own limit does (HTTP 422, {@code execution}), naming the
 * shared budget.
 *
 * <p>Thread-safe.
 */
public final class QueryMemory {

  /** No shared budget: only each query's own limit applies. */
  public static QueryMemory unlimited() {
    return new QueryMemory(Long.MAX_VALUE);
  }

  private final long max;
  private final AtomicLong held = new AtomicLong();

  /**
   * @param max most samples all queries hold at once, positive
   */
  public QueryMemory(long max) {
    if (max <= 0) {
      throw new IllegalArgumentException("max must be positive, was " + max);
    }
    this.max = max;
  }

  public long max() {
    return max;
  }

  /** Samples held by the queries running now. */
  public long held() {
    return held.get();
  }

  /**
   * Takes {@code n} more samples if the sum stays within the budget; false (nothing taken) if not.
   */
  boolean tryAcquire(long n) {
    while (true) {
      long h = held.get();
      long next = h + n;
      if (n > 0 && next > max) {
        return false;
      }
      if (held.compareAndSet(h, next)) {
        return true;
      }
    }
  }

  void release(long n) {
    held.addAndGet(-n);
  }
}
