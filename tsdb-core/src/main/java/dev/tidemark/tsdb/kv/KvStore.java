package dev.tidemark.tsdb.kv;

/**
 * The byte-level seam between the engine and its storage: one ordered key space, atomic write
 * batches, ordered range scans, snapshots. RocksDB implements it ({@code RocksDbKvStore}), so does
 * {@link InMemoryKvStore}; every implementation passes {@code KvStoreContractTest}. No
 * store-specific type crosses this interface.
 *
 * <p>Durability: when {@link #write} returns, the batch survives a crash of the process (for
 * RocksDB: it is in the WAL, handed to the OS). {@link #sync()} makes every batch written before it
 * durable against power loss too; one sync serves many writes (group commit). Reads on the store
 * itself see each batch entirely or not at all per key, but a scan racing a write may see some keys
 * of the batch and not others; use {@link #snapshot()} for a consistent view.
 *
 * <p>Thread-safe. Methods throw {@link KvStoreException} on storage failure and {@link
 * IllegalStateException} once closed.
 */
public interface KvStore extends KvReader, AutoCloseable {

  /** Applies every operation of the batch atomically, in order. */
  void write(WriteBatch batch);

  /** Makes every batch written so far durable against power loss. */
  void sync();

  /** A consistent point-in-time view; the caller closes it. */
  KvSnapshot snapshot();

  /**
   * Asks the store to reclaim the space of deleted keys in {@code [fromInclusive, toExclusive)} now
   * (RocksDB: drop whole files, then compact the range). Returns when done.
   */
  void compactRange(byte[] fromInclusive, byte[] toExclusive);

  /** The store's approximate size in bytes (on disk for persistent stores). */
  long approximateSizeBytes();

  /** Releases every resource; idempotent. Open cursors and snapshots must be closed first. */
  @Override
  void close();
}
