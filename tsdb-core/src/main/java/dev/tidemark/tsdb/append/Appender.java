package dev.tidemark.tsdb.append;

/**
 * Where samples go: the engine implements it, the translator writes into it (and tests into a
 * recording implementation).
 *
 * <p>Contract: {@link #append} validates every sample, writes each point whose samples are all
 * acceptable, and returns only once those samples are durable (they survive a crash of the
 * process). A rejected point leaves no trace. Implementations are thread-safe; concurrent calls may
 * share one durable sync (group commit).
 */
public interface Appender {

  /**
   * Appends the batch. The batch is not retained after the call returns.
   *
   * @throws StorageUnavailableException if the store cannot take writes now (retryable; nothing of
   *     this batch is acknowledged)
   */
  AppendResult append(SampleBatch batch);
}
