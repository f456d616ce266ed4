package dev.tidemark.tsdb.engine;

import dev.tidemark.tsdb.append.RejectReason;
import dev.tidemark.tsdb.append.SampleBatch;
import dev.tidemark.tsdb.codec.SeriesLimits;
import dev.tidemark.tsdb.codec.TimeBucket;
import dev.tidemark.tsdb.model.Labels;
import dev.tidemark.tsdb.model.MetricMetadata;
import dev.tidemark.tsdb.model.NativeHistogram;
import dev.tidemark.tsdb.query.LabelMatcher;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The engine's contract as plain maps: every accepted sample per series, the same rejection rules
 * in the same order, whole-bucket retention. Slow and obviously right.
 *
 * <p>Native histogram samples (issue #25) are held as <i>handles</i> in the same maps: {@link
 * #HISTOGRAM_TAG} ORed with the index of the histogram in a table where equal (bit-exact)
 * histograms share one index, so "the same sample" and "another value" compare as for floats. A
 * series holds one kind of sample per bucket: a sample of the other kind is {@link
 * RejectReason#KIND_CONFLICT}.
 */
final class ReferenceModel {
  /** The high bits of a histogram handle: a NaN pattern no float sample of the model tests uses. */
  static final long HISTOGRAM_TAG = 0xFFF4_0000_0000_0000L;

  private final List<NativeHistogram> histogramTable = new ArrayList<>();
  private final Map<NativeHistogram, Long> handles = new HashMap<>();

  final Map<Labels, TreeMap<Long, Long>> data = new HashMap<>();
  private final long oooMillis;
  private final long retentionMillis;
  private final long futureMillis;

  /**
   * The bucket a sample lies in, for the bucket-granular answers (retention, label APIs): one hour
   * unless a test of compaction hands the engine's bucket layout in.
   */
  java.util.function.LongFunction<TimeBucket> bucketOf = t -> TimeBucket.containing(t, 1);

  ReferenceModel(EngineConfig config) {
    this.oooMillis = config.outOfOrderWindow().toMillis();
    this.retentionMillis = config.retention().toMillis();
    this.futureMillis = config.maxFutureSkew().toMillis();
  }

  /** The handle of {@code h}, the same for equal histograms. */
  long handle(NativeHistogram h) {
    return handles.computeIfAbsent(
        h,
        x -> {
          histogramTable.add(x);
          return HISTOGRAM_TAG | (histogramTable.size() - 1);
        });
  }

  /** The handle of a histogram the engine answered, or null if the model never saw it. */
  Long knownHandle(NativeHistogram h) {
    return handles.get(h);
  }

  static boolean isHistogram(long bits) {
    return (bits & 0xFFFF_0000_0000_0000L) == HISTOGRAM_TAG;
  }

  NativeHistogram histogramOf(long handle) {
    return histogramTable.get((int) (handle & 0xFFFF_FFFFL));
  }

  /** What the model stores for sample {@code k}: its value bits, or its histogram's handle. */
  private long bitsOf(SampleBatch batch, int k) {
    NativeHistogram h = batch.histogram(k);
    return h == null ? batch.valueBits(k) : handle(h);
  }

  /** Per point: null if accepted, else the reason of its first failing sample. */
  RejectReason[] append(SampleBatch batch, long now) {
    RejectReason[] out = new RejectReason[batch.pointCount()];
    int n = batch.size();
    int i = 0;
    while (i < n) {
      int p = batch.pointOf(i);
      int end = i;
      while (end < n && batch.pointOf(end) == p) {
        end++;
      }
      RejectReason reason = null;
      for (int k = i; k < end && reason == null; k++) {
        reason =
            check(
                batch.labels(k),
                batch.metadata(k),
                batch.timestampMillis(k),
                bitsOf(batch, k),
                now);
      }
      if (reason == null) {
        for (int k = i; k < end; k++) {
          data.computeIfAbsent(batch.labels(k), x -> new TreeMap<>())
              .putIfAbsent(batch.timestampMillis(k), bitsOf(batch, k));
        }
      }
      out[p] = reason;
      i = end;
    }
    return out;
  }

  private RejectReason check(Labels labels, MetricMetadata meta, long t, long bits, long now) {
    if (t < 0 || labels.metricName() == null) {
      return RejectReason.INVALID;
    }
    if (t > now + futureMillis) {
      return RejectReason.TOO_FAR_IN_FUTURE;
    }
    if (t < now - retentionMillis) {
      return RejectReason.TOO_OLD;
    }
    if (!SeriesLimits.storable(labels, meta)) {
      return RejectReason.LIMIT_EXCEEDED; // such a series is never stored, so nothing else applies
    }
    TreeMap<Long, Long> s = data.get(labels);
    if (s != null && !s.isEmpty() && t < s.lastKey() - oooMillis) {
      return RejectReason.OUT_OF_ORDER;
    }
    if (s != null) {
      TimeBucket b = bucketOf.apply(t);
      for (long other : s.subMap(b.startMillis(), true, b.endMillis(), false).values()) {
        if (isHistogram(other) != isHistogram(bits)) {
          return RejectReason.KIND_CONFLICT;
        }
      }
    }
    if (s != null && s.containsKey(t) && s.get(t) != bits) {
      return RejectReason.DUPLICATE;
    }
    return null;
  }

  void applyRetention(long now) {
    long cutoff = now - retentionMillis;
    for (TreeMap<Long, Long> s : data.values()) {
      s.keySet().removeIf(t -> bucketOf.apply(t).endMillis() <= cutoff);
    }
    data.values().removeIf(TreeMap::isEmpty);
  }

  void delete(long minT, long maxT, List<LabelMatcher> matchers) {
    data.forEach(
        (l, s) -> {
          if (matches(l, matchers)) {
            s.subMap(minT, true, maxT, true).clear();
          }
        });
    data.values().removeIf(TreeMap::isEmpty);
  }

  static boolean matches(Labels l, List<LabelMatcher> matchers) {
    for (LabelMatcher m : matchers) {
      if (!m.matches(l.get(m.name()))) {
        return false;
      }
    }
    return true;
  }

  /** Matching series with samples in range, sorted, with those samples. */
  TreeMap<Labels, List<long[]>> select(long minT, long maxT, List<LabelMatcher> matchers) {
    TreeMap<Labels, List<long[]>> out = new TreeMap<>();
    data.forEach(
        (l, s) -> {
          if (!matches(l, matchers)) {
            return;
          }
          List<long[]> samples = new ArrayList<>();
          s.subMap(minT, true, maxT, true).forEach((t, v) -> samples.add(new long[] {t, v}));
          if (!samples.isEmpty()) {
            out.put(l, samples);
          }
        });
    return out;
  }

  /** Series with any sample in a bucket overlapping the range (what label APIs look at). */
  private List<Labels> inBuckets(long minT, long maxT, List<LabelMatcher> matchers) {
    List<Labels> out = new ArrayList<>();
    data.forEach(
        (l, s) -> {
          if (!matches(l, matchers)) {
            return;
          }
          for (long t : s.keySet()) {
            TimeBucket b = bucketOf.apply(t);
            if (b.startMillis() <= maxT && b.endMillis() > minT) {
              out.add(l);
              return;
            }
          }
        });
    return out;
  }

  /** Matching series with a sample in a bucket overlapping the range, sorted. */
  List<Labels> series(long minT, long maxT, List<LabelMatcher> matchers) {
    List<Labels> out = inBuckets(minT, maxT, matchers);
    out.sort(null);
    return out;
  }

  List<String> labelNames(long minT, long maxT, List<LabelMatcher> matchers) {
    TreeSet<String> out = new TreeSet<>(Labels.UTF8_ORDER);
    for (Labels l : inBuckets(minT, maxT, matchers)) {
      for (int i = 0; i < l.size(); i++) {
        out.add(l.name(i));
      }
    }
    return new ArrayList<>(out);
  }

  List<String> labelValues(String name, long minT, long maxT, List<LabelMatcher> matchers) {
    TreeSet<String> out = new TreeSet<>(Labels.UTF8_ORDER);
    for (Labels l : inBuckets(minT, maxT, matchers)) {
      String v = l.get(name);
      if (v != null) {
        out.add(v);
      }
    }
    return new ArrayList<>(out);
  }
}
