package dev.tidemark.tsdb.codec;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * {@link ChunkDecoder#copyUpTo} of both decoders copies what the one-by-one loop of its contract
 * copies and leaves the decoder where that loop leaves it: runs cut by the time limit, by {@code
 * max}, at mini-block edges and at the end; constant, regular and irregular series.
 */
class ChunkDecoderCopyTest {

  @Test
  void copyUpToEqualsTheLoop() {
    long seed = Long.getLong("seed", new SplittableRandom().nextLong());
    SplittableRandom rnd = new SplittableRandom(seed);
    for (int round = 0; round < 400; round++) {
      int count = 1 + rnd.nextInt(rnd.nextBoolean() ? 20 : 700);
      long[] ts = new long[count];
      long[] bits = new long[count];
      long t = rnd.nextLong(0, 1L << 42);
      int shape = rnd.nextInt(3);
      double v = 0;
      for (int i = 0; i < count; i++) {
        t += shape == 1 ? 15_000 : 1 + rnd.nextInt(30_000);
        v = shape == 0 ? 5 : v + Math.round(rnd.nextDouble(0, 15) * 100) / 100.0;
        ts[i] = t;
        bits[i] = Double.doubleToRawLongBits(v);
      }
      GorillaEncoder g = new GorillaEncoder();
      DecimalEncoder d = new DecimalEncoder();
      for (int i = 0; i < count; i++) {
        g.append(ts[i], bits[i]);
        d.append(ts[i], bits[i]);
      }
      for (byte[] value : new byte[][] {TimeSeriesValue.encode(g), TimeSeriesValue.encode(d)}) {
        ChunkDecoder bulk = new TimeSeriesValue.Decoders().open(value);
        ChunkDecoder loop = new TimeSeriesValue.Decoders().open(value);
        assertThat(bulk.next()).isTrue();
        assertThat(loop.next()).isTrue();
        long[] gotT = new long[count + 8];
        long[] gotB = new long[count + 8];
        long[] wantT = new long[count + 8];
        long[] wantB = new long[count + 8];
        while (loop.onSample()) {
          long maxT = ts[rnd.nextInt(count)] + rnd.nextInt(-2, 3);
          int max = rnd.nextInt(300);
          int off = rnd.nextInt(8);
          int n = bulk.copyUpTo(gotT, gotB, off, max, maxT);
          int m = 0;
          while (m < max && loop.onSample() && loop.timestampMillis() <= maxT) {
            wantT[off + m] = loop.timestampMillis();
            wantB[off + m++] = loop.valueBits();
            loop.next();
          }
          String what = "seed " + seed + " round " + round + " encoding " + value[0];
          assertThat(n).as(what).isEqualTo(m);
          for (int i = off; i < off + n; i++) {
            assertThat(gotT[i]).as(what).isEqualTo(wantT[i]);
            assertThat(gotB[i]).as(what).isEqualTo(wantB[i]);
          }
          assertThat(bulk.onSample()).as(what).isEqualTo(loop.onSample());
          if (loop.onSample()) {
            assertThat(bulk.timestampMillis()).as(what).isEqualTo(loop.timestampMillis());
            assertThat(bulk.valueBits()).as(what).isEqualTo(loop.valueBits());
            if (rnd.nextInt(5) == 0) { // plain calls in between
              assertThat(bulk.next()).isEqualTo(loop.next());
            }
          }
        }
        assertThat(bulk.next()).isFalse();
      }
    }
  }
}
