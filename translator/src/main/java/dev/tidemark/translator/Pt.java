package dev.tidemark.translator;

import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.metrics.v1.ExponentialHistogramDataPoint;
import io.opentelemetry.proto.metrics.v1.HistogramDataPoint;
import io.opentelemetry.proto.metrics.v1.NumberDataPoint;
import io.opentelemetry.proto.metrics.v1.SummaryDataPoint;
import java.util.Arrays;
import java.util.List;

/**
 * One data point as the translation rules read it, filled either from a decoded protobuf point (the
 * tree path: {@code set(...)}, attributes as {@link #attrs}) or straight from the wire bytes
 * ({@link InPlace}: {@link #attrs} null, the attribute fields as byte ranges of {@link #buf}). Only
 * the fields of the point's kind are meaningful. Per-request scratch, reused point after point;
 * nothing here outlives the point.
 */
final class Pt {
  static final int NO_VALUE = 0;
  static final int AS_DOUBLE = 1;
  static final int AS_INT = 2;

  /** Tree path: the decoded attributes; null on the in-place path. */
  List<KeyValue> attrs;

  long startNanos;
  long timeNanos;
  int flags;
  // NumberDataPoint
  int valueCase;
  double asDouble;
  long asInt;
  // Histogram, exponential histogram and summary
  long count;
  boolean hasSum;
  double sum;
  double[] bounds = new double[32];
  int nb;
  long[] counts = new long[32];
  int nc;
  double[] qs = new double[16];
  double[] qv = new double[16];
  int nq;
  final ExpHistogram exp = new ExpHistogram();
  // In-place path: each attribute field, tag and length prefix included, as [start, end) of buf.
  byte[] buf;
  int[] attrStart = new int[16];
  int[] attrEnd = new int[16];
  int na;

  Pt set(NumberDataPoint p) {
    attrs = p.getAttributesList();
    startNanos = p.getStartTimeUnixNano();
    timeNanos = p.getTimeUnixNano();
    flags = p.getFlags();
    switch (p.getValueCase()) {
      case AS_DOUBLE -> {
        valueCase = AS_DOUBLE;
        asDouble = p.getAsDouble();
      }
      case AS_INT -> {
        valueCase = AS_INT;
        asInt = p.getAsInt();
      }
      default -> valueCase = NO_VALUE;
    }
    return this;
  }

  Pt set(HistogramDataPoint p) {
    attrs = p.getAttributesList();
    startNanos = p.getStartTimeUnixNano();
    timeNanos = p.getTimeUnixNano();
    flags = p.getFlags();
    count = p.getCount();
    hasSum = p.hasSum();
    sum = p.getSum();
    nb = 0;
    for (int i = 0; i < p.getExplicitBoundsCount(); i++) {
      addBound(p.getExplicitBounds(i));
    }
    nc = 0;
    for (int i = 0; i < p.getBucketCountsCount(); i++) {
      addCount(p.getBucketCounts(i));
    }
    return this;
  }

  Pt set(ExponentialHistogramDataPoint p) {
    attrs = p.getAttributesList();
    startNanos = p.getStartTimeUnixNano();
    timeNanos = p.getTimeUnixNano();
    flags = p.getFlags();
    hasSum = p.hasSum();
    exp.setFrom(p);
    return this;
  }

  Pt set(SummaryDataPoint p) {
    attrs = p.getAttributesList();
    startNanos = p.getStartTimeUnixNano();
    timeNanos = p.getTimeUnixNano();
    flags = p.getFlags();
    count = p.getCount();
    sum = p.getSum();
    nq = 0;
    for (int i = 0; i < p.getQuantileValuesCount(); i++) {
      SummaryDataPoint.ValueAtQuantile q = p.getQuantileValues(i);
      addQuantile(q.getQuantile(), q.getValue());
    }
    return this;
  }

  /** Clears every field for a point decoded in place (proto3 defaults). */
  void clearForWire(byte[] wire) {
    attrs = null;
    buf = wire;
    na = 0;
    startNanos = 0;
    timeNanos = 0;
    flags = 0;
    valueCase = NO_VALUE;
    asDouble = 0;
    asInt = 0;
    count = 0;
    hasSum = false;
    sum = 0;
    nb = 0;
    nc = 0;
    nq = 0;
    ExpHistogram h = exp;
    h.scale = 0;
    h.zeroThreshold = 0;
    h.zeroCount = 0;
    h.count = 0;
    h.hasSum = false;
    h.sum = 0;
    h.posOffset = 0;
    h.posLen = 0;
    h.negOffset = 0;
    h.negLen = 0;
  }

  void addBound(double b) {
    if (nb == bounds.length) {
      bounds = Arrays.copyOf(bounds, nb * 2);
    }
    bounds[nb++] = b;
  }

  void addCount(long c) {
    if (nc == counts.length) {
      counts = Arrays.copyOf(counts, nc * 2);
    }
    counts[nc++] = c;
  }

  void addQuantile(double q, double v) {
    if (nq == qs.length) {
      qs = Arrays.copyOf(qs, nq * 2);
      qv = Arrays.copyOf(qv, nq * 2);
    }
    qs[nq] = q;
    qv[nq++] = v;
  }

  void addAttribute(int start, int end) {
    if (na == attrStart.length) {
      attrStart = Arrays.copyOf(attrStart, na * 2);
      attrEnd = Arrays.copyOf(attrEnd, na * 2);
    }
    attrStart[na] = start;
    attrEnd[na++] = end;
  }
}
