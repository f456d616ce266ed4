package dev.tidemark.tsdb.kv;

/**
 * A store that hands every call to another one: tests extend it and override the calls they watch
 * or break (count reads, fail the Nth write, block the sealer's write).
 */
public abstract class ForwardingKvStore implements KvStore {
  protected final KvStore delegate;

  protected ForwardingKvStore(KvStore delegate) {
    this.delegate = delegate;
  }

  @Override
  public byte[] get(byte[] key) {
    return delegate.get(key);
  }

  @Override
  public KvCursor scan(byte[] fromInclusive, byte[] toExclusive) {
    return delegate.scan(fromInclusive, toExclusive);
  }

  @Override
  public void write(WriteBatch batch) {
    delegate.write(batch);
  }

  @Override
  public void sync() {
    delegate.sync();
  }

  @Override
  public KvSnapshot snapshot() {
    return delegate.snapshot();
  }

  @Override
  public void compactRange(byte[] fromInclusive, byte[] toExclusive) {
    delegate.compactRange(fromInclusive, toExclusive);
  }

  @Override
  public long approximateSizeBytes() {
    return delegate.approximateSizeBytes();
  }

  @Override
  public void close() {
    delegate.close();
  }
}
