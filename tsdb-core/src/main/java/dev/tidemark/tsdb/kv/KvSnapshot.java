package dev.tidemark.tsdb.kv;

/**
 * A consistent, point-in-time read view: it sees every batch written before it was taken, entirely,
 * and none written after. Close it when done; a store may pin resources for it.
 *
 * <p>Thread-safe until closed: several threads may read and scan it at once (each cursor stays on
 * one thread); a select reads buckets in parallel through one snapshot. Close it after the last
 * read has returned.
 */
public interface KvSnapshot extends KvReader, AutoCloseable {
  @Override
  void close();
}
