package dev.tidemark.receiver.http;

import dev.tidemark.receiver.http.BoundedBody.BodyTooLarge;
import dev.tidemark.receiver.http.BoundedBody.Overloaded;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.zip.CRC32C;
import org.xerial.snappy.Snappy;

/**
 * The {@code snappy} content codings, decoded once the body is whole: the block format (what
 * Prometheus' remote write sends: a varint of the decoded length, then the block; the length is
 * checked against the limit before anything is allocated for it) and the framed format (Google's
 * framing: a stream identifier, then chunks of at most 64 KiB decoded, each with a masked CRC-32C
 * of its data, checked). For {@code Content-Encoding: snappy} the first bytes decide, as the
 * OpenTelemetry Collector's receivers do since their clients sent framed data under that name: the
 * framed stream identifier means framed, anything else block; {@code x-snappy-framed} is framed
 * only.
 */
final class SnappyDecoder extends BufferedDecoder {
  /** The framed format's stream identifier chunk: type 0xff, length 6, "sNaPpY". */
  private static final byte[] STREAM_IDENTIFIER = {
    (byte) 0xff, 6, 0, 0, 's', 'N', 'a', 'P', 'p', 'Y'
  };

  private static final int MAX_FRAMED_CHUNK_DATA = 65536;

  private final boolean framedOnly;

  SnappyDecoder(BoundedBody out, boolean framedOnly) {
    super(framedOnly ? "framed snappy" : "snappy", out);
    this.framedOnly = framedOnly;
  }

  /** Whether {@code b[0, length)} starts with the framed format's stream identifier. */
  static boolean isFramed(byte[] b, int length) {
    return sameIdentifier(b, 0, length);
  }

  @Override
  void decode(byte[] compressed, int length)
      throws IOException, CorruptBodyException, BodyTooLarge, Overloaded {
    if (framedOnly || isFramed(compressed, length)) {
      decodeFramed(compressed, length);
    } else {
      decodeBlock(compressed, length);
    }
  }

  private void decodeBlock(byte[] compressed, int length)
      throws IOException, BodyTooLarge, Overloaded {
    int n;
    try {
      n = Snappy.uncompressedLength(compressed, 0, length);
    } catch (IOException | RuntimeException e) {
      throw new CorruptBodyException("invalid snappy data (corrupt input)");
    }
    if (n < 0 || n > out.limit()) {
      throw new BodyTooLarge();
    }
    byte[] raw = new byte[n];
    int got;
    try {
      got = Snappy.uncompress(compressed, 0, length, raw, 0);
    } catch (IOException | RuntimeException e) {
      throw new CorruptBodyException("invalid snappy data (corrupt input)");
    }
    if (got != n) {
      throw new CorruptBodyException("invalid snappy data (corrupt input)");
    }
    out.write(ByteBuffer.wrap(raw));
  }

  private void decodeFramed(byte[] b, int length) throws IOException, BodyTooLarge, Overloaded {
    if (!isFramed(b, length)) {
      throw new CorruptBodyException("invalid framed snappy data (no stream identifier)");
    }
    byte[] chunk = new byte[MAX_FRAMED_CHUNK_DATA];
    CRC32C crc = new CRC32C();
    int p = 0;
    while (p < length) {
      if (length - p < 4) {
        throw new CorruptBodyException("invalid framed snappy data (truncated chunk header)");
      }
      int type = b[p] & 0xff;
      int size = (b[p + 1] & 0xff) | (b[p + 2] & 0xff) << 8 | (b[p + 3] & 0xff) << 16;
      p += 4;
      if (size > length - p) {
        throw new CorruptBodyException("invalid framed snappy data (truncated chunk)");
      }
      switch (type) {
        case 0x00, 0x01 -> {
          if (size < 4) {
            throw new CorruptBodyException("invalid framed snappy data (chunk without checksum)");
          }
          int expected =
              (b[p] & 0xff)
                  | (b[p + 1] & 0xff) << 8
                  | (b[p + 2] & 0xff) << 16
                  | (b[p + 3] & 0xff) << 24;
          int dataAt = p + 4;
          int dataLength = size - 4;
          byte[] data;
          int n;
          if (type == 0x01) {
            if (dataLength > MAX_FRAMED_CHUNK_DATA) {
              throw new CorruptBodyException("invalid framed snappy data (chunk over 64 KiB)");
            }
            data = b;
            n = dataLength;
          } else {
            int declared;
            try {
              declared = Snappy.uncompressedLength(b, dataAt, dataLength);
            } catch (IOException | RuntimeException e) {
              throw new CorruptBodyException("invalid framed snappy data (corrupt chunk)");
            }
            if (declared < 0 || declared > MAX_FRAMED_CHUNK_DATA) {
              throw new CorruptBodyException("invalid framed snappy data (chunk over 64 KiB)");
            }
            try {
              n = Snappy.uncompress(b, dataAt, dataLength, chunk, 0);
            } catch (IOException | RuntimeException e) {
              throw new CorruptBodyException("invalid framed snappy data (corrupt chunk)");
            }
            data = chunk;
            dataAt = 0;
          }
          crc.reset();
          crc.update(data, dataAt, n);
          if (mask((int) crc.getValue()) != expected) {
            throw new CorruptBodyException("invalid framed snappy data (checksum mismatch)");
          }
          out.write(ByteBuffer.wrap(data, dataAt, n));
        }
        case 0xff -> {
          if (size != 6 || !sameIdentifier(b, p - 4, length)) {
            throw new CorruptBodyException("invalid framed snappy data (bad stream identifier)");
          }
        }
        default -> {
          if (type < 0x80) {
            throw new CorruptBodyException(
                "invalid framed snappy data (reserved chunk type 0x"
                    + Integer.toHexString(type)
                    + ")");
          }
          // 0x80-0xfe: skippable (0xfe is padding)
        }
      }
      p += size;
    }
  }

  /** Whether {@code b[at, length)} starts with the stream identifier chunk. */
  private static boolean sameIdentifier(byte[] b, int at, int length) {
    if (length - at < STREAM_IDENTIFIER.length) {
      return false;
    }
    for (int i = 0; i < STREAM_IDENTIFIER.length; i++) {
      if (b[at + i] != STREAM_IDENTIFIER[i]) {
        return false;
      }
    }
    return true;
  }

  /** The framing format's checksum mask. */
  static int mask(int crc) {
    return ((crc >>> 15) | (crc << 17)) + 0xa282ead8;
  }
}
