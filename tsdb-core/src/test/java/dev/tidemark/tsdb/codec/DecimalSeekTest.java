package dev.tidemark.tsdb.codec;

import static dev.tidemark.tsdb.codec.GorillaTestSupport.SEED;
import static org.assertj.core.api.Assertions.assertThat;

import dev.tidemark.tsdb.codec.GorillaTestSupport.Sample;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * {@link DecimalDecoder#seek} reads past whole mini-blocks before its target without computing
 * their values: random walks of seeks, nexts and bulk copies over random chunks (every value and
 * timestamp shape of {@link DecimalRoundTripTest}) land on the samples a linear reading finds.
 * Rerun one seed with {@code -Dtidemark.seed=<seed>}.
 */
class DecimalSeekTest {

  @Test
  void seeksLandWhereALinearReadingDoes() {
    SplittableRandom rnd = new SplittableRandom(SEED);
    DecimalDecoder d = new DecimalDecoder();
    long[] ts = new long[64];
    long[] bits = new long[64];
    for (int iter = 0; iter < 3000; iter++) {
      int size = rnd.nextInt(4) == 0 ? rnd.nextInt(4) : rnd.nextInt(1200);
      List<Sample> samples = DecimalRoundTripTest.randomChunk(rnd, size);
      byte[] stream = DecimalRoundTripTest.encode(samples);
      d.reset(stream, 0, stream.length);
      int at = -1; // index of the model's current sample; -1 before the first
      String msg = "seed " + SEED + " iteration " + iter;
      for (int op = 0; op < 12 && at < samples.size(); op++) {
        int kind = rnd.nextInt(3);
        if (kind == 0 || samples.isEmpty()) {
          boolean more = d.next();
          at++;
          assertThat(more).as(msg).isEqualTo(at < samples.size());
        } else if (kind == 1) {
          // a target between samples, on one, before the current one, or past the end
          int i = rnd.nextInt(samples.size() + 1);
          long target =
              i == samples.size()
                  ? samples.get(samples.size() - 1).timestampMillis() + 1 + rnd.nextInt(5)
                  : samples.get(i).timestampMillis() - rnd.nextInt(2);
          boolean found = d.seek(target);
          int want = Math.max(at, 0);
          if (at < 0 || samples.get(at).timestampMillis() < target) {
            while (want < samples.size() && samples.get(want).timestampMillis() < target) {
              want++;
            }
          }
          at = want;
          assertThat(found).as(msg + " seek " + target).isEqualTo(at < samples.size());
        } else {
          if (at < 0) {
            continue; // copyUpTo needs a current sample
          }
          long max =
              samples.get(Math.min(samples.size() - 1, at + rnd.nextInt(300))).timestampMillis();
          int n = d.copyUpTo(ts, bits, 0, 1 + rnd.nextInt(64), max);
          for (int j = 0; j < n; j++) {
            assertThat(new Sample(ts[j], bits[j])).as(msg).isEqualTo(samples.get(at + j));
          }
          at += n;
          assertThat(d.onSample()).as(msg).isEqualTo(at < samples.size());
          if (at >= samples.size()) {
            break;
          }
          // copyUpTo stands on the first sample not copied
          assertThat(new Sample(d.timestampMillis(), d.valueBits()))
              .as(msg)
              .isEqualTo(samples.get(at));
          continue;
        }
        if (at < samples.size()) {
          assertThat(new Sample(d.timestampMillis(), d.valueBits()))
              .as(msg + " op " + op)
              .isEqualTo(samples.get(at));
        }
      }
    }
  }
}
