package dev.tidemark.tsdb.engine;

import dev.tidemark.tsdb.kv.KvCursor;
import dev.tidemark.tsdb.kv.KvReader;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;

/**
 * Scans the records under a key prefix on a second thread, decoding each there, and hands the
 * decoded records to the caller in batches, in key order: the caller (recovery, a reopen, under the
 * write lock) only inserts while the other core reads the store and decodes. At most {@link
 * #QUEUED_BATCHES} batches wait, so the memory is bounded.
 *
 * <p>One caller thread. {@link #close()} stops the scan and waits for the thread, also when the
 * caller gives up early.
 *
 * @param <T> the decoded record
 */
final class PrefetchingScan<T> implements AutoCloseable {

  /** Decodes one record; runs on the scan thread. */
  interface Decoder<T> {
    T decode(byte[] key, byte[] value);
  }

  static final int BATCH = 4096;
  static final int QUEUED_BATCHES = 4;

  private static final List<Object> END = new ArrayList<>();

  private final BlockingQueue<List<Object>> queue = new ArrayBlockingQueue<>(QUEUED_BATCHES + 1);
  private final Thread thread;
  private volatile boolean cancelled;
  private volatile Throwable failure;
  private boolean ended;

  PrefetchingScan(KvReader kv, byte[] prefix, Decoder<T> decoder, String threadName) {
    thread = new Thread(() -> run(kv, prefix, decoder), threadName);
    thread.setDaemon(true);
    thread.start();
  }

  private void run(KvReader kv, byte[] prefix, Decoder<T> decoder) {
    try (KvCursor c = kv.scanPrefix(prefix)) {
      List<Object> batch = new ArrayList<>(BATCH);
      while (!cancelled && c.next()) {
        batch.add(decoder.decode(c.key(), c.value()));
        if (batch.size() == BATCH) {
          queue.put(batch);
          batch = new ArrayList<>(BATCH);
        }
      }
      if (!batch.isEmpty()) {
        queue.put(batch);
      }
    } catch (InterruptedException e) {
      return; // cancelled: nobody takes more batches
    } catch (Throwable t) {
      failure = t;
    }
    try {
      queue.put(END);
    } catch (InterruptedException e) {
      // cancelled
    }
  }

  /**
   * The next batch in key order, or null after the last.
   *
   * @throws RuntimeException (or Error) what decoding or the scan threw, at the point it threw
   */
  @SuppressWarnings("unchecked")
  List<T> next() {
    if (ended) {
      return null;
    }
    List<Object> batch;
    try {
      batch = queue.take();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while scanning", e);
    }
    if (batch != END) {
      return (List<T>) batch;
    }
    ended = true;
    HelperThreads.rethrow(failure, "scan failed");
    return null;
  }

  @Override
  public void close() {
    if (!ended) {
      cancelled = true;
      thread.interrupt();
    }
    HelperThreads.join(thread);
  }
}
