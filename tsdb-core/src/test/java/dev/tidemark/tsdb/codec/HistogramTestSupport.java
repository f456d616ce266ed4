package dev.tidemark.tsdb.codec;

import dev.tidemark.tsdb.model.CounterResetHint;
import dev.tidemark.tsdb.model.FloatHistogram;
import dev.tidemark.tsdb.model.HistogramLayout;
import dev.tidemark.tsdb.model.IntegerHistogram;
import dev.tidemark.tsdb.model.NativeHistogram;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/** Helpers shared by the histogram chunk tests: samples, encoding, and a random generator. */
final class HistogramTestSupport {
  private HistogramTestSupport() {}

  /** Default seed of the property tests; override with {@code -Dtidemark.seed=<long>}. */
  static final long SEED = Long.getLong("tidemark.seed", 0x4157_0C4AL);

  /** Prometheus' default zero threshold, 2^-128. */
  static final double DEFAULT_ZERO_THRESHOLD = 2.938735877055719e-39;

  record Sample(long timestampMillis, NativeHistogram histogram) {}

  static byte[] encode(List<Sample> samples) {
    HistogramEncoder e = new HistogramEncoder();
    for (Sample s : samples) {
      e.append(s.timestampMillis(), s.histogram());
    }
    return e.toByteArray();
  }

  static List<Sample> decode(byte[] stream) {
    HistogramDecoder d = new HistogramDecoder();
    d.reset(stream, 0, stream.length);
    List<Sample> out = new ArrayList<>(d.count());
    while (d.next()) {
      out.add(new Sample(d.timestampMillis(), d.histogram()));
    }
    return out;
  }

  /**
   * A random series of histogram samples: a realistic counter (counts growing by a few per bucket
   * each step) most of the time, with layout changes (a bucket appears, the schema drops, custom
   * buckets), switches between integer and float counts, counter resets, NaN and stale sums, and
   * odd timestamps, each now and then.
   */
  static final class Generator {
    private final SplittableRandom rnd;
    private HistogramLayout layout;
    private boolean floats;
    private long[] counts = new long[0]; // absolute bucket counts, positive then negative
    private long zero;
    private double sum;
    private long t;

    Generator(SplittableRandom rnd) {
      this.rnd = rnd;
      this.t = rnd.nextLong(1L << 41);
      newLayout();
    }

    List<Sample> series(int n) {
      List<Sample> out = new ArrayList<>(n);
      for (int i = 0; i < n; i++) {
        out.add(next());
      }
      return out;
    }

    Sample next() {
      int r = rnd.nextInt(100);
      if (r < 4) {
        newLayout();
      } else if (r < 6) {
        floats = !floats;
      } else if (r < 8) { // counter reset
        java.util.Arrays.fill(counts, 0);
        zero = 0;
        sum = 0;
      }
      for (int i = 0; i < counts.length; i++) {
        counts[i] += rnd.nextInt(4) == 0 ? 0 : rnd.nextInt(rnd.nextBoolean() ? 5 : 2000);
      }
      if (!layout.usesCustomBuckets()) {
        zero += rnd.nextInt(3);
      }
      sum += rnd.nextDouble() * 100;
      int tr = rnd.nextInt(100);
      t +=
          tr < 80
              ? 15_000
              : tr < 95 ? 15_000 + rnd.nextInt(-50, 51) : 1 + rnd.nextLong(1L << rnd.nextInt(40));
      return new Sample(t, histogram());
    }

    private NativeHistogram histogram() {
      int p = layout.positiveBucketCount();
      long total = zero;
      for (long c : counts) {
        total += c;
      }
      int s = rnd.nextInt(100);
      long sumBits =
          s < 3
              ? 0x7ff0000000000002L
              : s < 5
                  ? 0x7ff8000000000000L | rnd.nextLong(1L << 50)
                  : Double.doubleToRawLongBits(sum);
      boolean nan = Double.isNaN(Double.longBitsToDouble(sumBits));
      CounterResetHint hint = CounterResetHint.fromId(rnd.nextInt(10) < 8 ? 0 : rnd.nextInt(4));
      if (floats) {
        long[] pos = new long[p];
        long[] neg = new long[counts.length - p];
        for (int i = 0; i < counts.length; i++) {
          double c = counts[i] * (rnd.nextInt(10) == 0 ? 0.5 : 1.0);
          (i < p ? pos : neg)[i < p ? i : i - p] = Double.doubleToRawLongBits(c);
        }
        return FloatHistogram.ofBits(
            layout,
            hint,
            Double.doubleToRawLongBits(total + (nan ? rnd.nextInt(3) : 0) + 0.25),
            Double.doubleToRawLongBits(zero),
            sumBits,
            pos,
            neg);
      }
      long[] pos = deltas(counts, 0, p);
      long[] neg = deltas(counts, p, counts.length);
      return IntegerHistogram.ofBits(
          layout, hint, total + (nan ? rnd.nextInt(3) : 0), zero, sumBits, pos, neg);
    }

    private static long[] deltas(long[] abs, int from, int to) {
      long[] d = new long[to - from];
      long prev = 0;
      for (int i = from; i < to; i++) {
        d[i - from] = abs[i] - prev;
        prev = abs[i];
      }
      return d;
    }

    private void newLayout() {
      int kind = rnd.nextInt(10);
      if (kind == 0) {
        int bounds = rnd.nextInt(0, 12);
        double[] cv = new double[bounds];
        double b = rnd.nextDouble(-10, 10);
        for (int i = 0; i < bounds; i++) {
          b += rnd.nextDouble(0.001, 5);
          cv[i] = b;
        }
        layout = HistogramLayout.custom(spans(true, bounds + 1), cv);
      } else {
        int schema = rnd.nextInt(-4, 9);
        double threshold = rnd.nextInt(4) == 0 ? rnd.nextDouble() : DEFAULT_ZERO_THRESHOLD;
        layout =
            HistogramLayout.exponential(
                schema, threshold, spans(false, 0), rnd.nextInt(3) == 0 ? spans(false, 0) : null);
      }
      int n = layout.positiveBucketCount() + layout.negativeBucketCount();
      long[] old = counts;
      counts = new long[n];
      System.arraycopy(old, 0, counts, 0, Math.min(n, old.length));
      if (layout.usesCustomBuckets()) {
        zero = 0;
      }
    }

    /** Random spans; for custom buckets they reach at most {@code reach} buckets. */
    private int[] spans(boolean custom, int reach) {
      int n = rnd.nextInt(0, 5);
      int[] s = new int[2 * n];
      int used = 0;
      for (int i = 0; i < n; i++) {
        int offset = i == 0 && !custom ? rnd.nextInt(-20, 20) : rnd.nextInt(0, 4);
        int length = rnd.nextInt(0, 12);
        if (custom) {
          int left = reach - used;
          offset = Math.min(offset, Math.max(0, left));
          length = Math.min(length, Math.max(0, left - offset));
          used += offset + length;
        }
        s[2 * i] = offset;
        s[2 * i + 1] = length;
      }
      return s;
    }
  }
}
