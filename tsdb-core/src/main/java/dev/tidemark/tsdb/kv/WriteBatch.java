package dev.tidemark.tsdb.kv;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/**
 * Operations applied atomically by {@link KvStore#write}. The batch copies nothing: callers must
 * not change an array after handing it over. Not thread-safe.
 */
public final class WriteBatch {

  /** The kind of one operation. */
  public enum Kind {
    PUT,
    DELETE,
    DELETE_RANGE
  }

  /**
   * One operation. For {@link Kind#DELETE_RANGE}, {@code key} is the inclusive start and {@code
   * value} the exclusive end.
   */
  public record Op(Kind kind, byte[] key, byte[] value) {}

  private final List<Op> ops = new ArrayList<>();
  private long bytes;

  public WriteBatch put(byte[] key, byte[] value) {
    ops.add(new Op(Kind.PUT, Objects.requireNonNull(key), Objects.requireNonNull(value)));
    bytes += key.length + value.length;
    return this;
  }

  public WriteBatch delete(byte[] key) {
    ops.add(new Op(Kind.DELETE, Objects.requireNonNull(key), null));
    bytes += key.length;
    return this;
  }

  /** Deletes every key in {@code [fromInclusive, toExclusive)}. */
  public WriteBatch deleteRange(byte[] fromInclusive, byte[] toExclusive) {
    Objects.requireNonNull(fromInclusive);
    Objects.requireNonNull(toExclusive);
    if (Arrays.compareUnsigned(fromInclusive, toExclusive) > 0) {
      throw new IllegalArgumentException("range start is after its end");
    }
    ops.add(new Op(Kind.DELETE_RANGE, fromInclusive, toExclusive));
    bytes += fromInclusive.length + toExclusive.length;
    return this;
  }

  /** The operations, in order. */
  public List<Op> ops() {
    return ops;
  }

  public int size() {
    return ops.size();
  }

  public boolean isEmpty() {
    return ops.isEmpty();
  }

  /** Sum of key and value lengths. */
  public long payloadBytes() {
    return bytes;
  }

  public void clear() {
    ops.clear();
    bytes = 0;
  }
}
