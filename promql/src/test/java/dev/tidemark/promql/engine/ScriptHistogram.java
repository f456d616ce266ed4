package dev.tidemark.promql.engine;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.DoubleUnaryOperator;

/**
 * A native-histogram literal of the PromQL test scripts, {@code {{schema:1 sum:-0.3 count:3.1
 * z_bucket:7.1 z_bucket_w:0.05 buckets:[5.1 10 7] offset:-3 n_buckets:[4.1 5] n_offset:-5
 * counter_reset_hint:gauge custom_values:[0.1 1 5]}}}, as a float histogram: what Prometheus'
 * series-description parser builds ({@code buildHistogramFromMap}) and what its {@code
 * {{A}}+{{B}}xn} / {@code {{A}}-{{B}}xn} expansions add up, bucket by bucket.
 *
 * <p>Every key is optional (numbers default to 0, the hint to {@code unknown}) and may come once,
 * in any order. {@code buckets} / {@code n_buckets} are absolute counts of consecutive buckets, the
 * first at index {@code offset} / {@code n_offset}. Schema −53 means custom buckets: {@code
 * custom_values} are the finite upper bounds, {@code +Inf} implied.
 *
 * <p>Buckets are kept as index → count maps (including buckets written as 0), so {@link
 * #matches(ScriptHistogram)} compares the non-empty buckets only, as Prometheus compares histograms
 * after compacting their spans. Immutable.
 *
 * <p>Tidemark's engine stores no native histograms yet (issue #25): the conformance runner parses
 * these literals fully and sets every eval that loads or expects one apart, see {@code
 * docs/promql-conformance.md}.
 */
final class ScriptHistogram {

  /** The schema of native histograms with custom bucket bounds (NHCB). */
  static final int CUSTOM_BUCKETS_SCHEMA = -53;

  /** Prometheus' counter reset hints, by their script spelling. */
  enum Hint {
    UNKNOWN("unknown"),
    RESET("reset"),
    NOT_RESET("not_reset"),
    GAUGE("gauge");

    final String spelling;

    Hint(String spelling) {
      this.spelling = spelling;
    }

    static Hint of(String s) {
      for (Hint h : values()) {
        if (h.spelling.equals(s)) {
          return h;
        }
      }
      throw new IllegalArgumentException(
          "counter_reset_hint must be unknown, reset, not_reset or gauge, was " + s);
    }
  }

  private static final Set<String> KEYS =
      Set.of(
          "schema",
          "sum",
          "count",
          "z_bucket",
          "z_bucket_w",
          "buckets",
          "offset",
          "n_buckets",
          "n_offset",
          "counter_reset_hint",
          "custom_values");

  final int schema;
  final double sum;
  final double count;
  final double zeroCount;
  final double zeroThreshold;
  final TreeMap<Integer, Double> positive;
  final TreeMap<Integer, Double> negative;
  final Hint hint;

  /** Whether the literal named its hint; comparisons check the hint only then. */
  final boolean hintSet;

  /** The custom bucket bounds (schema −53), else empty. */
  final double[] customValues;

  private ScriptHistogram(
      int schema,
      double sum,
      double count,
      double zeroCount,
      double zeroThreshold,
      TreeMap<Integer, Double> positive,
      TreeMap<Integer, Double> negative,
      Hint hint,
      boolean hintSet,
      double[] customValues) {
    this.schema = schema;
    this.sum = sum;
    this.count = count;
    this.zeroCount = zeroCount;
    this.zeroThreshold = zeroThreshold;
    this.positive = positive;
    this.negative = negative;
    this.hint = hint;
    this.hintSet = hintSet;
    this.customValues = customValues;
  }

  boolean usesCustomBuckets() {
    return schema == CUSTOM_BUCKETS_SCHEMA;
  }

  // ------------------------------------------------------------------ the literal

  /**
   * Parses one literal from {@code {{} to {@code }}} inclusive.
   *
   * @throws IllegalArgumentException naming the literal for an unknown or repeated key, a malformed
   *     number or bucket list, or a schema outside −4…8 and −53
   */
  static ScriptHistogram parse(String literal) {
    String s = literal.trim();
    if (!s.startsWith("{{") || !s.endsWith("}}")) {
      throw new IllegalArgumentException("not a histogram literal: " + literal);
    }
    String body = s.substring(2, s.length() - 2).trim();
    Map<String, String> desc = new TreeMap<>();
    int i = 0;
    while (i < body.length()) {
      int colon = body.indexOf(':', i);
      if (colon < 0) {
        throw new IllegalArgumentException("missing ':' in histogram literal " + literal);
      }
      String key = body.substring(i, colon).trim();
      if (!KEYS.contains(key)) {
        throw new IllegalArgumentException(
            "unknown key \"" + key + "\" in histogram literal " + literal);
      }
      int vEnd;
      if (colon + 1 < body.length() && body.charAt(colon + 1) == '[') {
        vEnd = body.indexOf(']', colon);
        if (vEnd < 0) {
          throw new IllegalArgumentException("unclosed '[' in histogram literal " + literal);
        }
        vEnd++;
      } else {
        vEnd = colon + 1;
        while (vEnd < body.length() && !Character.isWhitespace(body.charAt(vEnd))) {
          vEnd++;
        }
      }
      if (desc.put(key, body.substring(colon + 1, vEnd)) != null) {
        throw new IllegalArgumentException(
            "duplicate key \"" + key + "\" in histogram literal " + literal);
      }
      i = vEnd;
      while (i < body.length() && Character.isWhitespace(body.charAt(i))) {
        i++;
      }
    }
    int schema = (int) integer(desc.getOrDefault("schema", "0"), literal);
    if (schema != CUSTOM_BUCKETS_SCHEMA && (schema < -4 || schema > 8)) {
      throw new IllegalArgumentException(
          "schema must be -4…8 or -53, was " + schema + " in " + literal);
    }
    Hint hint = Hint.UNKNOWN;
    boolean hintSet = desc.containsKey("counter_reset_hint");
    if (hintSet) {
      hint = Hint.of(desc.get("counter_reset_hint"));
    }
    double zeroThreshold = number(desc.getOrDefault("z_bucket_w", "0"), literal);
    if (zeroThreshold < 0) {
      throw new IllegalArgumentException("z_bucket_w must not be negative in " + literal);
    }
    return new ScriptHistogram(
        schema,
        number(desc.getOrDefault("sum", "0"), literal),
        number(desc.getOrDefault("count", "0"), literal),
        number(desc.getOrDefault("z_bucket", "0"), literal),
        zeroThreshold,
        buckets(desc.get("buckets"), desc.get("offset"), literal),
        buckets(desc.get("n_buckets"), desc.get("n_offset"), literal),
        hint,
        hintSet,
        desc.containsKey("custom_values")
            ? list(desc.get("custom_values"), literal)
            : new double[0]);
  }

  private static TreeMap<Integer, Double> buckets(String list, String offset, String literal) {
    TreeMap<Integer, Double> out = new TreeMap<>();
    if (list == null) {
      return out;
    }
    int first = offset == null ? 0 : (int) integer(offset, literal);
    double[] counts = list(list, literal);
    for (int k = 0; k < counts.length; k++) {
      out.put(first + k, counts[k]);
    }
    return out;
  }

  private static double[] list(String s, String literal) {
    if (!s.startsWith("[") || !s.endsWith("]")) {
      throw new IllegalArgumentException("expected [numbers], got " + s + " in " + literal);
    }
    String inner = s.substring(1, s.length() - 1).trim();
    if (inner.isEmpty()) {
      throw new IllegalArgumentException("empty bucket list in " + literal);
    }
    String[] parts = inner.split("\\s+");
    double[] out = new double[parts.length];
    for (int k = 0; k < parts.length; k++) {
      out[k] = number(parts[k], literal);
    }
    return out;
  }

  private static double number(String s, String literal) {
    try {
      return PromqlConformanceRunner.number(s);
    } catch (RuntimeException e) {
      throw new IllegalArgumentException("bad number " + s + " in " + literal, e);
    }
  }

  private static long integer(String s, String literal) {
    try {
      return Long.decode(s);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("bad integer " + s + " in " + literal, e);
    }
  }

  /**
   * A classic histogram's samples at one timestamp as a native histogram with custom buckets, as
   * Prometheus' {@code convertnhcb} builds it for {@code load_with_nhcb}: the finite {@code le}
   * bounds become the custom values, cumulative counts become per-bucket counts, a missing {@code
   * +Inf} bucket takes the count (a missing count the highest bucket's).
   *
   * @param cumulative {@code le} → cumulative count
   * @param count the {@code _count} sample, NaN when there is none
   * @param sum the {@code _sum} sample, NaN when there is none (then 0)
   * @throws IllegalArgumentException for negative or non-cumulative counts, or a count that is not
   *     the {@code +Inf} bucket's
   */
  static ScriptHistogram customBuckets(
      TreeMap<Double, Double> cumulative, double count, double sum, String where) {
    TreeMap<Double, Double> b = new TreeMap<>(cumulative);
    double prev = 0;
    for (Map.Entry<Double, Double> e : b.entrySet()) {
      if (e.getValue() < 0 || e.getValue() < prev) {
        throw new IllegalArgumentException(
            "classic histogram buckets are not cumulative counts: " + where + " " + b);
      }
      prev = e.getValue();
    }
    if (Double.isNaN(count)) {
      count = b.isEmpty() ? 0 : b.lastEntry().getValue();
    } else if (count < 0) {
      throw new IllegalArgumentException("negative count " + count + ": " + where);
    }
    if (b.isEmpty() || b.lastKey() != Double.POSITIVE_INFINITY) {
      b.put(Double.POSITIVE_INFINITY, count);
    }
    if (count != b.lastEntry().getValue()) {
      throw new IllegalArgumentException(
          "count "
              + count
              + " is not the +Inf bucket's "
              + b.lastEntry().getValue()
              + ": "
              + where);
    }
    double[] bounds = new double[b.size() - 1];
    TreeMap<Integer, Double> buckets = new TreeMap<>();
    int idx = 0;
    prev = 0;
    for (Map.Entry<Double, Double> e : b.entrySet()) {
      if (idx < bounds.length) {
        bounds[idx] = e.getKey();
      }
      buckets.put(idx++, e.getValue() - prev);
      prev = e.getValue();
    }
    return new ScriptHistogram(
        CUSTOM_BUCKETS_SCHEMA,
        Double.isNaN(sum) ? 0 : sum,
        count,
        0,
        0,
        buckets,
        new TreeMap<>(),
        Hint.UNKNOWN,
        false,
        bounds);
  }

  // ------------------------------------------------------------------ arithmetic

  /** {@code this + other}, bucket by bucket, as Prometheus' {@code FloatHistogram.Add}. */
  ScriptHistogram plus(ScriptHistogram other) {
    return combine(other, v -> v);
  }

  /** {@code this - other}, bucket by bucket, as Prometheus' {@code FloatHistogram.Sub}. */
  ScriptHistogram minus(ScriptHistogram other) {
    return combine(other, v -> -v);
  }

  /**
   * The series {@code {{A}}+{{B}}xn} (or {@code -}): A, A+B, …, A+n·B, n+1 histograms. The step's
   * schema may be finer than the base's (it is reduced to it), never coarser.
   */
  static List<ScriptHistogram> series(
      ScriptHistogram base, ScriptHistogram step, boolean add, int n) {
    List<ScriptHistogram> out = new ArrayList<>(n + 1);
    // Prometheus' parser marks every histogram of the series with the step literal's "hint
    // named" flag, the base included.
    ScriptHistogram cur = base.withHintSet(step.hintSet);
    out.add(cur);
    for (int k = 1; k <= n; k++) {
      if (cur.schema > step.schema) {
        throw new IllegalArgumentException(
            "error combining histograms: cannot merge from schema "
                + step.schema
                + " to "
                + cur.schema);
      }
      cur = (add ? cur.plus(step) : cur.minus(step)).withHintSet(step.hintSet);
      out.add(cur);
    }
    return out;
  }

  private ScriptHistogram withHintSet(boolean set) {
    return set == hintSet
        ? this
        : new ScriptHistogram(
            schema,
            sum,
            count,
            zeroCount,
            zeroThreshold,
            positive,
            negative,
            hint,
            set,
            customValues);
  }

  private ScriptHistogram combine(ScriptHistogram other, DoubleUnaryOperator sign) {
    if (usesCustomBuckets() != other.usesCustomBuckets()) {
      throw new IllegalArgumentException(
          "histograms have incompatible schemas: " + this + " and " + other);
    }
    Hint newHint = combinedHint(hint, other.hint);
    double newCount = count + sign.applyAsDouble(other.count);
    double newSum = sum + sign.applyAsDouble(other.sum);
    if (usesCustomBuckets()) {
      double[] bounds =
          Arrays.equals(customValues, other.customValues)
              ? customValues
              : intersect(customValues, other.customValues);
      TreeMap<Integer, Double> pos = new TreeMap<>();
      addInto(pos, mapCustom(positive, customValues, bounds), v -> v);
      addInto(pos, mapCustom(other.positive, other.customValues, bounds), sign);
      return new ScriptHistogram(
          schema, newSum, newCount, 0, 0, pos, new TreeMap<>(), newHint, hintSet, bounds);
    }
    int target = Math.min(schema, other.schema);
    ScriptHistogram a = reduceTo(target);
    ScriptHistogram b = other.reduceTo(target);
    double threshold = Math.max(a.zeroThreshold, b.zeroThreshold);
    // Widening the zero bucket can swallow a bucket that straddles the new threshold, which widens
    // it again to that bucket's upper bound: repeat until both sides agree.
    while (true) {
      double ta = a.zeroBucketBoundFor(threshold);
      double tb = b.zeroBucketBoundFor(threshold);
      double t = Math.max(ta, tb);
      if (t == threshold) {
        break;
      }
      threshold = t;
    }
    a = a.widenZeroBucket(threshold);
    b = b.widenZeroBucket(threshold);
    TreeMap<Integer, Double> pos = new TreeMap<>(a.positive);
    addInto(pos, b.positive, sign);
    TreeMap<Integer, Double> neg = new TreeMap<>(a.negative);
    addInto(neg, b.negative, sign);
    return new ScriptHistogram(
        target,
        newSum,
        newCount,
        a.zeroCount + sign.applyAsDouble(b.zeroCount),
        threshold,
        pos,
        neg,
        newHint,
        hintSet,
        new double[0]);
  }

  /** Prometheus' {@code adjustCounterReset}: the hint of a sum or difference. */
  private static Hint combinedHint(Hint h, Hint o) {
    if (h == o || h == Hint.GAUGE) {
      return h;
    }
    if (o == Hint.GAUGE) {
      return Hint.GAUGE;
    }
    return Hint.UNKNOWN;
  }

  private static void addInto(
      TreeMap<Integer, Double> into, Map<Integer, Double> from, DoubleUnaryOperator sign) {
    from.forEach((k, v) -> into.merge(k, sign.applyAsDouble(v), Double::sum));
  }

  /** The bounds present in both lists (custom-bucket histograms with different layouts). */
  private static double[] intersect(double[] a, double[] b) {
    Set<Double> inB = new HashSet<>();
    for (double v : b) {
      inB.add(v);
    }
    return Arrays.stream(a).filter(inB::contains).toArray();
  }

  /**
   * Custom buckets re-indexed onto coarser bounds: bucket i (upper bound {@code from[i]}, or +Inf
   * past the last) lands in the first bucket of {@code to} whose bound is at least its own.
   */
  private static Map<Integer, Double> mapCustom(
      TreeMap<Integer, Double> buckets, double[] from, double[] to) {
    if (Arrays.equals(from, to)) {
      return buckets;
    }
    TreeMap<Integer, Double> out = new TreeMap<>();
    buckets.forEach(
        (idx, v) -> {
          double upper = idx < from.length ? from[idx] : Double.POSITIVE_INFINITY;
          int target = to.length;
          for (int k = 0; k < to.length; k++) {
            if (to[k] >= upper) {
              target = k;
              break;
            }
          }
          out.merge(target, v, Double::sum);
        });
    return out;
  }

  /** The same histogram at a coarser (or equal) exponential schema. */
  private ScriptHistogram reduceTo(int target) {
    if (target == schema) {
      return this;
    }
    int shift = schema - target;
    return new ScriptHistogram(
        target,
        sum,
        count,
        zeroCount,
        zeroThreshold,
        reduce(positive, shift),
        reduce(negative, shift),
        hint,
        hintSet,
        customValues);
  }

  private static TreeMap<Integer, Double> reduce(TreeMap<Integer, Double> buckets, int shift) {
    TreeMap<Integer, Double> out = new TreeMap<>();
    // Bucket idx covers (base^(idx-1), base^idx]; 2^shift of them make one bucket of the coarser
    // schema, whose index is ((idx - 1) >> shift) + 1.
    buckets.forEach((idx, v) -> out.merge(((idx - 1) >> shift) + 1, v, Double::sum));
    return out;
  }

  private double upperBound(int idx) {
    return Math.pow(2, idx * Math.pow(2, -schema));
  }

  /**
   * The zero-bucket threshold this histogram needs to hold everything below {@code threshold}: the
   * threshold itself, or the upper bound of a populated bucket it cuts through.
   */
  private double zeroBucketBoundFor(double threshold) {
    double t = threshold;
    for (TreeMap<Integer, Double> side : List.of(positive, negative)) {
      for (Map.Entry<Integer, Double> e : side.entrySet()) {
        double lower = upperBound(e.getKey() - 1);
        double upper = upperBound(e.getKey());
        if (lower < t && upper > t && e.getValue() != 0) {
          t = upper;
        }
      }
    }
    return t;
  }

  /** Moves every bucket whose upper bound is at most {@code threshold} into the zero bucket. */
  private ScriptHistogram widenZeroBucket(double threshold) {
    if (threshold == zeroThreshold) {
      return this;
    }
    double zc = zeroCount;
    TreeMap<Integer, Double> pos = new TreeMap<>();
    TreeMap<Integer, Double> neg = new TreeMap<>();
    for (Map.Entry<Integer, Double> e : positive.entrySet()) {
      if (upperBound(e.getKey()) <= threshold) {
        zc += e.getValue();
      } else {
        pos.put(e.getKey(), e.getValue());
      }
    }
    for (Map.Entry<Integer, Double> e : negative.entrySet()) {
      if (upperBound(e.getKey()) <= threshold) {
        zc += e.getValue();
      } else {
        neg.put(e.getKey(), e.getValue());
      }
    }
    return new ScriptHistogram(
        schema, sum, count, zc, threshold, pos, neg, hint, hintSet, customValues);
  }

  // ------------------------------------------------------------------ comparison

  /**
   * Whether {@code actual} equals this expected histogram as Prometheus' test runner compares: the
   * same schema, zero threshold and custom bounds, count, sum, zero count and non-empty buckets
   * equal within the runner's float tolerance, and the hint only when this literal named it.
   */
  boolean matches(ScriptHistogram actual) {
    if (schema != actual.schema
        || zeroThreshold != actual.zeroThreshold
        || !Arrays.equals(customValues, actual.customValues)
        || (hintSet && hint != actual.hint)) {
      return false;
    }
    return PromqlConformanceRunner.almostEqual(count, actual.count)
        && PromqlConformanceRunner.almostEqual(sum, actual.sum)
        && PromqlConformanceRunner.almostEqual(zeroCount, actual.zeroCount)
        && bucketsMatch(positive, actual.positive)
        && bucketsMatch(negative, actual.negative);
  }

  private static boolean bucketsMatch(TreeMap<Integer, Double> e, TreeMap<Integer, Double> a) {
    Map<Integer, Double> ne = nonEmpty(e);
    Map<Integer, Double> na = nonEmpty(a);
    if (!ne.keySet().equals(na.keySet())) {
      return false;
    }
    for (Map.Entry<Integer, Double> x : ne.entrySet()) {
      if (!PromqlConformanceRunner.almostEqual(x.getValue(), na.get(x.getKey()))) {
        return false;
      }
    }
    return true;
  }

  private static Map<Integer, Double> nonEmpty(TreeMap<Integer, Double> m) {
    TreeMap<Integer, Double> out = new TreeMap<>();
    m.forEach(
        (k, v) -> {
          if (v != 0) {
            out.put(k, v);
          }
        });
    return out;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof ScriptHistogram h
        && schema == h.schema
        && Double.compare(sum, h.sum) == 0
        && Double.compare(count, h.count) == 0
        && Double.compare(zeroCount, h.zeroCount) == 0
        && Double.compare(zeroThreshold, h.zeroThreshold) == 0
        && positive.equals(h.positive)
        && negative.equals(h.negative)
        && hint == h.hint
        && hintSet == h.hintSet
        && Arrays.equals(customValues, h.customValues);
  }

  @Override
  public int hashCode() {
    return Objects.hash(schema, sum, count, zeroCount, positive, negative, hint);
  }

  /** The literal form (dense bucket lists from the first to the last index, gaps as 0). */
  @Override
  public String toString() {
    StringBuilder sb = new StringBuilder("{{");
    sb.append("schema:").append(schema);
    sb.append(" count:").append(fmt(count)).append(" sum:").append(fmt(sum));
    if (zeroCount != 0) {
      sb.append(" z_bucket:").append(fmt(zeroCount));
    }
    if (zeroThreshold != 0) {
      sb.append(" z_bucket_w:").append(fmt(zeroThreshold));
    }
    appendBuckets(sb, positive, "buckets", "offset");
    appendBuckets(sb, negative, "n_buckets", "n_offset");
    if (hintSet || hint != Hint.UNKNOWN) {
      sb.append(" counter_reset_hint:").append(hint.spelling);
    }
    if (customValues.length > 0) {
      sb.append(" custom_values:[");
      for (int k = 0; k < customValues.length; k++) {
        sb.append(k > 0 ? " " : "").append(fmt(customValues[k]));
      }
      sb.append(']');
    }
    return sb.append("}}").toString();
  }

  private static void appendBuckets(
      StringBuilder sb, TreeMap<Integer, Double> b, String key, String offsetKey) {
    if (b.isEmpty()) {
      return;
    }
    sb.append(' ').append(key).append(":[");
    for (int k = b.firstKey(); k <= b.lastKey(); k++) {
      sb.append(k > b.firstKey() ? " " : "").append(fmt(b.getOrDefault(k, 0.0)));
    }
    sb.append(']');
    if (b.firstKey() != 0) {
      sb.append(' ').append(offsetKey).append(':').append(b.firstKey());
    }
  }

  private static String fmt(double v) {
    if (v == Math.rint(v) && !Double.isInfinite(v) && Math.abs(v) < 1e15) {
      return String.format(Locale.ROOT, "%d", (long) v);
    }
    return Double.toString(v);
  }
}
