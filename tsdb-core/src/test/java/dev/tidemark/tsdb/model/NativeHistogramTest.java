package dev.tidemark.tsdb.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.tidemark.tsdb.model.InvalidHistogramException.Reason;
import org.assertj.core.api.AbstractThrowableAssert;
import org.junit.jupiter.api.Test;

/**
 * The histogram model refuses what Prometheus' {@code Histogram.Validate} and {@code
 * FloatHistogram.Validate} refuse (cases after Prometheus' {@code model/histogram} tests), each
 * with its reason, and accepts the rest.
 */
class NativeHistogramTest {
  private static final CounterResetHint U = CounterResetHint.UNKNOWN;
  private static final double NAN = Double.NaN;

  private static HistogramLayout exp(int schema, int[] pos, int[] neg) {
    return HistogramLayout.exponential(schema, 0.001, pos, neg);
  }

  private static AbstractThrowableAssert<?, ?> refused(Runnable r, Reason reason) {
    return assertThatThrownBy(r::run)
        .isInstanceOf(InvalidHistogramException.class)
        .satisfies(e -> assertThat(((InvalidHistogramException) e).reason()).isEqualTo(reason));
  }

  @Test
  void schemas() {
    for (int s = -4; s <= 8; s++) {
      assertThat(exp(s, null, null).schema()).isEqualTo(s);
    }
    refused(() -> exp(9, null, null), Reason.INVALID_SCHEMA).hasMessageContaining("got schema 9");
    refused(() -> exp(-5, null, null), Reason.INVALID_SCHEMA);
    refused(() -> exp(20, null, null), Reason.INVALID_SCHEMA);
    refused(() -> exp(-53, null, null), Reason.INVALID_SCHEMA); // exponential() never custom...
    // ...but of() with schema -53 is the custom layout
    assertThat(
            HistogramLayout.of(-53, 0, new int[] {0, 2}, new int[0], new double[] {1, 2})
                .usesCustomBuckets())
        .isTrue();
  }

  @Test
  void spans() {
    // the first span's offset may be negative (bucket indices below 0), no later one
    assertThat(exp(0, new int[] {-3, 2, 0, 1}, null).positiveBucketCount()).isEqualTo(3);
    refused(() -> exp(0, new int[] {-3, 2, -1, 1}, null), Reason.SPAN_NEGATIVE_OFFSET)
        .hasMessageContaining("span number 2 with offset -1");
    refused(() -> exp(0, null, new int[] {0, 1, -2, 1}), Reason.SPAN_NEGATIVE_OFFSET)
        .hasMessageContaining("negative side");
    refused(() -> exp(0, new int[] {0, -1}, null), Reason.SPAN_NEGATIVE_LENGTH);
    refused(
            () ->
                IntegerHistogram.of(
                    exp(0, new int[] {0, 2}, null), U, 3, 0, 1.0, new long[] {1, 1, 0}, null),
            Reason.SPANS_BUCKETS_MISMATCH)
        .hasMessageContaining("spans need 2 buckets, have 3 buckets");
    refused(
        () -> FloatHistogram.of(exp(0, null, new int[] {0, 2}), U, 3, 0, 1, null, new double[] {1}),
        Reason.SPANS_BUCKETS_MISMATCH);
    refused(
        () -> exp(0, new int[] {0, HistogramLayout.MAX_BUCKETS, 0, 1}, null),
        Reason.TOO_MANY_BUCKETS);
  }

  @Test
  void integerCounts() {
    HistogramLayout l = exp(1, new int[] {0, 3}, new int[] {1, 1});
    // positive deltas 2, 1, -3 are counts 2, 3, 0; negative 4; zero count 1: total 10
    IntegerHistogram ok =
        IntegerHistogram.of(l, U, 10, 1, 7.5, new long[] {2, 1, -3}, new long[] {4});
    assertThat(ok.count()).isEqualTo(10);
    refused(
            () -> IntegerHistogram.of(l, U, 10, 1, 7.5, new long[] {2, -3, 1}, new long[] {4}),
            Reason.NEGATIVE_BUCKET_COUNT)
        .hasMessageContaining("bucket number 2 has observation count of -1");
    refused(
            () -> IntegerHistogram.of(l, U, 11, 1, 7.5, new long[] {2, 1, -3}, new long[] {4}),
            Reason.COUNT_MISMATCH)
        .hasMessageContaining("10 observations found in buckets, but the Count field is 11");
    // with a NaN sum the count may exceed the buckets (NaN observations), never fall short
    IntegerHistogram.of(l, U, 12, 1, NAN, new long[] {2, 1, -3}, new long[] {4});
    refused(
        () -> IntegerHistogram.of(l, U, 9, 1, NAN, new long[] {2, 1, -3}, new long[] {4}),
        Reason.COUNT_NOT_BIG_ENOUGH);
    // counts are uint64: 2^63 + 1 observations
    HistogramLayout one = exp(0, new int[] {0, 1}, null);
    IntegerHistogram big =
        IntegerHistogram.of(one, U, Long.MIN_VALUE, 1, 1, new long[] {Long.MAX_VALUE}, null);
    assertThat(Long.toUnsignedString(big.count())).isEqualTo("9223372036854775808");
  }

  @Test
  void floatCounts() {
    HistogramLayout l = exp(0, new int[] {0, 2}, new int[] {0, 1});
    // as Prometheus: the count is not compared with the buckets, NaN counts pass
    FloatHistogram.of(l, U, 1, 0, 1, new double[] {5, 7}, new double[] {1});
    FloatHistogram.of(l, U, NAN, NAN, 1, new double[] {NAN, 7}, new double[] {NAN});
    refused(
        () -> FloatHistogram.of(l, U, 1, 0, 1, new double[] {5, -0.5}, new double[] {1}),
        Reason.NEGATIVE_BUCKET_COUNT);
    refused(
            () -> FloatHistogram.of(l, U, 1, 0, 1, new double[] {5, 1}, new double[] {-1}),
            Reason.NEGATIVE_BUCKET_COUNT)
        .hasMessageContaining("negative side");
    refused(
            () -> FloatHistogram.of(l, U, 1, -1, 1, new double[] {5, 1}, new double[] {1}),
            Reason.NEGATIVE_BUCKET_COUNT)
        .hasMessageContaining("zero bucket");
    refused(
        () -> FloatHistogram.of(l, U, -2, 0, 1, new double[] {5, 1}, new double[] {1}),
        Reason.NEGATIVE_COUNT);
  }

  @Test
  void customBuckets() {
    HistogramLayout l = HistogramLayout.custom(new int[] {0, 2, 1, 1}, new double[] {1, 2, 5});
    assertThat(l.schema()).isEqualTo(HistogramLayout.CUSTOM_BUCKETS_SCHEMA);
    IntegerHistogram.of(l, U, 7, 0, 3, new long[] {1, 1, 2}, null); // counts 1, 2, 4
    refused(
        () -> HistogramLayout.custom(new int[] {0, 1}, new double[] {1, NAN}),
        Reason.CUSTOM_BOUNDS_NAN);
    refused(
        () -> HistogramLayout.custom(new int[] {0, 1}, new double[] {1, 1}),
        Reason.CUSTOM_BOUNDS_NOT_INCREASING);
    refused(
        () -> HistogramLayout.custom(new int[] {0, 1}, new double[] {1, Double.POSITIVE_INFINITY}),
        Reason.CUSTOM_BOUNDS_INFINITE);
    // 3 bounds make 4 buckets (the last to +Inf): spans may reach 4, not 5
    HistogramLayout.custom(new int[] {1, 3}, new double[] {1, 2, 5});
    refused(
        () -> HistogramLayout.custom(new int[] {2, 3}, new double[] {1, 2, 5}),
        Reason.CUSTOM_BOUNDS_TOO_FEW);
    refused(
        () -> HistogramLayout.custom(new int[] {-1, 1}, new double[] {1}),
        Reason.SPAN_NEGATIVE_OFFSET);
    refused(
        () -> HistogramLayout.of(-53, 0.5, new int[] {0, 1}, new int[0], new double[] {1}),
        Reason.CUSTOM_BUCKETS_ZERO_THRESHOLD);
    refused(
        () -> HistogramLayout.of(-53, 0, new int[] {0, 1}, new int[] {0, 1}, new double[] {1}),
        Reason.CUSTOM_BUCKETS_NEGATIVE_BUCKETS);
    refused(
        () -> IntegerHistogram.of(l, U, 8, 1, 3, new long[] {1, 1, 2}, null),
        Reason.CUSTOM_BUCKETS_ZERO_COUNT);
    refused(
        () -> FloatHistogram.of(l, U, 7, 1, 3, new double[] {1, 1, 2}, null),
        Reason.CUSTOM_BUCKETS_ZERO_COUNT);
    refused(
        () -> HistogramLayout.of(0, 0, new int[0], new int[0], new double[] {1}),
        Reason.EXPONENTIAL_WITH_CUSTOM_BOUNDS);
  }

  @Test
  void equalityIsBitExact() {
    HistogramLayout l = exp(0, new int[] {0, 1}, null);
    long stale = NativeHistogram.STALE_SUM_BITS;
    IntegerHistogram a = IntegerHistogram.ofBits(l, U, 1, 0, stale, new long[] {1}, new long[0]);
    IntegerHistogram b =
        IntegerHistogram.ofBits(l, U, 1, 0, 0x7ff8000000000000L, new long[] {1}, new long[0]);
    assertThat(a.isStale()).isTrue();
    assertThat(b.isStale()).isFalse();
    assertThat(a).isNotEqualTo(b);
    assertThat(a)
        .isEqualTo(IntegerHistogram.ofBits(l, U, 1, 0, stale, new long[] {1}, new long[0]));
    assertThat(a.hashCode())
        .isEqualTo(
            IntegerHistogram.ofBits(l, U, 1, 0, stale, new long[] {1}, new long[0]).hashCode());
    assertThat(HistogramLayout.exponential(0, 0.0, null, null))
        .isNotEqualTo(HistogramLayout.exponential(0, -0.0, null, null));
    assertThat(FloatHistogram.of(l, U, 1, 0, 1, new double[] {1}, null))
        .isNotEqualTo(IntegerHistogram.of(l, U, 1, 0, 1, new long[] {1}, null));
    assertThat(
            IntegerHistogram.of(l, CounterResetHint.COUNTER_RESET, 1, 0, 1, new long[] {1}, null))
        .isNotEqualTo(IntegerHistogram.of(l, U, 1, 0, 1, new long[] {1}, null));
  }

  @Test
  void arraysAreCopied() {
    int[] spans = {0, 1};
    long[] deltas = {1};
    HistogramLayout l = HistogramLayout.exponential(0, 0, spans, null);
    IntegerHistogram h = IntegerHistogram.of(l, U, 1, 0, 1, deltas, null);
    spans[1] = 5;
    deltas[0] = 7;
    h.positiveDeltas()[0] = 9;
    l.positiveSpans()[1] = 9;
    assertThat(l.positiveSpanLength(0)).isEqualTo(1);
    assertThat(h.positiveDelta(0)).isEqualTo(1);
  }

  @Test
  void hintIdsAreStable() {
    assertThat(CounterResetHint.values())
        .extracting(CounterResetHint::id)
        .containsExactly(0, 1, 2, 3);
    assertThat(CounterResetHint.fromId(3)).isEqualTo(CounterResetHint.GAUGE);
    assertThatThrownBy(() -> CounterResetHint.fromId(4))
        .isInstanceOf(IllegalArgumentException.class);
  }
}
