package dev.tidemark.tsdb.codec;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * A snapshot keeps the bytes the encoder had when it was taken while the encoder goes on (appends,
 * buffer growth, {@code restart}), as the head's readers rely on after the engine's lock is
 * released, and a decoder loaded straight from it reads what one loaded from its bytes reads.
 * Seeded; rerun one seed with {@code -Dtidemark.seed=<seed>}.
 */
class GorillaSnapshotTest {

  @Test
  void everySnapshotKeepsItsBytesAcrossAppendsGrowthAndRestarts() {
    for (int round = 0; round < 50; round++) {
      long seed = GorillaTestSupport.SEED + round;
      SplittableRandom rnd = new SplittableRandom(seed);
      GorillaEncoder enc = new GorillaEncoder();
      List<GorillaEncoder.Snapshot> snapshots = new ArrayList<>();
      List<byte[]> expected = new ArrayList<>();
      long t = 1_700_000_000_000L;
      double v = 0;
      for (int i = 0; i < 2_000; i++) {
        int op = rnd.nextInt(100);
        if (op < 10) {
          snapshots.add(enc.snapshot());
          expected.add(enc.toByteArray());
        } else if (op < 11) {
          enc.restart();
        } else {
          t += 15_000 + rnd.nextInt(-50, 51);
          v = rnd.nextBoolean() ? v : v + rnd.nextGaussian();
          enc.append(t, Double.doubleToRawLongBits(v));
        }
      }
      GorillaDecoder direct = new GorillaDecoder(); // reused: a longer stream's bytes precede
      for (int i = 0; i < snapshots.size(); i++) {
        GorillaEncoder.Snapshot s = snapshots.get(i);
        assertThat(s.toByteArray()).as("seed %d snapshot %d", seed, i).isEqualTo(expected.get(i));
        GorillaDecoder d = new GorillaDecoder();
        byte[] b = s.toByteArray();
        d.reset(b, 0, b.length);
        direct.reset(s);
        assertThat(direct.count()).isEqualTo(d.count());
        int n = 0;
        while (d.next()) {
          n++;
          assertThat(direct.next()).as("seed %d snapshot %d sample %d", seed, i, n).isTrue();
          assertThat(direct.timestampMillis()).isEqualTo(d.timestampMillis());
          assertThat(direct.valueBits()).isEqualTo(d.valueBits());
        }
        assertThat(direct.next()).isFalse();
        assertThat(n).isEqualTo(s.count());
        if (n > 0) {
          long target = 1_700_000_000_000L + rnd.nextLong(16_000L * n);
          d.reset(b, 0, b.length);
          direct.reset(s);
          boolean found = d.seek(target);
          assertThat(direct.seek(target)).isEqualTo(found);
          if (found) {
            assertThat(direct.timestampMillis()).isEqualTo(d.timestampMillis());
            assertThat(direct.valueBits()).isEqualTo(d.valueBits());
          }
        }
      }
    }
  }

  @Test
  void aRestartLeavesEarlierSnapshotsIntact() {
    GorillaEncoder enc = new GorillaEncoder();
    for (int i = 0; i < 100; i++) {
      enc.append(1_000L * i, Double.doubleToRawLongBits(Math.sqrt(i)));
    }
    GorillaEncoder.Snapshot s = enc.snapshot();
    byte[] before = enc.toByteArray();
    enc.restart();
    for (int i = 0; i < 100; i++) {
      enc.append(5_000L * i, Double.doubleToRawLongBits(-i));
    }
    assertThat(s.toByteArray()).isEqualTo(before);
  }
}
