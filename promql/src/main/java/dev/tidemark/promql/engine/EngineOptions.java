package dev.tidemark.promql.engine;

import java.time.Duration;
import java.util.Objects;

/**
 * Settings of a {@link PromqlEngine}, as Prometheus' {@code promql.EngineOpts}.
 *
 * @param lookbackDelta how far back an instant selector looks for a sample (Prometheus: 5m)
 * @param maxSamples most samples held in memory at once by one query
 * @param timeout wall-clock budget of one query
 * @param defaultSubqueryStep resolution of a subquery written without step ({@code [5m:]}); as
 *     Prometheus' global evaluation interval (1m)
 * @param parallelism threads one query may use for a range function over many series (the caller's
 *     thread plus common-pool workers); 1 evaluates on the caller's thread only
 * @param delayedNameRemoval Prometheus' {@code EnableDelayedNameRemoval} ({@code
 *     --enable-feature=promql-delayed-name-removal}): {@code __name__} (with {@code __type__} and
 *     {@code __unit__}) is only marked where a function or operator drops it, and removed from the
 *     query's result at the end, so {@code sum(rate({job="a"}[5m]))} sums series that differ only
 *     in their name. Off, as Prometheus runs by default, each node removes it at once and two
 *     series left with the same labels at one step fail the query there ({@code vector cannot
 *     contain metrics with the same labelset}). Prometheus' test engine turns it on, and so do
 *     {@link #DEFAULTS}; the server turns it off unless the feature is enabled.
 * @param typeAndUnitLabels Prometheus' {@code EnableTypeAndUnitLabels} ({@code
 *     --enable-feature=type-and-unit-labels}): {@code rate} and {@code increase} judge whether a
 *     series is a counter by its {@code __type__} label ({@code counter} or {@code histogram})
 *     rather than by the suffix of its name, in the info annotation they give when it is not. Off
 *     by default, as in Prometheus and its test engine.
 */
public record EngineOptions(
    Duration lookbackDelta,
    long maxSamples,
    Duration timeout,
    Duration defaultSubqueryStep,
    int parallelism,
    boolean delayedNameRemoval,
    boolean typeAndUnitLabels) {

  /**
   * Prometheus' engine defaults (5m lookback, 50 million samples, 2m timeout, 1m subquery step),
   * with delayed name removal on as its test engine runs the PromQL scripts.
   */
  public static final EngineOptions DEFAULTS =
      new EngineOptions(
          Duration.ofMinutes(5), 50_000_000L, Duration.ofMinutes(2), Duration.ofMinutes(1));

  /** Options with {@code parallelism} = the machine's processors, delayed name removal on. */
  public EngineOptions(
      Duration lookbackDelta, long maxSamples, Duration timeout, Duration defaultSubqueryStep) {
    this(
        lookbackDelta,
        maxSamples,
        timeout,
        defaultSubqueryStep,
        Runtime.getRuntime().availableProcessors());
  }

  /** Options with delayed name removal on. */
  public EngineOptions(
      Duration lookbackDelta,
      long maxSamples,
      Duration timeout,
      Duration defaultSubqueryStep,
      int parallelism) {
    this(lookbackDelta, maxSamples, timeout, defaultSubqueryStep, parallelism, true);
  }

  /** Options without type-and-unit labels. */
  public EngineOptions(
      Duration lookbackDelta,
      long maxSamples,
      Duration timeout,
      Duration defaultSubqueryStep,
      int parallelism,
      boolean delayedNameRemoval) {
    this(
        lookbackDelta,
        maxSamples,
        timeout,
        defaultSubqueryStep,
        parallelism,
        delayedNameRemoval,
        false);
  }

  public EngineOptions {
    Objects.requireNonNull(lookbackDelta, "lookbackDelta");
    Objects.requireNonNull(timeout, "timeout");
    Objects.requireNonNull(defaultSubqueryStep, "defaultSubqueryStep");
    if (lookbackDelta.toMillis() <= 0) {
      throw new IllegalArgumentException("lookbackDelta must be positive, was " + lookbackDelta);
    }
    if (maxSamples <= 0) {
      throw new IllegalArgumentException("maxSamples must be positive, was " + maxSamples);
    }
    if (defaultSubqueryStep.toMillis() <= 0) {
      throw new IllegalArgumentException(
          "defaultSubqueryStep must be positive, was " + defaultSubqueryStep);
    }
    if (parallelism < 1) {
      throw new IllegalArgumentException("parallelism must be at least 1, was " + parallelism);
    }
  }

  public EngineOptions withLookbackDelta(Duration d) {
    return new EngineOptions(
        d,
        maxSamples,
        timeout,
        defaultSubqueryStep,
        parallelism,
        delayedNameRemoval,
        typeAndUnitLabels);
  }

  public EngineOptions withMaxSamples(long n) {
    return new EngineOptions(
        lookbackDelta,
        n,
        timeout,
        defaultSubqueryStep,
        parallelism,
        delayedNameRemoval,
        typeAndUnitLabels);
  }

  public EngineOptions withTimeout(Duration d) {
    return new EngineOptions(
        lookbackDelta,
        maxSamples,
        d,
        defaultSubqueryStep,
        parallelism,
        delayedNameRemoval,
        typeAndUnitLabels);
  }

  public EngineOptions withDefaultSubqueryStep(Duration d) {
    return new EngineOptions(
        lookbackDelta, maxSamples, timeout, d, parallelism, delayedNameRemoval, typeAndUnitLabels);
  }

  public EngineOptions withParallelism(int n) {
    return new EngineOptions(
        lookbackDelta,
        maxSamples,
        timeout,
        defaultSubqueryStep,
        n,
        delayedNameRemoval,
        typeAndUnitLabels);
  }

  public EngineOptions withDelayedNameRemoval(boolean on) {
    return new EngineOptions(
        lookbackDelta,
        maxSamples,
        timeout,
        defaultSubqueryStep,
        parallelism,
        on,
        typeAndUnitLabels);
  }

  public EngineOptions withTypeAndUnitLabels(boolean on) {
    return new EngineOptions(
        lookbackDelta,
        maxSamples,
        timeout,
        defaultSubqueryStep,
        parallelism,
        delayedNameRemoval,
        on);
  }
}
