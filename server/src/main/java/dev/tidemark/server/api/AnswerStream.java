package dev.tidemark.server.api;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.util.Arrays;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;

/**
 * Where an answer is written: held in memory up to {@link #LIMIT} bytes, then streamed. An answer
 * that fits (nearly all: a label list, a vector, an error) goes out in one write with its length
 * known, headers and body in one packet, as Go's {@code net/http} sends a handler's first 2 KB; a
 * chunked response in two writes (the data, then the last chunk) cost the small queries a round
 * through the socket more. A large answer (a matrix) is streamed as before: never more than {@code
 * LIMIT} bytes of it are held.
 *
 * <p>Not thread-safe: one per answer.
 */
final class AnswerStream extends OutputStream {
  /** The most bytes held before the answer is streamed. */
  static final int LIMIT = 64 * 1024;

  private final Response response;
  private byte[] buf = new byte[4096];
  private int len;
  private OutputStream streaming;

  AnswerStream(Response response) {
    this.response = response;
  }

  @Override
  public void write(int b) throws IOException {
    write(new byte[] {(byte) b}, 0, 1);
  }

  @Override
  public void write(byte[] b, int off, int n) throws IOException {
    if (streaming != null) {
      streaming.write(b, off, n);
      return;
    }
    if (len + n > LIMIT) {
      streaming = Content.Sink.asOutputStream(response);
      streaming.write(buf, 0, len);
      buf = null;
      streaming.write(b, off, n);
      return;
    }
    if (len + n > buf.length) {
      buf = Arrays.copyOf(buf, Math.min(LIMIT, Math.max(len + n, buf.length * 2)));
    }
    System.arraycopy(b, off, buf, len, n);
    len += n;
  }

  /** Flushes only once streaming: a held answer goes out whole in {@link #finish}. */
  @Override
  public void flush() throws IOException {
    if (streaming != null) {
      streaming.flush();
    }
  }

  /** Does nothing: {@link #finish} ends the answer. */
  @Override
  public void close() {}

  /** Sends what is held as the whole body, or ends the stream; then completes {@code callback}. */
  void finish(Callback callback) {
    if (streaming == null) {
      response.write(true, ByteBuffer.wrap(buf, 0, len), callback); // the length is known
      return;
    }
    try {
      streaming.close();
    } catch (IOException | RuntimeException e) {
      callback.failed(e);
      return;
    }
    callback.succeeded();
  }
}
