package dev.tidemark.translator;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** Seeded; rerun one seed with {@code -Dtidemark.seed=<seed>}. */
class WireStreamCacheTest {

  private static final long SEED = Long.getLong("tidemark.seed", 0xCAC4EL);

  private static InPlace.WireStream stream(long hi, long lo) {
    return new InPlace.WireStream(hi, lo, hi, lo, new byte[0], null);
  }

  @Test
  void holdsAsManyStreamsAsItIsSizedForAndNeverAnswersAnotherKey() {
    int n = 100_000;
    WireStreamCache cache = new WireStreamCache(n);
    SplittableRandom rnd = new SplittableRandom(SEED);
    long[] his = new long[n];
    long[] los = new long[n];
    for (int i = 0; i < n; i++) {
      his[i] = rnd.nextLong();
      los[i] = rnd.nextLong();
      cache.put(stream(his[i], los[i]));
    }
    int missing = 0;
    for (int i = 0; i < n; i++) {
      InPlace.WireStream ws = cache.get(his[i], los[i]);
      if (ws == null) {
        missing++;
      } else {
        assertThat(ws.keyHi).isEqualTo(his[i]);
        assertThat(ws.keyLo).isEqualTo(los[i]);
      }
    }
    // two slots per position in sets of sixteen, at most 38 % taken: a set rarely overflows
    assertThat(missing).as("seed %d", SEED).isLessThan(n / 2000);
    assertThat(cache.capacity()).isEqualTo(1 << 17); // the power of two at or above n
    assertThat(cache.get(rnd.nextLong(), rnd.nextLong())).isNull();
  }

  @Test
  void aKeySharingTheLowBitsIsNotTakenForAnother() {
    WireStreamCache cache = new WireStreamCache(10);
    cache.put(stream(1, 42));
    assertThat(cache.get(2, 42)).isNull();
    assertThat(cache.get(1, 42)).isNotNull();
    cache.put(stream(2, 42));
    assertThat(cache.get(2, 42).keyHi).isEqualTo(2);
    assertThat(cache.get(1, 42).keyHi).isEqualTo(1);
  }

  @Test
  void aFullSetReplacesAnEntryInsteadOfGrowingPastItsSize() {
    WireStreamCache cache = new WireStreamCache(1); // 512 positions, 1,024 slots: 64 sets
    for (int i = 0; i < 10_000; i++) {
      cache.put(stream(i, (long) i << 4)); // sixteen keys to a set
    }
    assertThat(cache.capacity()).isEqualTo(512);
    assertThat(cache.get(9_999, 9_999L << 4)).isNotNull(); // the newest is always placed
  }

  @Test
  void positionsFollowTheOrderOfPutsAndWrapAroundOntoTheOldest() {
    WireStreamCache cache = new WireStreamCache(1); // 512 positions
    InPlace.WireStream[] put = new InPlace.WireStream[512 + 10];
    for (int i = 0; i < put.length; i++) {
      put[i] = stream(1_000 + i, 7_919L * i);
      cache.put(put[i]);
    }
    for (int i = 0; i < 512; i++) {
      InPlace.WireStream expected = put[i < 10 ? 512 + i : i];
      assertThat(cache.at(i)).as("position %d", i).isSameAs(expected);
      assertThat(expected.position).isEqualTo(i);
    }
    // the first ten gave their positions to the last ten: their index slots answer nothing
    for (int i = 0; i < 10; i++) {
      assertThat(cache.get(put[i].keyHi, put[i].keyLo)).isNull();
      assertThat(cache.get(put[512 + i].keyHi, put[512 + i].keyLo)).isSameAs(put[512 + i]);
    }
    assertThat(cache.at(-1)).isNull();
    assertThat(cache.at(512)).isNull();
    assertThat(cache.at(Integer.MAX_VALUE)).isNull();
  }

  @Test
  void growingKeepsEveryPositionAndItsIndexEntry() {
    WireStreamCache cache = new WireStreamCache(100_000);
    SplittableRandom rnd = new SplittableRandom(SEED);
    InPlace.WireStream[] put = new InPlace.WireStream[5_000];
    for (int i = 0; i < put.length; i++) {
      put[i] = stream(rnd.nextLong(), rnd.nextLong());
      cache.put(put[i]);
    }
    assertThat(cache.capacity()).isEqualTo(8192); // 512, doubled four times
    for (int i = 0; i < put.length; i++) {
      assertThat(cache.at(i)).isSameAs(put[i]);
      assertThat(cache.get(put[i].keyHi, put[i].keyLo)).isSameAs(put[i]);
    }
  }

  @Test
  void concurrentPutsAndGetsWhileItGrowsAnswerOnlyTheirOwnKey() throws Exception {
    WireStreamCache cache = new WireStreamCache(200_000);
    AtomicInteger wrong = new AtomicInteger();
    Thread[] threads = new Thread[4];
    for (int t = 0; t < threads.length; t++) {
      long seed = SEED + t;
      threads[t] =
          new Thread(
              () -> {
                SplittableRandom rnd = new SplittableRandom(seed);
                for (int i = 0; i < 50_000; i++) {
                  long hi = rnd.nextLong();
                  long lo = rnd.nextLong();
                  cache.put(stream(hi, lo));
                  InPlace.WireStream ws = cache.get(hi, lo);
                  if (ws != null && (ws.keyHi != hi || ws.keyLo != lo)) {
                    wrong.incrementAndGet();
                  }
                  InPlace.WireStream at = cache.at(rnd.nextInt(1 << 18));
                  if (at != null
                      && cache.get(at.keyHi, at.keyLo) != null
                      && cache.get(at.keyHi, at.keyLo).keyLo != at.keyLo) {
                    wrong.incrementAndGet();
                  }
                }
              });
      threads[t].start();
    }
    for (Thread t : threads) {
      t.join();
    }
    assertThat(wrong).hasValue(0);
  }
}
