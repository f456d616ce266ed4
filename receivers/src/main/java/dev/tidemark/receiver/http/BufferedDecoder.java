package dev.tidemark.receiver.http;

import dev.tidemark.receiver.http.BoundedBody.BodyTooLarge;
import dev.tidemark.receiver.http.BoundedBody.Overloaded;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.util.Arrays;

/**
 * A {@link BodyDecoder} for codings whose decoder pulls its input ({@code zstd}, {@code snappy}):
 * the compressed bytes are kept as they arrive, no more than the body's limit (a compressed body
 * larger than the limit is refused as too large, as an uncompressed one is), and decoded when the
 * body ends, straight into the {@link BoundedBody}, which stops the decoding the moment the limit
 * is passed. Not thread-safe.
 */
abstract class BufferedDecoder implements BodyDecoder {
  /** The coding's name in messages. */
  private final String coding;

  final BoundedBody out;
  private byte[] in = new byte[8192];
  private int length;

  BufferedDecoder(String coding, BoundedBody out) {
    this.coding = coding;
    this.out = out;
  }

  @Override
  public final void write(ByteBuffer bytes) throws BodyTooLarge {
    int n = bytes.remaining();
    if (length + (long) n > out.limit()) {
      throw new BodyTooLarge();
    }
    if (length + n > in.length) {
      in = Arrays.copyOf(in, (int) Math.min(out.limit(), Math.max(length + n, 2L * in.length)));
    }
    bytes.get(in, length, n);
    length += n;
  }

  @Override
  public final void finish() throws CorruptBodyException, BodyTooLarge, Overloaded {
    if (length == 0) {
      throw new CorruptBodyException("empty body");
    }
    byte[] compressed = in;
    in = null;
    try {
      decode(compressed, length);
    } catch (IOException e) {
      throw invalid(e);
    } catch (UncheckedIOException e) {
      throw invalid(e.getCause());
    }
  }

  @Override
  public void close() {
    in = null;
  }

  /**
   * Decodes {@code compressed[0, length)} into {@link #out}; bad input is an {@link IOException}
   * (the subclass turns its library's unchecked exceptions for bad input into one).
   */
  abstract void decode(byte[] compressed, int length)
      throws IOException, CorruptBodyException, BodyTooLarge, Overloaded;

  /** Copies all of {@code decoded} into {@link #out} until its end. */
  final void drain(InputStream decoded) throws IOException, BodyTooLarge, Overloaded {
    while (true) {
      int room = out.room(); // first: it may start a new segment
      int n = decoded.read(out.segment(), out.position(), room);
      if (n < 0) {
        return;
      }
      out.advance(n); // throws BodyTooLarge the moment the limit is passed
    }
  }

  final CorruptBodyException invalid(Exception e) {
    if (e instanceof CorruptBodyException c) {
      return c;
    }
    String why = e.getMessage();
    return new CorruptBodyException(
        "invalid " + coding + " data" + (why == null || why.isBlank() ? "" : " (" + why + ")"));
  }
}
