package dev.tidemark.tsdb.engine;

import dev.tidemark.tsdb.append.StorageUnavailableException;
import dev.tidemark.tsdb.kv.KvStore;
import dev.tidemark.tsdb.kv.KvStoreException;

/**
 * Group commit: writers register each KV write and wait until a {@link KvStore#sync()} that began
 * after it has finished. The first waiter syncs for everyone who wrote before it started; the
 * others wait for that sync, so N concurrent appends share one fsync.
 */
final class GroupSync {
  private final KvStore kv;
  private long written;
  private long synced;
  private boolean syncing;

  GroupSync(KvStore kv) {
    this.kv = kv;
  }

  /** Records a completed write; returns its sequence number. */
  synchronized long registerWrite() {
    return ++written;
  }

  /** Returns once every write up to {@code seq} is synced. */
  void awaitDurable(long seq) {
    while (true) {
      long target;
      synchronized (this) {
        while (syncing && synced < seq) {
          try {
            wait();
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new StorageUnavailableException("interrupted while waiting for fsync", e);
          }
        }
        if (synced >= seq) {
          return;
        }
        syncing = true;
        target = written;
      }
      try {
        kv.sync();
      } catch (KvStoreException e) {
        synchronized (this) {
          syncing = false;
          notifyAll();
        }
        throw new StorageUnavailableException("fsync failed: " + e.getMessage(), e);
      }
      synchronized (this) {
        synced = Math.max(synced, target);
        syncing = false;
        notifyAll();
      }
    }
  }
}
