package dev.tidemark.receiver.http;

import dev.tidemark.receiver.http.BoundedBody.BodyTooLarge;
import dev.tidemark.receiver.http.BoundedBody.Overloaded;
import java.nio.ByteBuffer;

/**
 * A push decoder of one request body's content coding ({@link ContentCoding}): compressed bytes are
 * written as they arrive, in whatever pieces they come, and the decoded bytes go into a {@link
 * BoundedBody}, which stops the decoding the moment the body passes its limit (so a compression
 * "bomb" costs no more than a legitimate body of the limit's size). No thread waits for input.
 *
 * <p>Not thread-safe; {@link #close()} on every path (some hold native memory).
 */
interface BodyDecoder extends AutoCloseable {

  /** Decodes all of {@code in} (its position advances), or keeps it until it can. */
  void write(ByteBuffer in) throws CorruptBodyException, BodyTooLarge, Overloaded;

  /**
   * The body ended: decodes what is kept and checks that the stream ended where it may.
   *
   * @throws CorruptBodyException if the body is empty or the stream was cut short
   */
  void finish() throws CorruptBodyException, BodyTooLarge, Overloaded;

  @Override
  void close();
}
