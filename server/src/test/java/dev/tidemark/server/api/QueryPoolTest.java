package dev.tidemark.server.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** {@link QueryPool}: slots, the inline budget, the queue bound, arrival order, stopping. */
class QueryPoolTest {

  @Test
  void aQueryWithAFreeSlotRunsOnTheCallersThread() {
    try (QueryPool pool = new QueryPool(2, 1, 1)) {
      AtomicReference<Thread> ran = new AtomicReference<>();
      pool.submit(() -> ran.set(Thread.currentThread()), () -> {});
      assertThat(ran.get()).isSameAs(Thread.currentThread());
      assertThat(pool.running()).isZero();
    }
  }

  @Test
  void beyondTheInlineBudgetQueriesRunOnPoolThreadsWithoutWaiting() throws Exception {
    try (QueryPool pool = new QueryPool(3, 0, 1)) {
      CountDownLatch release = new CountDownLatch(1);
      Thread caller = holdASlot(pool, release);
      // the inline budget (1) is used: the next runs on a pool thread, although max-queued is 0
      AtomicReference<Thread> ran = new AtomicReference<>();
      CountDownLatch done = new CountDownLatch(1);
      pool.submit(
          () -> {
            ran.set(Thread.currentThread());
            done.countDown();
          },
          () -> {});
      assertThat(done.await(5, TimeUnit.SECONDS)).isTrue();
      assertThat(ran.get()).isNotSameAs(Thread.currentThread()).isNotSameAs(caller);
      assertThat(ran.get().getName()).startsWith("tidemark-query-");
      release.countDown();
      caller.join(5000);
    }
  }

  @Test
  void fullSlotsQueueInArrivalOrderThenRefuse() throws Exception {
    try (QueryPool pool = new QueryPool(1, 2, 8)) {
      CountDownLatch release = new CountDownLatch(1);
      Thread holder = holdASlot(pool, release);
      assertThat(pool.running()).isEqualTo(1);
      List<String> order = new CopyOnWriteArrayList<>();
      CountDownLatch both = new CountDownLatch(2);
      pool.submit(
          () -> {
            order.add("first");
            both.countDown();
          },
          () -> {});
      pool.submit(
          () -> {
            order.add("second");
            both.countDown();
          },
          () -> {});
      assertThat(pool.queued()).isEqualTo(2);
      assertThatThrownBy(() -> pool.submit(() -> {}, () -> {}))
          .isInstanceOf(ApiError.class)
          .hasMessage("too many queries: 1 running and 2 waiting; try again later");
      release.countDown();
      assertThat(both.await(5, TimeUnit.SECONDS)).isTrue();
      assertThat(order).containsExactly("first", "second");
      holder.join(5000);
      assertThat(pool.queued()).isZero();
    }
  }

  @Test
  void stoppingAnswersWaitingQueriesAndWaitsForRunningOnes() throws Exception {
    QueryPool pool = new QueryPool(1, 5, 8);
    CountDownLatch release = new CountDownLatch(1);
    Thread holder = holdASlot(pool, release);
    CountDownLatch refused = new CountDownLatch(1);
    pool.submit(() -> {}, refused::countDown);
    assertThat(pool.close(Duration.ofMillis(200))).isFalse(); // the inline query still runs
    assertThat(refused.await(5, TimeUnit.SECONDS)).isTrue();
    CountDownLatch refusedAfter = new CountDownLatch(1);
    pool.submit(() -> {}, refusedAfter::countDown);
    assertThat(refusedAfter.getCount()).isZero();
    release.countDown();
    holder.join(5000);
    assertThat(pool.close(Duration.ofSeconds(5))).isTrue();
  }

  /** Starts a thread whose query holds a slot until {@code release}; returns once it runs. */
  private static Thread holdASlot(QueryPool pool, CountDownLatch release) throws Exception {
    CountDownLatch started = new CountDownLatch(1);
    Thread holder =
        new Thread(
            () ->
                pool.submit(
                    () -> {
                      started.countDown();
                      await(release);
                    },
                    () -> {}));
    holder.start();
    assertThat(started.await(5, TimeUnit.SECONDS)).isTrue();
    return holder;
  }

  private static void await(CountDownLatch l) {
    try {
      l.await(10, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
