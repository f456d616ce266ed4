package dev.tidemark.server.api;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Where queries run: at most {@code maxConcurrency} at once, at most {@code maxQueued} more waiting
 * in order; one beyond that is refused at once ({@link ApiError.Type#UNAVAILABLE}, 503), so a burst
 * of queries never piles up threads or memory.
 *
 * <h2>Design note: on the caller's thread when a slot is free</h2>
 *
 * <p>A query that finds a free slot (and no query waiting before it: the slots are a fair {@link
 * Semaphore}) runs on the thread that submits it, as Prometheus runs a query on its request's
 * goroutine: handing it to another thread cost 60–170 µs on a 2-core VM (a thread wake-up), more
 * than a small query's whole evaluation. At most {@code maxInline} queries run so at once, so that
 * the HTTP server (whose threads submit) always keeps threads for its other endpoints; a query
 * beyond that, or one that must wait for a slot, goes to this pool's own threads, which take the
 * slot in arrival order. Ingest never runs on these threads either way.
 */
final class QueryPool implements AutoCloseable {
  /** How often a query waiting for a slot looks whether the pool stops. */
  private static final long WAIT_CHECK_MILLIS = 50;

  private final int maxConcurrency;
  private final int maxQueued;
  private final int maxInline;
  private final Semaphore slots;
  private final AtomicInteger waiting = new AtomicInteger();
  private final AtomicInteger inline = new AtomicInteger();
  private final ThreadPoolExecutor executor;
  private volatile boolean closing;

  QueryPool(int maxConcurrency, int maxQueued, int maxInline) {
    this.maxConcurrency = maxConcurrency;
    this.maxQueued = maxQueued;
    this.maxInline = maxInline;
    this.slots = new Semaphore(maxConcurrency, true);
    AtomicInteger n = new AtomicInteger();
    // As many threads as slots: a thread holds a query from the queue until it has a slot. The
    // queue is bounded by the waiting count, not by its capacity.
    executor =
        new ThreadPoolExecutor(
            maxConcurrency,
            maxConcurrency,
            60,
            TimeUnit.SECONDS,
            new LinkedBlockingQueue<>(),
            r -> {
              Thread t = new Thread(r, "tidemark-query-" + n.incrementAndGet());
              t.setDaemon(true);
              return t;
            });
    executor.allowCoreThreadTimeOut(true);
  }

  /**
   * Runs {@code task} now on this thread if a slot is free, else when one is (on a pool thread).
   * {@code onRefused} answers the client of a query that never runs because the pool stops first.
   *
   * @throws ApiError unavailable when {@code maxQueued} queries already wait
   */
  void submit(Runnable task, Runnable onRefused) {
    if (closing) {
      onRefused.run();
      return;
    }
    if (inline.incrementAndGet() <= maxInline) {
      boolean slot;
      try {
        slot = slots.tryAcquire(0, TimeUnit.NANOSECONDS); // fair: never ahead of a waiting one
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        slot = false;
      }
      if (slot) {
        try {
          task.run();
        } finally {
          slots.release();
          inline.decrementAndGet();
        }
        return;
      }
    }
    inline.decrementAndGet();
    // Free slots count as room too: a query sent to the pool only because the inline budget is
    // used up waits for no one.
    if (waiting.incrementAndGet() > maxQueued + slots.availablePermits()) {
      waiting.decrementAndGet();
      throw new ApiError(
          ApiError.Type.UNAVAILABLE,
          "too many queries: "
              + maxConcurrency
              + " running and "
              + maxQueued
              + " waiting; try again later");
    }
    try {
      executor.execute(new Task(task, onRefused));
    } catch (RejectedExecutionException e) { // stopping
      waiting.decrementAndGet();
      onRefused.run();
    }
  }

  int running() {
    return maxConcurrency - slots.availablePermits();
  }

  int queued() {
    return waiting.get();
  }

  @Override
  public void close() {
    closing = true;
    executor.shutdownNow();
  }

  /** A query waiting for a slot, and what to do if it never runs (the pool stops first). */
  private final class Task implements Runnable {
    private final Runnable work;
    private final Runnable onRefused;
    private boolean counted = true;

    Task(Runnable work, Runnable onRefused) {
      this.work = work;
      this.onRefused = onRefused;
    }

    /** No longer waiting (refused or given a slot). */
    void leave() {
      if (counted) {
        counted = false;
        waiting.decrementAndGet();
      }
    }

    @Override
    public void run() {
      try {
        // a fair wait in turn, looking up now and then whether the pool stops
        while (!slots.tryAcquire(WAIT_CHECK_MILLIS, TimeUnit.MILLISECONDS)) {
          if (closing) {
            refuse();
            return;
          }
        }
      } catch (InterruptedException e) {
        refuse(); // the pool stops
        return;
      }
      leave();
      try {
        if (closing) {
          onRefused.run();
        } else {
          work.run();
        }
      } finally {
        slots.release();
      }
    }

    void refuse() {
      leave();
      onRefused.run();
    }
  }

  /** Refuses new queries, answers waiting ones and waits up to {@code wait} for running ones. */
  boolean close(java.time.Duration wait) {
    closing = true;
    executor.shutdown();
    List<Runnable> queuedTasks = new ArrayList<>();
    executor.getQueue().drainTo(queuedTasks);
    for (Runnable r : queuedTasks) {
      ((Task) r).refuse();
    }
    long deadline = System.nanoTime() + wait.toNanos();
    try {
      boolean poolDone = executor.awaitTermination(wait.toMillis(), TimeUnit.MILLISECONDS);
      long left = Math.max(0, deadline - System.nanoTime());
      // every slot back: the queries running on HTTP threads are over too
      boolean inlineDone = slots.tryAcquire(maxConcurrency, left, TimeUnit.NANOSECONDS);
      if (inlineDone) {
        slots.release(maxConcurrency);
      }
      return poolDone && inlineDone;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }
}
