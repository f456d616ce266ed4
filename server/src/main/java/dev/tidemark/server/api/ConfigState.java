package dev.tidemark.server.api;

import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Objects;

/**
 * The running server's configuration as the status endpoints show it, taken anew at each request (a
 * reload changes it).
 *
 * @param flags every setting's effective value by name, for {@code /api/v1/status/flags}
 * @param yaml the effective settings as a YAML document, for {@code /api/v1/status/config}
 * @param retention how long data is kept now
 * @param lastReloadSuccessful whether the last reload (or the start) applied its files
 * @param lastReloadSuccess when the configuration was last loaded successfully
 */
public record ConfigState(
    Map<String, String> flags,
    String yaml,
    Duration retention,
    boolean lastReloadSuccessful,
    Instant lastReloadSuccess) {

  public ConfigState {
    flags = Map.copyOf(flags);
    Objects.requireNonNull(yaml, "yaml");
    Objects.requireNonNull(retention, "retention");
    Objects.requireNonNull(lastReloadSuccess, "lastReloadSuccess");
  }
}
