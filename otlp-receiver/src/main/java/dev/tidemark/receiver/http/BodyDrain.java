package dev.tidemark.receiver.http;

import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Request;

/**
 * Reads and discards what is left of a request body (at most {@code left} more bytes, outside
 * admission control), without blocking, then runs {@code answer}: a client still sending gets the
 * answer rather than a broken pipe, e.g. a 413 or 503 decided before the body was read. Beyond
 * that, or when the connection fails, Jetty closes the connection after the answer. Shared by the
 * HTTP receivers.
 */
final class BodyDrain implements Runnable {
  private final Request request;
  private final Runnable answer;
  private long left;

  BodyDrain(Request request, long left, Runnable answer) {
    this.request = request;
    this.left = left;
    this.answer = answer;
  }

  @Override
  public void run() {
    try {
      while (true) {
        Content.Chunk chunk = request.read();
        if (chunk == null) {
          request.demand(this);
          return;
        }
        if (Content.Chunk.isFailure(chunk)) {
          break; // the client is gone, broke the body or went silent: Jetty closes the connection
        }
        boolean last = chunk.isLast();
        left -= chunk.remaining();
        chunk.release();
        if (last || left < 0) {
          break;
        }
      }
    } catch (RuntimeException e) {
      // The connection is failing: the answer fails too and Jetty closes it.
    }
    answer.run();
  }
}
