package dev.tidemark.receiver;

import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * Admission control shared by every receiver (OTLP/gRPC, OTLP/HTTP, remote write): the request
 * bytes (after decompression) held at once by requests being read, decoded, translated and made
 * durable. A request that would take the total over {@link #max()} is refused at once, never
 * queued, unless it already holds everything in flight (so one request larger than the limit still
 * passes when alone). One instance per server, so overload on one protocol is felt by all. While
 * {@code heapRefusal} names a reason ({@link HeapGuard#refusal()}: the heap nearly full after a
 * collection), every reservation is refused.
 *
 * <p>Thread-safe.
 */
public final class InFlightBytes {
  private final long max;
  private final AtomicLong total = new AtomicLong();
  private final Supplier<String> heapRefusal;

  /**
   * @param max the limit in bytes, positive
   */
  public InFlightBytes(long max) {
    this(max, () -> null);
  }

  /**
   * @param max the limit in bytes, positive
   * @param heapRefusal why nothing more may be admitted now, or null while requests may be
   */
  public InFlightBytes(long max, Supplier<String> heapRefusal) {
    if (max <= 0) {
      throw new IllegalArgumentException("max must be positive, was " + max);
    }
    this.max = max;
    this.heapRefusal = heapRefusal;
  }

  /** The limit. */
  public long max() {
    return max;
  }

  /** Bytes held now. */
  public long current() {
    return total.get();
  }

  /**
   * Admits {@code bytes} more for a request that already holds {@code held}. Refuses (and admits
   * nothing) if the total would pass the limit while other requests hold bytes.
   *
   * @return true if admitted; the caller then owns {@code bytes} more until it {@link #release}s
   *     them
   */
  public boolean reserve(long held, long bytes) {
    if (bytes < 0) {
      throw new IllegalArgumentException("bytes must not be negative, was " + bytes);
    }
    if (bytes > 0 && heapRefusal.get() != null) {
      return false;
    }
    while (true) {
      long current = total.get();
      long next = current + bytes;
      if (next > max && current != held) {
        return false;
      }
      if (total.compareAndSet(current, next)) {
        return true;
      }
    }
  }

  /** Why a request was refused, for its answer: the heap or the byte limit. */
  public String refusal() {
    String heap = heapRefusal.get();
    return heap != null ? heap : "more than " + max + " request bytes in flight";
  }

  /** Gives back bytes admitted by {@link #reserve}. */
  public void release(long bytes) {
    if (bytes > 0) {
      total.addAndGet(-bytes);
    }
  }
}
