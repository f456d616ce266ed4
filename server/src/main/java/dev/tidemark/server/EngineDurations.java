package dev.tidemark.server;

import dev.tidemark.tsdb.codec.TimeBucket;
import dev.tidemark.tsdb.engine.EngineEvents;
import io.prometheus.metrics.core.metrics.Histogram;
import io.prometheus.metrics.model.registry.PrometheusRegistry;

/**
 * The engine's seals and compactions as histograms of their durations, fed through the engine's
 * {@link EngineEvents} seam (tsdb-core knows no metrics library; its counters reach {@code
 * /metrics} through {@link EngineMetrics}, its durations through this): {@code
 * tidemark_seal_duration_seconds} (one observation per seal of a bucket, whether it left the head
 * or stayed open) and {@code tidemark_compaction_duration_seconds} (one per group of buckets
 * merged, as Prometheus' {@code prometheus_tsdb_compaction_duration_seconds}). Buckets from 10 ms
 * doubling to about 5 minutes: a seal of a quiet hour takes milliseconds, one of a million series
 * tens of seconds. Thread-safe.
 */
final class EngineDurations implements EngineEvents {

  /** 10 ms, doubling 16 times: up to 327.68 s. */
  static final double[] BUCKETS = exponential(0.01, 2, 16);

  private final Histogram seal;
  private final Histogram compaction;

  EngineDurations(PrometheusRegistry registry) {
    seal =
        Histogram.builder()
            .name("tidemark_seal_duration_seconds")
            .help("Duration of sealing one hour bucket of the head into the store")
            .classicUpperBounds(BUCKETS)
            .classicOnly()
            .register(registry);
    compaction =
        Histogram.builder()
            .name("tidemark_compaction_duration_seconds")
            .help(
                "Duration of merging one group of sealed buckets into a coarser one (as"
                    + " prometheus_tsdb_compaction_duration_seconds)")
            .classicUpperBounds(BUCKETS)
            .classicOnly()
            .register(registry);
  }

  @Override
  public void sealed(TimeBucket bucket, int series, long nanos, boolean leftHead) {
    seal.observe(nanos / 1e9);
  }

  @Override
  public void compacted(TimeBucket target, int merged, long nanos) {
    compaction.observe(nanos / 1e9);
  }

  private static double[] exponential(double start, double factor, int count) {
    double[] out = new double[count];
    double v = start;
    for (int i = 0; i < count; i++) {
      out[i] = v;
      v *= factor;
    }
    return out;
  }
}
