package dev.tidemark.tsdb.kv;

/**
 * A consistent, point-in-time read view: it sees every batch written before it was taken,
 * entirely, and none written after. Close it when done; a store may pin resources for it.
 */
public interface KvSnapshot extends KvReader, AutoCloseable {
  @Override
  void close();
}
