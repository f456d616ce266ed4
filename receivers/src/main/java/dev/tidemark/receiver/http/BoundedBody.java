package dev.tidemark.receiver.http;

import com.google.protobuf.ByteString;
import com.google.protobuf.UnsafeByteOperations;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.function.LongPredicate;

/**
 * A request body (after decompression) accumulated as it arrives, in segments that are never
 * copied, bounded by a byte limit.
 *
 * <p><b>Memory.</b> Nothing is allocated before the first byte arrives. The first segment is {@code
 * firstSegmentBytes}; each further one is as large as all before it together (capacity doubles
 * without copying), the last one cut so that the capacity never exceeds {@code limit + 1} bytes. So
 * one body never holds more than {@code limit + 1} bytes however it arrives (a gzip bomb included),
 * and a client that has sent little holds little. Every segment is admitted through {@code reserve}
 * (the in-flight limit) before it is allocated.
 *
 * <p><b>Limit.</b> The moment the body holds more than {@code limit} bytes, {@link BodyTooLarge} is
 * thrown: at most {@code limit + 1} bytes are ever written.
 *
 * <p>Not thread-safe: one request's reads, one thread at a time.
 */
final class BoundedBody {
  /** First segment when the length is not known in advance: 64 KiB. */
  static final int FIRST_SEGMENT_BYTES = 64 * 1024;

  /** Largest array the JVM reliably allocates. */
  private static final int MAX_SEGMENT_BYTES = Integer.MAX_VALUE - 16;

  private final long limit;
  private final long capacityLimit;
  private final int firstSegmentBytes;
  private final LongPredicate reserve;
  private final List<byte[]> filled = new ArrayList<>();
  private byte[] current;
  private int position;
  private long length;
  private long allocated;

  /**
   * @param limit the most bytes the body may have
   * @param firstSegmentBytes size of the first segment (e.g. a known {@code Content-Length}), at
   *     least 1
   * @param reserve admits bytes against the in-flight limit; false refuses ({@link Overloaded})
   */
  BoundedBody(long limit, int firstSegmentBytes, LongPredicate reserve) {
    if (limit < 0) {
      throw new IllegalArgumentException("limit must not be negative, was " + limit);
    }
    this.limit = limit;
    this.capacityLimit = limit + 1;
    this.firstSegmentBytes = Math.max(1, firstSegmentBytes);
    this.reserve = reserve;
  }

  /** Copies all of {@code src} (its position advances). */
  void write(ByteBuffer src) throws BodyTooLarge, Overloaded {
    while (src.hasRemaining()) {
      int n = Math.min(src.remaining(), room());
      src.get(current, position, n);
      advance(n);
    }
  }

  /**
   * Free bytes in the current segment ({@link #segment()} from {@link #position()}), allocating a
   * new segment when it is full; always at least 1.
   */
  int room() throws Overloaded {
    if (current == null || position == current.length) {
      grow();
    }
    return current.length - position;
  }

  /** The segment that {@link #room()} refers to. */
  byte[] segment() {
    return current;
  }

  /** Where the next byte goes in {@link #segment()}. */
  int position() {
    return position;
  }

  /** Records {@code n} bytes written into {@link #segment()} at {@link #position()}. */
  void advance(int n) throws BodyTooLarge {
    position += n;
    length += n;
    if (length > limit) {
      throw new BodyTooLarge();
    }
  }

  private void grow() throws Overloaded {
    long size = allocated == 0 ? firstSegmentBytes : Math.max(FIRST_SEGMENT_BYTES, allocated);
    size = Math.min(Math.min(size, capacityLimit - allocated), MAX_SEGMENT_BYTES);
    // allocated < capacityLimit here: a full body of capacityLimit bytes has thrown BodyTooLarge.
    if (!reserve.test(size)) {
      throw new Overloaded();
    }
    if (current != null) {
      filled.add(current);
    }
    current = new byte[(int) size];
    position = 0;
    allocated += size;
  }

  /** The most bytes the body may have. */
  long limit() {
    return limit;
  }

  /** Bytes written so far. */
  long length() {
    return length;
  }

  /** Bytes allocated so far (never more than {@code limit + 1}). */
  long allocated() {
    return allocated;
  }

  /** The array holding the whole body at {@code [0, length())} if it is one segment, else null. */
  byte[] contiguous() {
    return filled.isEmpty() ? current : null;
  }

  /**
   * The body, without copying: one array-backed string when it fits one segment (the fast decoding
   * path), else a rope over the segments.
   */
  ByteString bytes() {
    if (current == null) {
      return ByteString.EMPTY;
    }
    ByteString last = UnsafeByteOperations.unsafeWrap(current, 0, position);
    if (filled.isEmpty()) {
      return last;
    }
    ByteString all = ByteString.EMPTY;
    for (byte[] s : filled) {
      all = all.concat(UnsafeByteOperations.unsafeWrap(s));
    }
    return all.concat(last);
  }

  /** Over the body limit (after decompression). */
  static final class BodyTooLarge extends Exception {
    private static final long serialVersionUID = 1L;

    BodyTooLarge() {
      super(null, null, false, false);
    }
  }

  /** Refused by the in-flight limit. */
  static final class Overloaded extends Exception {
    private static final long serialVersionUID = 1L;

    Overloaded() {
      super(null, null, false, false);
    }
  }
}
