package dev.tidemark.server.api;

import dev.tidemark.tsdb.engine.Engine;
import dev.tidemark.tsdb.model.FamilyMetadata;
import dev.tidemark.tsdb.query.Querier;
import java.time.Clock;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * What the API reads: the store through its {@link Querier}, the metric metadata the translator has
 * seen, the engine's statistics, and facts about the running server for the status endpoints.
 *
 * @param querier every series, label and sample read
 * @param metadata family name → TYPE, UNIT, HELP, as accepted since the server started
 * @param engineStats head statistics for {@code /api/v1/status/tsdb} and runtime info
 * @param buckets every bucket with its series and bytes on disk, for {@code /api/v1/status/tsdb}
 *     when asked ({@code buckets=1}); scans the store
 * @param config the configuration in force (flags, YAML, retention, last reload), asked at each
 *     request of the status endpoints
 * @param version the server's version
 * @param startTime when the server started
 * @param clock "now" for queries without a time
 */
public record ApiBackend(
    Querier querier,
    Supplier<Map<String, FamilyMetadata>> metadata,
    Supplier<Engine.Stats> engineStats,
    Supplier<List<Engine.BucketInfo>> buckets,
    Supplier<ConfigState> config,
    String version,
    Instant startTime,
    Clock clock) {

  public ApiBackend {
    Objects.requireNonNull(querier, "querier");
    Objects.requireNonNull(metadata, "metadata");
    Objects.requireNonNull(engineStats, "engineStats");
    Objects.requireNonNull(buckets, "buckets");
    Objects.requireNonNull(config, "config");
    Objects.requireNonNull(version, "version");
    Objects.requireNonNull(startTime, "startTime");
    Objects.requireNonNull(clock, "clock");
  }
}
