package dev.tidemark.rocksdb;

import dev.tidemark.tsdb.kv.KvCursor;
import java.util.Set;
import org.rocksdb.ReadOptions;
import org.rocksdb.RocksDBException;
import org.rocksdb.RocksIterator;
import org.rocksdb.Slice;

/**
 * A {@link KvCursor} over a RocksDB iterator. It owns its iterator, its {@link ReadOptions} and the
 * upper-bound {@link Slice}, and frees them (iterator first: it points at the slice) on {@link
 * #close()}, or when its owner (the store or a snapshot) is closed while it is still open; after
 * that every call throws {@link IllegalStateException}.
 *
 * <p>Not thread-safe for use, but every method is {@code synchronized} so that an owner closing it
 * from another thread can never free the iterator under a running call (which would crash the JVM,
 * not just throw).
 */
final class RocksDbCursor implements KvCursor {

  private final RocksIterator iterator;
  private final ReadOptions readOptions;
  private final Slice upperBound; // null when unbounded above
  private final byte[] fromInclusive; // null when unbounded below
  private final Set<RocksDbCursor> owner;

  private boolean started;
  private boolean valid;
  private String releasedBecause; // non-null once the native objects are freed

  RocksDbCursor(
      RocksIterator iterator,
      ReadOptions readOptions,
      Slice upperBound,
      byte[] fromInclusive,
      Set<RocksDbCursor> owner) {
    this.iterator = iterator;
    this.readOptions = readOptions;
    this.upperBound = upperBound;
    this.fromInclusive = fromInclusive == null ? null : fromInclusive.clone();
    this.owner = owner;
  }

  @Override
  public synchronized boolean next() {
    ensureUsable();
    if (!started) {
      started = true;
      if (fromInclusive == null) {
        iterator.seekToFirst();
      } else {
        iterator.seek(fromInclusive);
      }
    } else if (valid) {
      iterator.next();
    } else {
      return false;
    }
    valid = iterator.isValid();
    if (!valid) {
      try {
        iterator.status();
      } catch (RocksDBException e) {
        throw RocksDbKvStore.failure("scan", e);
      }
    }
    return valid;
  }

  @Override
  public synchronized byte[] key() {
    ensureOnPair();
    return iterator.key();
  }

  @Override
  public synchronized byte[] value() {
    ensureOnPair();
    return iterator.value();
  }

  @Override
  public synchronized void close() {
    if (releasedBecause == null) {
      release("cursor is closed");
      owner.remove(this);
    }
  }

  /** Frees the native objects if still held; called by the owner that is closing. */
  synchronized void release(String reason) {
    if (releasedBecause != null) {
      return;
    }
    releasedBecause = reason;
    valid = false;
    iterator.close();
    readOptions.close();
    if (upperBound != null) {
      upperBound.close();
    }
  }

  private void ensureUsable() {
    if (releasedBecause != null) {
      throw new IllegalStateException(releasedBecause);
    }
  }

  private void ensureOnPair() {
    ensureUsable();
    if (!valid) {
      throw new IllegalStateException("cursor is not on a pair: next() has not returned true");
    }
  }

  /** The cursor of an empty range: holds nothing native. */
  static final class Empty implements KvCursor {
    @Override
    public boolean next() {
      return false;
    }

    @Override
    public byte[] key() {
      throw new IllegalStateException("cursor is not on a pair: the range is empty");
    }

    @Override
    public byte[] value() {
      throw new IllegalStateException("cursor is not on a pair: the range is empty");
    }

    @Override
    public void close() {}
  }
}
