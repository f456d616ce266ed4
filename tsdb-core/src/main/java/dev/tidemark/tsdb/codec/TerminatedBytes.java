package dev.tidemark.tsdb.codec;

/**
 * The RFC 0001 "terminated bytes" encoding of a key field that is followed by another field ({@code
 * docs/format.md}, "Terminated bytes"): every {@code 0x00} becomes {@code 0x01 0x01}, every {@code
 * 0x01} becomes {@code 0x01 0x02}, all other bytes are copied, and a single {@code 0x00} ends the
 * field.
 *
 * <p>Design note: the encoding is prefix-free (the terminator {@code 0x00} never occurs inside an
 * encoded field) and order-preserving: for raw byte strings {@code a < b} (unsigned, lexicographic,
 * a proper prefix first), {@code enc(a) < enc(b)}, and when one is a proper prefix of the other the
 * terminator {@code 0x00} sorts below any continuation ({@code 0x01..0xFF}). So the keys of all
 * values of one label name form one contiguous prefix range, and keys sort by (name, value). It is
 * the same scheme as FoundationDB's tuple layer and the RFC's {@code terminated_bytes::serialize}.
 *
 * <p>Stateless and thread-safe.
 */
final class TerminatedBytes {

  /** The byte that ends an encoded field. */
  public static final int TERMINATOR = 0x00;

  /** The byte that starts an escape pair. */
  public static final int ESCAPE = 0x01;

  private TerminatedBytes() {}

  /** Length of {@code raw} once encoded, terminator included. */
  public static int encodedLength(byte[] raw) {
    int len = raw.length + 1;
    for (byte b : raw) {
      if ((b & 0xFE) == 0) {
        len++;
      }
    }
    return len;
  }

  /** Encodes {@code raw} into a new array, terminator included. */
  public static byte[] encode(byte[] raw) {
    byte[] out = new byte[encodedLength(raw)];
    encode(raw, out, 0);
    return out;
  }

  /**
   * Writes the encoding of {@code raw} (terminator included) at {@code off}.
   *
   * @return the offset after the terminator
   */
  public static int encode(byte[] raw, byte[] dst, int off) {
    for (byte b : raw) {
      if ((b & 0xFE) == 0) {
        dst[off++] = ESCAPE;
        dst[off++] = (byte) (b + 1);
      } else {
        dst[off++] = b;
      }
    }
    dst[off++] = TERMINATOR;
    return off;
  }

  /**
   * Length of the UTF-8 form of {@code s} once encoded, terminator included, without encoding it.
   *
   * @throws IllegalArgumentException if {@code s} has an unpaired surrogate
   */
  public static int encodedLength(String s) {
    int len = ValueWriter.utf8Length(s) + 1;
    for (int i = 0, n = s.length(); i < n; i++) {
      if (s.charAt(i) <= 1) {
        len++; // U+0000 and U+0001 are the single UTF-8 bytes 0x00 and 0x01
      }
    }
    return len;
  }

  /**
   * Writes the encoding of the UTF-8 form of {@code s} (checked by {@link #encodedLength(String)})
   * at {@code off}, terminator included.
   *
   * @return the offset after the terminator
   */
  public static int encode(String s, byte[] dst, int off) {
    int n = s.length();
    int i = 0;
    while (i < n) {
      // Runs without U+0000/U+0001 go through the plain UTF-8 writer.
      int j = i;
      while (j < n && s.charAt(j) > 1) {
        j++;
      }
      if (j > i) {
        off = ValueWriter.putUtf8Bytes(s, i, j, dst, off);
      }
      if (j < n) {
        dst[off++] = ESCAPE;
        dst[off++] = (byte) (s.charAt(j) + 1);
        j++;
      }
      i = j;
    }
    dst[off++] = TERMINATOR;
    return off;
  }

  /**
   * Finds the end of the encoded field that starts at {@code off}, checking every escape pair.
   *
   * @param limit the end of the readable bytes (exclusive)
   * @return the offset just after the terminator
   * @throws CorruptRecordException if no terminator comes before {@code limit}, or an escape byte
   *     is followed by anything but {@code 0x01}/{@code 0x02}
   */
  public static int end(byte[] src, int off, int limit) {
    int i = off;
    while (i < limit) {
      int b = src[i] & 0xFF;
      if (b == TERMINATOR) {
        return i + 1;
      }
      if (b == ESCAPE) {
        if (i + 1 >= limit) {
          throw new CorruptRecordException(
              "terminated bytes: escape at offset " + i + " is cut off");
        }
        int e = src[i + 1] & 0xFF;
        if (e != 0x01 && e != 0x02) {
          throw new CorruptRecordException(
              "terminated bytes: invalid escape 01 "
                  + String.format("%02x", e)
                  + " at offset "
                  + i);
        }
        i += 2;
      } else {
        i++;
      }
    }
    throw new CorruptRecordException(
        "terminated bytes: no terminator between offsets " + off + " and " + limit);
  }

  /**
   * Decodes the encoded field {@code src[off, end)} as returned by {@link #end}; {@code end} is
   * just after the terminator.
   *
   * @return the raw bytes (a new array)
   */
  public static byte[] decode(byte[] src, int off, int end) {
    int escapes = 0;
    for (int i = off; i < end - 1; i++) {
      if (src[i] == ESCAPE) {
        escapes++;
        i++;
      }
    }
    byte[] out = new byte[end - 1 - off - escapes];
    int o = 0;
    for (int i = off; i < end - 1; i++) {
      byte b = src[i];
      out[o++] = b == ESCAPE ? (byte) (src[++i] - 1) : b;
    }
    return out;
  }

  /**
   * Decodes {@code encoded}, which must hold exactly one encoded field, terminator last.
   *
   * @return the raw bytes (a new array)
   * @throws CorruptRecordException on a missing terminator, a bad escape or bytes after the
   *     terminator
   */
  public static byte[] decode(byte[] encoded) {
    int end = end(encoded, 0, encoded.length);
    if (end != encoded.length) {
      throw new CorruptRecordException(
          "terminated bytes: " + (encoded.length - end) + " bytes after the terminator");
    }
    return decode(encoded, 0, end);
  }

  /**
   * Decodes the encoded field {@code src[off, end)} (as returned by {@link #end}) as strict UTF-8.
   *
   * @throws CorruptRecordException if the raw bytes are not valid UTF-8
   */
  static String decodeUtf8(byte[] src, int off, int end, String what) {
    for (int i = off; i < end - 1; i++) {
      if (src[i] == ESCAPE) {
        byte[] raw = decode(src, off, end);
        return ValueReader.decodeUtf8(raw, 0, raw.length, what);
      }
    }
    return ValueReader.decodeUtf8(src, off, end - 1 - off, what); // no escapes: decode in place
  }
}
