package dev.tidemark.server.api;

import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Where queries run: at most {@code maxConcurrency} at once, at most {@code maxQueued} more waiting
 * in order; one beyond that is refused at once ({@link ApiError.Type#UNAVAILABLE}, 503), so a burst
 * of queries never piles up threads or memory. Queries never run on the HTTP server's threads, so a
 * slow query never stops the other endpoints, and never on the ingest paths' threads.
 */
final class QueryPool implements AutoCloseable {
  private final ThreadPoolExecutor executor;
  private final int maxQueued;

  QueryPool(int maxConcurrency, int maxQueued) {
    this.maxQueued = maxQueued;
    BlockingQueue<Runnable> queue =
        maxQueued == 0 ? new SynchronousQueue<>() : new ArrayBlockingQueue<>(maxQueued);
    AtomicInteger n = new AtomicInteger();
    executor =
        new ThreadPoolExecutor(
            maxConcurrency,
            maxConcurrency,
            60,
            TimeUnit.SECONDS,
            queue,
            r -> {
              Thread t = new Thread(r, "tidemark-query-" + n.incrementAndGet());
              t.setDaemon(true);
              return t;
            });
    executor.allowCoreThreadTimeOut(true);
  }

  /**
   * Runs {@code task} when a slot is free.
   *
   * @throws ApiError unavailable when {@code maxQueued} queries already wait
   */
  void submit(Runnable task, Runnable onRefused) {
    try {
      executor.execute(new Task(task, onRefused));
    } catch (RejectedExecutionException e) {
      throw new ApiError(
          ApiError.Type.UNAVAILABLE,
          "too many queries: "
              + executor.getMaximumPoolSize()
              + " running and "
              + maxQueued
              + " waiting; try again later");
    }
  }

  int running() {
    return executor.getActiveCount();
  }

  int queued() {
    return executor.getQueue().size();
  }

  @Override
  public void close() {
    executor.shutdownNow();
  }

  /** A query and what to do if it never runs (the pool stops first): answer its client. */
  private record Task(Runnable work, Runnable onRefused) implements Runnable {
    @Override
    public void run() {
      work.run();
    }
  }

  /** Refuses new queries, answers waiting ones and waits up to {@code wait} for running ones. */
  boolean close(java.time.Duration wait) {
    executor.shutdown();
    java.util.List<Runnable> waiting = new java.util.ArrayList<>();
    executor.getQueue().drainTo(waiting);
    for (Runnable r : waiting) {
      ((Task) r).onRefused().run();
    }
    try {
      return executor.awaitTermination(wait.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }
}
