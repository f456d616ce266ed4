package dev.tidemark.tsdb.codec;

import static org.assertj.core.api.Assertions.assertThat;

import java.math.BigInteger;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** Seeded; rerun one seed with {@code -Dtidemark.seed=<seed>}. */
class BitWriterTest {

  private static final long SEED = Long.getLong("tidemark.seed", 0xB17L);

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
