package dev.tidemark.tsdb.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * The fingerprint index against a reference model (a list of every id's fingerprint), with
 * fingerprints drawn from a handful of values so that high-bit and full collisions happen all the
 * time. Rerun one seed with {@code -Dtidemark.seed=<seed>}.
 */
class FingerprintIndexTest {

  private static final long SEED = Long.getLong("tidemark.seed", 0x5EED_F1A6L);

  @Test
  void answersEveryIdSharingTheWholeFingerprintThroughAddsAndRollbacks() {
    for (int round = 0; round < 200; round++) {
      SplittableRandom rnd = new SplittableRandom(SEED + round);
      FingerprintIndex index = new FingerprintIndex();
      List<long[]> model = new ArrayList<>(); // id -> {high, low}
      for (int step = 0; step < 300; step++) {
        if (!model.isEmpty() && rnd.nextInt(4) == 0) {
          long[] last = model.remove(model.size() - 1);
          index.removeLast(last[0]);
          continue;
        }
        long high = rnd.nextInt(3) == 0 ? rnd.nextLong() : rnd.nextInt(4);
        long low = rnd.nextInt(3);
        int id = model.size();
        model.add(new long[] {high, low});
        int[] got = index.add(high, low, id, other -> model.get(other)[1]);
        int[] want =
            IntStream.range(0, model.size())
                .filter(i -> model.get(i)[0] == high && model.get(i)[1] == low)
                .toArray();
        assertThat(got).as("seed %d step %d", SEED + round, step).containsExactly(want);
      }
    }
  }

  @Test
  void aLoneSeriesIsItsOwnEntry() {
    FingerprintIndex index = new FingerprintIndex();
    assertThat(index.add(7, 9, 0, id -> 9)).containsExactly(0);
    assertThat(index.add(8, 9, 1, id -> 9)).containsExactly(1);
    index.removeLast(8);
    assertThat(index.add(8, 9, 1, id -> 9)).containsExactly(1);
  }
}
