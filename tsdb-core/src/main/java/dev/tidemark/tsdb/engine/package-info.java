/**
 * The storage engine. Its facade is {@link dev.tidemark.tsdb.engine.Engine} (an {@code Appender}
 * and a {@code Querier}) with {@link dev.tidemark.tsdb.engine.EngineConfig}, and the offline
 * verifier {@link dev.tidemark.tsdb.engine.StoreVerifier} with its reports; every other type here
 * is package-private, and the server's {@code ModuleSurfaceTest} fails the build when another one
 * becomes public without joining the facade ({@code docs/architecture.md}, "Module surface").
 */
package dev.tidemark.tsdb.engine;
