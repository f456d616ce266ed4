package dev.tidemark.receiver.http;

import dev.tidemark.receiver.http.BoundedBody.BodyTooLarge;
import dev.tidemark.receiver.http.BoundedBody.Overloaded;
import java.nio.ByteBuffer;
import java.util.zip.Inflater;

/**
 * The {@code deflate} content coding, pushed: HTTP's {@code deflate} is the zlib format (RFC 1950:
 * a two-byte header, deflate data, an Adler-32 trailer that the inflater checks), but some clients
 * send raw deflate (RFC 1951), so the first two bytes decide, as browsers and the OpenTelemetry
 * Collector's receivers accept both: a valid zlib header (method 8, window at most 32 KiB, header
 * checksum a multiple of 31) is zlib, anything else raw deflate. A preset dictionary is refused.
 * Bytes after the end of the stream are ignored.
 *
 * <p>Holds a native {@link Inflater}: {@link #close()} on every path. Not thread-safe.
 */
final class DeflateDecoder implements BodyDecoder {
  private final BoundedBody out;
  private final byte[] head = new byte[2];
  private int headLength;
  private Inflater inflater;
  private boolean finished;

  DeflateDecoder(BoundedBody out) {
    this.out = out;
  }

  @Override
  public void write(ByteBuffer in) throws CorruptBodyException, BodyTooLarge, Overloaded {
    if (finished) {
      in.position(in.limit());
      return;
    }
    if (inflater == null) {
      while (headLength < 2 && in.hasRemaining()) {
        head[headLength++] = in.get();
      }
      if (headLength < 2) {
        return;
      }
      inflater = new Inflater(!isZlibHeader(head[0] & 0xff, head[1] & 0xff));
      inflate(ByteBuffer.wrap(head));
    }
    inflate(in);
  }

  @Override
  public void finish() throws CorruptBodyException, BodyTooLarge, Overloaded {
    if (finished) {
      return;
    }
    if (inflater == null && headLength == 0) {
      throw new CorruptBodyException("empty body");
    }
    if (inflater == null) {
      // One byte: a raw deflate stream can be that short only if it is the final empty block.
      inflater = new Inflater(true);
      inflate(ByteBuffer.wrap(head, 0, headLength));
      if (finished) {
        return;
      }
    }
    throw new CorruptBodyException("unexpected end of the deflate stream");
  }

  @Override
  public void close() {
    if (inflater != null) {
      inflater.end();
    }
  }

  /** RFC 1950's header: method 8 (deflate), a window of at most 32 KiB, the check bits. */
  static boolean isZlibHeader(int cmf, int flg) {
    return (cmf & 0x0f) == 8 && (cmf >>> 4) <= 7 && ((cmf << 8) | flg) % 31 == 0;
  }

  private void inflate(ByteBuffer in) throws CorruptBodyException, BodyTooLarge, Overloaded {
    if (Inflation.inflate(inflater, in, out, null)) {
      finished = true;
      in.position(in.limit()); // whatever follows the stream is ignored
    }
  }
}
