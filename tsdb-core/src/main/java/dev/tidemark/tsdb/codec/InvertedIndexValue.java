package dev.tidemark.tsdb.codec;

import java.io.IOException;
import java.nio.ByteBuffer;
import org.roaringbitmap.RoaringBitmap;

/**
 * The InvertedIndex value ({@code docs/format.md}): a posting list of series ids as a RoaringBitmap
 * in the standard portable serialization (the cross-language format of
 * https://github.com/RoaringBitmap/RoaringFormatSpec), little-endian.
 *
 * <p>Design note: RoaringBitmap's own {@code deserialize} trusts its input (an unsorted array
 * container or a wrong cardinality yields a broken bitmap rather than an error, and a truncated
 * input fails with whatever runtime exception the buffer throws). {@link #decode} therefore walks
 * the whole serialized structure first (cookie, container count at most 65536, keys strictly
 * ascending, offsets, each container's size, array values ascending, runs ordered and inside 16
 * bits, bitmap popcount equal to the declared cardinality) and checks that it ends exactly at the
 * end of the value. Only then does it hand the bytes to RoaringBitmap. Allocation is therefore
 * bounded by the value length, whatever the header declares.
 *
 * <p>Stateless and thread-safe (the bitmaps passed in are not: see {@link #encode}).
 */
public final class InvertedIndexValue {

  private static final String WHAT = "InvertedIndex value";

  private static final int SERIAL_COOKIE_NO_RUNCONTAINER = 12346;
  private static final int SERIAL_COOKIE = 12347;
  private static final int NO_OFFSET_THRESHOLD = 4;
  private static final int MAX_CONTAINERS = 1 << 16;
  private static final int ARRAY_MAX_CARDINALITY = 4096;
  private static final int BITMAP_BYTES = 8192;

  private InvertedIndexValue() {}

  /**
   * Serializes a posting list. Calls {@link RoaringBitmap#runOptimize()} on {@code postings} first,
   * which changes its internal representation (never its contents): do not call this while another
   * thread reads the bitmap.
   *
   * @return a new array of exactly {@link RoaringBitmap#serializedSizeInBytes()} bytes
   */
  public static byte[] encode(RoaringBitmap postings) {
    postings.runOptimize();
    byte[] out = new byte[postings.serializedSizeInBytes()];
    postings.serialize(ByteBuffer.wrap(out));
    return out;
  }

  /**
   * Deserializes a posting list after validating its structure.
   *
   * @throws CorruptRecordException if the bytes are not exactly one valid portable RoaringBitmap
   */
  public static RoaringBitmap decode(byte[] value) {
    validate(value);
    RoaringBitmap bitmap = new RoaringBitmap();
    try {
      bitmap.deserialize(ByteBuffer.wrap(value));
    } catch (IOException | RuntimeException e) {
      throw new CorruptRecordException(
          WHAT + ": RoaringBitmap rejected " + value.length + " bytes: " + e, e);
    }
    int size = bitmap.serializedSizeInBytes();
    if (size != value.length) {
      throw new CorruptRecordException(
          WHAT + ": bitmap serializes to " + size + " bytes but the value has " + value.length);
    }
    return bitmap;
  }

  /**
   * Whether {@code value} is the posting list of no series, read from its header alone (the
   * portable format's cookie and container count) without checking the rest.
   *
   * @throws CorruptRecordException if the header is truncated or its cookie unknown
   */
  public static boolean isEmpty(byte[] value) {
    ValueReader r = new ValueReader(value, WHAT);
    int cookie = r.u32();
    if ((cookie & 0xFFFF) == SERIAL_COOKIE) {
      return false; // this form always has at least one container
    }
    if (cookie == SERIAL_COOKIE_NO_RUNCONTAINER) {
      return r.u32() == 0;
    }
    throw new CorruptRecordException(
        WHAT + ": unknown RoaringBitmap cookie 0x" + Integer.toHexString(cookie));
  }

  /** Walks the portable format; see the class comment. */
  private static void validate(byte[] value) {
    ValueReader r = new ValueReader(value, WHAT);
    int cookie = r.u32();
    int size;
    int runFlagsAt = -1;
    if ((cookie & 0xFFFF) == SERIAL_COOKIE) {
      size = (cookie >>> 16) + 1;
      runFlagsAt = r.position();
      r.skip((size + 7) / 8);
    } else if (cookie == SERIAL_COOKIE_NO_RUNCONTAINER) {
      size = r.u32();
      if (size < 0 || size > MAX_CONTAINERS) {
        throw new CorruptRecordException(
            WHAT + ": container count " + Integer.toUnsignedString(size) + " exceeds 65536");
      }
    } else {
      throw new CorruptRecordException(
          WHAT + ": unknown RoaringBitmap cookie 0x" + Integer.toHexString(cookie));
    }
    // Descriptive header: (key u16, cardinality-1 u16) per container. Check it fits before looping.
    if ((long) size * 4 > r.remaining()) {
      throw new CorruptRecordException(
          WHAT
              + " truncated: "
              + size
              + " containers declared but only "
              + r.remaining()
              + " bytes remain");
    }
    int headerAt = r.position();
    int prevKey = -1;
    for (int i = 0; i < size; i++) {
      int key = r.u16();
      r.u16();
      if (key <= prevKey) {
        throw new CorruptRecordException(
            WHAT
                + ": container keys not strictly ascending at container "
                + i
                + " ("
                + prevKey
                + ", "
                + key
                + ")");
      }
      prevKey = key;
    }
    boolean hasOffsets = runFlagsAt < 0 || size >= NO_OFFSET_THRESHOLD;
    int offsetsAt = r.position();
    if (hasOffsets) {
      r.skip(4 * size);
    }
    for (int i = 0; i < size; i++) {
      int containerAt = r.position();
      if (hasOffsets) {
        int declared = Bytes.getIntLe(value, offsetsAt + 4 * i);
        if (declared != containerAt) {
          throw new CorruptRecordException(
              WHAT
                  + ": container "
                  + i
                  + " declared at offset "
                  + Integer.toUnsignedString(declared)
                  + " but starts at "
                  + containerAt);
        }
      }
      int card = Bytes.getU16Le(value, headerAt + 4 * i + 2) + 1;
      boolean run = runFlagsAt >= 0 && (value[runFlagsAt + i / 8] & (1 << (i % 8))) != 0;
      if (run) {
        validateRuns(r, i, card);
      } else if (card > ARRAY_MAX_CARDINALITY) {
        validateBitmap(r, value, i, card);
      } else {
        validateArray(r, i, card);
      }
    }
    r.expectEnd();
  }

  private static void validateRuns(ValueReader r, int container, int card) {
    int runs = r.u16();
    if ((long) runs * 4 > r.remaining()) {
      throw new CorruptRecordException(
          WHAT
              + " truncated: run container "
              + container
              + " declares "
              + runs
              + " runs but only "
              + r.remaining()
              + " bytes remain");
    }
    int total = 0;
    int prevEnd = -2;
    for (int j = 0; j < runs; j++) {
      int start = r.u16();
      int end = start + r.u16(); // inclusive
      if (start <= prevEnd || end > 0xFFFF) {
        throw new CorruptRecordException(
            WHAT + ": run " + j + " of container " + container + " overlaps or overflows");
      }
      total += end - start + 1;
      prevEnd = end;
    }
    if (total != card) {
      throw new CorruptRecordException(
          WHAT
              + ": run container "
              + container
              + " holds "
              + total
              + " values but declares "
              + card);
    }
  }

  private static void validateBitmap(ValueReader r, byte[] value, int container, int card) {
    int at = r.position();
    r.skip(BITMAP_BYTES);
    int bits = 0;
    for (int i = at; i < at + BITMAP_BYTES; i += 4) {
      bits += Integer.bitCount(Bytes.getIntLe(value, i));
    }
    if (bits != card) {
      throw new CorruptRecordException(
          WHAT
              + ": bitmap container "
              + container
              + " holds "
              + bits
              + " values but declares "
              + card);
    }
  }

  private static void validateArray(ValueReader r, int container, int card) {
    if (card * 2 > r.remaining()) {
      throw new CorruptRecordException(
          WHAT
              + " truncated: array container "
              + container
              + " of "
              + card
              + " values needs "
              + card * 2
              + " bytes but only "
              + r.remaining()
              + " remain");
    }
    int prev = -1;
    for (int j = 0; j < card; j++) {
      int v = r.u16();
      if (v <= prev) {
        throw new CorruptRecordException(
            WHAT + ": array container " + container + " not strictly ascending at value " + j);
      }
      prev = v;
    }
  }
}
