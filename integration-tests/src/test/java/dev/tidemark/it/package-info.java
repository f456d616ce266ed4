/**
 * End-to-end tests against the built server jar ({@code server/target/tidemark.jar}) started as a
 * separate process ({@link dev.tidemark.it.ServerProcess}), run by maven-failsafe-plugin in {@code
 * mvn verify}. After a server stopped, its data folder is read back through the engine ({@link
 * dev.tidemark.it.StoredData}).
 *
 * <ul>
 *   <li>{@code OtelSdkIT}: the real OpenTelemetry Java SDK over OTLP/gRPC and http/protobuf,
 *       cumulative and delta, every series read back with its exact name, labels and values;
 *   <li>{@code CrashIT}: SIGKILL (and SIGTERM) of a server receiving exports; acknowledged exports
 *       survive, unanswered ones are all or nothing;
 *   <li>{@code BadInputIT}: undecodable, oversized and per-point-invalid input gets the documented
 *       status, and the valid points of the same request are stored;
 *   <li>{@code BackPressureIT}: over the head memory budget, retryable refusals that store nothing;
 *   <li>{@code StartupIT}: the startup line and clear errors for a locked folder, a port in use, a
 *       bad setting.
 * </ul>
 */
package dev.tidemark.it;
