package dev.tidemark.receiver;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class HeapGuardTest {

  @Test
  void refusesWritesWhileTheHeapIsOverItsShareAfterACollection() {
    HeapGuard guard = new HeapGuard(0.9, 1000);
    InFlightBytes inFlight = new InFlightBytes(100, guard::refusal);
    assertThat(inFlight.reserve(0, 10)).isTrue();
    inFlight.release(10);
    assertThat(guard.refusal()).isNull();
    assertThat(inFlight.refusal()).isEqualTo("more than 100 request bytes in flight");

    guard.afterGc(950);
    assertThat(guard.getAsBoolean()).isTrue();
    assertThat(guard.lastShare()).isEqualTo(0.95);
    assertThat(guard.refusal()).isEqualTo("the server's memory is nearly full (heap 95% after GC)");
    assertThat(inFlight.refusal()).isEqualTo(guard.refusal());
    assertThat(inFlight.reserve(0, 10)).as("refused, even alone").isFalse();
    assertThat(inFlight.current()).isZero();
    assertThat(inFlight.reserve(0, 0)).as("nothing asked, nothing refused").isTrue();

    guard.afterGc(900); // not over 90 %
    assertThat(guard.getAsBoolean()).isFalse();
    assertThat(guard.refusal()).isNull();
    assertThat(inFlight.reserve(0, 10)).isTrue();
  }

  @Test
  void aHeapWithoutMaximumNeverRefuses() {
    HeapGuard guard = new HeapGuard(0.9, 0);
    guard.afterGc(Long.MAX_VALUE);
    assertThat(guard.getAsBoolean()).isFalse();
    assertThat(guard.refusal()).isNull();
  }

  @Test
  void installedItFollowsTheRealCollectorsAndCloses() throws InterruptedException {
    try (HeapGuard guard = HeapGuard.install(HeapGuard.DEFAULT_THRESHOLD)) {
      System.gc();
      // This test JVM's heap is far from full: a collection happened and nothing is refused. The
      // collectors' notifications come on a thread of their own: wait for one without spinning
      // (on a loaded 2-core machine a spinning loop of collections kept it from running for 5 s).
      long deadline = System.nanoTime() + 30_000_000_000L;
      while (guard.lastShare() == 0 && System.nanoTime() < deadline) {
        Thread.sleep(50);
        if (guard.lastShare() == 0) {
          System.gc();
        }
      }
      assertThat(guard.lastShare()).isBetween(0.0, 0.9).isPositive();
      assertThat(guard.getAsBoolean()).isFalse();
    }
  }

  @Test
  void thresholdMustBeAShare() {
    assertThatThrownBy(() -> new HeapGuard(0, 1)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> new HeapGuard(1.5, 1)).isInstanceOf(IllegalArgumentException.class);
  }
}
