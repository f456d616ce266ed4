package dev.tidemark.tsdb.query;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Runs one piece of work on the calling thread and on up to {@code extra} common-pool workers at
 * once, for reads whose parts the threads take in turn from a shared counter (a select's buckets, a
 * range function's series slices). The caller never waits for an idle pool: a worker that has not
 * started when the caller finishes is told not to run at all, and only workers that did start are
 * waited for (they share the caller's state, so they are waited for even if the caller is
 * interrupted; the interrupt is then restored). Stateless.
 */
public final class CallerRunsParallel {
  private CallerRunsParallel() {}

  /**
   * Runs {@code work} on this thread and on up to {@code extra} pool workers, and returns when
   * every run that started has finished.
   *
   * @param stopOthers called when this thread's run fails, so that the others stop taking parts
   * @throws RuntimeException or Error the first failure of any run, the others suppressed in it
   */
  public static void run(Runnable work, int extra, Runnable stopOthers) {
    if (extra <= 0) {
      work.run();
      return;
    }
    Share[] shares = new Share[extra];
    for (int h = 0; h < extra; h++) {
      shares[h] = new Share(work);
      ForkJoinPool.commonPool().execute(shares[h]);
    }
    Throwable failure = null;
    try {
      work.run();
    } catch (RuntimeException | Error e) {
      failure = e;
      stopOthers.run();
    }
    for (Share s : shares) {
      Throwable t = s.await();
      if (failure == null) {
        failure = t;
      } else if (t != null && t != failure) {
        failure.addSuppressed(t);
      }
    }
    if (failure instanceof RuntimeException re) {
      throw re;
    }
    if (failure instanceof Error err) {
      throw err;
    }
    if (failure != null) {
      throw new IllegalStateException(failure);
    }
  }

  /** A worker's run of the work, at most once: by a pool worker, or not at all. */
  private static final class Share implements Runnable {
    private final Runnable work;
    private final AtomicBoolean claimed = new AtomicBoolean();
    private final CountDownLatch done = new CountDownLatch(1);
    private volatile Throwable failure;

    Share(Runnable work) {
      this.work = work;
    }

    @Override
    public void run() {
      if (!claimed.compareAndSet(false, true)) {
        return;
      }
      try {
        work.run();
      } catch (Throwable t) {
        failure = t;
      } finally {
        done.countDown();
      }
    }

    /** Waits for the run if a worker took it; otherwise makes sure none will. */
    Throwable await() {
      if (claimed.compareAndSet(false, true)) {
        return null;
      }
      boolean interrupted = false;
      while (true) {
        try {
          done.await();
          break;
        } catch (InterruptedException e) {
          interrupted = true;
        }
      }
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
      return failure;
    }
  }
}
