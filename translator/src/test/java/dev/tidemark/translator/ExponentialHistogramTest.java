package dev.tidemark.translator;

import static dev.tidemark.translator.Otlp.CUMULATIVE;
import static dev.tidemark.translator.Otlp.DELTA;
import static dev.tidemark.translator.Otlp.SEC;
import static dev.tidemark.translator.Otlp.T0;
import static dev.tidemark.translator.Otlp.buckets;
import static dev.tidemark.translator.Otlp.edp;
import static dev.tidemark.translator.Otlp.expHistogram;
import static dev.tidemark.translator.Otlp.request;
import static org.assertj.core.api.Assertions.assertThat;

import dev.tidemark.tsdb.model.IntegerHistogram;
import dev.tidemark.tsdb.model.PromType;
import io.opentelemetry.proto.metrics.v1.ExponentialHistogramDataPoint;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class ExponentialHistogramTest extends TranslatorTestBase {

  /** "le=value" of the e_bucket samples at one timestamp, in emission order. */
  private List<String> bucketsAt(long timeNanos) {
    return appender.named("e_bucket").stream()
        .filter(s -> s.timestampMillis() == timeNanos / 1_000_000)
        .map(s -> s.labels().get("le") + "=" + (long) s.value())
        .toList();
  }

  @Test
  void positiveBucketsAtScaleZeroWithUnit() {
    reconfigure(TranslatorConfig.builder().exponentialHistogramScale(0).build());
    translate(
        request(
            expHistogram(
                "lat", "s", CUMULATIVE, edp(T0, 0, 0, 0, buckets(0, 3, 0, 2), buckets(0), 20.0))));
    assertThat(appender.named("lat_seconds_bucket"))
        .extracting(s -> s.labels().get("le") + "=" + (long) s.value())
        .containsExactly("0=0", "2=3", "4=3", "8=5", "+Inf=5");
    assertThat(appender.only("lat_seconds_sum").value()).isEqualTo(20.0);
    assertThat(appender.only("lat_seconds_count").value()).isEqualTo(5.0);
    assertThat(appender.only("lat_seconds_count").meta().type())
        .isEqualTo(dev.tidemark.tsdb.model.MetricType.EXPONENTIAL_HISTOGRAM);
    assertThat(translator.metadata().get("lat_seconds").orElseThrow().type())
        .isEqualTo(PromType.HISTOGRAM);
  }

  @Test
  void negativeZeroAndPositiveBucketsAscendCumulatively() {
    reconfigure(TranslatorConfig.builder().exponentialHistogramScale(0).build());
    // Negative index 1: [-4,-2), index 0: [-2,-1); zero bucket |v| <= 0.5; positive index 0: (1,2].
    translate(
        request(
            expHistogram(
                "e", "", CUMULATIVE, edp(T0, 0, 4, 0.5, buckets(0, 1), buckets(0, 2, 3), -5.0))));
    assertThat(bucketsAt(T0)).containsExactly("-2=3", "-1=5", "0.5=9", "2=10", "+Inf=10");
  }

  @Test
  void downscalingMergesBucketsExactly() {
    // Scale 2 (base 2^(1/4)), offset 0: buckets 0..7 cover (1, 4]; target scale 0 merges four at a
    // time.
    translate(
        request(
            expHistogram(
                "e",
                "",
                CUMULATIVE,
                edp(T0, 2, 0, 0, buckets(0, 1, 1, 1, 1, 2, 2, 2, 2), buckets(0), null))));
    assertThat(bucketsAt(T0)).startsWith("0=0", "1.189207115002721=1", "1.4142135623730951=2");
    reconfigure(TranslatorConfig.builder().exponentialHistogramScale(0).build());
    appender.clear();
    translate(
        request(
            expHistogram(
                "e",
                "",
                CUMULATIVE,
                edp(T0, 2, 0, 0, buckets(0, 1, 1, 1, 1, 2, 2, 2, 2), buckets(0), null))));
    assertThat(bucketsAt(T0)).containsExactly("0=0", "2=4", "4=12", "+Inf=12");
    assertThat(appender.named("e_sum")).isEmpty();
  }

  @Test
  void theBucketRangeOfASeriesIsStable() {
    reconfigure(TranslatorConfig.builder().exponentialHistogramScale(0).build());
    translate(
        request(
            expHistogram(
                "e", "", CUMULATIVE, edp(T0, 0, 0, 0, buckets(0, 1, 0, 1), buckets(0), null))));
    translate(
        request(
            expHistogram(
                "e", "", CUMULATIVE, edp(T0 + SEC, 0, 0, 0, buckets(1, 3), buckets(0), null))));
    // The second point only has (2,4] but every bucket seen before is still written.
    assertThat(bucketsAt(T0 + SEC)).containsExactly("0=0", "2=0", "4=3", "8=3", "+Inf=3");
  }

  @Test
  void bucketCapLowersTheStreamScale() {
    reconfigure(
        TranslatorConfig.builder()
            .exponentialHistogramScale(2)
            .exponentialHistogramMaxBuckets(4)
            .build());
    translate(
        request(
            expHistogram(
                "e",
                "",
                CUMULATIVE,
                edp(T0, 2, 0, 0, buckets(0, 1, 1, 1, 1, 1, 1, 1, 1), buckets(0), null))));
    // 8 buckets at scale 2 do not fit 4: the stream drops to scale 1.
    assertThat(bucketsAt(T0))
        .containsExactly(
            "0=0", "1.4142135623730951=2", "2=4", "2.82842712474619=6", "4=8", "+Inf=8");
  }

  @Test
  void countMismatchIsRejected() {
    ExponentialHistogramDataPoint p =
        edp(T0, 0, 0, 0, buckets(0, 1), buckets(0), 1.0).toBuilder().setCount(5).build();
    TranslationResult r = translate(request(expHistogram("e", "", CUMULATIVE, p)));
    assertThat(r.rejected(RejectionReason.INVALID_HISTOGRAM)).isEqualTo(1);
    assertThat(r.detail(RejectionReason.INVALID_HISTOGRAM)).contains("count 5");
  }

  @Test
  void scaleBelowMinusFourIsRejected() {
    TranslationResult r =
        translate(
            request(
                expHistogram(
                    "e", "", CUMULATIVE, edp(T0, -5, 0, 0, buckets(0, 1), buckets(0), 1.0))));
    assertThat(r.rejected(RejectionReason.INVALID_HISTOGRAM)).isEqualTo(1);
  }

  @Test
  void countSumOnlyAndDropModes() {
    reconfigure(
        TranslatorConfig.builder()
            .exponentialHistogramMode(TranslatorConfig.ExponentialHistogramMode.COUNT_SUM_ONLY)
            .build());
    translate(
        request(
            expHistogram("e", "", CUMULATIVE, edp(T0, 0, 0, 0, buckets(0, 1), buckets(0), 1.5))));
    assertThat(appender.named("e_bucket")).isEmpty();
    assertThat(appender.only("e_count").value()).isEqualTo(1);
    assertThat(appender.only("e_sum").value()).isEqualTo(1.5);

    reconfigure(
        TranslatorConfig.builder()
            .exponentialHistogramMode(TranslatorConfig.ExponentialHistogramMode.DROP)
            .build());
    TranslationResult r =
        translate(
            request(
                expHistogram(
                    "e", "", CUMULATIVE, edp(T0, 0, 0, 0, buckets(0, 1), buckets(0), 1.5))));
    assertThat(r.rejected(RejectionReason.UNSUPPORTED_EXPONENTIAL_HISTOGRAM)).isEqualTo(1);
  }

  /**
   * Mode native (issue #25): one native histogram sample of the series named after the family, as
   * NativeHistogramConversion makes it; delta points accumulated first; the stale flag the
   * histogram stale marker; a scale below −4 refused with Prometheus' words.
   */
  @Test
  void nativeModeStoresOneHistogramSamplePerPoint() {
    reconfigure(
        TranslatorConfig.builder()
            .exponentialHistogramMode(TranslatorConfig.ExponentialHistogramMode.NATIVE)
            .build());
    translate(
        request(
            expHistogram(
                "lat", "s", CUMULATIVE, edp(T0, 1, 1, 0, buckets(0, 3, 0, 2), buckets(0), 20.0))));
    assertThat(appender.named("lat_seconds_bucket")).isEmpty();
    assertThat(appender.named("lat_seconds_count")).isEmpty();
    RecordingAppender.Sample s = appender.only("lat_seconds");
    assertThat(s.labels().get("job")).isEqualTo("svc");
    assertThat(s.timestampMillis()).isEqualTo(T0 / 1_000_000);
    ExpHistogram h = new ExpHistogram();
    h.setFrom(edp(T0, 1, 1, 0, buckets(0, 3, 0, 2), buckets(0), 20.0));
    NativeHistogramConversion.Result want =
        NativeHistogramConversion.convert(
            h, false, false, TranslatorConfig.builder().build().exponentialHistogramMaxBuckets());
    assertThat(s.histogram()).isEqualTo(want.histogram());
    assertThat(((IntegerHistogram) s.histogram()).count()).isEqualTo(6);

    // delta points: accumulated, then converted
    appender.clear();
    translate(
        request(
            expHistogram("d", "", DELTA, edp(T0, 0, 0, 0, buckets(0, 1), buckets(0), 1.0)),
            expHistogram(
                "d",
                "",
                DELTA,
                edp(T0 + 60_000_000_000L, 0, 0, 0, buckets(0, 2), buckets(0), 2.0))));
    assertThat(appender.named("d"))
        .extracting(x -> ((IntegerHistogram) x.histogram()).count())
        .containsExactly(1L, 3L);

    // the stale flag
    appender.clear();
    translate(
        request(
            expHistogram(
                "lat",
                "s",
                CUMULATIVE,
                edp(T0 + 120_000_000_000L, 1, 0, 0, buckets(0), buckets(0), null).toBuilder()
                    .setFlags(1)
                    .build())));
    assertThat(appender.only("lat_seconds").histogram().isStale()).isTrue();

    // scale -5: refused, with Prometheus' words
    appender.clear();
    TranslationResult r =
        translate(
            request(
                expHistogram(
                    "lat", "s", CUMULATIVE, edp(T0, -5, 0, 0, buckets(0, 1), buckets(0), 1.0))));
    assertThat(appender.named("lat_seconds")).isEmpty();
    assertThat(r.rejected(RejectionReason.UNSUPPORTED_EXPONENTIAL_HISTOGRAM)).isEqualTo(1);
  }

  @Test
  void staleMarksEveryBucketEverEmitted() {
    reconfigure(TranslatorConfig.builder().exponentialHistogramScale(0).build());
    translate(
        request(
            expHistogram(
                "e", "", CUMULATIVE, edp(T0, 0, 0, 0, buckets(0, 1, 1), buckets(0), 1.0))));
    appender.clear();
    translate(
        request(
            expHistogram(
                "e",
                "",
                CUMULATIVE,
                ExponentialHistogramDataPoint.newBuilder()
                    .setTimeUnixNano(T0 + SEC)
                    .setFlags(1)
                    .build())));
    assertThat(appender.samples.stream().filter(s -> !s.name().equals("target_info")).toList())
        .allMatch(s -> s.valueBits() == 0x7ff0000000000002L)
        .extracting(
            s -> s.name() + (s.labels().get("le") == null ? "" : "{" + s.labels().get("le") + "}"))
        .containsExactlyInAnyOrder(
            "e_bucket{0}", "e_bucket{2}", "e_bucket{4}", "e_bucket{+Inf}", "e_sum", "e_count");
  }

  @Test
  void boundsAreExactAtPowersOfTwoAndIncreasing() {
    for (int scale = -4; scale <= 8; scale++) {
      double prev = 0;
      long range = scale >= 0 ? 600 : 60;
      for (long k = -range; k <= range; k++) {
        double b = ExpHistogram.lowerBound(k, scale);
        assertThat(b).as("scale %d index %d", scale, k).isGreaterThan(prev);
        prev = b;
        if (scale >= 0 && k % (1L << scale) == 0) {
          assertThat(b).isEqualTo(Math.scalb(1.0, (int) (k >> scale)));
        }
      }
    }
    assertThat(ExpHistogram.lowerBound(1, 1))
        .isEqualTo(Math.sqrt(2), org.assertj.core.data.Offset.offset(1e-15));
  }

  /**
   * Values from a seeded random walk recorded into an exponential histogram at scale 3, converted
   * at the default target scale 2, then the classic buckets fed to Prometheus' histogram_quantile
   * algorithm: each estimate must fall into the same classic bucket as the true quantile.
   */
  @Test
  void classicBucketsSupportHistogramQuantile() {
    long seed = 20260101L;
    SplittableRandom rnd = new SplittableRandom(seed);
    int scale = 3;
    List<Double> values = new ArrayList<>();
    for (int i = 0; i < 5000; i++) {
      double v = Math.exp(rnd.nextGaussian(0, 2));
      values.add(rnd.nextInt(10) == 0 ? -v : rnd.nextInt(50) == 0 ? 0.0 : v);
    }
    long[] pos = new long[400];
    long[] neg = new long[400];
    int off = -200;
    long zero = 0;
    double sum = 0;
    for (double v : values) {
      sum += v;
      if (v == 0) {
        zero++;
        continue;
      }
      int k = index(Math.abs(v), scale);
      if (v > 0) {
        pos[k - off]++;
      } else {
        neg[k - off]++;
      }
    }
    translate(
        request(
            expHistogram(
                "e",
                "",
                CUMULATIVE,
                edp(T0, scale, zero, 0, buckets(off, pos), buckets(off, neg), sum))));
    List<RecordingAppender.Sample> bs = appender.named("e_bucket");
    double[] le = new double[bs.size()];
    double[] cum = new double[bs.size()];
    for (int i = 0; i < bs.size(); i++) {
      String l = bs.get(i).labels().get("le");
      le[i] = l.equals("+Inf") ? Double.POSITIVE_INFINITY : Double.parseDouble(l);
      cum[i] = bs.get(i).value();
      if (i > 0) {
        assertThat(le[i]).as("le ascending, seed %d", seed).isGreaterThan(le[i - 1]);
        assertThat(cum[i]).as("cumulative, seed %d", seed).isGreaterThanOrEqualTo(cum[i - 1]);
      }
    }
    assertThat(cum[cum.length - 1]).isEqualTo(values.size());
    double[] sorted = values.stream().mapToDouble(Double::doubleValue).sorted().toArray();
    for (double q : new double[] {0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99}) {
      double truth = sorted[(int) Math.ceil(q * sorted.length) - 1];
      double est = histogramQuantile(q, le, cum);
      assertThat(Double.isNaN(est)).isFalse();
      assertThat(bucketOf(est, le))
          .as("q=%s truth=%s est=%s seed=%d", q, truth, est, seed)
          .isEqualTo(bucketOf(truth, le));
    }
  }

  private static int index(double v, int scale) {
    int k = (int) Math.ceil(Math.log(v) / Math.log(2) * (1 << scale)) - 1;
    while (ExpHistogram.lowerBound(k, scale) >= v) {
      k--;
    }
    while (ExpHistogram.lowerBound(k + 1, scale) < v) {
      k++;
    }
    return k;
  }

  private static int bucketOf(double v, double[] le) {
    for (int i = 0; i < le.length; i++) {
      if (v <= le[i]) {
        return i;
      }
    }
    return le.length;
  }

  /** Prometheus promql/quantile.go bucketQuantile for classic buckets. */
  static double histogramQuantile(double q, double[] le, double[] cum) {
    int n = le.length;
    double rank = q * cum[n - 1];
    int b = 0;
    while (b < n - 1 && cum[b] < rank) {
      b++;
    }
    if (b == n - 1) {
      return le[n - 2];
    }
    if (b == 0 && le[0] <= 0) {
      return le[0];
    }
    double start = 0;
    double end = le[b];
    double count = cum[b];
    if (b > 0) {
      start = le[b - 1];
      count -= cum[b - 1];
      rank -= cum[b - 1];
    }
    return start + (end - start) * (rank / count);
  }

  @Test
  void helperSanity() {
    assertThat(
            histogramQuantile(
                0.5, new double[] {1, 2, Double.POSITIVE_INFINITY}, new double[] {0, 10, 10}))
        .isEqualTo(1.5);
    assertThat(Arrays.toString(new int[] {index(1.5, 0), index(2.0, 0), index(2.1, 0)}))
        .isEqualTo("[0, 0, 1]");
  }
}
