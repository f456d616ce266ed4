package dev.tidemark.tsdb.codec;

import java.util.Arrays;

/**
 * Writes a record value into a byte array of a size computed beforehand: little-endian integers and
 * the RFC 0001 string encodings ({@code docs/format.md}, "Common value encodings").
 *
 * <p>Codecs compute the exact value size first (with {@link #utf8Length(String)} for strings), then
 * write: one allocation, no copy, no growth. Writing past the capacity is a bug in the caller and
 * throws {@link IllegalStateException}; a string longer than 65535 UTF-8 bytes or a string with an
 * unpaired surrogate throws {@link IllegalArgumentException}.
 *
 * <p>Not thread-safe. The array handed out by {@link #finish()} belongs to the caller.
 */
final class ValueWriter {

  /** The largest length a {@code u16} length prefix can express. */
  public static final int MAX_U16 = 0xFFFF;

  private final byte[] buf;
  private int pos;

  /** A writer over a new array of exactly {@code size} bytes. */
  public ValueWriter(int size) {
    if (size < 0) {
      throw new IllegalArgumentException("size must not be negative, was " + size);
    }
    this.buf = new byte[size];
  }

  /** Bytes written so far. */
  public int position() {
    return pos;
  }

  /** Bytes still free. */
  public int remaining() {
    return buf.length - pos;
  }

  /** Writes one unsigned byte ({@code 0..255}). */
  public ValueWriter putU8(int v) {
    if ((v & ~0xFF) != 0) {
      throw new IllegalArgumentException("u8 out of range: " + v);
    }
    ensure(1);
    buf[pos++] = (byte) v;
    return this;
  }

  /** Writes an unsigned 16-bit integer ({@code 0..65535}), little-endian. */
  public ValueWriter putU16(int v) {
    if ((v & ~0xFFFF) != 0) {
      throw new IllegalArgumentException("u16 out of range: " + v);
    }
    ensure(2);
    Bytes.putU16Le(buf, pos, v);
    pos += 2;
    return this;
  }

  /** Writes the 32 bits of {@code v} (a u32 held in an int), little-endian. */
  public ValueWriter putU32(int v) {
    ensure(4);
    Bytes.putIntLe(buf, pos, v);
    pos += 4;
    return this;
  }

  /** Writes the 64 bits of {@code v}, little-endian. */
  public ValueWriter putI64(long v) {
    ensure(8);
    Bytes.putLongLe(buf, pos, v);
    pos += 8;
    return this;
  }

  /** Writes raw bytes. */
  public ValueWriter putBytes(byte[] src, int off, int len) {
    ensure(len);
    System.arraycopy(src, off, buf, pos, len);
    pos += len;
    return this;
  }

  /**
   * Writes a {@code Utf8}: {@code u16} LE byte length, then the UTF-8 bytes. {@code ""} is written
   * as length 0 (present but empty).
   *
   * @throws IllegalArgumentException if the UTF-8 form is longer than 65535 bytes or {@code s} has
   *     an unpaired surrogate
   */
  public ValueWriter putUtf8(String s) {
    int len = utf8Length(s);
    if (len > MAX_U16) {
      throw new IllegalArgumentException(
          "string of "
              + len
              + " UTF-8 bytes exceeds the u16 length limit of 65535: "
              + abbreviate(s));
    }
    putU16(len);
    ensure(len);
    pos = putUtf8Bytes(s, buf, pos);
    return this;
  }

  /**
   * Writes an {@code OptionalNonEmptyUtf8}: same layout as {@link #putUtf8}; {@code ""} or null is
   * the absent value (length 0).
   */
  public ValueWriter putOptionalNonEmptyUtf8(String s) {
    return putUtf8(s == null ? "" : s);
  }

  /**
   * The written array, which must be exactly full.
   *
   * @throws IllegalStateException if fewer bytes were written than the size given at creation
   */
  public byte[] finish() {
    if (pos != buf.length) {
      throw new IllegalStateException(
          "value sized " + buf.length + " bytes but " + pos + " written");
    }
    return buf;
  }

  private void ensure(int n) {
    if (n > buf.length - pos) {
      throw new IllegalStateException(
          "value overflow: writing " + n + " bytes at " + pos + " of " + buf.length);
    }
  }

  // ---------------------------------------------------------------- UTF-8 helpers (no allocation)

  /** Size of {@code s} written by {@link #putUtf8}: 2 + its UTF-8 length. */
  public static int sizeOfUtf8(String s) {
    return 2 + utf8Length(s);
  }

  /**
   * The number of bytes of the UTF-8 form of {@code s}, without encoding it.
   *
   * @throws IllegalArgumentException if {@code s} has an unpaired surrogate (it has no UTF-8 form)
   *     or the UTF-8 form would not fit in an array
   */
  public static int utf8Length(String s) {
    long len = utf8LengthOrNegative(s);
    if (len < 0) {
      throw new IllegalArgumentException(
          "string has an unpaired surrogate at index " + (-len - 1) + ": " + abbreviate(s));
    }
    if (len > Integer.MAX_VALUE - 64) {
      throw new IllegalArgumentException(
          "string too long for UTF-8 encoding: " + s.length() + " chars");
    }
    return (int) len;
  }

  /**
   * The number of bytes of the UTF-8 form of {@code s}, or {@code -(i + 1)} if the char at index
   * {@code i} is an unpaired surrogate. Never throws, never allocates.
   */
  static long utf8LengthOrNegative(String s) {
    int n = s.length();
    long len = n;
    for (int i = 0; i < n; i++) {
      char c = s.charAt(i);
      if (c < 0x80) {
        continue;
      }
      if (c < 0x800) {
        len += 1;
      } else if (Character.isSurrogate(c)) {
        if (Character.isHighSurrogate(c)
            && i + 1 < n
            && Character.isLowSurrogate(s.charAt(i + 1))) {
          len += 2; // two chars, four bytes
          i++;
        } else {
          return -(i + 1L);
        }
      } else {
        len += 2;
      }
    }
    return len;
  }

  /**
   * Writes the UTF-8 bytes of {@code s} (already checked by {@link #utf8Length}) at {@code pos}.
   *
   * @return the position after the last byte written
   */
  static int putUtf8Bytes(String s, byte[] dst, int pos) {
    return putUtf8Bytes(s, 0, s.length(), dst, pos);
  }

  /**
   * Writes the UTF-8 bytes of {@code s[from, to)}; a surrogate pair must not straddle the ends.
   *
   * @return the position after the last byte written
   */
  static int putUtf8Bytes(String s, int from, int to, byte[] dst, int pos) {
    for (int i = from; i < to; i++) {
      char c = s.charAt(i);
      if (c < 0x80) {
        dst[pos++] = (byte) c;
      } else if (c < 0x800) {
        dst[pos++] = (byte) (0xC0 | (c >>> 6));
        dst[pos++] = (byte) (0x80 | (c & 0x3F));
      } else if (Character.isHighSurrogate(c)) {
        int cp = Character.toCodePoint(c, s.charAt(++i));
        dst[pos++] = (byte) (0xF0 | (cp >>> 18));
        dst[pos++] = (byte) (0x80 | ((cp >>> 12) & 0x3F));
        dst[pos++] = (byte) (0x80 | ((cp >>> 6) & 0x3F));
        dst[pos++] = (byte) (0x80 | (cp & 0x3F));
      } else {
        dst[pos++] = (byte) (0xE0 | (c >>> 12));
        dst[pos++] = (byte) (0x80 | ((c >>> 6) & 0x3F));
        dst[pos++] = (byte) (0x80 | (c & 0x3F));
      }
    }
    return pos;
  }

  static String abbreviate(String s) {
    return s.length() <= 40
        ? '"' + s + '"'
        : '"' + s.substring(0, 40) + "…\" (" + s.length() + " chars)";
  }

  @Override
  public String toString() {
    return "ValueWriter["
        + pos
        + "/"
        + buf.length
        + ": "
        + Arrays.toString(Arrays.copyOf(buf, Math.min(pos, 16)))
        + "]";
  }
}
