package dev.tidemark.tsdb.engine;

/**
 * What the engine's short-lived helper threads ({@link HeadLogReplay}'s decoder, {@link
 * PrefetchingScan}'s scanner) need around them: waiting for one to end, and handing its failure to
 * the thread that started it.
 */
final class HelperThreads {
  private HelperThreads() {}

  /** Waits for {@code t} to end, even if interrupted meanwhile (the interrupt is kept). */
  static void join(Thread t) {
    boolean interrupted = false;
    while (true) {
      try {
        t.join();
        break;
      } catch (InterruptedException e) {
        interrupted = true;
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
  }

  /**
   * Throws what a helper thread failed with in the caller's thread: a RuntimeException or Error as
   * it is, anything else wrapped with {@code what}; nothing if {@code failure} is null.
   */
  static void rethrow(Throwable failure, String what) {
    if (failure == null) {
      return;
    }
    if (failure instanceof RuntimeException e) {
      throw e;
    }
    if (failure instanceof Error e) {
      throw e;
    }
    throw new IllegalStateException(what, failure);
  }
}
