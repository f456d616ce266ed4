package dev.tidemark.tsdb.engine;

import dev.tidemark.tsdb.kv.KvCursor;
import dev.tidemark.tsdb.kv.KvSnapshot;
import dev.tidemark.tsdb.kv.KvStore;
import dev.tidemark.tsdb.kv.WriteBatch;
import java.util.concurrent.atomic.AtomicLong;

/** Wraps a store and counts reads, so tests can prove the ingest path does none. */
final class CountingKvStore implements KvStore {
  final KvStore inner;
  final AtomicLong reads = new AtomicLong();
  final AtomicLong writes = new AtomicLong();

  CountingKvStore(KvStore inner) {
    this.inner = inner;
  }

  @Override
  public byte[] get(byte[] key) {
    reads.incrementAndGet();
    return inner.get(key);
  }

  @Override
  public KvCursor scan(byte[] fromInclusive, byte[] toExclusive) {
    reads.incrementAndGet();
    return inner.scan(fromInclusive, toExclusive);
  }

  @Override
  public void write(WriteBatch batch) {
    writes.incrementAndGet();
    inner.write(batch);
  }

  @Override
  public void sync() {
    inner.sync();
  }

  @Override
  public KvSnapshot snapshot() {
    reads.incrementAndGet();
    return inner.snapshot();
  }

  @Override
  public void compactRange(byte[] fromInclusive, byte[] toExclusive) {
    inner.compactRange(fromInclusive, toExclusive);
  }

  @Override
  public long approximateSizeBytes() {
    return inner.approximateSizeBytes();
  }

  @Override
  public void close() {
    inner.close();
  }
}
