package dev.tidemark.receiver.http;

import dev.tidemark.receiver.ErrorMessages;
import dev.tidemark.receiver.http.BoundedBody.BodyTooLarge;
import dev.tidemark.receiver.http.BoundedBody.Overloaded;
import java.nio.ByteBuffer;
import java.util.concurrent.TimeoutException;
import java.util.function.LongPredicate;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.io.EofException;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.util.Callback;

/**
 * The one path by which the HTTP receivers (OTLP/HTTP, remote write) read a request body and
 * answer: the declared length checked against the limit, the body read without blocking into a
 * {@link BoundedBody} (through the {@link BodyDecoder} of its {@link ContentCoding}), each way it
 * can end handed to the handler's {@link Ends}, and the answer sent <em>before</em> whatever is
 * left of the body is drained.
 *
 * <p><b>Reading.</b> {@code request.read()} until it returns null, then {@code
 * request.demand(this)} and return: no thread waits while the client is silent. Jetty runs {@link
 * #run} on a pool thread when bytes arrive; the thread that reads the last bytes calls {@link
 * Ends#complete} (decode, ingest, wait until durable). The steps of one request run one after the
 * other, never at once.
 *
 * <p><b>Answering early.</b> An answer decided before the body is whole (405, 413, 415, 503; a
 * {@code Content-Length} over the limit is 413 before a byte of the body is read) is written at
 * once. Only once it is written is what is left of the body read and discarded, also without
 * blocking and outside admission control, at most the body limit more: a client still sending then
 * reads the answer rather than a reset, and a client that declared more than it sends has its
 * answer at once instead of when the idle timeout closes the connection. When the drain ends (the
 * body's end, the limit, the client gone or silent for the idle timeout) the exchange completes,
 * and Jetty closes the connection if the body was not read to its end.
 *
 * <p>Not thread-safe: one request's steps, one at a time.
 *
 * @param <R> the handler's answer
 */
final class BodyReader<R> implements Runnable {

  /**
   * How a body read ends, in the handler's terms; each returns the answer. Called on the thread of
   * the step that decided it.
   */
  interface Ends<R> {
    /** The body is whole: decode and ingest it (blocking until durable). */
    R complete(BoundedBody body);

    /**
     * The body is over the limit.
     *
     * @param declaredLength the {@code Content-Length} when that was over, else -1 (the body passed
     *     the limit while read or decompressed)
     */
    R tooLarge(long declaredLength);

    /** The in-flight limit refused the body's bytes. */
    R overloaded();

    /** The body's coding cannot be decoded (bad header, checksum or data, cut short). */
    R invalidBody(ContentCoding coding, CorruptBodyException e);

    /**
     * The body could not be read to its end: the connection was reset or closed, went silent for
     * the idle timeout, or failed.
     *
     * @param why in words, for the answer
     */
    R unreadable(String why);

    /**
     * An unexpected failure (an {@link OutOfMemoryError} among them) while reading or ingesting.
     */
    R failed(Throwable t);

    /**
     * Releases what the request holds and writes {@code answer}, completing {@code done} when it is
     * written (or failing it).
     */
    void send(R answer, Callback done);
  }

  private final Request request;
  private final Callback callback;
  private final long maxBodyBytes;
  private final Ends<R> ends;
  private BoundedBody body;
  private ContentCoding coding = ContentCoding.IDENTITY;
  private BodyDecoder decoder;

  /** The body was read to its end, or its reading failed: nothing to drain. */
  private boolean bodyDone;

  /**
   * @param callback the handler's callback, completed once the answer is written and the body
   *     drained
   */
  BodyReader(Request request, Callback callback, long maxBodyBytes, Ends<R> ends) {
    this.request = request;
    this.callback = callback;
    this.maxBodyBytes = maxBodyBytes;
    this.ends = ends;
  }

  /**
   * Starts reading the body, or answers 413 at once if its declared length is over the limit (not
   * checked for a compressed body, whose length says little about what it decodes to; its decoder
   * stops at the limit).
   *
   * @param coding the body's {@code Content-Encoding}
   * @param reserve admits the body's (decoded) bytes against the in-flight limit
   */
  void read(ContentCoding coding, LongPredicate reserve) {
    this.coding = coding;
    boolean compressed = coding != ContentCoding.IDENTITY;
    R early;
    try {
      long declared = request.getLength();
      if (!compressed && declared > maxBodyBytes) {
        early = ends.tooLarge(declared);
      } else {
        int firstSegment =
            !compressed && declared >= 0
                ? (int) Math.min(declared, BoundedBody.FIRST_SEGMENT_BYTES)
                : BoundedBody.FIRST_SEGMENT_BYTES;
        body = new BoundedBody(maxBodyBytes, firstSegment, reserve);
        decoder = coding.decoder(body);
        run();
        return;
      }
    } catch (RuntimeException | Error e) {
      early = ends.failed(e);
    }
    answer(early);
  }

  /** Reads what the connection has; registers for more, or answers once the outcome is known. */
  @Override
  public void run() {
    R answer;
    try {
      answer = readAvailable();
      if (answer == null) {
        return; // demand registered: no thread waits for the client
      }
    } catch (RuntimeException | Error e) {
      answer = ends.failed(e);
    }
    answer(answer);
  }

  /** The answer once the body is read (or refused), or null after registering for more. */
  private R readAvailable() {
    try {
      while (true) {
        Content.Chunk chunk = request.read();
        if (chunk == null) {
          request.demand(this);
          return null;
        }
        if (Content.Chunk.isFailure(chunk)) {
          bodyDone = true;
          return ends.unreadable(readFailure(chunk.getFailure(), !chunk.isLast()));
        }
        boolean last = chunk.isLast();
        try {
          ByteBuffer bytes = chunk.getByteBuffer();
          if (decoder != null) {
            decoder.write(bytes);
          } else {
            body.write(bytes);
          }
        } finally {
          chunk.release();
        }
        if (last) {
          bodyDone = true;
          if (decoder != null) {
            decoder.finish();
            decoder.close();
            decoder = null;
          }
          BoundedBody whole = body;
          body = null; // what the handler decodes from it is all it needs
          return ends.complete(whole);
        }
      }
    } catch (BodyTooLarge e) {
      return ends.tooLarge(-1);
    } catch (Overloaded e) {
      return ends.overloaded();
    } catch (CorruptBodyException e) {
      return ends.invalidBody(coding, e);
    }
  }

  /**
   * Why a body could not be read to its end, for the answer: the connection's idle timeout (the
   * endpoint's, which a stop shortens), an early end or reset, or the failure itself.
   *
   * @param transientFailure the failure chunk was not the last one: Jetty delivers an idle timeout
   *     that way
   */
  private String readFailure(Throwable failure, boolean transientFailure) {
    if (transientFailure || failure instanceof TimeoutException) {
      long idle = request.getConnectionMetaData().getConnection().getEndPoint().getIdleTimeout();
      return "no bytes received for " + idle + " ms (idle timeout); the connection is closed";
    }
    if (failure instanceof EofException) {
      return "the connection was closed or reset before the body was complete";
    }
    return ErrorMessages.describe(failure, "the connection failed");
  }

  /**
   * Sends {@code answer} at once (an answer decided before the body was whole included); once it is
   * written, drains what is left of the body, then completes the exchange. A failure to build or
   * write the answer fails the callback (Jetty then aborts the exchange) instead of escaping into a
   * demand callback.
   */
  void answer(R answer) {
    if (decoder != null) {
      decoder.close();
      decoder = null;
    }
    body = null;
    Callback done =
        bodyDone ? callback : Callback.from(() -> new Drain(maxBodyBytes).run(), callback::failed);
    bodyDone = true;
    try {
      ends.send(answer, done);
    } catch (RuntimeException | Error e) {
      callback.failed(e);
    }
  }

  /**
   * Reads and discards what is left of the body after the answer (at most {@code left} more bytes),
   * without blocking, then completes the exchange. Beyond that, or when the connection fails, Jetty
   * closes the connection.
   */
  private final class Drain implements Runnable {
    private long left;

    Drain(long left) {
      this.left = left;
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
        // The connection is failing; Jetty closes it when the exchange completes.
      }
      callback.succeeded();
    }
  }
}
