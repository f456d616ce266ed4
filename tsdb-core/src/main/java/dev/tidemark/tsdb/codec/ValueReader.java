package dev.tidemark.tsdb.codec;

import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

/**
 * Reads a record value: little-endian integers and the RFC 0001 string encodings ({@code
 * docs/format.md}, "Common value encodings"), checking bounds before every read.
 *
 * <p>Every problem with the bytes (too few, invalid UTF-8, trailing bytes when {@link #expectEnd()}
 * is called) throws {@link CorruptRecordException} naming the record and the offset; never an
 * {@link IndexOutOfBoundsException}. Strings are decoded strictly: malformed or overlong UTF-8,
 * encoded surrogates and code points above U+10FFFF are rejected, never replaced.
 *
 * <p>Not thread-safe. The reader does not copy the array; the caller must not change it while
 * reading.
 */
final class ValueReader {

  private static final ThreadLocal<CharsetDecoder> UTF8_DECODER =
      ThreadLocal.withInitial(
          () ->
              StandardCharsets.UTF_8
                  .newDecoder()
                  .onMalformedInput(CodingErrorAction.REPORT)
                  .onUnmappableCharacter(CodingErrorAction.REPORT));

  private final byte[] buf;
  private final int limit;
  private final String what;
  private int pos;

  /**
   * A reader over all of {@code buf}.
   *
   * @param what the record being read, for error messages (e.g. "ForwardIndex value")
   */
  public ValueReader(byte[] buf, String what) {
    this(buf, 0, buf.length, what);
  }

  /** A reader over {@code buf[offset, offset+length)}. */
  public ValueReader(byte[] buf, int offset, int length, String what) {
    if (offset < 0 || length < 0 || offset > buf.length - length) {
      throw new IllegalArgumentException(
          "range [" + offset + ", +" + length + ") outside an array of " + buf.length);
    }
    this.buf = buf;
    this.pos = offset;
    this.limit = offset + length;
    this.what = what;
  }

  /** The offset of the next byte to read in the array. */
  public int position() {
    return pos;
  }

  /** Bytes left to read. */
  public int remaining() {
    return limit - pos;
  }

  /** Whether any byte is left. */
  public boolean hasRemaining() {
    return pos < limit;
  }

  /** Reads an unsigned byte. */
  public int u8() {
    need(1, "u8");
    return buf[pos++] & 0xFF;
  }

  /** Reads an unsigned little-endian 16-bit integer. */
  public int u16() {
    need(2, "u16");
    int v = Bytes.getU16Le(buf, pos);
    pos += 2;
    return v;
  }

  /**
   * Reads a little-endian 32-bit integer (a u32 returned in an int; use {@link
   * Integer#toUnsignedLong}).
   */
  public int u32() {
    need(4, "u32");
    int v = Bytes.getIntLe(buf, pos);
    pos += 4;
    return v;
  }

  /** Reads a little-endian 64-bit integer. */
  public long i64() {
    need(8, "i64");
    long v = Bytes.getLongLe(buf, pos);
    pos += 8;
    return v;
  }

  /** Skips {@code n} bytes. */
  public void skip(int n) {
    if (n < 0 || n > limit - pos) {
      need(n, n + " bytes");
    }
    pos += n;
  }

  /** Reads {@code n} bytes into a new array. */
  public byte[] bytes(int n) {
    if (n < 0 || n > limit - pos) {
      need(n, n + " bytes");
    }
    byte[] out = new byte[n];
    System.arraycopy(buf, pos, out, 0, n);
    pos += n;
    return out;
  }

  /** Reads a {@code Utf8}: {@code u16} LE length, then that many bytes of valid UTF-8. */
  public String utf8() {
    int len = u16();
    if (len > limit - pos) { // the message is built only on failure: this runs per label
      need(len, "string of " + len + " bytes");
    }
    String s = decodeUtf8(buf, pos, len, what);
    pos += len;
    return s;
  }

  /**
   * Reads an {@code OptionalNonEmptyUtf8}: like {@link #utf8()}; length 0 is the absent value,
   * returned as {@code ""}.
   */
  public String optionalNonEmptyUtf8() {
    return utf8();
  }

  /**
   * Checks that every byte was consumed.
   *
   * @throws CorruptRecordException if bytes are left over
   */
  public void expectEnd() {
    if (pos != limit) {
      throw new CorruptRecordException(
          what + ": " + (limit - pos) + " unexpected trailing bytes at offset " + pos);
    }
  }

  private void need(int n, String field) {
    if (n < 0 || n > limit - pos) {
      throw new CorruptRecordException(
          what
              + " truncated: need "
              + field
              + " at offset "
              + pos
              + " but "
              + (limit - pos)
              + " bytes remain");
    }
  }

  /**
   * Decodes {@code len} bytes at {@code off} as strict UTF-8.
   *
   * @param what the record, for the error message
   * @throws CorruptRecordException if the bytes are not valid UTF-8
   */
  public static String decodeUtf8(byte[] b, int off, int len, String what) {
    boolean ascii = true;
    for (int i = off, end = off + len; i < end; i++) {
      if (b[i] < 0) {
        ascii = false;
        break;
      }
    }
    if (ascii) {
      // Every byte < 0x80: valid UTF-8 by construction, and US-ASCII decoding is the fast path.
      return new String(b, off, len, StandardCharsets.US_ASCII);
    }
    CharsetDecoder decoder = UTF8_DECODER.get();
    try {
      CharBuffer chars = decoder.decode(ByteBuffer.wrap(b, off, len));
      return chars.toString();
    } catch (CharacterCodingException e) {
      throw new CorruptRecordException(
          what + ": invalid UTF-8 in the " + len + " bytes at offset " + off, e);
    }
  }
}
