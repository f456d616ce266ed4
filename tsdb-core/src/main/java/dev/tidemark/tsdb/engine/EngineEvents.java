package dev.tidemark.tsdb.engine;

import dev.tidemark.tsdb.codec.TimeBucket;

/**
 * What the engine tells its owner as it works, for measurements the engine's counters ({@link
 * Engine#stats()}) cannot hold, such as a distribution of durations: the server turns these calls
 * into histograms, and tsdb-core stays free of a metrics library. Given to {@link
 * Engine#open(dev.tidemark.tsdb.kv.KvStore, EngineConfig, EngineEvents)}; {@link #NONE} ignores
 * everything.
 *
 * <p>Called on the engine's background thread (sealing, compaction) after the work is written: an
 * implementation must be thread-safe, quick and must not block or call back into the engine. An
 * exception it throws is logged and dropped; the engine carries on.
 */
public interface EngineEvents {

  /** Ignores every event. */
  EngineEvents NONE = new EngineEvents() {};

  /**
   * A seal of {@code bucket} wrote its records: its series' chunks and postings.
   *
   * @param series the series it wrote
   * @param nanos how long the seal took, from its start to its last write
   * @param leftHead whether the bucket left the head; false when samples arrived during the seal,
   *     which keeps it open for a later seal
   */
  default void sealed(TimeBucket bucket, int series, long nanos, boolean leftHead) {}

  /**
   * The compactor merged {@code merged} sealed buckets into {@code target} and switched the bucket
   * list to it.
   *
   * @param nanos how long the compaction took, reading, writing and switching
   */
  default void compacted(TimeBucket target, int merged, long nanos) {}
}
