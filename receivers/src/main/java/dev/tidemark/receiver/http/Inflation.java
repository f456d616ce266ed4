package dev.tidemark.receiver.http;

import dev.tidemark.receiver.http.BoundedBody.BodyTooLarge;
import dev.tidemark.receiver.http.BoundedBody.Overloaded;
import java.nio.ByteBuffer;
import java.util.zip.CRC32;
import java.util.zip.DataFormatException;
import java.util.zip.Inflater;

/** The inflate step shared by the gzip and deflate decoders. */
final class Inflation {
  private Inflation() {}

  /**
   * Inflates what it can of {@code in} into {@code out} (whose limit stops it the moment it is
   * passed), updating {@code crc} (if not null) with the bytes produced.
   *
   * @return true when the deflate stream ended ({@code in}'s position is then just after it); false
   *     when it needs more input ({@code in} is used up)
   */
  static boolean inflate(Inflater inflater, ByteBuffer in, BoundedBody out, CRC32 crc)
      throws CorruptBodyException, BodyTooLarge, Overloaded {
    inflater.setInput(in);
    while (true) {
      int room = out.room(); // first: it may start a new segment
      byte[] segment = out.segment();
      int at = out.position();
      int before = in.position();
      int n;
      try {
        n = inflater.inflate(segment, at, room);
      } catch (DataFormatException e) {
        throw new CorruptBodyException(
            "invalid deflate data" + (e.getMessage() == null ? "" : " (" + e.getMessage() + ")"));
      }
      if (n > 0) {
        if (crc != null) {
          crc.update(segment, at, n);
        }
        out.advance(n); // throws BodyTooLarge the moment the limit is passed
      }
      if (inflater.finished()) {
        return true;
      }
      if (inflater.needsDictionary()) {
        throw new CorruptBodyException("invalid deflate data (needs a preset dictionary)");
      }
      if (n == 0 && (inflater.needsInput() || in.position() == before)) {
        if (in.hasRemaining()) {
          throw new CorruptBodyException("invalid deflate data");
        }
        return false; // wait for more input
      }
    }
  }
}
