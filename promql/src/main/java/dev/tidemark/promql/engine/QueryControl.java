package dev.tidemark.promql.engine;

/**
 * Lets another thread cancel a running query; the evaluator checks it inside its loops. One per
 * query; thread-safe.
 */
public final class QueryControl {
  private volatile boolean canceled;
  private volatile long peakSamples;

  /**
   * The most samples the query held in memory at once (Prometheus' {@code peakSamples} statistic),
   * once it has run; 0 before.
   */
  public long peakSamples() {
    return peakSamples;
  }

  void recordPeak(long peak) {
    peakSamples = peak;
  }

  public void cancel() {
    canceled = true;
  }

  public boolean isCanceled() {
    return canceled;
  }
}
