package dev.tidemark.tsdb.kv;

import java.util.Arrays;
import java.util.Iterator;
import java.util.Map;
import java.util.NavigableMap;
import java.util.TreeMap;

/**
 * A {@link KvStore} in a sorted map, for tests and for the reference runs of the engine. Nothing
 * survives {@link #close()}; {@link #sync()} and {@link #compactRange} do nothing.
 *
 * <p>Copy on write: each batch builds a new sorted map from the current one (O(n) per batch) and
 * publishes it atomically, so a snapshot is just the current map (O(1)) and readers never see half
 * a batch. Made for tests and reference runs, not for production sizes.
 */
public final class InMemoryKvStore implements KvStore {

  private volatile NavigableMap<byte[], byte[]> map = new TreeMap<>(Arrays::compareUnsigned);
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
    synchronized (this) {
      TreeMap<byte[], byte[]> next = new TreeMap<>(map);
      for (WriteBatch.Op op : batch.ops()) {
        switch (op.kind()) {
          case PUT -> next.put(op.key().clone(), op.value().clone());
          case DELETE -> next.remove(op.key());
          case DELETE_RANGE -> next.subMap(op.key(), true, op.value(), false).clear();
        }
      }
      map = next;
    }
  }

  @Override
  public void sync() {
    ensureOpen();
  }

  @Override
  public KvSnapshot snapshot() {
    ensureOpen();
    NavigableMap<byte[], byte[]> copy = map;
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
    map = new TreeMap<>(Arrays::compareUnsigned);
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
      view =
          Arrays.compareUnsigned(fromInclusive, toExclusive) >= 0
              ? new TreeMap<byte[], byte[]>(Arrays::compareUnsigned)
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
