package dev.tidemark.tsdb.kv;

/**
 * An ascending iteration over key-value pairs. Not thread-safe. {@link #key()} and {@link #value()}
 * return arrays that belong to the caller and are valid after {@link #next()} returned true. Close
 * it when done (a RocksDB iterator holds native resources).
 */
public interface KvCursor extends AutoCloseable {

  /** Moves to the next pair; false at the end. */
  boolean next();

  byte[] key();

  byte[] value();

  @Override
  void close();
}
