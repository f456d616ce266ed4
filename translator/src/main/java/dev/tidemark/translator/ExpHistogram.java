package dev.tidemark.translator;

import io.opentelemetry.proto.metrics.v1.ExponentialHistogramDataPoint;
import java.util.Arrays;

/**
 * A mutable exponential histogram (S2 bucket model): {@code base = 2^(2^-scale)}, bucket index
 * {@code k} covers {@code (base^k, base^(k+1)]}, the negative range mirrors it by absolute value
 * and the zero bucket counts {@code |v| <= zeroThreshold}. Used as per-request scratch and as delta
 * accumulation state. Not thread-safe.
 *
 * <p>Downscaling by {@code d} maps index {@code k} to {@code k >> d} (floor division, also for
 * negative indices), which is exact: "perfect subsetting" (S2).
 */
final class ExpHistogram {
  private static final double LN2 = Math.log(2);

  int scale;
  double zeroThreshold;
  long zeroCount;
  long count;
  boolean hasSum;
  double sum;
  int posOffset;
  long[] pos = new long[16];
  int posLen;
  int negOffset;
  long[] neg = new long[16];
  int negLen;

  /** Copies the point's fields. */
  void setFrom(ExponentialHistogramDataPoint p) {
    scale = p.getScale();
    zeroThreshold = p.getZeroThreshold();
    zeroCount = p.getZeroCount();
    count = p.getCount();
    hasSum = p.hasSum();
    sum = p.getSum();
    ExponentialHistogramDataPoint.Buckets b = p.getPositive();
    posOffset = b.getOffset();
    posLen = b.getBucketCountsCount();
    pos = ensure(pos, posLen);
    for (int i = 0; i < posLen; i++) {
      pos[i] = b.getBucketCounts(i);
    }
    b = p.getNegative();
    negOffset = b.getOffset();
    negLen = b.getBucketCountsCount();
    neg = ensure(neg, negLen);
    for (int i = 0; i < negLen; i++) {
      neg[i] = b.getBucketCounts(i);
    }
  }

  /** Appends a bucket count (the in-place decoder's form of a repeated field). */
  void addBucket(boolean positive, long c) {
    if (positive) {
      if (posLen == pos.length) {
        pos = Arrays.copyOf(pos, posLen * 2 + 1);
      }
      pos[posLen++] = c;
    } else {
      if (negLen == neg.length) {
        neg = Arrays.copyOf(neg, negLen * 2 + 1);
      }
      neg[negLen++] = c;
    }
  }

  void setFrom(ExpHistogram o) {
    scale = o.scale;
    zeroThreshold = o.zeroThreshold;
    zeroCount = o.zeroCount;
    count = o.count;
    hasSum = o.hasSum;
    sum = o.sum;
    posOffset = o.posOffset;
    posLen = o.posLen;
    pos = ensure(pos, posLen);
    System.arraycopy(o.pos, 0, pos, 0, posLen);
    negOffset = o.negOffset;
    negLen = o.negLen;
    neg = ensure(neg, negLen);
    System.arraycopy(o.neg, 0, neg, 0, negLen);
  }

  ExpHistogram copy() {
    ExpHistogram c = new ExpHistogram();
    c.setFrom(this);
    return c;
  }

  /**
   * zero_count + Σ buckets, or -1 if a count is negative (≥ 2^63 unsigned) or the sum overflows.
   */
  long bucketTotal() {
    long t = zeroCount;
    if (t < 0) {
      return -1;
    }
    for (int i = 0; i < posLen; i++) {
      if (pos[i] < 0) {
        return -1;
      }
      t += pos[i];
    }
    for (int i = 0; i < negLen; i++) {
      if (neg[i] < 0) {
        return -1;
      }
      t += neg[i];
    }
    return t < 0 ? -1 : t;
  }

  /** Lowers the scale by {@code by} ≥ 0, merging buckets. */
  void downscale(int by) {
    if (by <= 0) {
      return;
    }
    by = Math.min(by, 62);
    int[] r = downscale(pos, posOffset, posLen, by);
    posOffset = r[0];
    posLen = r[1];
    r = downscale(neg, negOffset, negLen, by);
    negOffset = r[0];
    negLen = r[1];
    scale -= by;
  }

  private static int[] downscale(long[] a, int off, int len, int by) {
    if (len == 0) {
      return new int[] {off >> by, 0};
    }
    int newOff = off >> by;
    int newLen = (int) (((long) off + len - 1) >> by) - newOff + 1;
    for (int i = 0; i < len; i++) {
      int j = (int) (((long) off + i) >> by) - newOff;
      if (j != i) {
        a[j] += a[i];
        a[i] = 0;
      }
    }
    return new int[] {newOff, newLen};
  }

  /** Moves buckets entirely inside [-zt, zt] (upper bound ≤ zt) into the zero bucket. */
  void widenZero(double zt) {
    if (zt <= zeroThreshold) {
      return;
    }
    zeroThreshold = zt;
    int k = 0;
    while (k < posLen && lowerBound((long) posOffset + k + 1, scale) <= zt) {
      zeroCount += pos[k];
      k++;
    }
    if (k > 0) {
      System.arraycopy(pos, k, pos, 0, posLen - k);
      Arrays.fill(pos, posLen - k, posLen, 0);
      posOffset += k;
      posLen -= k;
    }
    k = 0;
    while (k < negLen && lowerBound((long) negOffset + k + 1, scale) <= zt) {
      zeroCount += neg[k];
      k++;
    }
    if (k > 0) {
      System.arraycopy(neg, k, neg, 0, negLen - k);
      Arrays.fill(neg, negLen - k, negLen, 0);
      negOffset += k;
      negLen -= k;
    }
  }

  /**
   * Adds {@code o} (delta accumulation, C2 {@code add.go}): both at the lower scale, the zero
   * bucket widened to the larger threshold, buckets merged, then downscaled further while either
   * range exceeds {@code maxBuckets} (the larger of the two needs wins, contrib #37416).
   */
  void add(ExpHistogram other, int maxBuckets) {
    ExpHistogram o = other.copy();
    int s = Math.min(scale, o.scale);
    downscale(scale - s);
    o.downscale(o.scale - s);
    double zt = Math.max(zeroThreshold, o.zeroThreshold);
    widenZero(zt);
    o.widenZero(zt);
    zeroCount += o.zeroCount;
    count += o.count;
    if (hasSum && o.hasSum) {
      sum += o.sum;
    } else {
      hasSum = false;
    }
    long[] merged = merge(pos, posOffset, posLen, o.pos, o.posOffset, o.posLen);
    if (merged != null) {
      posOffset = (int) merged[0];
      posLen = merged.length - 1;
      pos = ensure(pos, posLen);
      System.arraycopy(merged, 1, pos, 0, posLen);
    }
    merged = merge(neg, negOffset, negLen, o.neg, o.negOffset, o.negLen);
    if (merged != null) {
      negOffset = (int) merged[0];
      negLen = merged.length - 1;
      neg = ensure(neg, negLen);
      System.arraycopy(merged, 1, neg, 0, negLen);
    }
    int need =
        Math.max(
            downscaleNeeded(posOffset, posLen, maxBuckets),
            downscaleNeeded(negOffset, negLen, maxBuckets));
    downscale(need);
  }

  static int downscaleNeeded(int off, int len, int maxBuckets) {
    if (len == 0) {
      return 0;
    }
    int d = 0;
    long lo = off;
    long hi = (long) off + len - 1;
    while ((hi >> d) - (lo >> d) + 1 > maxBuckets) {
      d++;
    }
    return d;
  }

  /** [offset, counts...] or null if {@code b} is empty (nothing to merge). */
  private static long[] merge(long[] a, int aOff, int aLen, long[] b, int bOff, int bLen) {
    if (bLen == 0) {
      return null;
    }
    if (aLen == 0) {
      long[] r = new long[bLen + 1];
      r[0] = bOff;
      System.arraycopy(b, 0, r, 1, bLen);
      return r;
    }
    int lo = Math.min(aOff, bOff);
    int hi = Math.max(aOff + aLen, bOff + bLen);
    long[] r = new long[hi - lo + 1];
    r[0] = lo;
    for (int i = 0; i < aLen; i++) {
      r[1 + aOff - lo + i] += a[i];
    }
    for (int i = 0; i < bLen; i++) {
      r[1 + bOff - lo + i] += b[i];
    }
    return r;
  }

  /**
   * {@code base^k} at {@code scale}, computed stably (contract §3.4 b): exact powers of two where
   * {@code k} is a multiple of {@code 2^scale} (always for scale ≤ 0), else {@code 2 * exp((k -
   * 2^s) * ln2 * 2^-s)} (collector-contrib elasticsearchexporter {@code exphistogram.go}).
   */
  static double lowerBound(long k, int scale) {
    if (scale <= 0) {
      return pow2(k << -scale);
    }
    long pow = 1L << scale;
    if (Math.floorMod(k, pow) == 0) {
      return pow2(Math.floorDiv(k, pow));
    }
    return 2 * Math.exp((k - pow) * Math.scalb(LN2, -scale));
  }

  private static double pow2(long e) {
    if (e > 1100) {
      return Double.POSITIVE_INFINITY;
    }
    if (e < -1100) {
      return 0;
    }
    return Math.scalb(1.0, (int) e);
  }

  private static long[] ensure(long[] a, int n) {
    return a.length >= n ? a : new long[Math.max(n, a.length * 2)];
  }
}
