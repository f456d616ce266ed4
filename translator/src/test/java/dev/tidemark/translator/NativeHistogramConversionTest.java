package dev.tidemark.translator;

import static org.assertj.core.api.Assertions.assertThat;

import dev.tidemark.translator.NativeHistogramConversion.Result;
import dev.tidemark.translator.NativeHistogramConversion.Side;
import dev.tidemark.tsdb.append.SampleBatch;
import dev.tidemark.tsdb.model.CounterResetHint;
import dev.tidemark.tsdb.model.HistogramLayout;
import dev.tidemark.tsdb.model.IntegerHistogram;
import dev.tidemark.tsdb.model.InvalidHistogramException;
import io.opentelemetry.proto.metrics.v1.ExponentialHistogramDataPoint;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * OTLP exponential histogram points into the native histogram model ({@link
 * NativeHistogramConversion}): golden layouts that Prometheus 3.14's {@code convertBucketsLayout}
 * gives for the same buckets, the point-level rules, and a seeded property test of the merging
 * against the sums of the OTLP buckets each merged bucket covers.
 */
class NativeHistogramConversionTest {

  private static Side layout(int offset, int scaleDown, long... counts) {
    return NativeHistogramConversion.layout(counts, offset, counts.length, scaleDown);
  }

  private static void assertLayout(Side s, int[] spans, long[] deltas) {
    assertThat(s.spans()).as("spans").containsExactly(spans);
    assertThat(s.deltas()).as("deltas").containsExactly(deltas);
  }

  // ---------------------------------------------------------------- golden layouts

  @Test
  void layoutsAsPrometheusGivesThem() {
    // Each case: OTLP offset and counts, then spans and deltas at scale-downs 0, 1 and 2. The
    // expected values are those of Prometheus' TestConvertBucketsLayout for the same input.
    long[] dense = {4, 3, 2, 1};
    assertLayout(layout(0, 0, dense), new int[] {1, 4}, new long[] {4, -1, -1, -1});
    assertLayout(layout(0, 1, dense), new int[] {1, 2}, new long[] {7, -4});
    assertLayout(layout(0, 2, dense), new int[] {1, 1}, new long[] {10});

    assertLayout(layout(1, 0, dense), new int[] {2, 4}, new long[] {4, -1, -1, -1});
    assertLayout(layout(1, 1, dense), new int[] {1, 3}, new long[] {4, 1, -4});
    assertLayout(layout(1, 2, dense), new int[] {1, 2}, new long[] {9, -8});

    long[] far = {4, 2, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
    assertLayout(layout(4, 0, far), new int[] {5, 4, 12, 1}, new long[] {4, -2, -2, 2, -1});
    assertLayout(layout(4, 1, far), new int[] {3, 2, 6, 1}, new long[] {6, -4, -1});
    assertLayout(layout(4, 2, far), new int[] {2, 1, 3, 1}, new long[] {8, -7});

    long[] near = {4, 2, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 1};
    assertLayout(layout(4, 0, near), new int[] {5, 4, 8, 1}, new long[] {4, -2, -2, 2, -1});
    assertLayout(layout(4, 1, near), new int[] {3, 2, 4, 1}, new long[] {6, -4, -1});
    // merging brings the second span within two buckets: one span with zeros between
    assertLayout(layout(4, 2, near), new int[] {2, 4}, new long[] {8, -8, 0, 1});

    long[] negative = {3, 1, 0, 0, 0, 1};
    assertLayout(layout(-2, 0, negative), new int[] {-1, 2, 3, 1}, new long[] {3, -2, 0});
    assertLayout(layout(-2, 1, negative), new int[] {0, 3}, new long[] {4, -4, 1});
    assertLayout(layout(-2, 2, negative), new int[] {0, 2}, new long[] {4, -3});

    long[] gaps1 = {3, 1, 0, 1, 0, 1};
    assertLayout(layout(-2, 0, gaps1), new int[] {-1, 6}, new long[] {3, -2, -1, 1, -1, 1});
    assertLayout(layout(-2, 1, gaps1), new int[] {0, 3}, new long[] {4, -3, 0});
    assertLayout(layout(-2, 2, gaps1), new int[] {0, 2}, new long[] {4, -2});

    long[] gaps2 = {3, 0, 0, 1, 0, 0, 1};
    assertLayout(layout(-2, 0, gaps2), new int[] {-1, 7}, new long[] {3, -3, 0, 1, -1, 0, 1});
    assertLayout(layout(-2, 1, gaps2), new int[] {0, 4}, new long[] {3, -2, -1, 1});
    assertLayout(layout(-2, 2, gaps2), new int[] {0, 3}, new long[] {3, -2, 0});

    assertLayout(layout(7, 0), new int[] {}, new long[] {});
  }

  @Test
  void zeroBucketsAtTheEdgesAreLaidOutAsPrometheusLaysThemOut() {
    // Leading zeros: the first span still starts at the first bucket; a gap of three or more
    // leaves it empty and starts another.
    assertLayout(layout(0, 0, 0, 0, 5), new int[] {1, 3}, new long[] {0, 0, 5});
    assertLayout(layout(0, 0, 0, 0, 0, 0, 5), new int[] {1, 0, 4, 1}, new long[] {5});
    // The last bucket is written even when it is zero.
    assertLayout(layout(0, 0, 5, 0, 0, 0, 0), new int[] {1, 1, 3, 1}, new long[] {5, -5});
    assertLayout(layout(0, 0, 0, 0, 0), new int[] {1, 3}, new long[] {0, 0, 0});
    assertLayout(layout(0, 0, 3, 0, 7, 2), new int[] {1, 4}, new long[] {3, -3, 7, -5});
  }

  @Test
  void everyCountStaysInItsOwnBucketWherePrometheusMisplacesIt() {
    // OTLP 0..3 = 0, 0, 1, 1 merged by two: bucket 1 holds 0, bucket 2 holds 2. Prometheus' loop
    // gives deltas [1, 0] (1 and 1): it writes the pending count of bucket 2 at bucket 1.
    assertLayout(layout(0, 1, 0, 0, 1, 1), new int[] {1, 2}, new long[] {0, 2});
    assertThat(PrometheusLoop.layout(new long[] {0, 0, 1, 1}, 0, 1).deltas()).containsExactly(1, 0);
  }

  @Test
  void countsAtOrAbove2To63AreRefused() {
    ExpHistogram h = point(0, 0, new long[] {Long.MIN_VALUE}, 0, new long[0]);
    h.count = Long.MIN_VALUE;
    Result r = NativeHistogramConversion.convert(h, false, false, 0);
    assertThat(r.accepted()).isFalse();
    assertThat(r.reason()).isEqualTo(RejectionReason.INVALID_HISTOGRAM);
    h = point(9, 0, new long[] {Long.MAX_VALUE, 1}, 0, new long[0]);
    assertThat(NativeHistogramConversion.convert(h, false, false, 0).detail())
        .contains("out of range");
  }

  // ---------------------------------------------------------------- points

  static ExpHistogram point(int scale, int posOffset, long[] pos, int negOffset, long[] neg) {
    ExponentialHistogramDataPoint.Builder b =
        ExponentialHistogramDataPoint.newBuilder().setScale(scale).setTimeUnixNano(1);
    b.getPositiveBuilder().setOffset(posOffset);
    for (long c : pos) {
      b.getPositiveBuilder().addBucketCounts(c);
    }
    b.getNegativeBuilder().setOffset(negOffset);
    for (long c : neg) {
      b.getNegativeBuilder().addBucketCounts(c);
    }
    long total = Arrays.stream(pos).sum() + Arrays.stream(neg).sum();
    ExpHistogram h = new ExpHistogram();
    h.setFrom(b.setCount(total).build());
    return h;
  }

  private static int[] spans(HistogramLayout l, boolean positive) {
    return positive ? l.positiveSpans() : l.negativeSpans();
  }

  @Test
  void aPointBecomesAnIntegerHistogram() {
    // scale 1, zero count 1, two buckets a side at OTLP offset 1: Prometheus indices 2 and 3
    ExpHistogram h = point(1, 1, new long[] {1, 1}, 1, new long[] {1, 1});
    h.zeroCount = 1;
    h.count = 5;
    h.hasSum = true;
    h.sum = 10.1;
    Result r = NativeHistogramConversion.convert(h, false, false, 0);
    assertThat(r.accepted()).as(r.detail()).isTrue();
    IntegerHistogram n = r.histogram();
    assertThat(n.layout().schema()).isEqualTo(1);
    assertThat(n.layout().zeroThreshold()).isEqualTo(1e-128);
    assertThat(spans(n.layout(), true)).containsExactly(2, 2);
    assertThat(spans(n.layout(), false)).containsExactly(2, 2);
    assertThat(n.positiveDeltas()).containsExactly(1, 0);
    assertThat(n.negativeDeltas()).containsExactly(1, 0);
    assertThat(n.count()).isEqualTo(5);
    assertThat(n.zeroCount()).isEqualTo(1);
    assertThat(Double.longBitsToDouble(n.sumBits())).isEqualTo(10.1);
    assertThat(n.hint()).isEqualTo(CounterResetHint.UNKNOWN);
    assertThat(r.warning()).isNull();

    // no sum: 0, as Prometheus writes it
    h.hasSum = false;
    assertThat(NativeHistogramConversion.convert(h, false, false, 0).histogram().sumBits())
        .isZero();
    // a delta histogram stored as it came: the gauge hint
    assertThat(NativeHistogramConversion.convert(h, false, true, 0).histogram().hint())
        .isEqualTo(CounterResetHint.GAUGE);
  }

  @Test
  void scalesAbove8AreMergedDownTo8AndBelowMinus4Refused() {
    // Prometheus' case at scale 9: positive OTLP 1..3, negative 2..4, one each
    ExpHistogram h = point(9, 1, new long[] {1, 1, 1}, 2, new long[] {1, 1, 1});
    Result r = NativeHistogramConversion.convert(h, false, false, 0);
    IntegerHistogram n = r.histogram();
    assertThat(n.layout().schema()).isEqualTo(8);
    assertThat(spans(n.layout(), true)).containsExactly(1, 2);
    assertThat(n.positiveDeltas()).containsExactly(1, 1);
    assertThat(spans(n.layout(), false)).containsExactly(2, 2);
    assertThat(n.negativeDeltas()).containsExactly(2, -1);
    // at 8 nothing moves but the index
    n =
        NativeHistogramConversion.convert(
                point(8, 1, new long[] {1, 1, 1}, 0, new long[0]), false, false, 0)
            .histogram();
    assertThat(n.layout().schema()).isEqualTo(8);
    assertThat(spans(n.layout(), true)).containsExactly(2, 3);
    // scale 20, OTLP's largest: 2^12 buckets become one
    long[] many = new long[4096];
    Arrays.fill(many, 1);
    n =
        NativeHistogramConversion.convert(point(20, 0, many, 0, new long[0]), false, false, 0)
            .histogram();
    assertThat(n.layout().schema()).isEqualTo(8);
    assertThat(spans(n.layout(), true)).containsExactly(1, 1);
    assertThat(n.positiveDeltas()).containsExactly(4096);

    for (int scale : new int[] {-5, -10}) {
      r =
          NativeHistogramConversion.convert(
              point(scale, 0, new long[] {1}, 0, new long[0]), false, false, 0);
      assertThat(r.accepted()).isFalse();
      assertThat(r.reason()).isEqualTo(RejectionReason.UNSUPPORTED_EXPONENTIAL_HISTOGRAM);
      assertThat(r.detail())
          .isEqualTo(
              "cannot convert exponential to native histogram. Scale must be >= -4, was " + scale);
    }
    assertThat(
            NativeHistogramConversion.convert(
                    point(-4, 0, new long[] {1}, 0, new long[0]), false, false, 0)
                .histogram()
                .layout()
                .schema())
        .isEqualTo(-4);
  }

  @Test
  void zeroThresholdAndZeroCount() {
    ExpHistogram h = point(0, 0, new long[] {2}, 0, new long[0]);
    h.zeroCount = 3;
    h.count = 5;
    h.zeroThreshold = 0.001;
    IntegerHistogram n = NativeHistogramConversion.convert(h, false, false, 0).histogram();
    assertThat(n.layout().zeroThreshold()).isEqualTo(0.001);
    assertThat(n.zeroCount()).isEqualTo(3);
    for (double bad : new double[] {-1, Double.NaN, Double.POSITIVE_INFINITY}) {
      h.zeroThreshold = bad;
      Result r = NativeHistogramConversion.convert(h, false, false, 0);
      assertThat(r.reason()).isEqualTo(RejectionReason.INVALID_HISTOGRAM);
      assertThat(r.detail()).startsWith("zero_threshold ");
    }
    // only a zero bucket
    ExpHistogram z = point(3, 0, new long[0], 0, new long[0]);
    z.zeroCount = 7;
    z.count = 7;
    n = NativeHistogramConversion.convert(z, false, false, 0).histogram();
    assertThat(n.layout().positiveBucketCount() + n.layout().negativeBucketCount()).isZero();
    assertThat(n.count()).isEqualTo(7);
  }

  @Test
  void whatPrometheusValidateRefusesIsRefusedWithTheModelsReason() {
    ExpHistogram h = point(0, 0, new long[] {2, 3}, 0, new long[0]);
    h.count = 4; // buckets hold 5
    h.hasSum = true;
    h.sum = 1;
    Result r = NativeHistogramConversion.convert(h, false, false, 0);
    assertThat(r.reason()).isEqualTo(RejectionReason.INVALID_HISTOGRAM);
    assertThat(r.invalid()).isEqualTo(InvalidHistogramException.Reason.COUNT_MISMATCH);
    assertThat(r.detail())
        .isEqualTo(
            "5 observations found in buckets, but the Count field is 4: histogram's observation"
                + " count should equal the number of observations found in the buckets (in absence"
                + " of NaN)");
    // with a NaN sum the count may exceed the buckets, not fall short
    h.sum = Double.NaN;
    h.count = 6;
    assertThat(NativeHistogramConversion.convert(h, false, false, 0).accepted()).isTrue();
    h.count = 4;
    assertThat(NativeHistogramConversion.convert(h, false, false, 0).invalid())
        .isEqualTo(InvalidHistogramException.Reason.COUNT_NOT_BIG_ENOUGH);
  }

  @Test
  void zeroCountWithASumIsWrittenWithPrometheusWarning() {
    ExpHistogram h = point(0, 0, new long[0], 0, new long[0]);
    h.hasSum = true;
    h.sum = 2.5;
    Result r = NativeHistogramConversion.convert(h, false, false, 0);
    assertThat(r.accepted()).isTrue();
    assertThat(r.warning())
        .isEqualTo("exponential histogram data point has zero count, but non-zero sum: 2.500000");
  }

  @Test
  void noRecordedValueIsTheStalenessMarker() {
    ExpHistogram h = point(0, 0, new long[0], 0, new long[0]);
    Result r = NativeHistogramConversion.convert(h, true, false, 0);
    assertThat(r.histogram().sumBits()).isEqualTo(SampleBatch.STALE_NAN_BITS);
    assertThat(r.histogram().count()).isEqualTo(SampleBatch.STALE_NAN_BITS);
  }

  @Test
  void theBucketLimitLowersTheSchemaUntilTheBucketsFit() {
    // 200 positive buckets at scale 3: 100 at 2, 50 at 1
    long[] c = new long[200];
    Arrays.fill(c, 1);
    ExpHistogram h = point(3, 0, c, 0, new long[0]);
    IntegerHistogram n = NativeHistogramConversion.convert(h, false, false, 160).histogram();
    assertThat(n.layout().schema()).isEqualTo(2);
    assertThat(n.layout().positiveBucketCount()).isEqualTo(100);
    n = NativeHistogramConversion.convert(h, false, false, 60).histogram();
    assertThat(n.layout().schema()).isEqualTo(1);
    assertThat(n.layout().positiveBucketCount()).isEqualTo(50);
    // both sides count
    ExpHistogram both = point(3, 0, Arrays.copyOf(c, 90), 0, Arrays.copyOf(c, 90));
    n = NativeHistogramConversion.convert(both, false, false, 160).histogram();
    assertThat(n.layout().schema()).isEqualTo(2);
    assertThat(
            NativeHistogramConversion.convert(both, false, false, 0).histogram().layout().schema())
        .isEqualTo(3);
    // at -4 nothing more can be merged: refused with Prometheus' text
    ExpHistogram spread = point(-4, -60, new long[] {1, 0, 0, 0, 0, 1}, 0, new long[0]);
    Result r = NativeHistogramConversion.convert(spread, false, false, 1);
    assertThat(r.accepted()).isFalse();
    assertThat(r.detail()).startsWith("histogram bucket limit exceeded: 2 buckets at schema -4");
  }

  // ---------------------------------------------------------------- property

  /**
   * A port of Prometheus' {@code convertBucketsLayout} loop, as the reference of the layout's
   * shape: where its counts are right (always without merging), ours must be the same arrays.
   */
  static final class PrometheusLoop {
    static Side layout(long[] counts, int offset, int scaleDown) {
      if (counts.length == 0) {
        return new Side(new int[0], new long[0]);
      }
      List<int[]> spans = new ArrayList<>();
      List<Long> deltas = new ArrayList<>();
      long[] state = {0, 0}; // count, prevCount
      int bucketIdx = (offset >> scaleDown) + 1;
      spans.add(new int[] {(offset >> scaleDown) + 1, 0});
      for (int i = 0; i < counts.length; i++) {
        int next = ((i + offset) >> scaleDown) + 1;
        if (bucketIdx == next) {
          state[0] += counts[i];
          continue;
        }
        if (state[0] == 0) {
          state[0] = counts[i];
          continue;
        }
        int gap = next - bucketIdx - 1;
        if (gap > 2) {
          spans.add(new int[] {gap, 0});
        } else {
          for (int g = 0; g < gap; g++) {
            append(spans, deltas, state, 0);
          }
        }
        append(spans, deltas, state, state[0]);
        state[0] = counts[i];
        bucketIdx = next;
      }
      int gap = ((counts.length + offset - 1) >> scaleDown) + 1 - bucketIdx;
      if (gap > 2) {
        spans.add(new int[] {gap, 0});
      } else {
        for (int g = 0; g < gap; g++) {
          append(spans, deltas, state, 0);
        }
      }
      append(spans, deltas, state, state[0]);
      int[] s = new int[spans.size() * 2];
      for (int i = 0; i < spans.size(); i++) {
        s[2 * i] = spans.get(i)[0];
        s[2 * i + 1] = spans.get(i)[1];
      }
      return new Side(s, deltas.stream().mapToLong(Long::longValue).toArray());
    }

    private static void append(List<int[]> spans, List<Long> deltas, long[] state, long count) {
      spans.get(spans.size() - 1)[1]++;
      deltas.add(count - state[1]);
      state[1] = count;
    }
  }

  /** The non-zero bucket counts a layout holds, by Prometheus index. */
  static TreeMap<Long, Long> counts(Side s) {
    TreeMap<Long, Long> out = new TreeMap<>();
    long index = 0;
    long value = 0;
    int b = 0;
    int[] spans = s.spans();
    for (int k = 0; k < spans.length; k += 2) {
      index += spans[k];
      for (int j = 0; j < spans[k + 1]; j++) {
        value += s.deltas()[b++];
        if (value != 0) {
          out.put(index, value);
        }
        index++;
      }
    }
    assertThat(b).as("spans cover every delta").isEqualTo(s.deltas().length);
    return out;
  }

  @Test
  void mergingKeepsEveryCountInTheBucketThatCoversItSeeded() {
    long seed = System.nanoTime();
    SplittableRandom rnd = new SplittableRandom(seed);
    int agreedWithPrometheus = 0;
    for (int round = 0; round < 3000; round++) {
      int offset = rnd.nextInt(-600, 600);
      int len = rnd.nextInt(0, 120);
      double zeros = rnd.nextDouble();
      long[] c = new long[len];
      for (int i = 0; i < len; i++) {
        c[i] = rnd.nextDouble() < zeros ? 0 : rnd.nextLong(1, 1000);
      }
      int scaleDown = rnd.nextInt(0, 6);
      String what =
          "seed "
              + seed
              + " round "
              + round
              + ": offset "
              + offset
              + " counts "
              + Arrays.toString(c)
              + " scale-down "
              + scaleDown;
      Side got = NativeHistogramConversion.layout(c, offset, len, scaleDown);
      TreeMap<Long, Long> want = new TreeMap<>();
      for (int i = 0; i < len; i++) {
        if (c[i] != 0) {
          want.merge((((long) offset + i) >> scaleDown) + 1, c[i], Long::sum);
        }
      }
      assertThat(counts(got)).as(what).isEqualTo(want);
      if (len > 0) {
        // the first span starts at the first merged bucket; later spans follow gaps of three or
        // more
        assertThat(got.spans()[0]).as(what).isEqualTo((offset >> scaleDown) + 1);
        for (int k = 2; k < got.spans().length; k += 2) {
          assertThat(got.spans()[k]).as(what).isGreaterThan(2);
        }
      }
      Side prometheus = PrometheusLoop.layout(c, offset, scaleDown);
      if (scaleDown == 0 || counts(prometheus).equals(want)) {
        assertThat(got.spans()).as(what).containsExactly(prometheus.spans());
        assertThat(got.deltas()).as(what).containsExactly(prometheus.deltas());
        agreedWithPrometheus++;
      }
    }
    assertThat(agreedWithPrometheus).as("seed " + seed).isGreaterThan(1000);
  }
}
