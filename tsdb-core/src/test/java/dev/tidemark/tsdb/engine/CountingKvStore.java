package dev.tidemark.tsdb.engine;

import dev.tidemark.tsdb.kv.ForwardingKvStore;
import dev.tidemark.tsdb.kv.KvCursor;
import dev.tidemark.tsdb.kv.KvSnapshot;
import dev.tidemark.tsdb.kv.KvStore;
import dev.tidemark.tsdb.kv.WriteBatch;
import java.util.concurrent.atomic.AtomicLong;

/** Wraps a store and counts reads, so tests can prove the ingest path does none. */
final class CountingKvStore extends ForwardingKvStore {
  final AtomicLong reads = new AtomicLong();
  final AtomicLong writes = new AtomicLong();

  CountingKvStore(KvStore inner) {
    super(inner);
  }

  @Override
  public byte[] get(byte[] key) {
    reads.incrementAndGet();
    return super.get(key);
  }

  @Override
  public KvCursor scan(byte[] fromInclusive, byte[] toExclusive) {
    reads.incrementAndGet();
    return super.scan(fromInclusive, toExclusive);
  }

  @Override
  public void write(WriteBatch batch) {
    writes.incrementAndGet();
    super.write(batch);
  }

  @Override
  public KvSnapshot snapshot() {
    reads.incrementAndGet();
    return super.snapshot();
  }
}
