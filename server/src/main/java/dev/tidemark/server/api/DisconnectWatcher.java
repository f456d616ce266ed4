package dev.tidemark.server.api;

import java.io.IOException;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.SelectableChannel;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.util.Iterator;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.eclipse.jetty.io.EndPoint;
import org.eclipse.jetty.io.SelectableChannelEndPoint;
import org.eclipse.jetty.server.Request;

/**
 * Notices a client that goes away while its query runs, so that the query is cancelled (as
 * Prometheus' Go server does through the request context).
 *
 * <p>Jetty does not read an HTTP/1.1 connection while a request is being handled, so it cannot tell
 * that the peer has closed it. This watcher registers the connection's socket with a selector of
 * its own for {@code OP_READ} (a channel may be registered with several selectors; Jetty's own is
 * not reading it meanwhile) and reads nothing: a socket that becomes readable during a query has
 * been closed by the client (end of stream or reset) — or the client pipelined its next request,
 * which HTTP clients in use do not do; such a query is cancelled as well. The watch ends when the
 * query does, before its answer is written.
 *
 * <p>Most queries end within milliseconds, so a watch costs them nothing: it is only queued, and
 * the watcher registers queued watches when its select times out ({@link #PICK_UP_MILLIS}), not
 * woken for each. A query over by then was never registered; a client that goes away is noticed
 * within about that delay.
 */
final class DisconnectWatcher implements AutoCloseable {
  private static final System.Logger LOG = System.getLogger(DisconnectWatcher.class.getName());

  /** How often queued watches are registered, in milliseconds. */
  static final long PICK_UP_MILLIS = 50;

  private final Selector selector;
  private final Thread thread;
  private final Queue<Watch> added = new ConcurrentLinkedQueue<>();
  private volatile boolean closed;

  /** One watched query; {@link #end()} stops watching. */
  final class Watch {
    private final SelectableChannel channel;
    private final Runnable onGone;
    private volatile SelectionKey key;
    private volatile boolean ended;

    private Watch(SelectableChannel channel, Runnable onGone) {
      this.channel = channel;
      this.onGone = onGone;
    }

    void end() {
      ended = true; // a watch not yet registered never will be
      SelectionKey k = key;
      if (k != null) {
        k.cancel();
        selector.wakeup(); // the cancelled key leaves the channel at the next select
      }
    }
  }

  DisconnectWatcher() throws IOException {
    selector = Selector.open();
    thread = new Thread(this::loop, "tidemark-query-disconnects");
    thread.setDaemon(true);
    thread.start();
  }

  /**
   * Watches {@code request}'s connection until {@link Watch#end()}; {@code onGone} runs (on the
   * watcher's thread) if the client goes away first. Null if the connection is not a socket.
   */
  Watch watch(Request request, Runnable onGone) {
    EndPoint ep = request.getConnectionMetaData().getConnection().getEndPoint();
    if (!(ep instanceof SelectableChannelEndPoint sep) || closed) {
      return null;
    }
    Watch w = new Watch(sep.getChannel(), onGone);
    added.add(w); // registered at the watcher's next pick-up, without waking it
    return w;
  }

  private void loop() {
    while (!closed) {
      try {
        selector.select(PICK_UP_MILLIS);
        handleSelected();
        // flush keys cancelled since (a connection's next query may register it again)
        selector.selectNow();
        handleSelected();
        Watch w;
        while ((w = added.poll()) != null) {
          if (w.ended) {
            continue;
          }
          try {
            w.key = w.channel.register(selector, SelectionKey.OP_READ, w);
            if (w.ended) {
              w.key.cancel();
            }
          } catch (ClosedChannelException e) {
            w.onGone.run();
          }
        }
      } catch (IOException | RuntimeException e) {
        if (!closed) {
          LOG.log(System.Logger.Level.WARNING, "query disconnect watcher: " + e.getMessage());
        }
      }
    }
  }

  private void handleSelected() {
    Iterator<SelectionKey> it = selector.selectedKeys().iterator();
    while (it.hasNext()) {
      SelectionKey k = it.next();
      it.remove();
      Watch watch = (Watch) k.attachment();
      k.cancel();
      if (!watch.ended) {
        watch.onGone.run();
      }
    }
  }

  @Override
  public void close() {
    closed = true;
    selector.wakeup();
    try {
      thread.join(2000);
      selector.close();
    } catch (IOException e) {
      // closing
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
