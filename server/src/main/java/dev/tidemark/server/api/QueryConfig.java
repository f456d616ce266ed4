package dev.tidemark.server.api;

import java.time.Duration;
import java.util.Objects;

/**
 * Settings of the Prometheus HTTP query API (Prometheus' {@code --query.*} flags).
 *
 * <p>The server builds it from the settings {@code query-timeout}, {@code query-max-samples},
 * {@code query-max-concurrency}, {@code query-max-queued}, {@code query-lookback-delta}, {@code
 * enable-feature} and {@code query-experimental-functions} (command line, YAML file, defaults:
 * {@link #DEFAULTS}) and hands it out as {@code ServerConfig.queryConfig()}; a bad value stops the
 * start with a message naming the setting before this record's own checks could see it.
 *
 * @param timeout wall-clock budget of one query, time spent waiting for a slot included
 *     (Prometheus: {@code --query.timeout=2m}); a request's {@code timeout} parameter can only
 *     shorten it
 * @param maxSamples most samples one query holds in memory at once ({@code --query.max-samples})
 * @param maxConcurrency queries evaluated at once ({@code --query.max-concurrency}: Prometheus' 20
 *     in {@link #DEFAULTS}, {@link #defaultQueryThreads()} in the server)
 * @param maxQueued queries waiting for a slot beyond {@code maxConcurrency}; one more is answered
 *     503 at once
 * @param lookbackDelta how far back an instant selector looks ({@code --query.lookback-delta}, 5m);
 *     a request's {@code lookback_delta} parameter overrides it
 * @param promql the experimental PromQL features enabled ({@code --enable-feature}); none by
 *     default, as in Prometheus
 * @param maxSamplesTotal most samples all queries together hold in memory at once ({@code
 *     query-max-samples-total}, no Prometheus counterpart): a query that would pass it fails as one
 *     over {@code maxSamples} does, so queries cannot take the heap ingestion needs (issue #22)
 */
public record QueryConfig(
    Duration timeout,
    long maxSamples,
    int maxConcurrency,
    int maxQueued,
    Duration lookbackDelta,
    PromqlFeatures promql,
    long maxSamplesTotal) {

  public static final Duration DEFAULT_TIMEOUT = Duration.ofMinutes(2);
  public static final long DEFAULT_MAX_SAMPLES = 50_000_000L;
  public static final int DEFAULT_MAX_QUEUED = 100;
  public static final Duration DEFAULT_LOOKBACK_DELTA = Duration.ofMinutes(5);

  public static final QueryConfig DEFAULTS =
      new QueryConfig(
          DEFAULT_TIMEOUT,
          DEFAULT_MAX_SAMPLES,
          defaultQueryThreads(),
          DEFAULT_MAX_QUEUED,
          DEFAULT_LOOKBACK_DELTA,
          PromqlFeatures.DEFAULTS,
          defaultMaxSamplesTotal());

  /**
   * The samples all queries together may hold by default: as many 16-byte samples as fill a quarter
   * of the JVM's maximum heap (README, "Configuration": the share queries get), uncapped.
   */
  public static long defaultMaxSamplesTotal() {
    long heap = Runtime.getRuntime().maxMemory();
    return heap == Long.MAX_VALUE ? Long.MAX_VALUE : heap / 64;
  }

  /**
   * The threads queries keep busy by default: the processors but one, at least one (1 on a 2-core
   * machine). The default of {@code --query-max-concurrency}, and the threads one query or one
   * select may use: ingestion always keeps a core. With Prometheus' 20 on 2 cores, 20 clients of
   * heavy queries took the ingest ack p99 from 26 ms to 84 s (docs/benchmarks.md, session 9).
   */
  public static int defaultQueryThreads() {
    return Math.max(1, Runtime.getRuntime().availableProcessors() - 1);
  }

  /**
   * Settings whose queries together hold at most {@code maxSamples}, as one query may, with
   * Prometheus' experimental functions as given and the other experimental features off.
   */
  public QueryConfig(
      Duration timeout,
      long maxSamples,
      int maxConcurrency,
      int maxQueued,
      Duration lookbackDelta,
      boolean experimentalFunctions) {
    this(
        timeout,
        maxSamples,
        maxConcurrency,
        maxQueued,
        lookbackDelta,
        experimentalFunctions,
        maxSamples);
  }

  /** Settings with Prometheus' experimental functions as given, the other features off. */
  public QueryConfig(
      Duration timeout,
      long maxSamples,
      int maxConcurrency,
      int maxQueued,
      Duration lookbackDelta,
      boolean experimentalFunctions,
      long maxSamplesTotal) {
    this(
        timeout,
        maxSamples,
        maxConcurrency,
        maxQueued,
        lookbackDelta,
        new PromqlFeatures(experimentalFunctions, false, false),
        maxSamplesTotal);
  }

  /** Whether the parser accepts Prometheus' experimental functions. */
  public boolean experimentalFunctions() {
    return promql.experimentalFunctions();
  }

  public QueryConfig {
    Objects.requireNonNull(timeout, "timeout");
    Objects.requireNonNull(promql, "promql");
    Objects.requireNonNull(lookbackDelta, "lookbackDelta");
    if (timeout.toMillis() <= 0) {
      throw new IllegalArgumentException("query timeout must be positive, was " + timeout);
    }
    if (maxSamples <= 0) {
      throw new IllegalArgumentException("query max samples must be positive, was " + maxSamples);
    }
    if (maxSamplesTotal <= 0) {
      throw new IllegalArgumentException(
          "query max samples total must be positive, was " + maxSamplesTotal);
    }
    if (maxConcurrency < 1) {
      throw new IllegalArgumentException(
          "query max concurrency must be at least 1, was " + maxConcurrency);
    }
    if (maxQueued < 0) {
      throw new IllegalArgumentException("query max queued must not be negative, was " + maxQueued);
    }
    if (lookbackDelta.toMillis() <= 0) {
      throw new IllegalArgumentException("lookback delta must be positive, was " + lookbackDelta);
    }
  }
}
