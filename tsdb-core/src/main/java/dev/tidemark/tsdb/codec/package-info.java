/**
 * The persisted formats ({@code docs/format.md}): keys, record values, the chunk encodings and the
 * byte-level integers they share. Internal to tsdb-core: its types are {@code public} only because
 * the engine, in another package, reads and writes records through them. Other modules' main code
 * may use only the few the surface exposes ({@code TimeBucket}, {@code CorruptRecordException},
 * {@code SeriesLimits}, {@code Bytes}, {@code Varints}); the server's {@code ModuleSurfaceTest}
 * fails the build otherwise ({@code docs/architecture.md}, "Module surface").
 */
package dev.tidemark.tsdb.codec;
