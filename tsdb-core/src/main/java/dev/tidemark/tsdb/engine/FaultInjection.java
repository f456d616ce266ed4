package dev.tidemark.tsdb.engine;

/**
 * Test hook: lets a test fail an append at chosen places, to prove that a failure anywhere leaves
 * the head as the store has it. Null in production ({@link Engine#faults}); called under the
 * engine's write lock.
 */
interface FaultInjection {
  /** Before sample {@code k} of the batch changes the head. */
  void beforeApply(int k);

  /** After the head changed, before the KV write. */
  void beforeWrite();
}
