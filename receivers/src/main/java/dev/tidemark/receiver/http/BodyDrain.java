package dev.tidemark.receiver.http;

import dev.tidemark.receiver.ErrorMessages;
import java.util.concurrent.TimeoutException;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.io.EofException;
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

  /**
   * Why a body could not be read to its end, for the answer: the connection's idle timeout (the
   * endpoint's, which a stop shortens), an early end or reset, or the failure itself.
   *
   * @param transientFailure the failure chunk was not the last one: Jetty delivers an idle timeout
   *     that way
   */
  static String readFailure(Request request, Throwable failure, boolean transientFailure) {
    if (transientFailure || failure instanceof TimeoutException) {
      long idle = request.getConnectionMetaData().getConnection().getEndPoint().getIdleTimeout();
      return "no bytes received for " + idle + " ms (idle timeout); the connection is closed";
    }
    if (failure instanceof EofException) {
      return "the connection was closed or reset before the body was complete";
    }
    return ErrorMessages.describe(failure, "the connection failed");
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
