package dev.tidemark.tsdb.kv;

import java.util.Arrays;
import java.util.Iterator;
import java.util.Map;
import java.util.NavigableMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * A {@link KvStore} in a sorted map, for tests and for the reference runs of the engine. Nothing
 * survives {@link #close()}; {@link #sync()} and {@link #compactRange} do nothing.
 *
 * <p>Batches are applied under a write lock; {@link #snapshot()} copies the map under the read
 * lock (O(n): this store is for tests, not for production sizes).
 */
public final class InMemoryKvStore implements KvStore {

  private final ConcurrentSkipListMap<byte[], byte[]> map =
      new ConcurrentSkipListMap<>(Arrays::compareUnsigned);
  private final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();
  private volatile boolean closed;

  @Override
  public byte[] get(byte[] key) {
    ensureOpen();
    byte[] v = map.get(key);
    return v == null ? null : v.clone();
  }

  @Override
  public KvCursor scan(byte[] fromInclusive, byte[] toExclusive) {
    ensureOpen();
    return cursor(map, fromInclusive, toExclusive);
  }

  @Override
  public void write(WriteBatch batch) {
    ensureOpen();
    lock.writeLock().lock();
    try {
      for (WriteBatch.Op op : batch.ops()) {
        switch (op.kind()) {
          case PUT -> map.put(op.key().clone(), op.value().clone());
          case DELETE -> map.remove(op.key());
          case DELETE_RANGE -> map.subMap(op.key(), true, op.value(), false).clear();
        }
      }
    } finally {
      lock.writeLock().unlock();
    }
  }

  @Override
  public void sync() {
    ensureOpen();
  }

  @Override
  public KvSnapshot snapshot() {
    ensureOpen();
    ConcurrentSkipListMap<byte[], byte[]> copy;
    lock.readLock().lock();
    try {
      copy = map.clone();
    } finally {
      lock.readLock().unlock();
    }
    return new KvSnapshot() {
      @Override
      public byte[] get(byte[] key) {
        byte[] v = copy.get(key);
        return v == null ? null : v.clone();
      }

      @Override
      public KvCursor scan(byte[] fromInclusive, byte[] toExclusive) {
        return cursor(copy, fromInclusive, toExclusive);
      }

      @Override
      public void close() {}
    };
  }

  @Override
  public void compactRange(byte[] fromInclusive, byte[] toExclusive) {
    ensureOpen();
  }

  @Override
  public long approximateSizeBytes() {
    long n = 0;
    for (Map.Entry<byte[], byte[]> e : map.entrySet()) {
      n += e.getKey().length + e.getValue().length;
    }
    return n;
  }

  @Override
  public void close() {
    closed = true;
    map.clear();
  }

  private void ensureOpen() {
    if (closed) {
      throw new IllegalStateException("store is closed");
    }
  }

  private static KvCursor cursor(
      NavigableMap<byte[], byte[]> source, byte[] fromInclusive, byte[] toExclusive) {
    NavigableMap<byte[], byte[]> view;
    if (fromInclusive != null && toExclusive != null) {
      view = Arrays.compareUnsigned(fromInclusive, toExclusive) >= 0
          ? new ConcurrentSkipListMap<>(Arrays::compareUnsigned)
          : source.subMap(fromInclusive, true, toExclusive, false);
    } else if (fromInclusive != null) {
      view = source.tailMap(fromInclusive, true);
    } else if (toExclusive != null) {
      view = source.headMap(toExclusive, false);
    } else {
      view = source;
    }
    Iterator<Map.Entry<byte[], byte[]>> it = view.entrySet().iterator();
    return new KvCursor() {
      private Map.Entry<byte[], byte[]> current;

      @Override
      public boolean next() {
        current = it.hasNext() ? it.next() : null;
        return current != null;
      }

      @Override
      public byte[] key() {
        return current.getKey().clone();
      }

      @Override
      public byte[] value() {
        return current.getValue().clone();
      }

      @Override
      public void close() {}
    };
  }
}
