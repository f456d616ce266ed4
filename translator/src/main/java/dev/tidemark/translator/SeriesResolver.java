package dev.tidemark.translator;

import com.dynatrace.hash4j.hashing.HashStream128;
import com.dynatrace.hash4j.hashing.Hasher64;
import com.dynatrace.hash4j.hashing.Hashing;
import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import dev.tidemark.tsdb.codec.SeriesLimits;
import dev.tidemark.tsdb.model.LabelStrings;
import dev.tidemark.tsdb.model.Labels;
import dev.tidemark.tsdb.model.PromText;
import dev.tidemark.tsdb.model.PromType;
import io.opentelemetry.proto.common.v1.AnyValue;
import io.opentelemetry.proto.common.v1.KeyValue;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The path every data point kind shares (Prometheus' {@code helper.go}): the point's timestamp and
 * start time (§4.2), its stream identity (a 128-bit hash of the metric and the canonical
 * attributes, {@link StreamKey}), the stream's {@link SeriesEntry} with its finished labels (§2:
 * built only on a cache miss), the per-stream {@code le} and {@code quantile} series, and the hooks
 * into delta accumulation (§3.7) that undo with the request. The point classes ({@link
 * NumberPoints}, {@link HistogramPoints}, {@link ExponentialHistogramPoints}, {@link
 * SummaryPoints}) and {@link ResourceContexts} go through it; the in-place path reaches it through
 * {@link InPlace#entry} and {@link #lookup}.
 *
 * <p>Thread-safe: the caches are concurrent, a stream's entry is guarded by its own lock, and
 * per-request scratch is in the caller's {@link RequestState}.
 */
final class SeriesResolver {
  private static final int NAME_CACHE_SIZE = Translator.NAME_CACHE_SIZE;
  private static final Hasher64 XXH3_64 = Hashing.xxh3_64();

  private final TranslatorConfig config;
  private final LabelNamer labelNamer;
  private final DeltaAccumulator delta;
  private final Cache<StreamKey, SeriesEntry> series;
  private final Cache<String, Object> labelNames;
  private final Cache<Long, String> leStrings;
  private final long maxFutureSkewMillis;
  private final boolean injectZero;

  SeriesResolver(TranslatorConfig config, DeltaAccumulator delta) {
    this.config = config;
    this.delta = delta;
    this.labelNamer =
        new LabelNamer(
            !config.translationStrategy().shouldEscape(),
            config.labelNameUnderscoreSanitization(),
            config.labelNamePreserveMultipleUnderscores());
    this.series =
        Caffeine.newBuilder().maximumSize(config.seriesCacheSize()).executor(Runnable::run).build();
    this.labelNames =
        Caffeine.newBuilder().maximumSize(NAME_CACHE_SIZE).executor(Runnable::run).build();
    this.leStrings =
        Caffeine.newBuilder().maximumSize(NAME_CACHE_SIZE).executor(Runnable::run).build();
    this.maxFutureSkewMillis = config.maxFutureSkew().toMillis();
    this.injectZero = config.startTimeMode() == TranslatorConfig.StartTimeMode.INJECT_ZERO;
  }

  // ---------------------------------------------------------------- delta hooks

  /**
   * Accumulates the current stream's ({@code rs.key}) delta point, recording undo in the request
   * (§3.7); null if applied, else why the point is rejected.
   */
  RejectionReason accumulateDelta(
      RequestState rs, long startNanos, long timeNanos, DeltaAccumulator.Update update) {
    return delta.accumulate(rs.key, startNanos, timeNanos, rs.nowMillis, rs.undo, update);
  }

  /** Forgets the current stream's delta state (a NoRecordedValue point, §4.1), with undo. */
  void forgetDelta(RequestState rs) {
    delta.remove(rs.key, rs.undo);
  }

  // ---------------------------------------------------------------- time

  /** Checks the timestamp; returns the sample time in ms, or -1 after rejecting the point. */
  long timestampMillis(RequestState rs, MetricCtx mc, long timeUnixNano) {
    if (timeUnixNano == 0) {
      if (config.zeroTimestampPolicy() == TranslatorConfig.ZeroTimestampPolicy.USE_RECEIVE_TIME) {
        return rs.nowMillis;
      }
      rs.reject(RejectionReason.ZERO_TIMESTAMP, mc.family, null);
      return -1;
    }
    if (timeUnixNano < 0) {
      rs.reject(
          RejectionReason.INVALID_TIMESTAMP,
          mc.family,
          "time_unix_nano " + Long.toUnsignedString(timeUnixNano) + " is beyond year 2262");
      return -1;
    }
    long ms = timeUnixNano / 1_000_000;
    if (ms > rs.nowMillis + maxFutureSkewMillis) {
      rs.reject(RejectionReason.TOO_FAR_IN_FUTURE, mc.family, null);
      return -1;
    }
    return ms;
  }

  /** The point's time in ns for delta ordering: its own, or the receive time it was given. */
  static long timeNanos(long timeUnixNano, long tsMillis) {
    return timeUnixNano != 0 ? timeUnixNano : tsMillis * 1_000_000;
  }

  /** The start time in ms if zero injection applies to this point, else -1. */
  long injectionMillis(long startUnixNano, long tsMillis) {
    if (!injectZero || startUnixNano <= 0) {
      return -1;
    }
    long st = startUnixNano / 1_000_000;
    return st > 0 && st < tsMillis ? st : -1;
  }

  // ---------------------------------------------------------------- the stream and its series

  /**
   * The point's series entry (sets {@code rs.key} to its stream key), or null after rejecting the
   * point. The tree path hashes the decoded attributes; the in-place path looks the raw attribute
   * bytes up first ({@link InPlace#entry}) and comes back to {@link #lookup} for a stream it has
   * not seen.
   */
  SeriesEntry entry(RequestState rs, MetricCtx mc, Pt p) {
    SeriesEntry e = p.attrs != null ? lookup(rs, mc, p.attrs) : rs.inPlace.entry(rs, mc, p);
    return check(rs, mc, e);
  }

  /**
   * The entry of the stream with these attributes, built if new; sets {@code rs.key} to the entry's
   * stored key (one instance per stream, never a probe).
   */
  SeriesEntry lookup(RequestState rs, MetricCtx mc, List<KeyValue> attrs) {
    return lookup(rs, mc, attrs, true);
  }

  /**
   * {@link #lookup}, for a stream the in-place path keeps in its own cache ({@link
   * WireStreamCache}): a new gauge or counter entry is not put in the series cache (at a million
   * streams its map node, cache node and table slot cost about 75 bytes per stream, and the wire
   * cache's {@code WireStream} already holds the entry). A histogram or summary entry is put there
   * as always: its memory of the {@code le} and quantile series emitted must outlive the loss of
   * one wire-cache slot. An entry already cached (the tree path built it) is found there.
   */
  SeriesEntry lookupForWire(RequestState rs, MetricCtx mc, List<KeyValue> attrs) {
    return lookup(rs, mc, attrs, false);
  }

  private SeriesEntry lookup(
      RequestState rs, MetricCtx mc, List<KeyValue> attrs, boolean cacheSimple) {
    StreamKey probe = streamKey(mc.hashHi, mc.hashLo, attrs, rs);
    SeriesEntry e = series.getIfPresent(probe);
    if (e == null) {
      e = buildEntry(mc, attrs);
      boolean cached = cacheSimple || e.composite != null;
      // Only the series cache and delta accumulation use the key: a cumulative gauge or counter
      // stream that only the wire cache holds keeps none (32 bytes per stream at a million).
      if (cached || mc.delta) {
        e.key = probe.copy();
      }
      if (cached) {
        SeriesEntry prev = series.asMap().putIfAbsent(e.key, e);
        if (prev != null) {
          e = prev;
        }
      }
    }
    rs.key = e.key;
    return e;
  }

  private static SeriesEntry check(RequestState rs, MetricCtx mc, SeriesEntry e) {
    if (e.invalid != null) {
      rs.reject(e.invalid, mc.family, e.invalidDetail());
      return null;
    }
    String warning = e.warning();
    if (warning != null) {
      rs.warn(warning);
    }
    return e;
  }

  // ---------------------------------------------------------------- le and quantile series

  /** The {@code _bucket} series for a bound; caller holds the entry's lock. */
  Labels bucketSeries(SeriesEntry.Composite c, double bound) {
    long bits = Double.doubleToRawLongBits(bound);
    Map<Long, Labels> buckets = c.buckets();
    Labels l = buckets.get(bits);
    if (l == null) {
      l =
          c.base.toBuilder()
              .set(Labels.METRIC_NAME, c.family + "_bucket")
              .set("le", formatFloat(bound))
              .build();
      buckets.put(bits, l);
    }
    return l;
  }

  /** The quantile series for a quantile; caller holds the entry's lock. */
  Labels quantileSeries(SeriesEntry.Composite c, double q) {
    long bits = Double.doubleToRawLongBits(q);
    Map<Long, Labels> quantiles = c.quantiles();
    Labels l = quantiles.get(bits);
    if (l == null) {
      l =
          c.base.toBuilder()
              .set(Labels.METRIC_NAME, c.family)
              .set("quantile", formatFloat(q))
              .build();
      quantiles.put(bits, l);
    }
    return l;
  }

  private String formatFloat(double v) {
    long bits = Double.doubleToRawLongBits(v);
    String s = leStrings.getIfPresent(bits);
    if (s == null) {
      s =
          config.leFormat() == TranslatorConfig.LeFormat.GO
              ? PromText.formatPlain(v)
              : PromText.formatOpenMetrics(v);
      leStrings.put(bits, s);
    }
    return s;
  }

  // ---------------------------------------------------------------- labels

  private SeriesEntry buildEntry(MetricCtx mc, List<KeyValue> attrs) {
    try {
      return buildEntryOrThrow(mc, attrs);
    } catch (IllegalArgumentException e) {
      // Labels refuse a string without a UTF-8 form: a lone surrogate, which only an OTLP/JSON
      // "\ud800" escape can carry (protobuf refuses invalid UTF-8 when parsing).
      return new SeriesEntry(RejectionReason.INVALID_UTF8, e.getMessage());
    }
  }

  private SeriesEntry buildEntryOrThrow(MetricCtx mc, List<KeyValue> attrs) {
    LinkedHashMap<String, String> m = new LinkedHashMap<>();
    List<String> warnings = new ArrayList<>(1);
    List<KeyValue> sorted = sortedByKey(attrs);
    Map<String, String> firstKey = new HashMap<>();
    for (KeyValue kv : sorted) {
      String key = kv.getKey();
      if (key.equals(Labels.METRIC_NAME)) {
        continue;
      }
      String name;
      try {
        name = labelName(key);
      } catch (InvalidNameException e) {
        return new SeriesEntry(RejectionReason.INVALID_LABEL_NAME, e.getMessage());
      }
      String v = AttributeValues.toLabelValue(kv.getValue());
      if (v.isEmpty()) {
        continue;
      }
      String existing = m.get(name);
      if (existing != null) {
        m.put(name, existing + ";" + v);
        warnings.add(
            "metric \""
                + mc.family
                + "\": attributes \""
                + firstKey.get(name)
                + "\" and \""
                + key
                + "\" both map to label \""
                + name
                + "\"; values joined with \";\"");
      } else {
        m.put(name, v);
        firstKey.put(name, key);
      }
    }
    String[] promoted = mc.rc.promoted;
    for (int i = 0; i < promoted.length; i += 2) {
      m.putIfAbsent(promoted[i], promoted[i + 1]);
    }
    putIfNotEmpty(m, "job", mc.rc.job);
    putIfNotEmpty(m, "instance", mc.rc.instance);
    config.externalLabels().forEach(m::putIfAbsent);
    String[] scope = mc.sc.pairs;
    for (int i = 0; i < scope.length; i += 2) {
      m.put(scope[i], scope[i + 1]);
    }
    if (config.typeAndUnitLabels()) {
      putIfNotEmpty(m, TYPE_LABEL, mc.promType == PromType.UNKNOWN ? "" : mc.promType.text());
      putIfNotEmpty(m, UNIT_LABEL, unitLabel(mc.meta.unit()));
    }
    m.remove(Labels.METRIC_NAME);
    String warning = warnings.isEmpty() ? null : String.join("; ", warnings);
    String f = mc.family;
    SeriesEntry e;
    Labels longest;
    switch (mc.promType) {
      case HISTOGRAM, SUMMARY -> {
        // The base (labels without a name) is kept only here: le and quantile series derive from
        // it.
        Labels base = toLabels(m);
        Labels inf =
            mc.promType == PromType.HISTOGRAM
                ? base.toBuilder().set(Labels.METRIC_NAME, f + "_bucket").set("le", "+Inf").build()
                : null;
        SeriesEntry.Composite c =
            new SeriesEntry.Composite(
                base, f, withName(base, f + "_sum"), withName(base, f + "_count"), inf);
        e = new SeriesEntry(null, c, warning);
        longest = inf != null ? inf : c.count;
      }
      default -> {
        m.put(Labels.METRIC_NAME, f);
        e = new SeriesEntry(toLabels(m), null, warning);
        longest = e.series;
      }
    }
    // The longest-named series of the stream stands for all of them (bucket and quantile series add
    // a short label; should one still break the total, the engine refuses that point on its own).
    if (!SeriesLimits.storable(longest, mc.meta)) {
      return new SeriesEntry(
          RejectionReason.LIMIT_EXCEEDED, SeriesLimits.violation(longest, mc.meta));
    }
    return e;
  }

  /** The label Prometheus' type-and-unit-labels feature gives a series its metric type. */
  static final String TYPE_LABEL = "__type__";

  /** The label Prometheus' type-and-unit-labels feature gives a series its metric's unit. */
  static final String UNIT_LABEL = "__unit__";

  /**
   * The {@code __unit__} value of an OTLP unit: Prometheus builds the UNIT metadata word with
   * escaping ({@code UnitNamer{UTF8Allowed: false}}), then the label from that word with the
   * translation strategy's own setting, so the second pass can map a word again (a unit {@code $s}
   * cleans to {@code s}, which maps to {@code seconds}).
   */
  String unitLabel(String unit) {
    boolean utf8Allowed = !config.translationStrategy().shouldEscape();
    return MetricNamer.unitName(MetricNamer.unitName(unit, false), utf8Allowed);
  }

  /** Sanitizes, sorts by original key and merges colliding names with {@code ;} (§2.1 step 1). */
  void addAttributes(
      Map<String, String> m, List<KeyValue> sorted, List<String> warnings, String what) {
    for (KeyValue kv : sorted) {
      String name;
      try {
        name = labelName(kv.getKey());
      } catch (InvalidNameException e) {
        warnings.add(what + " attribute dropped: " + e.getMessage());
        continue;
      }
      String v = AttributeValues.toLabelValue(kv.getValue());
      if (v.isEmpty()) {
        continue;
      }
      String existing = m.get(name);
      if (existing != null) {
        m.put(name, existing + ";" + v);
        warnings.add(
            what + " attributes map to the same label \"" + name + "\"; values joined with \";\"");
      } else {
        m.put(name, v);
      }
    }
  }

  private static Labels withName(Labels base, String name) {
    return base.toBuilder().set(Labels.METRIC_NAME, LabelStrings.share(name)).build();
  }

  static Labels toLabels(Map<String, String> m) {
    Labels.Builder b = Labels.builder();
    m.forEach((name, value) -> b.add(LabelStrings.share(name), LabelStrings.share(value)));
    return b.build();
  }

  static void putIfNotEmpty(Map<String, String> m, String k, String v) {
    if (v != null && !v.isEmpty()) {
      m.put(k, v);
    }
  }

  String labelName(String key) throws InvalidNameException {
    Object o = labelNames.getIfPresent(key);
    if (o == null) {
      try {
        o = labelNamer.build(key);
      } catch (InvalidNameException e) {
        o = e;
      }
      labelNames.put(key, o);
    }
    if (o instanceof InvalidNameException e) {
      throw e;
    }
    return (String) o;
  }

  /** Attributes in byte order of their keys (the order collisions are joined in, §2.1). */
  static List<KeyValue> sortedByKey(List<KeyValue> attrs) {
    List<KeyValue> l = new ArrayList<>(attrs);
    l.sort((a, b) -> Labels.compareUtf8(a.getKey(), b.getKey()));
    return l;
  }

  // ---------------------------------------------------------------- stream identity (hashing)

  /**
   * The stream key of a data point: the metric's 128-bit hash extended by the point's attributes
   * (the key set's hash, then each value's 64-bit hash, in canonical key order). Two 64-bit lanes
   * are updated with different bijective steps (xor-multiply-rotate, add-multiply-rotate) and
   * finished with the MurmurHash3 fmix64 avalanche; for inputs differing in one value either lane
   * alone already differs. No allocation besides the key.
   */
  private static StreamKey streamKey(
      long seedHi, long seedLo, List<KeyValue> attrs, RequestState rs) {
    int n = attrs.size();
    KeySet ks = rs.keySet;
    if (!ks.matches(attrs, n)) {
      ks.compute(attrs, n);
    }
    long h1 = seedHi;
    long h2 = seedLo;
    long x = ks.hash;
    h1 = Long.rotateLeft((h1 ^ x) * 0x9E3779B97F4A7C15L, 31);
    h2 = Long.rotateLeft((h2 + x) * 0xC2B2AE3D27D4EB4FL, 29);
    int[] order = ks.order;
    String[] lastValues = ks.lastValues;
    long[] lastHashes = ks.lastHashes;
    for (int i = 0; i < n; i++) {
      AnyValue v = attrs.get(order == null ? i : order[i]).getValue();
      if (v.getValueCase() == AnyValue.ValueCase.STRING_VALUE) {
        // Most attributes repeat from point to point (method, region, ...): equals is far cheaper
        // than hashing.
        String sv = v.getStringValue();
        if (sv.equals(lastValues[i])) {
          x = lastHashes[i];
        } else {
          x = valueHash(v);
          lastValues[i] = sv;
          lastHashes[i] = x;
        }
      } else {
        x = valueHash(v);
      }
      h1 = Long.rotateLeft((h1 ^ x) * 0x9E3779B97F4A7C15L, 31);
      h2 = Long.rotateLeft((h2 + x) * 0xC2B2AE3D27D4EB4FL, 29);
    }
    return rs.probe.set(fmix64(h1 + n), fmix64(h2));
  }

  private static long fmix64(long k) {
    k ^= k >>> 33;
    k *= 0xff51afd7ed558ccdL;
    k ^= k >>> 33;
    k *= 0xc4ceb9fe1a85ec53L;
    k ^= k >>> 33;
    return k;
  }

  /**
   * Hashes attributes in canonical key order, so the hash does not depend on the order in the
   * request. Design note: this is the hottest code of the translator (every point of every
   * request), so it avoids work: each string is hashed once, in place, with XXH3-64 ({@link
   * #stringHash}), and the key set is hashed only when it differs from the previous point's (the
   * points of a metric usually share their keys; {@code String.equals} is much cheaper than
   * hashing); sorting happens only for attributes not already in key order (SDKs sort them).
   */
  static void hashAttributes(HashStream128 hs, List<KeyValue> attrs, RequestState rs) {
    int n = attrs.size();
    KeySet ks = rs.keySet;
    if (!ks.matches(attrs, n)) {
      ks.compute(attrs, n);
    }
    hs.putLong(ks.hash);
    int[] order = ks.order;
    for (int i = 0; i < n; i++) {
      hs.putLong(valueHash(attrs.get(order == null ? i : order[i]).getValue()));
    }
  }

  /** The keys of the last attribute list hashed, their order and their hash. Per thread. */
  static final class KeySet {
    String[] keys = new String[16];

    /** Per canonical position: the last string value hashed there and its hash. */
    String[] lastValues = new String[16];

    long[] lastHashes = new long[16];
    int n = -1;

    /** Canonical order, or null if the keys are already in it. */
    int[] order;

    long hash;

    boolean matches(List<KeyValue> attrs, int size) {
      if (size != n) {
        return false;
      }
      String[] k = keys;
      for (int i = 0; i < size; i++) {
        if (!k[i].equals(attrs.get(i).getKey())) {
          return false;
        }
      }
      return true;
    }

    void compute(List<KeyValue> attrs, int size) {
      if (keys.length < size) {
        keys = new String[Math.max(size, keys.length * 2)];
        lastValues = new String[keys.length];
        lastHashes = new long[keys.length];
      }
      java.util.Arrays.fill(lastValues, null);
      boolean sorted = true;
      for (int i = 0; i < size; i++) {
        keys[i] = attrs.get(i).getKey();
        if (i > 0 && keys[i - 1].compareTo(keys[i]) > 0) {
          sorted = false;
        }
      }
      n = size;
      order = null;
      if (!sorted) {
        int[] o = new int[size];
        for (int i = 0; i < size; i++) {
          o[i] = i;
        }
        for (int i = 1; i < size; i++) {
          int x = o[i];
          int j = i - 1;
          while (j >= 0 && keys[o[j]].compareTo(keys[x]) > 0) {
            o[j + 1] = o[j];
            j--;
          }
          o[j + 1] = x;
        }
        order = o;
      }
      long h = 0x9E3779B97F4A7C15L * (size + 1);
      for (int i = 0; i < size; i++) {
        h =
            Long.rotateLeft(h ^ stringHash(keys[order == null ? i : order[i]]), 27)
                * 0xC2B2AE3D27D4EB4FL;
      }
      hash = h;
    }
  }

  private static long valueHash(AnyValue v) {
    AnyValue.ValueCase c = v.getValueCase();
    long salt = (c.getNumber() + 1) * 0x9E3779B97F4A7C15L;
    return salt
        ^ switch (c) {
          case STRING_VALUE -> stringHash(v.getStringValue());
          case BOOL_VALUE -> v.getBoolValue() ? 1 : 0;
          case INT_VALUE -> v.getIntValue();
          case DOUBLE_VALUE -> Double.doubleToRawLongBits(v.getDoubleValue());
          case VALUE_NOT_SET -> 0;
          default -> stringHash(AttributeValues.toLabelValue(v));
        };
  }

  /**
   * One-shot XXH3-64 of a string's chars, read in place (streaming them would copy them into the
   * stream's buffer; this is 3x faster). A 64-bit collision between two values of the same
   * attribute (~2^-64 per pair) would merge two streams.
   */
  private static long stringHash(String s) {
    return XXH3_64.hashCharsToLong(s);
  }
}
