package dev.tidemark.translator;

/**
 * The 128-bit hash of a stream's full identity: resource attributes, scope (name, version, schema
 * URL, attributes), metric name, unit, type, monotonicity, temporality and data-point attributes,
 * each attribute list in key order (so attribute order in the request does not matter). Like the
 * engine's series fingerprint, the hash stands for the identity: a collision would merge two
 * streams (see {@link Translator} for how it is computed).
 *
 * <p>Keys stored in maps are never changed; only a per-thread lookup probe is reused ({@link
 * #set}), and it is {@link #copy() copied} before it is stored.
 */
final class StreamKey {
  private long hi;
  private long lo;

  StreamKey(long hi, long lo) {
    this.hi = hi;
    this.lo = lo;
  }

  /** Reuses this key as a lookup probe. Never call on a key that is stored anywhere. */
  StreamKey set(long hi, long lo) {
    this.hi = hi;
    this.lo = lo;
    return this;
  }

  StreamKey copy() {
    return new StreamKey(hi, lo);
  }

  long hi() {
    return hi;
  }

  long lo() {
    return lo;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof StreamKey k && k.hi == hi && k.lo == lo;
  }

  @Override
  public int hashCode() {
    return (int) (lo ^ (lo >>> 32));
  }

  @Override
  public String toString() {
    return String.format("StreamKey[%016x%016x]", hi, lo);
  }
}
