package dev.tidemark.promql.engine;

/**
 * Lets another thread cancel a running query; the evaluator checks it inside its loops. One per
 * query; thread-safe.
 */
public final class QueryControl {
  private volatile boolean canceled;

  public void cancel() {
    canceled = true;
  }

  public boolean isCanceled() {
    return canceled;
  }
}
