package dev.tidemark.translator;

import dev.tidemark.tsdb.append.SampleBatch;
import dev.tidemark.tsdb.model.CounterResetHint;
import dev.tidemark.tsdb.model.HistogramLayout;
import dev.tidemark.tsdb.model.IntegerHistogram;
import dev.tidemark.tsdb.model.InvalidHistogramException;
import java.util.Arrays;
import java.util.Locale;

/**
 * An OTLP exponential histogram data point ({@link ExpHistogram}) as a native histogram of the
 * tsdb-core model ({@link IntegerHistogram}), as Prometheus 3.14's OTLP endpoint converts it
 * ({@code exponentialToNativeHistogram} and {@code convertBucketsLayout} in its {@code
 * histograms.go}). Issue #25; not wired into ingest yet (docs/architecture.md, "Native
 * histograms"): exponential histograms are still written the configured classic way.
 *
 * <p><b>Scale to schema.</b> A scale of −4..8 is the schema. Above 8 the buckets are merged down to
 * schema 8: OTLP bucket {@code k} at scale {@code s} lies in bucket {@code k >> (s - 8)} at scale 8
 * (floor, negative indices too), which is exact, every bound of the coarser scale being one of the
 * finer. Below −4 the point is refused with Prometheus' message. OTLP bucket {@code k} covers
 * {@code (base^k, base^(k+1)]} and Prometheus' bucket {@code i} covers {@code (base^(i-1),
 * base^i]}, so the index moves up by one.
 *
 * <p><b>Spans.</b> Buckets are laid out as Prometheus lays them out, so the same point gives the
 * same spans and deltas: the first span starts at the first bucket's index; a bucket is written
 * when its count is not zero, and the last bucket always; before a written bucket, a gap of at most
 * two buckets since the previous one is filled with zero buckets, a longer one starts a new span.
 * Counts are written as deltas from the previous bucket. Where Prometheus' merging loop misplaces
 * counts (a merged bucket whose first OTLP buckets are zero, after a merged bucket of count zero:
 * its count goes partly to the bucket before), this class puts every count in its own bucket, so
 * the two differ there; the property test checks every merged bucket against the sum of its OTLP
 * buckets.
 *
 * <p><b>Bucket limit.</b> With {@code maxBuckets > 0}, while the buckets of both sides together are
 * more than that, the schema is lowered by one more (as Prometheus' scrape-time {@code
 * native_histogram_bucket_limit} reduces resolution); at schema −4 the point is refused.
 * Prometheus' OTLP endpoint has no such limit; the translator's is {@link
 * TranslatorConfig#exponentialHistogramMaxBuckets()} (issue #25's 160).
 *
 * <p><b>The rest.</b> The zero threshold is the point's when it is positive, else 1e-128
 * (Prometheus always uses 1e-128; the OTLP specification asks for the point's); NaN, negative or
 * infinite thresholds are refused. Zero count and count carry over; the sum is the point's, or 0
 * when it has none (Prometheus' choice; the OTLP specification would drop such a point). A point
 * flagged "no recorded value" is the staleness marker: sum StaleNaN and count the StaleNaN bits, as
 * Prometheus writes it. The reset hint is unknown, or gauge for a delta histogram stored as such. A
 * zero count with a non-zero sum is written with Prometheus' warning. Everything else Prometheus'
 * {@code Histogram.Validate} refuses (a count that does not match the buckets, say) is refused with
 * the model's reason and message.
 *
 * <p>Stateless and thread-safe.
 */
final class NativeHistogramConversion {
  private NativeHistogramConversion() {}

  /** The zero threshold of a point without one (S1, and what Prometheus always writes). */
  static final double DEFAULT_ZERO_THRESHOLD = 1e-128;

  /** Prometheus' text when a point cannot be given a bucket layout within the bucket limit. */
  static final String BUCKET_LIMIT = "histogram bucket limit exceeded";

  /**
   * What a point became: a histogram (perhaps with a warning for the partial-success message) or a
   * refusal with its reason and detail.
   *
   * @param invalid the model's reason when the model refused the histogram, else null
   */
  record Result(
      IntegerHistogram histogram,
      String warning,
      RejectionReason reason,
      InvalidHistogramException.Reason invalid,
      String detail) {

    static Result refused(RejectionReason reason, String detail) {
      return new Result(null, null, reason, null, detail);
    }

    boolean accepted() {
      return histogram != null;
    }
  }

  /**
   * Converts one point.
   *
   * @param h the point's fields (not changed)
   * @param noRecordedValue the point's flag: write the staleness marker
   * @param gauge give the gauge reset hint (a delta histogram stored as it came) rather than
   *     unknown
   * @param maxBuckets most buckets on both sides together, 0 for no limit
   */
  static Result convert(ExpHistogram h, boolean noRecordedValue, boolean gauge, int maxBuckets) {
    int scale = h.scale;
    if (scale < HistogramLayout.MIN_EXPONENTIAL_SCHEMA) {
      return Result.refused(
          RejectionReason.UNSUPPORTED_EXPONENTIAL_HISTOGRAM,
          "cannot convert exponential to native histogram. Scale must be >= "
              + HistogramLayout.MIN_EXPONENTIAL_SCHEMA
              + ", was "
              + scale);
    }
    double zt = h.zeroThreshold;
    if (Double.isNaN(zt) || zt < 0 || Double.isInfinite(zt)) {
      return Result.refused(
          RejectionReason.INVALID_HISTOGRAM,
          "zero_threshold " + zt + " is not a finite number >= 0");
    }
    if (zt == 0) {
      zt = DEFAULT_ZERO_THRESHOLD;
    }
    int scaleDown = Math.max(0, scale - HistogramLayout.MAX_EXPONENTIAL_SCHEMA);
    int schema = scale - scaleDown;
    Side pos;
    Side neg;
    try {
      while (true) {
        pos = layout(h.pos, h.posOffset, h.posLen, scaleDown);
        neg = layout(h.neg, h.negOffset, h.negLen, scaleDown);
        if (maxBuckets <= 0 || (long) pos.buckets() + neg.buckets() <= maxBuckets) {
          break;
        }
        if (schema <= HistogramLayout.MIN_EXPONENTIAL_SCHEMA) {
          return Result.refused(
              RejectionReason.INVALID_HISTOGRAM,
              BUCKET_LIMIT
                  + ": "
                  + ((long) pos.buckets() + neg.buckets())
                  + " buckets at schema "
                  + schema
                  + ", the limit is "
                  + maxBuckets);
        }
        scaleDown++;
        schema--;
      }
    } catch (ArithmeticException e) {
      return Result.refused(
          RejectionReason.INVALID_HISTOGRAM, "bucket counts out of range: they add up past 2^63");
    }
    long count;
    long sumBits;
    String warning = null;
    if (noRecordedValue) {
      sumBits = SampleBatch.STALE_NAN_BITS;
      count = SampleBatch.STALE_NAN_BITS;
    } else {
      double sum = h.hasSum ? h.sum : 0.0;
      sumBits = Double.doubleToRawLongBits(sum);
      count = h.count;
      if (count == 0 && sum != 0) {
        warning =
            "exponential histogram data point has zero count, but non-zero sum: " + goFloat(sum);
      }
    }
    try {
      HistogramLayout layout = HistogramLayout.exponential(schema, zt, pos.spans, neg.spans);
      IntegerHistogram out =
          IntegerHistogram.ofBits(
              layout,
              gauge ? CounterResetHint.GAUGE : CounterResetHint.UNKNOWN,
              count,
              h.zeroCount,
              sumBits,
              pos.deltas,
              neg.deltas);
      return new Result(out, warning, null, null, null);
    } catch (InvalidHistogramException e) {
      return new Result(null, null, RejectionReason.INVALID_HISTOGRAM, e.reason(), e.getMessage());
    }
  }

  /** Go's {@code %f}: six decimals, {@code +Inf}/{@code -Inf}/{@code NaN}. */
  static String goFloat(double v) {
    if (Double.isNaN(v)) {
      return "NaN";
    }
    if (Double.isInfinite(v)) {
      return v > 0 ? "+Inf" : "-Inf";
    }
    return String.format(Locale.ROOT, "%f", v);
  }

  /** One side's layout: spans as {@code [offset, length, ...]} and one delta per bucket. */
  record Side(int[] spans, long[] deltas) {
    int buckets() {
      return deltas.length;
    }
  }

  private static final Side EMPTY = new Side(new int[0], new long[0]);

  /**
   * One side's OTLP buckets ({@code counts[0..len)} at OTLP indices {@code offset, offset+1, ...},
   * unsigned) merged by {@code 2^scaleDown} and laid out as Prometheus lays them out (class
   * comment).
   *
   * @throws ArithmeticException if a count is 2^63 or more or a merged count passes it
   */
  static Side layout(long[] counts, int offset, int len, int scaleDown) {
    if (len == 0) {
      return EMPTY;
    }
    int shift = Math.min(scaleDown, 63);
    // Prometheus' index of OTLP bucket offset + i: ((offset + i) >> scaleDown) + 1.
    long first = ((long) offset >> shift) + 1;
    long last = (((long) offset + len - 1) >> shift) + 1;
    int merged = Math.toIntExact(last - first + 1);
    long[] sums = new long[merged];
    for (int i = 0; i < len; i++) {
      long c = counts[i];
      if (c < 0) {
        throw new ArithmeticException("count at or above 2^63");
      }
      int j = (int) ((((long) offset + i) >> shift) + 1 - first);
      sums[j] = Math.addExact(sums[j], c);
    }
    int[] spans = new int[8];
    int spanCount = 1;
    spans[0] = Math.toIntExact(first);
    long[] deltas = new long[Math.min(merged, 64)];
    int n = 0;
    long prev = 0;
    long written = first - 1; // index of the last bucket written (none yet: just before the first)
    for (int j = 0; j < merged; j++) {
      if (sums[j] == 0 && j < merged - 1) {
        continue;
      }
      long index = first + j;
      long gap = index - written - 1;
      if (gap > 2) {
        if (spanCount * 2 == spans.length) {
          spans = Arrays.copyOf(spans, spans.length * 2);
        }
        spans[spanCount * 2] = (int) gap;
        spans[spanCount * 2 + 1] = 0;
        spanCount++;
      } else {
        for (long g = 0; g < gap; g++) {
          if (n == deltas.length) {
            deltas = Arrays.copyOf(deltas, deltas.length * 2);
          }
          deltas[n++] = -prev;
          prev = 0;
          spans[spanCount * 2 - 1]++;
        }
      }
      if (n == deltas.length) {
        deltas = Arrays.copyOf(deltas, deltas.length * 2);
      }
      deltas[n++] = sums[j] - prev;
      prev = sums[j];
      spans[spanCount * 2 - 1]++;
      written = index;
    }
    return new Side(Arrays.copyOf(spans, spanCount * 2), Arrays.copyOf(deltas, n));
  }
}
