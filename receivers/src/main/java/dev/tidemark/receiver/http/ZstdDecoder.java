package dev.tidemark.receiver.http;

import dev.tidemark.receiver.ZstdStreams;
import dev.tidemark.receiver.http.BoundedBody.BodyTooLarge;
import dev.tidemark.receiver.http.BoundedBody.Overloaded;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;

/**
 * The {@code zstd} content coding, decoded by {@link ZstdStreams} once the body is whole, straight
 * into the body, which stops the decoding at its limit.
 */
final class ZstdDecoder extends BufferedDecoder {

  ZstdDecoder(BoundedBody out) {
    super("zstd", out);
  }

  @Override
  void decode(byte[] compressed, int length) throws IOException, BodyTooLarge, Overloaded {
    try (InputStream z = ZstdStreams.decoding(new ByteArrayInputStream(compressed, 0, length))) {
      drain(z);
    }
  }
}
