package dev.tidemark.tsdb.codec;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/**
 * Fixed-width integers in byte arrays, the one set every codec uses. Big-endian where byte order
 * must follow numeric order (keys, so that RocksDB's bytewise comparator sorts them; the bit
 * streams of the chunk codecs); little-endian in values ({@code docs/format.md}: {@code u16},
 * {@code u32}, {@code i64}, {@code f64} are LE) and in protobuf's {@code fixed64}.
 *
 * <p>No method checks more than the array does: an index out of range throws {@link
 * ArrayIndexOutOfBoundsException}, so callers that read untrusted bytes check the length first and
 * throw their own exception. Stateless and thread-safe. Varints are in {@link Varints}.
 */
public final class Bytes {
  private Bytes() {}

  private static final VarHandle LONG_BE =
      MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);
  private static final VarHandle LONG_LE =
      MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
  private static final VarHandle INT_BE =
      MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.BIG_ENDIAN);
  private static final VarHandle INT_LE =
      MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.LITTLE_ENDIAN);

  /** The big-endian {@code long} at {@code b[off, off + 8)}. */
  public static long getLongBe(byte[] b, int off) {
    return (long) LONG_BE.get(b, off);
  }

  /** Writes {@code v} big-endian at {@code b[off, off + 8)}. */
  public static void putLongBe(byte[] b, int off, long v) {
    LONG_BE.set(b, off, v);
  }

  /** The little-endian {@code long} at {@code b[off, off + 8)}. */
  public static long getLongLe(byte[] b, int off) {
    return (long) LONG_LE.get(b, off);
  }

  /** Writes {@code v} little-endian at {@code b[off, off + 8)}. */
  public static void putLongLe(byte[] b, int off, long v) {
    LONG_LE.set(b, off, v);
  }

  /** The big-endian {@code int} at {@code b[off, off + 4)}. */
  public static int getIntBe(byte[] b, int off) {
    return (int) INT_BE.get(b, off);
  }

  /** Writes {@code v} big-endian at {@code b[off, off + 4)}. */
  public static void putIntBe(byte[] b, int off, int v) {
    INT_BE.set(b, off, v);
  }

  /** The little-endian {@code int} at {@code b[off, off + 4)} (a {@code u32} held in an int). */
  public static int getIntLe(byte[] b, int off) {
    return (int) INT_LE.get(b, off);
  }

  /** Writes {@code v} little-endian at {@code b[off, off + 4)}. */
  public static void putIntLe(byte[] b, int off, int v) {
    INT_LE.set(b, off, v);
  }

  /** The unsigned little-endian 16-bit integer at {@code b[off, off + 2)}, 0..65535. */
  public static int getU16Le(byte[] b, int off) {
    return (b[off] & 0xFF) | (b[off + 1] & 0xFF) << 8;
  }

  /** Writes the low 16 bits of {@code v} little-endian at {@code b[off, off + 2)}. */
  public static void putU16Le(byte[] b, int off, int v) {
    b[off] = (byte) v;
    b[off + 1] = (byte) (v >>> 8);
  }

  /**
   * The big-endian unsigned integer of {@code b[off, off + n)} for {@code n} in 0..8 (a sequence
   * number in a key, for instance); bytes beyond 8 shift the first ones out.
   */
  public static long getUnsignedBe(byte[] b, int off, int n) {
    long v = 0;
    for (int i = off; i < off + n; i++) {
      v = (v << 8) | (b[i] & 0xFF);
    }
    return v;
  }
}
