package dev.tidemark.translator;

import com.dynatrace.hash4j.hashing.HashStream128;
import com.dynatrace.hash4j.hashing.Hashing;
import dev.tidemark.tsdb.append.SampleBatch;
import dev.tidemark.tsdb.model.Labels;
import dev.tidemark.tsdb.model.MetricMetadata;
import dev.tidemark.tsdb.model.NativeHistogram;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Per-thread scratch, reused across requests: the batch being built, the outcome counts, the
 * current point ({@link Pt}) and metric ({@link MetricCtx}), the stream key of the point, the delta
 * undo log, and the staging of a point's samples ({@link #begin}, {@link #emit}, {@link #commit})
 * so a point reaches the batch whole. Not thread-safe: one per thread ({@link Translator} keeps
 * them in a {@code ThreadLocal}).
 */
final class RequestState {
  /** Example metric names in partial-success messages are cut to this many characters. */
  private static final int MAX_EXAMPLE_CHARS = 200;

  /** Every NaN a point carries becomes this one, so input cannot forge a stale marker. */
  static final long NORMAL_NAN_BITS = 0x7ff8000000000001L;

  private static final double NORMAL_NAN = Double.longBitsToDouble(NORMAL_NAN_BITS);

  final SampleBatch batch = new SampleBatch(1024);
  final HashStream128 hs = Hashing.xxh3_128().hashStream();
  final MetricCtx metricCtx = new MetricCtx();

  /**
   * The wire stream cache's position after the stream this thread found last: where the next
   * point's stream usually is ({@link WireStreamCache#at}). Only a hint, kept across requests.
   */
  int nextWireStream;

  /** Scratch for the in-place path's metric header and its key ({@link MetricHeaders}). */
  final MetricHeaders.Fields metricHeader = new MetricHeaders.Fields();

  final MetricHeaders.Key metricHeaderKey = new MetricHeaders.Key();

  final ExpHistogram exp = new ExpHistogram();
  final SeriesResolver.KeySet keySet = new SeriesResolver.KeySet();

  /** The data point being translated, decoded from either path. */
  final Pt pt = new Pt();

  /** The in-place path's decoder and scratch. */
  final InPlace inPlace;

  /** The lookup key of the current point; reused, so copied before it is stored anywhere. */
  final StreamKey probe = new StreamKey(0, 0);

  final List<DeltaAccumulator.Undo> undo = new ArrayList<>();
  final Set<ResourceContexts.TargetInfoSample> targetInfoSeen = new HashSet<>();

  /** job → resource, for resources without service.instance.id (§6: identical label sets). */
  final Map<String, StreamKey> jobsWithoutInstance = new HashMap<>();

  final int[] reasonCounts = new int[RejectionReason.values().length];
  final String[] reasonExample = new String[RejectionReason.values().length];
  final String[] reasonDetail = new String[RejectionReason.values().length];
  final LinkedHashSet<String> warnings = new LinkedHashSet<>();

  /** Per batch point: the family of the OTLP point, or null for synthetic points. */
  String[] pointFamily = new String[1024];

  int total;
  long nowMillis;
  long resourceMinMillis;
  long resourceMaxMillis;
  StreamKey key;
  double accValue;
  long accCount;
  boolean accHasSum;
  long accStartNanos;
  // The open point's samples, staged so a point is added to the batch only when complete.
  Labels[] sLabels = new Labels[64];
  long[] sBits = new long[64];
  boolean[] sInject = new boolean[64];
  int sN;
  MetricMetadata curMeta;
  long curTs;
  boolean direct;
  private double[] bounds = new double[32];
  private long[] counts = new long[32];
  private int[] order = new int[32];
  private Labels[] expLabels = new Labels[64];
  private long[] expValues = new long[64];

  private final boolean injectZero;

  RequestState(Translator translator, boolean injectZero) {
    this.inPlace = new InPlace(translator);
    this.injectZero = injectZero;
  }

  void reset() {
    batch.clear();
    total = 0;
    Arrays.fill(reasonCounts, 0);
    Arrays.fill(reasonExample, null);
    Arrays.fill(reasonDetail, null);
    warnings.clear();
    undo.clear();
    targetInfoSeen.clear();
    jobsWithoutInstance.clear();
  }

  void clear() {
    batch.clear();
    Arrays.fill(pointFamily, null);
    undo.clear();
    targetInfoSeen.clear();
    metricCtx.rc = null;
    metricCtx.sc = null;
    key = null;
    pt.attrs = null;
    pt.buf = null;
    inPlace.checked.reset(null, 0);
  }

  void warn(String w) {
    if (warnings.size() < 1000) {
      warnings.add(w);
    }
  }

  /** An example name as the message shows it: at most {@code MAX_EXAMPLE_CHARS} characters. */
  private static String abbreviate(String example) {
    if (example == null || example.length() <= MAX_EXAMPLE_CHARS) {
      return example;
    }
    int end = MAX_EXAMPLE_CHARS;
    if (Character.isHighSurrogate(example.charAt(end - 1))) {
      end--;
    }
    return example.substring(0, end) + "... (" + example.length() + " characters)";
  }

  void reject(RejectionReason r, String example, String detail) {
    reject(r, example, detail, 1);
  }

  void reject(RejectionReason r, String example, String detail, int n) {
    int i = r.ordinal();
    reasonCounts[i] += n;
    if (reasonExample[i] == null) {
      reasonExample[i] = abbreviate(example);
      reasonDetail[i] = detail;
    }
  }

  /**
   * Opens a point. Without zero injection samples go straight into the batch (everything that can
   * reject a point is checked before its first sample is emitted); with it they are staged so the
   * zero point can precede them.
   */
  void begin(MetricCtx mc, long ts) {
    sN = 0;
    curMeta = mc.meta;
    curTs = ts;
    direct = !injectZero;
  }

  private void stage(Labels l, long bits, boolean inject) {
    if (sN == sLabels.length) {
      sLabels = Arrays.copyOf(sLabels, sN * 2);
      sBits = Arrays.copyOf(sBits, sN * 2);
      sInject = Arrays.copyOf(sInject, sN * 2);
    }
    sLabels[sN] = l;
    sBits[sN] = bits;
    sInject[sN] = inject;
    sN++;
  }

  /** Stages a value; every NaN becomes the canonical NaN, so input cannot forge a stale marker. */
  void emit(Labels l, double v, boolean injectable) {
    if (direct) {
      batch.add(l, curMeta, curTs, v != v ? NORMAL_NAN : v);
    } else {
      stage(l, v != v ? NORMAL_NAN_BITS : Double.doubleToRawLongBits(v), injectable);
    }
  }

  /**
   * Adds a native histogram sample to the point being built, directly (never staged: a point that
   * carries one is committed without a start-time zero point).
   */
  void emitHistogram(Labels l, NativeHistogram h) {
    batch.addHistogram(l, curMeta, curTs, h);
  }

  void emitStale(Labels l) {
    if (direct) {
      batch.addStaleMarker(l, curMeta, curTs);
    } else {
      stage(l, SampleBatch.STALE_NAN_BITS, false);
    }
  }

  /** Adds the staged samples as one point (after an optional start-time zero point). */
  void commit(MetricCtx mc, long ts, long injectMillis) {
    if (!direct && injectMillis > 0) {
      boolean any = false;
      for (int i = 0; i < sN; i++) {
        if (sInject[i]) {
          batch.add(sLabels[i], mc.meta, injectMillis, 0.0);
          any = true;
        }
      }
      if (any) {
        batch.endPoint();
        markSynthetic();
      }
    }
    for (int i = 0; i < sN; i++) {
      long bits = sBits[i];
      if (bits == SampleBatch.STALE_NAN_BITS) {
        batch.addStaleMarker(sLabels[i], mc.meta, ts);
      } else {
        batch.add(
            sLabels[i],
            mc.meta,
            ts,
            bits == NORMAL_NAN_BITS ? NORMAL_NAN : Double.longBitsToDouble(bits));
      }
      sLabels[i] = null;
    }
    int p = batch.endPoint();
    setFamily(p, mc.family);
    if (ts < resourceMinMillis) {
      resourceMinMillis = ts;
    }
    if (ts > resourceMaxMillis) {
      resourceMaxMillis = ts;
    }
    sN = 0;
  }

  void markSynthetic() {
    setFamily(batch.pointCount() - 1, null);
  }

  private void setFamily(int p, String family) {
    if (p >= pointFamily.length) {
      pointFamily = Arrays.copyOf(pointFamily, Math.max(p + 1, pointFamily.length * 2));
    }
    pointFamily[p] = family;
  }

  double[] bounds(int n) {
    if (bounds.length < n) {
      bounds = new double[Math.max(n, bounds.length * 2)];
    }
    return bounds;
  }

  long[] counts(int n) {
    if (counts.length < n) {
      counts = new long[Math.max(n, counts.length * 2)];
    }
    return counts;
  }

  int[] order(int n) {
    if (order.length < n) {
      order = new int[Math.max(n, order.length * 2)];
    }
    return order;
  }

  Labels[] expLabels(int n) {
    if (expLabels.length < n) {
      expLabels = new Labels[Math.max(n, expLabels.length * 2)];
    }
    return expLabels;
  }

  long[] expValues(int n) {
    if (expValues.length < n) {
      expValues = new long[Math.max(n, expValues.length * 2)];
    }
    return expValues;
  }

  TranslationResult result(int written) {
    Map<RejectionReason, Integer> counts = new EnumMap<>(RejectionReason.class);
    Map<RejectionReason, String> examples = new EnumMap<>(RejectionReason.class);
    Map<RejectionReason, String> details = new EnumMap<>(RejectionReason.class);
    for (RejectionReason r : RejectionReason.values()) {
      int c = reasonCounts[r.ordinal()];
      if (c > 0) {
        counts.put(r, c);
        if (reasonExample[r.ordinal()] != null) {
          examples.put(r, reasonExample[r.ordinal()]);
        }
        if (reasonDetail[r.ordinal()] != null) {
          details.put(r, reasonDetail[r.ordinal()]);
        }
      }
    }
    return new TranslationResult(
        total, counts, examples, details, new ArrayList<>(warnings), written);
  }
}
