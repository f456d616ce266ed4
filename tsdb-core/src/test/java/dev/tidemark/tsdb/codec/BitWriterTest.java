package dev.tidemark.tsdb.codec;

import static org.assertj.core.api.Assertions.assertThat;

import java.math.BigInteger;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** Seeded; rerun one seed with {@code -Dtidemark.seed=<seed>}. */
class BitWriterTest {

  private static final long SEED = Long.getLong("tidemark.seed", 0xB17L);

  @Test
  void growthIsStepsOf64BytesBelowTheLimitThenDoubling() {
    assertThat(BitWriter.grownCapacity(0)).isEqualTo(64); // a detached buffer's first flush
    int c = 64;
    int copies = 0;
    while (c < BitWriter.LINEAR_GROWTH_LIMIT) {
      int next = BitWriter.grownCapacity(c);
      assertThat(next).isEqualTo(c + 64); // a head stream wastes at most 63 bytes
      c = next;
      copies++;
    }
    assertThat(copies).isEqualTo(BitWriter.LINEAR_GROWTH_LIMIT / 64 - 1);
    assertThat(BitWriter.grownCapacity(c)).isEqualTo(2 * c);
  }

  @Test
  void bitsWrittenAcrossManyGrowthsReadBackInOrder() {
    SplittableRandom rnd = new SplittableRandom(SEED);
    BitWriter w = new BitWriter();
    BigInteger expected = BigInteger.ZERO;
    long bits = 0;
    for (int i = 0; i < 3_000; i++) {
      int n = 1 + rnd.nextInt(64);
      long v = n == 64 ? rnd.nextLong() : rnd.nextLong() & ((1L << n) - 1);
      w.write(v, n);
      expected = expected.shiftLeft(n).or(new BigInteger(Long.toUnsignedString(v)));
      bits += n;
    }
    assertThat(w.bitCount()).isEqualTo(bits);
    byte[] out = new byte[w.byteCount()];
    w.copyTo(out, 0);
    int pad = out.length * 8 - (int) bits;
    assertThat(new BigInteger(1, out)).as("seed %d", SEED).isEqualTo(expected.shiftLeft(pad));
  }
}
