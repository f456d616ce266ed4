package dev.tidemark.rocksdb;

import dev.tidemark.tsdb.kv.KvCursor;
import dev.tidemark.tsdb.kv.KvSnapshot;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import org.rocksdb.ReadOptions;
import org.rocksdb.Snapshot;

/**
 * A {@link KvSnapshot} over a RocksDB snapshot. It owns the snapshot (released through {@code
 * RocksDB.releaseSnapshot}), the {@link ReadOptions} its gets use, and the cursors opened on it.
 *
 * <p>{@link #get} and {@link #scan} may be called from several threads at once. Closing the
 * snapshot closes the cursors still open on it (their later calls throw {@link
 * IllegalStateException}); a read/write lock makes the close wait for running calls, so native
 * memory is never freed under one.
 */
final class RocksDbSnapshot implements KvSnapshot {

  private final RocksDbKvStore store;
  private final Snapshot snapshot;
  private final ReadOptions readOptions;
  private final Set<RocksDbCursor> cursors = ConcurrentHashMap.newKeySet();
  private final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();
  private String releasedBecause; // guarded by lock; non-null once released

  RocksDbSnapshot(RocksDbKvStore store, Snapshot snapshot, ReadOptions readOptions) {
    this.store = store;
    this.snapshot = snapshot;
    this.readOptions = readOptions;
  }

  @Override
  public byte[] get(byte[] key) {
    lock.readLock().lock();
    try {
      ensureUsable();
      return store.getWith(readOptions, key);
    } finally {
      lock.readLock().unlock();
    }
  }

  /** One batched lookup (RocksDB's MultiGet): one native call for all keys. */
  @Override
  public List<byte[]> multiGet(List<byte[]> keys) {
    lock.readLock().lock();
    try {
      ensureUsable();
      return store.multiGetWith(readOptions, keys);
    } finally {
      lock.readLock().unlock();
    }
  }

  @Override
  public KvCursor scan(byte[] fromInclusive, byte[] toExclusive) {
    lock.readLock().lock();
    try {
      ensureUsable();
      return store.newCursor(snapshot, fromInclusive, toExclusive, cursors);
    } finally {
      lock.readLock().unlock();
    }
  }

  @Override
  public void close() {
    if (release("snapshot is closed")) {
      store.forget(this);
    }
  }

  /**
   * Closes the open cursors and releases the snapshot, unless already done; true if this call did
   * it. The store calls it (with the database still open) when it closes.
   */
  boolean release(String reason) {
    lock.writeLock().lock();
    try {
      if (releasedBecause != null) {
        return false;
      }
      releasedBecause = reason;
      for (RocksDbCursor c : cursors) {
        c.release(reason);
      }
      cursors.clear();
      readOptions.close();
      store.releaseSnapshot(snapshot);
      return true;
    } finally {
      lock.writeLock().unlock();
    }
  }

  /** Cursors still open on this snapshot. */
  int openCursorCount() {
    return cursors.size();
  }

  private void ensureUsable() {
    if (releasedBecause != null) {
      throw new IllegalStateException(releasedBecause);
    }
  }
}
