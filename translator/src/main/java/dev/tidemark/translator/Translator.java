package dev.tidemark.translator;

import com.dynatrace.hash4j.hashing.HashStream128;
import com.dynatrace.hash4j.hashing.Hasher64;
import com.dynatrace.hash4j.hashing.HashValue128;
import com.dynatrace.hash4j.hashing.Hashing;
import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.google.protobuf.InvalidProtocolBufferException;
import dev.tidemark.tsdb.append.AppendResult;
import dev.tidemark.tsdb.append.Appender;
import dev.tidemark.tsdb.append.RejectReason;
import dev.tidemark.tsdb.append.SampleBatch;
import dev.tidemark.tsdb.append.StorageUnavailableException;
import dev.tidemark.tsdb.codec.SeriesLimits;
import dev.tidemark.tsdb.model.Labels;
import dev.tidemark.tsdb.model.MetricMetadata;
import dev.tidemark.tsdb.model.MetricType;
import dev.tidemark.tsdb.model.Temporality;
import io.opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest;
import io.opentelemetry.proto.common.v1.AnyValue;
import io.opentelemetry.proto.common.v1.InstrumentationScope;
import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.metrics.v1.AggregationTemporality;
import io.opentelemetry.proto.metrics.v1.ExponentialHistogramDataPoint;
import io.opentelemetry.proto.metrics.v1.HistogramDataPoint;
import io.opentelemetry.proto.metrics.v1.Metric;
import io.opentelemetry.proto.metrics.v1.NumberDataPoint;
import io.opentelemetry.proto.metrics.v1.ResourceMetrics;
import io.opentelemetry.proto.metrics.v1.ScopeMetrics;
import io.opentelemetry.proto.metrics.v1.SummaryDataPoint;
import io.opentelemetry.proto.resource.v1.Resource;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * Translates OTLP metrics into Prometheus-model samples and writes them through an {@link
 * Appender} (the contract is {@code docs/otlp-translation.md}; section numbers below refer to it).
 *
 * <p><b>Outcomes.</b> Every OTLP data point gets exactly one outcome. A point that passes
 * translation becomes one {@link SampleBatch} point holding all its derived samples (a histogram
 * point's {@code _bucket}s, {@code _sum}, {@code _count}), so the engine writes it all or nothing;
 * the translator's own rejections (names, TYPE conflicts, timestamps, delta streams, ...) and the
 * engine's per-point results are merged into one {@link TranslationResult}. Synthetic samples
 * ({@code target_info}, start-time zeros) travel as separate points whose failures are ignored.
 * The appender is called once per request, and not at all if nothing is left to write.
 *
 * <p><b>Thread safety.</b> Thread-safe; the receiver calls {@link #translate} concurrently. Per
 * request scratch (the batch, buffers, the hash stream) is reused per thread; shared state (series
 * cache, name caches, delta streams, {@link MetadataRegistry}) is concurrent.
 *
 * <p><b>Hot path.</b> A stream's identity is hashed straight from the protobuf (XXH3-128, {@link
 * StreamKey}) and looked up in a bounded cache of {@link SeriesEntry}s holding the finished
 * {@link Labels}; only a miss sanitizes names and builds label sets. Metric names are cached per
 * (name, unit, kind). A stream whose entry was evicted (cache size {@link
 * TranslatorConfig#seriesCacheSize()}, least recently/frequently used first) loses its le-bound
 * memory: a later NoRecordedValue marks only the bounds seen since.
 *
 * <p><b>Two ways in.</b> {@link #translate(ExportMetricsServiceRequest)} reads a decoded message
 * (OTLP/JSON; the reference); {@link #translate(byte[])} reads the serialized message in place
 * ({@link OtlpWire}, {@link InPlace}: no message tree, streams found by their attribute bytes)
 * with the same results. Both feed the same rules through {@link Pt}.
 *
 * <p><b>Time.</b> All "now" decisions (future skew, receive time, delta eviction) use the injected
 * {@link Clock}.
 */
public final class Translator {
  /** Example metric names in partial-success messages are cut to this many characters. */
  private static final int MAX_EXAMPLE_CHARS = 200;
  /** At most this many {@code target_info} samples per resource and request (the latest ones). */
  public static final int MAX_TARGET_INFO_SAMPLES = 1_000;

  static final long NORMAL_NAN_BITS = 0x7ff8000000000001L;
  private static final double NORMAL_NAN = Double.longBitsToDouble(NORMAL_NAN_BITS);
  private static final String SERVICE_NAME = "service.name";
  private static final String SERVICE_NAMESPACE = "service.namespace";
  private static final String SERVICE_INSTANCE_ID = "service.instance.id";
  private static final MetricMetadata TARGET_INFO_META =
      new MetricMetadata(MetricType.GAUGE, "", Temporality.UNSPECIFIED, false);
  private static final int NAME_CACHE_SIZE = 10_000;
  private static final int KNOWN_RUNS = 1 << 15;
  private static final Hasher64 XXH3_64 = Hashing.xxh3_64();

  private final Appender appender;
  private final TranslatorConfig config;
  private final Clock clock;
  private final MetadataRegistry registry;
  private final MetricNamer metricNamer;
  private final LabelNamer labelNamer;
  private final DeltaAccumulator delta;
  private final Cache<StreamKey, SeriesEntry> series;
  /** The in-place path's streams by hashed attribute bytes (see {@link InPlace}). */
  private final Cache<StreamKey, InPlace.WireStream> wireStreams;
  /**
   * Attribute runs of known wire streams by the low bits of their hash (direct-mapped, last
   * writer wins): {@link OtlpWire#isValid} skips checking a run it finds here.
   */
  private final AtomicReferenceArray<byte[]> knownRuns = new AtomicReferenceArray<>(KNOWN_RUNS);
  private final Cache<NameKey, Object> metricNames;
  private final Cache<String, Object> labelNames;
  private final Cache<StreamKey, ResourceContext> resources;
  private final Cache<StreamKey, ScopeContext> scopes;
  private final Cache<Long, String> leStrings;
  private final String targetInfoName;
  private final long maxFutureSkewMillis;
  private final long targetInfoIntervalMillis;
  private final boolean injectZero;
  private final ThreadLocal<RequestState> requestState = ThreadLocal.withInitial(RequestState::new);

  public Translator(Appender appender, TranslatorConfig config, Clock clock) {
    this(appender, config, clock, new MetadataRegistry());
  }

  /**
   * @param registry where family metadata goes (shared with the metadata API)
   */
  public Translator(Appender appender, TranslatorConfig config, Clock clock, MetadataRegistry registry) {
    this.appender = Objects.requireNonNull(appender, "appender");
    this.config = Objects.requireNonNull(config, "config");
    this.clock = Objects.requireNonNull(clock, "clock");
    this.registry = Objects.requireNonNull(registry, "registry");
    this.metricNamer = new MetricNamer(config.namespace(), config.translationStrategy());
    this.labelNamer =
        new LabelNamer(
            !config.translationStrategy().shouldEscape(),
            config.labelNameUnderscoreSanitization(),
            config.labelNamePreserveMultipleUnderscores());
    this.delta = new DeltaAccumulator(config.maxStreams(), config.maxStale().toMillis(), config.deltaResetOnGap());
    this.series = Caffeine.newBuilder().maximumSize(config.seriesCacheSize()).executor(Runnable::run).build();
    this.wireStreams = Caffeine.newBuilder().maximumSize(config.seriesCacheSize()).executor(Runnable::run).build();
    this.metricNames = Caffeine.newBuilder().maximumSize(NAME_CACHE_SIZE).executor(Runnable::run).build();
    this.labelNames = Caffeine.newBuilder().maximumSize(NAME_CACHE_SIZE).executor(Runnable::run).build();
    this.resources = Caffeine.newBuilder().maximumSize(NAME_CACHE_SIZE).executor(Runnable::run).build();
    this.scopes = Caffeine.newBuilder().maximumSize(NAME_CACHE_SIZE).executor(Runnable::run).build();
    this.leStrings = Caffeine.newBuilder().maximumSize(NAME_CACHE_SIZE).executor(Runnable::run).build();
    this.targetInfoName = config.namespace().isEmpty() ? "target_info" : config.namespace() + "_target_info";
    this.maxFutureSkewMillis = config.maxFutureSkew().toMillis();
    this.targetInfoIntervalMillis = Math.max(1, config.lookbackDelta().toMillis() / 2);
    this.injectZero = config.startTimeMode() == TranslatorConfig.StartTimeMode.INJECT_ZERO;
  }

  public TranslatorConfig config() {
    return config;
  }

  /** Family metadata of everything accepted so far. */
  public MetadataRegistry metadata() {
    return registry;
  }

  /** Live delta streams (for monitoring and tests). */
  public int deltaStreamCount() {
    return delta.size();
  }

  /**
   * Translates and appends one request.
   *
   * @return one outcome per OTLP data point, merged with the appender's results
   * @throws StorageUnavailableException if the appender cannot take writes now (retryable;
   *     nothing of this request was acknowledged, and its delta accumulation is rolled back)
   */
  public TranslationResult translate(ExportMetricsServiceRequest request) {
    RequestState rs = requestState.get();
    rs.reset();
    try {
      long now = clock.millis();
      rs.nowMillis = now;
      delta.sweep(now);
      for (int i = 0; i < request.getResourceMetricsCount(); i++) {
        translateResource(rs, request.getResourceMetrics(i));
      }
      int written = 0;
      if (rs.batch.pointCount() > 0) {
        written = merge(rs, appender.append(rs.batch));
      }
      return rs.result(written);
    } catch (RuntimeException e) {
      // Nothing of this request is acknowledged: the client retries, so forget its deltas.
      delta.rollback(rs.undo);
      throw e;
    } finally {
      rs.clear();
    }
  }

  /**
   * Translates and appends one serialized {@code ExportMetricsServiceRequest} without building
   * its message tree (the in-place path, {@link InPlace}). Same outcome, samples and exceptions as
   * {@code translate(ExportMetricsServiceRequest.parseFrom(bytes))}: bytes protobuf-java cannot
   * parse throw its {@link InvalidProtocolBufferException} before anything is translated.
   */
  public TranslationResult translate(byte[] bytes) throws InvalidProtocolBufferException {
    return translate(bytes, 0, bytes.length);
  }

  /** {@link #translate(byte[])} over {@code bytes[offset, offset + length)}. */
  public TranslationResult translate(byte[] bytes, int offset, int length) throws InvalidProtocolBufferException {
    RequestState rs = requestState.get();
    if (!OtlpWire.isValid(bytes, offset, length, knownRuns, rs.inPlace.checked)) {
      // protobuf-java's verdict and message; should it parse what the walk refused (nesting
      // deeper than the walk's limit), the tree path translates it.
      return translate(ExportMetricsServiceRequest.parser().parseFrom(bytes, offset, length));
    }
    rs.reset();
    try {
      long now = clock.millis();
      rs.nowMillis = now;
      delta.sweep(now);
      rs.inPlace.request(rs, bytes, offset, offset + length);
      int written = 0;
      if (rs.batch.pointCount() > 0) {
        written = merge(rs, appender.append(rs.batch));
      }
      return rs.result(written);
    } catch (RuntimeException e) {
      delta.rollback(rs.undo);
      throw e;
    } finally {
      rs.clear();
    }
  }

  /** Data points in a serialized request that {@link #translate(byte[])} accepts (else -1). */
  public static int countDataPoints(byte[] bytes, int offset, int length) {
    return OtlpWire.isValid(bytes, offset, length) ? InPlace.countDataPoints(bytes, offset, length) : -1;
  }

  Cache<StreamKey, InPlace.WireStream> wireStreams() {
    return wireStreams;
  }

  AtomicReferenceArray<byte[]> knownRuns() {
    return knownRuns;
  }

  private int merge(RequestState rs, AppendResult result) {
    SampleBatch batch = rs.batch;
    int points = batch.pointCount();
    for (int p = 0; p < points; p++) {
      RejectReason r = result.pointReason(p);
      if (r != null && rs.pointFamily[p] != null) {
        rs.reject(RejectionReason.of(r), rs.pointFamily[p], result.pointDetail(p));
      }
    }
    int written = 0;
    for (int i = 0; i < batch.size(); i++) {
      if (result.pointReason(batch.pointOf(i)) == null) {
        written++;
      }
    }
    return written;
  }

  // ---------------------------------------------------------------- resources and scopes

  private void translateResource(RequestState rs, ResourceMetrics rm) {
    ResourceContext rc = beginResource(rs, rm.getResource());
    for (int s = 0; s < rm.getScopeMetricsCount(); s++) {
      ScopeMetrics sm = rm.getScopeMetrics(s);
      ScopeContext sc = scopeContext(rs, sm, rc);
      for (int m = 0; m < sm.getMetricsCount(); m++) {
        translateMetric(rs, rc, sc, sm.getMetrics(m));
      }
    }
    endResource(rs, rc);
  }

  /** Starts a resource: its context (cached), its warnings, the per-resource time range. */
  ResourceContext beginResource(RequestState rs, Resource resource) {
    ResourceContext rc = resourceContext(rs, resource);
    rs.resourceMinMillis = Long.MAX_VALUE;
    rs.resourceMaxMillis = Long.MIN_VALUE;
    for (String w : rc.warnings) {
      rs.warn(w);
    }
    StreamKey firstWithJob = rc.instance == null && rc.job != null ? rs.jobsWithoutInstance.putIfAbsent(rc.job, rc.key) : null;
    if (firstWithJob != null && !firstWithJob.equals(rc.key)) {
      rs.warn("several resources with service.name \"" + rc.job
          + "\" lack service.instance.id; their series collide");
    }
    return rc;
  }

  /** Ends a resource: its target_info samples. */
  void endResource(RequestState rs, ResourceContext rc) {
    if (rc.targetInfo != null && rs.resourceMaxMillis != Long.MIN_VALUE) {
      emitTargetInfo(rs, rc.targetInfo);
    }
  }

  private void emitTargetInfo(RequestState rs, Labels labels) {
    FamilyMetadata conflict =
        registry.register(new FamilyMetadata(targetInfoName, PromType.GAUGE, "", "Target metadata"));
    if (conflict != null) {
      rs.warn("target_info not written: " + targetInfoName + " is registered as " + conflict.type().text());
      return;
    }
    long min = rs.resourceMinMillis;
    long max = rs.resourceMaxMillis;
    long step = targetInfoIntervalMillis;
    long n = (max - min) / step;
    long t = min;
    if (n > MAX_TARGET_INFO_SAMPLES) {
      t = min + (n - MAX_TARGET_INFO_SAMPLES) * step;
    }
    for (; t < max; t += step) {
      addTargetInfo(rs, labels, t);
    }
    addTargetInfo(rs, labels, max);
  }

  private void addTargetInfo(RequestState rs, Labels labels, long t) {
    if (rs.targetInfoSeen.add(new TargetInfoSample(labels, t))) {
      rs.batch.addPoint(labels, TARGET_INFO_META, t, 1.0);
      rs.markSynthetic();
    }
  }

  private ResourceContext resourceContext(RequestState rs, Resource resource) {
    List<KeyValue> attrs = resource.getAttributesList();
    HashStream128 hs = rs.hs;
    hs.reset();
    hs.putInt(0x52455352); // "RESR"
    hashAttributes(hs, attrs, rs);
    HashValue128 h = hs.get();
    StreamKey key = new StreamKey(h.getMostSignificantBits(), h.getLeastSignificantBits());
    ResourceContext rc = resources.getIfPresent(key);
    if (rc == null) {
      rc = buildResourceContext(key, attrs);
      resources.put(key, rc);
    }
    return rc;
  }

  private ResourceContext buildResourceContext(StreamKey key, List<KeyValue> attrs) {
    List<KeyValue> sorted = sortedByKey(attrs);
    String name = "";
    String ns = "";
    String id = "";
    boolean hasOther = false;
    for (KeyValue kv : sorted) {
      switch (kv.getKey()) {
        case SERVICE_NAME -> name = AttributeValues.toLabelValue(kv.getValue());
        case SERVICE_NAMESPACE -> ns = AttributeValues.toLabelValue(kv.getValue());
        case SERVICE_INSTANCE_ID -> id = AttributeValues.toLabelValue(kv.getValue());
        default -> hasOther = true;
      }
    }
    String job = name.isEmpty() ? null : (ns.isEmpty() ? name : ns + "/" + name);
    String instance = id.isEmpty() ? null : id;
    List<String> warnings = new ArrayList<>();
    // Promoted attributes (§2.5).
    List<KeyValue> promote = new ArrayList<>();
    Set<String> ignore = new HashSet<>(config.ignoreResourceAttributes());
    Set<String> promoteSet = new HashSet<>(config.promoteResourceAttributes());
    for (KeyValue kv : sorted) {
      if (config.promoteAllResourceAttributes() ? !ignore.contains(kv.getKey()) : promoteSet.contains(kv.getKey())) {
        promote.add(kv);
      }
    }
    LinkedHashMap<String, String> promoted = new LinkedHashMap<>();
    addAttributes(promoted, promote, warnings, "resource");
    // target_info (§2.5).
    Labels targetInfo = null;
    if (hasOther && (job != null || instance != null)) {
      List<KeyValue> info = new ArrayList<>();
      for (KeyValue kv : sorted) {
        String k = kv.getKey();
        boolean identifying = k.equals(SERVICE_NAME) || k.equals(SERVICE_NAMESPACE) || k.equals(SERVICE_INSTANCE_ID);
        if (!identifying || config.keepIdentifyingResourceAttributes()) {
          info.add(kv);
        }
      }
      LinkedHashMap<String, String> m = new LinkedHashMap<>();
      addAttributes(m, info, warnings, "target_info");
      putIfNotEmpty(m, "job", job);
      putIfNotEmpty(m, "instance", instance);
      config.externalLabels().forEach(m::putIfAbsent);
      m.put(Labels.METRIC_NAME, targetInfoName);
      String limit;
      try {
        targetInfo = toLabels(m);
        limit = SeriesLimits.violation(targetInfo, TARGET_INFO_META);
      } catch (IllegalArgumentException e) {
        limit = e.getMessage(); // a lone surrogate (OTLP/JSON only)
      }
      if (limit != null) {
        warnings.add("target_info not written: " + limit);
        targetInfo = null;
      }
    }
    String[] promotedPairs = new String[promoted.size() * 2];
    int i = 0;
    for (Map.Entry<String, String> e : promoted.entrySet()) {
      promotedPairs[i++] = e.getKey();
      promotedPairs[i++] = e.getValue();
    }
    return new ResourceContext(key, job, instance, promotedPairs, targetInfo, List.copyOf(warnings));
  }

  ScopeContext scopeContext(RequestState rs, ScopeMetrics sm, ResourceContext rc) {
    InstrumentationScope scope = sm.getScope();
    HashStream128 hs = rs.hs;
    hs.reset();
    hs.putLong(rc.key.hi()).putLong(rc.key.lo());
    hs.putString(scope.getName()).putString(scope.getVersion()).putString(sm.getSchemaUrl());
    hashAttributes(hs, scope.getAttributesList(), rs);
    HashValue128 h = hs.get();
    StreamKey key = new StreamKey(h.getMostSignificantBits(), h.getLeastSignificantBits());
    ScopeContext sc = scopes.getIfPresent(key);
    if (sc == null) {
      sc = buildScopeContext(key, scope, sm.getSchemaUrl());
      scopes.put(key, sc);
    }
    return sc;
  }

  private ScopeContext buildScopeContext(StreamKey key, InstrumentationScope scope, String schemaUrl) {
    List<String> warnings = new ArrayList<>();
    // Prometheus adds scope labels only for a non-empty scope name (R1 setScopeContext).
    if (!config.promoteScopeMetadata() || scope.getName().isEmpty()) {
      return new ScopeContext(key, new String[0], List.of());
    }
    LinkedHashMap<String, String> m = new LinkedHashMap<>();
    for (KeyValue kv : sortedByKey(scope.getAttributesList())) {
      String name;
      try {
        name = labelName("otel_scope_" + kv.getKey());
      } catch (InvalidNameException e) {
        warnings.add("scope attribute dropped: " + e.getMessage());
        continue;
      }
      String v = AttributeValues.toLabelValue(kv.getValue());
      if (!v.isEmpty()) {
        m.merge(name, v, (a, b) -> a + ";" + b);
      }
    }
    putIfNotEmpty(m, "otel_scope_name", scope.getName());
    putIfNotEmpty(m, "otel_scope_version", scope.getVersion());
    putIfNotEmpty(m, "otel_scope_schema_url", schemaUrl);
    String[] pairs = new String[m.size() * 2];
    int i = 0;
    for (Map.Entry<String, String> e : m.entrySet()) {
      pairs[i++] = e.getKey();
      pairs[i++] = e.getValue();
    }
    return new ScopeContext(key, pairs, List.copyOf(warnings));
  }

  // ---------------------------------------------------------------- metrics

  private void translateMetric(RequestState rs, ResourceContext rc, ScopeContext sc, Metric metric) {
    int n = switch (metric.getDataCase()) {
      case GAUGE -> metric.getGauge().getDataPointsCount();
      case SUM -> metric.getSum().getDataPointsCount();
      case HISTOGRAM -> metric.getHistogram().getDataPointsCount();
      case EXPONENTIAL_HISTOGRAM -> metric.getExponentialHistogram().getDataPointsCount();
      case SUMMARY -> metric.getSummary().getDataPointsCount();
      default -> 0;
    };
    MetricCtx mc = beginMetric(rs, rc, sc, metric, n);
    if (mc == null) {
      return;
    }
    Pt pt = rs.pt;
    switch (metric.getDataCase()) {
      case GAUGE -> {
        for (NumberDataPoint p : metric.getGauge().getDataPointsList()) {
          numberPoint(rs, mc, pt.set(p), false);
        }
      }
      case SUM -> {
        boolean counter = mc.meta.monotonic();
        for (NumberDataPoint p : metric.getSum().getDataPointsList()) {
          numberPoint(rs, mc, pt.set(p), counter);
        }
      }
      case HISTOGRAM -> {
        for (HistogramDataPoint p : metric.getHistogram().getDataPointsList()) {
          histogramPoint(rs, mc, pt.set(p));
        }
      }
      case EXPONENTIAL_HISTOGRAM -> {
        for (ExponentialHistogramDataPoint p : metric.getExponentialHistogram().getDataPointsList()) {
          exponentialPoint(rs, mc, pt.set(p));
        }
      }
      case SUMMARY -> {
        for (SummaryDataPoint p : metric.getSummary().getDataPointsList()) {
          summaryPoint(rs, mc, pt.set(p));
        }
      }
      default -> throw new AssertionError();
    }
  }

  /**
   * Starts a metric of {@code n} data points: counts them, checks temporality, name and type, and
   * returns its context, or null if the metric has no data or all its points were rejected.
   * {@code metric}'s data points are not read (the in-place path passes a header without them).
   */
  MetricCtx beginMetric(RequestState rs, ResourceContext rc, ScopeContext sc, Metric metric, int n) {
    for (String w : sc.warnings) {
      rs.warn(w);
    }
    MetricNamer.Kind kind;
    PromType promType;
    MetricType otlpType;
    Temporality storedTemporality = Temporality.UNSPECIFIED;
    boolean monotonic = false;
    boolean isDelta = false;
    AggregationTemporality agg = null;
    switch (metric.getDataCase()) {
      case GAUGE -> {
        otlpType = MetricType.GAUGE;
        kind = MetricNamer.Kind.GAUGE;
        promType = PromType.GAUGE;
        if (metric.getMetadataCount() > 0 && "unknown".equals(prometheusType(metric))) {
          kind = MetricNamer.Kind.UNKNOWN;
          promType = PromType.UNKNOWN;
        }
      }
      case SUM -> {
        otlpType = MetricType.SUM;
        monotonic = metric.getSum().getIsMonotonic();
        agg = metric.getSum().getAggregationTemporality();
        kind = monotonic ? MetricNamer.Kind.MONOTONIC_COUNTER : MetricNamer.Kind.NON_MONOTONIC_COUNTER;
        promType = monotonic ? PromType.COUNTER : PromType.GAUGE;
      }
      case HISTOGRAM -> {
        otlpType = MetricType.HISTOGRAM;
        agg = metric.getHistogram().getAggregationTemporality();
        kind = MetricNamer.Kind.HISTOGRAM;
        promType = PromType.HISTOGRAM;
      }
      case EXPONENTIAL_HISTOGRAM -> {
        otlpType = MetricType.EXPONENTIAL_HISTOGRAM;
        agg = metric.getExponentialHistogram().getAggregationTemporality();
        kind = MetricNamer.Kind.EXPONENTIAL_HISTOGRAM;
        promType = PromType.HISTOGRAM;
      }
      case SUMMARY -> {
        otlpType = MetricType.SUMMARY;
        kind = MetricNamer.Kind.SUMMARY;
        promType = PromType.SUMMARY;
        storedTemporality = Temporality.CUMULATIVE;
      }
      default -> {
        rs.warn("metric \"" + metric.getName() + "\" has no data");
        return null;
      }
    }
    rs.total += n;
    if (n == 0) {
      return null;
    }
    if (agg != null) {
      if (agg == AggregationTemporality.AGGREGATION_TEMPORALITY_CUMULATIVE) {
        storedTemporality = Temporality.CUMULATIVE;
      } else if (agg == AggregationTemporality.AGGREGATION_TEMPORALITY_DELTA) {
        if (config.deltaMode() == TranslatorConfig.DeltaMode.REJECT) {
          rs.reject(RejectionReason.UNSUPPORTED_DELTA, metric.getName(), null, n);
          return null;
        }
        isDelta = true;
        storedTemporality = Temporality.CUMULATIVE; // what we store after accumulating
      } else {
        rs.reject(RejectionReason.INVALID_TEMPORALITY, metric.getName(),
            "aggregation_temporality " + temporalityValue(metric) + " is not DELTA (1) or CUMULATIVE (2)", n);
        return null;
      }
    }
    if (otlpType == MetricType.EXPONENTIAL_HISTOGRAM
        && config.exponentialHistogramMode() == TranslatorConfig.ExponentialHistogramMode.DROP) {
      rs.reject(RejectionReason.UNSUPPORTED_EXPONENTIAL_HISTOGRAM, metric.getName(),
          "exponential histograms are configured to be dropped", n);
      return null;
    }
    String unit = metric.getUnit();
    Object name = metricName(metric.getName(), unit, kind);
    if (name instanceof InvalidNameException e) {
      rs.reject(RejectionReason.INVALID_METRIC_NAME, metric.getName(), e.getMessage(), n);
      return null;
    }
    String family = ((FamilyName) name).family();
    FamilyMetadata fm = new FamilyMetadata(family, promType, ((FamilyName) name).unit(), metric.getDescription());
    FamilyMetadata conflict = registry.register(fm);
    if (conflict != null) {
      rs.reject(RejectionReason.TYPE_CONFLICT, family,
          "\"" + metric.getName() + "\" is a " + promType.text() + " but \"" + conflict.family()
              + "\" is already a " + conflict.type().text(), n);
      return null;
    }
    FamilyMetadata registered = registry.get(family).orElse(fm);
    if (!registered.unit().equals(fm.unit()) || !registered.help().equals(fm.help())) {
      rs.warn("metric \"" + family + "\": conflicting UNIT or HELP, keeping the first (unit \""
          + registered.unit() + "\")");
    }
    MetricMetadata meta = new MetricMetadata(otlpType, unit, storedTemporality, monotonic);
    HashStream128 hs = rs.hs;
    hs.reset();
    hs.putLong(sc.key.hi()).putLong(sc.key.lo());
    hs.putString(metric.getName()).putString(unit).putInt(otlpType.id()).putBoolean(monotonic)
        .putInt(agg == null ? -1 : agg.getNumber()).putInt(kind.ordinal());
    HashValue128 mh = hs.get();
    MetricCtx mc = rs.metricCtx;
    mc.rc = rc;
    mc.sc = sc;
    mc.family = family;
    mc.meta = meta;
    mc.hashHi = mh.getMostSignificantBits();
    mc.hashLo = mh.getLeastSignificantBits();
    mc.delta = isDelta;
    mc.promType = promType;
    return mc;
  }

  private static int temporalityValue(Metric m) {
    return switch (m.getDataCase()) {
      case SUM -> m.getSum().getAggregationTemporalityValue();
      case HISTOGRAM -> m.getHistogram().getAggregationTemporalityValue();
      case EXPONENTIAL_HISTOGRAM -> m.getExponentialHistogram().getAggregationTemporalityValue();
      default -> 0;
    };
  }

  private static String prometheusType(Metric m) {
    for (KeyValue kv : m.getMetadataList()) {
      if (kv.getKey().equals("prometheus.type")) {
        return kv.getValue().getStringValue();
      }
    }
    return null;
  }

  // ---------------------------------------------------------------- points

  /** Checks the timestamp; returns the sample time in ms, or -1 after rejecting the point. */
  private long timestampMillis(RequestState rs, MetricCtx mc, long timeUnixNano) {
    if (timeUnixNano == 0) {
      if (config.zeroTimestampPolicy() == TranslatorConfig.ZeroTimestampPolicy.USE_RECEIVE_TIME) {
        return rs.nowMillis;
      }
      rs.reject(RejectionReason.ZERO_TIMESTAMP, mc.family, null);
      return -1;
    }
    if (timeUnixNano < 0) {
      rs.reject(RejectionReason.INVALID_TIMESTAMP, mc.family,
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
  private static long timeNanos(long timeUnixNano, long tsMillis) {
    return timeUnixNano != 0 ? timeUnixNano : tsMillis * 1_000_000;
  }

  /** The start time in ms if zero injection applies to this point, else -1. */
  private long injectionMillis(long startUnixNano, long tsMillis) {
    if (!injectZero || startUnixNano <= 0) {
      return -1;
    }
    long st = startUnixNano / 1_000_000;
    return st > 0 && st < tsMillis ? st : -1;
  }

  /**
   * The point's series entry (sets {@code rs.key} to its stream key), or null after rejecting the
   * point. The tree path hashes the decoded attributes; the in-place path looks the raw attribute
   * bytes up first ({@link InPlace#entry}) and comes back to {@link #lookup} for a stream it has
   * not seen.
   */
  private SeriesEntry entry(RequestState rs, MetricCtx mc, Pt p) {
    SeriesEntry e = p.attrs != null ? lookup(rs, mc, p.attrs) : rs.inPlace.entry(rs, mc, p);
    return check(rs, mc, e);
  }

  /** The entry of the stream with these attributes, built if new; sets {@code rs.key} (a probe). */
  SeriesEntry lookup(RequestState rs, MetricCtx mc, List<KeyValue> attrs) {
    StreamKey probe = streamKey(mc.hashHi, mc.hashLo, attrs, rs);
    rs.key = probe;
    SeriesEntry e = series.getIfPresent(probe);
    if (e == null) {
      e = buildEntry(mc, attrs);
      SeriesEntry prev = series.asMap().putIfAbsent(probe.copy(), e);
      if (prev != null) {
        e = prev;
      }
    }
    return e;
  }

  private static SeriesEntry check(RequestState rs, MetricCtx mc, SeriesEntry e) {
    if (e.invalid != null) {
      rs.reject(e.invalid, mc.family, e.invalidDetail);
      return null;
    }
    if (e.warning != null) {
      rs.warn(e.warning);
    }
    return e;
  }

  void numberPoint(RequestState rs, MetricCtx mc, Pt p, boolean counter) {
    long ts = timestampMillis(rs, mc, p.timeNanos);
    if (ts < 0) {
      return;
    }
    SeriesEntry e = entry(rs, mc, p);
    if (e == null) {
      return;
    }
    Labels s = e.series;
    rs.begin(mc, ts);
    boolean stale = (p.flags & 1) != 0;
    if (stale) {
      if (mc.delta) {
        delta.remove(rs.key.copy(), rs.undo);
      }
      rs.emitStale(s);
      rs.commit(mc, ts, -1);
      return;
    }
    double v;
    switch (p.valueCase) {
      case Pt.AS_DOUBLE -> v = p.asDouble;
      case Pt.AS_INT -> v = (double) p.asInt;
      default -> {
        // metrics.proto: a point without a value is invalid. Prometheus writes 0; we invent no data.
        rs.reject(RejectionReason.MISSING_VALUE, mc.family, null);
        return;
      }
    }
    if (mc.delta) {
      final double dv = v;
      RejectionReason r =
          delta.accumulate(rs.key.copy(), p.startNanos, timeNanos(p.timeNanos, ts), rs.nowMillis, rs.undo,
              (st, fresh) -> {
                st.value = fresh ? dv : st.value + dv;
                rs.accValue = st.value;
                rs.accStartNanos = st.startNanos;
                return null;
              });
      if (r != null) {
        rs.reject(r, mc.family, null);
        return;
      }
      v = rs.accValue;
      rs.emit(s, v, counter);
      rs.commit(mc, ts, counter ? injectionMillis(rs.accStartNanos, ts) : -1);
      return;
    }
    rs.emit(s, v, counter);
    rs.commit(mc, ts, counter ? injectionMillis(p.startNanos, ts) : -1);
  }

  void histogramPoint(RequestState rs, MetricCtx mc, Pt p) {
    long ts = timestampMillis(rs, mc, p.timeNanos);
    if (ts < 0) {
      return;
    }
    boolean stale = (p.flags & 1) != 0;
    int nb = p.nb;
    int nc = p.nc;
    double[] bounds = p.bounds;
    long[] counts = p.counts;
    if (!stale) {
      String invalid = validateHistogram(bounds, nb, counts, nc, p.count);
      if (invalid != null) {
        rs.reject(RejectionReason.INVALID_HISTOGRAM, mc.family, invalid);
        return;
      }
    }
    SeriesEntry e = entry(rs, mc, p);
    if (e == null) {
      return;
    }
    rs.begin(mc, ts);
    if (stale) {
      if (mc.delta) {
        delta.remove(rs.key.copy(), rs.undo);
      }
      staleHistogram(rs, e, bounds, nb, p.hasSum);
      rs.commit(mc, ts, -1);
      return;
    }
    long count = p.count;
    boolean hasSum = p.hasSum;
    double sum = p.sum;
    long startNanos = p.startNanos;
    long timeUnixNano = p.timeNanos;
    if (mc.delta) {
      RejectionReason r =
          delta.accumulate(rs.key.copy(), startNanos, timeNanos(timeUnixNano, ts), rs.nowMillis, rs.undo,
              (st, fresh) -> {
                if (fresh || !DeltaAccumulator.sameBounds(st.bounds, bounds, nb) || st.counts == null) {
                  if (!fresh) {
                    st.startNanos = startNanos != 0 ? startNanos : timeNanos(timeUnixNano, ts);
                  }
                  st.bounds = DeltaAccumulator.copyBounds(bounds, nb);
                  st.counts = Arrays.copyOf(counts, nc);
                  st.count = count;
                  st.hasSum = hasSum;
                  st.sum = sum;
                } else {
                  for (int i = 0; i < nc; i++) {
                    st.counts[i] += counts[i];
                  }
                  st.count += count;
                  st.hasSum = st.hasSum && hasSum;
                  st.sum += sum;
                }
                System.arraycopy(st.counts, 0, counts, 0, nc);
                rs.accCount = st.count;
                rs.accHasSum = st.hasSum;
                rs.accValue = st.sum;
                rs.accStartNanos = st.startNanos;
                return null;
              });
      if (r != null) {
        rs.reject(r, mc.family, null);
        return;
      }
      emitHistogram(rs, e, bounds, nb, counts, rs.accCount, rs.accHasSum, rs.accValue);
      rs.commit(mc, ts, injectionMillis(rs.accStartNanos, ts));
      return;
    }
    emitHistogram(rs, e, bounds, nb, counts, count, hasSum, sum);
    rs.commit(mc, ts, injectionMillis(startNanos, ts));
  }

  private static String validateHistogram(double[] bounds, int nb, long[] counts, int nc, long count) {
    if (!(nc == nb + 1 || (nc == 0 && nb == 0))) {
      return "bucket_counts has " + nc + " entries for " + nb + " explicit_bounds (want " + (nb + 1) + ")";
    }
    double prev = Double.NEGATIVE_INFINITY;
    for (int i = 0; i < nb; i++) {
      double b = bounds[i];
      if (Double.isNaN(b) || Double.isInfinite(b)) {
        return "explicit bound " + b + " is not finite";
      }
      if (i > 0 && !(b > prev)) {
        return "explicit_bounds not strictly increasing at index " + i;
      }
      prev = b;
    }
    long total = 0;
    for (int i = 0; i < nc; i++) {
      long c = counts[i];
      total += c;
      if (c < 0 || total < 0) {
        return "bucket count out of range";
      }
    }
    if (count < 0) {
      return "count out of range";
    }
    return null;
  }


  private void emitHistogram(
      RequestState rs, SeriesEntry e, double[] bounds, int nb, long[] counts, long count, boolean hasSum, double sum) {
    Labels[] bl;
    synchronized (e) {
      bl = e.lastBounds != null && DeltaAccumulator.sameBounds(e.lastBounds, bounds, nb) ? e.lastBucketSeries : null;
      if (bl == null) {
        bl = new Labels[nb];
        for (int i = 0; i < nb; i++) {
          bl[i] = bucketSeries(e, bounds[i]);
        }
        e.lastBounds = Arrays.copyOf(bounds, nb);
        e.lastBucketSeries = bl;
      }
      if (hasSum) {
        e.sumEmitted = true;
      }
    }
    long cum = 0;
    for (int i = 0; i < nb; i++) {
      cum += counts[i];
      rs.emit(bl[i], (double) cum, true);
    }
    rs.emit(e.inf, (double) count, true);
    if (hasSum) {
      rs.emit(e.sum, sum, true);
    }
    rs.emit(e.count, (double) count, true);
  }

  /** Stale markers on every bucket ever emitted for the stream plus those the point lists. */
  private void staleHistogram(RequestState rs, SeriesEntry e, double[] bounds, int nb, boolean hasSum) {
    List<Labels> all;
    boolean sum;
    synchronized (e) {
      for (int i = 0; i < nb; i++) {
        if (!Double.isNaN(bounds[i]) && !Double.isInfinite(bounds[i])) {
          bucketSeries(e, bounds[i]);
        }
      }
      all = new ArrayList<>(e.buckets.values());
      sum = e.sumEmitted || hasSum;
    }
    for (Labels l : all) {
      rs.emitStale(l);
    }
    rs.emitStale(e.inf);
    if (sum) {
      rs.emitStale(e.sum);
    }
    rs.emitStale(e.count);
  }

  /** The {@code _bucket} series for a bound; caller holds the entry's lock. */
  private Labels bucketSeries(SeriesEntry e, double bound) {
    long bits = Double.doubleToRawLongBits(bound);
    Labels l = e.buckets.get(bits);
    if (l == null) {
      l = e.base.toBuilder()
          .set(Labels.METRIC_NAME, e.family + "_bucket")
          .set("le", formatFloat(bound))
          .build();
      e.buckets.put(bits, l);
    }
    return l;
  }

  private Labels quantileSeries(SeriesEntry e, double q) {
    long bits = Double.doubleToRawLongBits(q);
    Labels l = e.quantiles.get(bits);
    if (l == null) {
      l = e.base.toBuilder().set(Labels.METRIC_NAME, e.family).set("quantile", formatFloat(q)).build();
      e.quantiles.put(bits, l);
    }
    return l;
  }

  private String formatFloat(double v) {
    long bits = Double.doubleToRawLongBits(v);
    String s = leStrings.getIfPresent(bits);
    if (s == null) {
      s = config.leFormat() == TranslatorConfig.LeFormat.GO ? FloatFormat.goPlain(v) : FloatFormat.openMetrics(v);
      leStrings.put(bits, s);
    }
    return s;
  }

  void summaryPoint(RequestState rs, MetricCtx mc, Pt p) {
    long ts = timestampMillis(rs, mc, p.timeNanos);
    if (ts < 0) {
      return;
    }
    SeriesEntry e = entry(rs, mc, p);
    if (e == null) {
      return;
    }
    rs.begin(mc, ts);
    int nq = p.nq;
    if ((p.flags & 1) != 0) {
      List<Labels> all;
      synchronized (e) {
        for (int i = 0; i < nq; i++) {
          quantileSeries(e, p.qs[i]);
        }
        all = new ArrayList<>(e.quantiles.values());
      }
      for (Labels l : all) {
        rs.emitStale(l);
      }
      rs.emitStale(e.sum);
      rs.emitStale(e.count);
      rs.commit(mc, ts, -1);
      return;
    }
    Labels[] ql;
    synchronized (e) {
      ql = e.lastQuantileSeries;
      if (ql == null || ql.length != nq || !sameQuantiles(e.lastQuantiles, p)) {
        ql = new Labels[nq];
        double[] qs = new double[nq];
        for (int i = 0; i < nq; i++) {
          qs[i] = p.qs[i];
          ql[i] = quantileSeries(e, qs[i]);
        }
        e.lastQuantiles = qs;
        e.lastQuantileSeries = ql;
      }
    }
    for (int i = 0; i < nq; i++) {
      rs.emit(ql[i], p.qv[i], false);
    }
    rs.emit(e.sum, p.sum, true);
    rs.emit(e.count, (double) p.count, true);
    rs.commit(mc, ts, injectionMillis(p.startNanos, ts));
  }

  private static boolean sameQuantiles(double[] qs, Pt p) {
    if (qs == null || qs.length != p.nq) {
      return false;
    }
    for (int i = 0; i < qs.length; i++) {
      if (Double.doubleToRawLongBits(qs[i]) != Double.doubleToRawLongBits(p.qs[i])) {
        return false;
      }
    }
    return true;
  }

  void exponentialPoint(RequestState rs, MetricCtx mc, Pt p) {
    long ts = timestampMillis(rs, mc, p.timeNanos);
    if (ts < 0) {
      return;
    }
    boolean stale = (p.flags & 1) != 0;
    ExpHistogram h = rs.exp;
    if (!stale) {
      h.setFrom(p.exp);
      String invalid = validateExponential(h);
      if (invalid != null) {
        rs.reject(RejectionReason.INVALID_HISTOGRAM, mc.family, invalid);
        return;
      }
    }
    SeriesEntry e = entry(rs, mc, p);
    if (e == null) {
      return;
    }
    rs.begin(mc, ts);
    if (stale) {
      if (mc.delta) {
        delta.remove(rs.key.copy(), rs.undo);
      }
      List<Labels> all;
      boolean sum;
      synchronized (e) {
        all = new ArrayList<>(e.buckets.values());
        sum = e.sumEmitted || p.hasSum;
      }
      for (Labels l : all) {
        rs.emitStale(l);
      }
      if (config.exponentialHistogramMode() == TranslatorConfig.ExponentialHistogramMode.CLASSIC) {
        rs.emitStale(e.inf);
      }
      if (sum) {
        rs.emitStale(e.sum);
      }
      rs.emitStale(e.count);
      rs.commit(mc, ts, -1);
      return;
    }
    long startNanos = p.startNanos;
    if (mc.delta) {
      int maxBuckets = config.exponentialHistogramMaxBuckets();
      RejectionReason r =
          delta.accumulate(rs.key.copy(), startNanos, timeNanos(p.timeNanos, ts), rs.nowMillis, rs.undo,
              (st, fresh) -> {
                if (fresh || st.exp == null) {
                  st.exp = h.copy();
                  int need = Math.max(
                      ExpHistogram.downscaleNeeded(st.exp.posOffset, st.exp.posLen, maxBuckets),
                      ExpHistogram.downscaleNeeded(st.exp.negOffset, st.exp.negLen, maxBuckets));
                  st.exp.downscale(need);
                } else {
                  st.exp.add(h, maxBuckets);
                }
                h.setFrom(st.exp);
                rs.accStartNanos = st.startNanos;
                return null;
              });
      if (r != null) {
        rs.reject(r, mc.family, null);
        return;
      }
      startNanos = rs.accStartNanos;
    }
    if (config.exponentialHistogramMode() == TranslatorConfig.ExponentialHistogramMode.COUNT_SUM_ONLY) {
      if (h.hasSum) {
        synchronized (e) {
          e.sumEmitted = true;
        }
        rs.emit(e.sum, h.sum, true);
      }
      rs.emit(e.count, (double) h.count, true);
    } else {
      emitExponential(rs, e, h);
    }
    rs.commit(mc, ts, injectionMillis(startNanos, ts));
  }

  private static String validateExponential(ExpHistogram h) {
    if (h.scale < TranslatorConfig.MIN_SCALE) {
      return "scale " + h.scale + " is below " + TranslatorConfig.MIN_SCALE;
    }
    if (h.scale > 20) {
      return "scale " + h.scale + " is above 20";
    }
    if (!(h.zeroThreshold >= 0) || Double.isInfinite(h.zeroThreshold)) {
      return "zero_threshold " + h.zeroThreshold + " is invalid";
    }
    long total = h.bucketTotal();
    if (total < 0 || h.count < 0) {
      return "bucket count out of range";
    }
    boolean nanSum = h.hasSum && Double.isNaN(h.sum);
    if (nanSum ? h.count < total : h.count != total) {
      return "count " + h.count + " does not match zero_count + buckets = " + total;
    }
    return null;
  }

  /**
   * Classic conversion (§3.4 b): downscale to min(point scale, target, stream scale), widen the
   * stream's stable index range, then emit ascending cumulative buckets over the whole range:
   * negative buckets from the highest index down ({@code le = -base^k}), the zero bucket ({@code le
   * = zero_threshold}), positive buckets ({@code le = base^(k+1)}), {@code +Inf} = count.
   */
  private void emitExponential(RequestState rs, SeriesEntry e, ExpHistogram h) {
    int maxBuckets = config.exponentialHistogramMaxBuckets();
    int n;
    Labels[] labels;
    long[] values;
    synchronized (e) {
      int eff = Math.min(h.scale, config.exponentialHistogramScale());
      if (e.expInit) {
        if (eff < e.expScale) {
          shiftRanges(e, e.expScale - eff);
          e.expScale = eff;
        }
        eff = e.expScale;
      } else {
        e.expInit = true;
        e.expScale = eff;
      }
      h.downscale(h.scale - eff);
      for (int i = 0; i < h.posLen; i++) {
        if (h.pos[i] != 0) {
          long k = (long) h.posOffset + i;
          e.posMin = Math.min(e.posMin, k);
          e.posMax = Math.max(e.posMax, k);
        }
      }
      for (int i = 0; i < h.negLen; i++) {
        if (h.neg[i] != 0) {
          long k = (long) h.negOffset + i;
          e.negMin = Math.min(e.negMin, k);
          e.negMax = Math.max(e.negMax, k);
        }
      }
      while (span(e.posMin, e.posMax) > maxBuckets || span(e.negMin, e.negMax) > maxBuckets) {
        shiftRanges(e, 1);
        e.expScale--;
        h.downscale(1);
      }
      double zt = h.zeroThreshold;
      if (e.layoutScale != e.expScale || e.layoutNegMin != e.negMin || e.layoutNegMax != e.negMax
          || e.layoutPosMin != e.posMin || e.layoutPosMax != e.posMax
          || e.layoutZeroBits != Double.doubleToRawLongBits(zt) || e.layoutZero == null) {
        buildLayout(e, zt);
      }
      int cap = (int) (span(e.posMin, e.posMax) + span(e.negMin, e.negMax) + 1);
      labels = rs.expLabels(cap);
      values = rs.expValues(cap);
      n = 0;
      long cum = 0;
      Labels[] neg = e.layoutNeg;
      for (int i = 0; i < neg.length; i++) {
        cum += bucket(h.neg, h.negOffset, h.negLen, e.negMax - i);
        if (neg[i] != null) {
          labels[n] = neg[i];
          values[n++] = cum;
        }
      }
      cum += h.zeroCount;
      Labels[] pos = e.layoutPos;
      int i = 0;
      // Positive buckets inside the zero bucket ([0, zt]) count there.
      while (i < pos.length && pos[i] == null && ExpHistogram.lowerBound(e.posMin + i + 1, e.expScale) <= zt) {
        cum += bucket(h.pos, h.posOffset, h.posLen, e.posMin + i);
        i++;
      }
      labels[n] = e.layoutZero;
      values[n++] = cum;
      for (; i < pos.length; i++) {
        cum += bucket(h.pos, h.posOffset, h.posLen, e.posMin + i);
        if (pos[i] != null) {
          labels[n] = pos[i];
          values[n++] = cum;
        }
      }
      if (h.hasSum) {
        e.sumEmitted = true;
      }
    }
    for (int i = 0; i < n; i++) {
      rs.emit(labels[i], (double) values[i], true);
    }
    rs.emit(e.inf, (double) h.count, true);
    if (h.hasSum) {
      rs.emit(e.sum, h.sum, true);
    }
    rs.emit(e.count, (double) h.count, true);
  }

  /** Computes the bucket series of the entry's current layout; caller holds the entry's lock. */
  private void buildLayout(SeriesEntry e, double zt) {
    int s = e.expScale;
    Labels[] neg = new Labels[(int) span(e.negMin, e.negMax)];
    for (int i = 0; i < neg.length; i++) {
      double le = -ExpHistogram.lowerBound(e.negMax - i, s);
      // Outside double range, or overlapping the zero bucket: counts flow into the next bound.
      neg[i] = Double.isInfinite(le) || le >= -zt ? null : bucketSeries(e, le);
    }
    Labels[] pos = new Labels[(int) span(e.posMin, e.posMax)];
    for (int i = 0; i < pos.length; i++) {
      double le = ExpHistogram.lowerBound(e.posMin + i + 1, s);
      pos[i] = Double.isInfinite(le) || le <= zt ? null : bucketSeries(e, le);
    }
    e.layoutNeg = neg;
    e.layoutPos = pos;
    e.layoutZero = bucketSeries(e, zt == 0 ? 0.0 : zt);
    e.layoutScale = s;
    e.layoutNegMin = e.negMin;
    e.layoutNegMax = e.negMax;
    e.layoutPosMin = e.posMin;
    e.layoutPosMax = e.posMax;
    e.layoutZeroBits = Double.doubleToRawLongBits(zt);
  }

  private static long span(long min, long max) {
    return max == Long.MIN_VALUE ? 0 : max - min + 1;
  }

  private static void shiftRanges(SeriesEntry e, int by) {
    if (e.posMax != Long.MIN_VALUE) {
      e.posMin >>= by;
      e.posMax >>= by;
    }
    if (e.negMax != Long.MIN_VALUE) {
      e.negMin >>= by;
      e.negMax >>= by;
    }
  }

  private static long bucket(long[] a, int off, int len, long k) {
    long i = k - off;
    return i >= 0 && i < len ? a[(int) i] : 0;
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
        warnings.add("metric \"" + mc.family + "\": attributes \"" + firstKey.get(name) + "\" and \"" + key
            + "\" both map to label \"" + name + "\"; values joined with \";\"");
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
    m.remove(Labels.METRIC_NAME);
    Labels base = toLabels(m);
    SeriesEntry e = new SeriesEntry(base, mc.family, warnings.isEmpty() ? null : String.join("; ", warnings));
    String f = mc.family;
    switch (mc.promType) {
      case HISTOGRAM -> {
        e.sum = withName(base, f + "_sum");
        e.count = withName(base, f + "_count");
        e.inf = base.toBuilder().set(Labels.METRIC_NAME, f + "_bucket").set("le", "+Inf").build();
      }
      case SUMMARY -> {
        e.sum = withName(base, f + "_sum");
        e.count = withName(base, f + "_count");
      }
      default -> e.series = withName(base, f);
    }
    // The longest-named series of the stream stands for all of them (bucket and quantile series add
    // a short label; should one still break the total, the engine refuses that point on its own).
    Labels longest = e.inf != null ? e.inf : e.count != null ? e.count : e.series;
    String limit = SeriesLimits.violation(longest, mc.meta);
    if (limit != null) {
      return new SeriesEntry(RejectionReason.LIMIT_EXCEEDED, limit);
    }
    return e;
  }

  /** Sanitizes, sorts by original key and merges colliding names with {@code ;} (§2.1 step 1). */
  private void addAttributes(Map<String, String> m, List<KeyValue> sorted, List<String> warnings, String what) {
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
        warnings.add(what + " attributes map to the same label \"" + name + "\"; values joined with \";\"");
      } else {
        m.put(name, v);
      }
    }
  }

  private static Labels withName(Labels base, String name) {
    return base.toBuilder().set(Labels.METRIC_NAME, name).build();
  }

  private static Labels toLabels(Map<String, String> m) {
    Labels.Builder b = Labels.builder();
    m.forEach(b::add);
    return b.build();
  }

  private static void putIfNotEmpty(Map<String, String> m, String k, String v) {
    if (v != null && !v.isEmpty()) {
      m.put(k, v);
    }
  }

  private String labelName(String key) throws InvalidNameException {
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

  private Object metricName(String name, String unit, MetricNamer.Kind kind) {
    NameKey key = new NameKey(name, unit, kind);
    Object o = metricNames.getIfPresent(key);
    if (o == null) {
      try {
        o = new FamilyName(metricNamer.build(name, unit, kind), metricNamer.unitName(unit));
      } catch (InvalidNameException e) {
        o = e;
      }
      metricNames.put(key, o);
    }
    return o;
  }

  /** Attributes in byte order of their keys (the order collisions are joined in, §2.1). */
  private static List<KeyValue> sortedByKey(List<KeyValue> attrs) {
    List<KeyValue> l = new ArrayList<>(attrs);
    l.sort((a, b) -> Labels.compareUtf8(a.getKey(), b.getKey()));
    return l;
  }

  /**
   * The stream key of a data point: the metric's 128-bit hash extended by the point's attributes
   * (the key set's hash, then each value's 64-bit hash, in canonical key order). Two 64-bit lanes
   * are updated with different bijective steps (xor-multiply-rotate, add-multiply-rotate) and
   * finished with the MurmurHash3 fmix64 avalanche; for inputs differing in one value either lane
   * alone already differs. No allocation besides the key.
   */
  private static StreamKey streamKey(long seedHi, long seedLo, List<KeyValue> attrs, RequestState rs) {
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
  private static void hashAttributes(HashStream128 hs, List<KeyValue> attrs, RequestState rs) {
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
        h = Long.rotateLeft(h ^ stringHash(keys[order == null ? i : order[i]]), 27) * 0xC2B2AE3D27D4EB4FL;
      }
      hash = h;
    }
  }

  private static long valueHash(AnyValue v) {
    AnyValue.ValueCase c = v.getValueCase();
    long salt = (c.getNumber() + 1) * 0x9E3779B97F4A7C15L;
    return salt ^ switch (c) {
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

  // ---------------------------------------------------------------- per-request state

  record NameKey(String name, String unit, MetricNamer.Kind kind) {}

  /** A translated family name and its UNIT metadata. */
  record FamilyName(String family, String unit) {}

  record TargetInfoSample(Labels labels, long timestampMillis) {}

  static final class ResourceContext {
    final StreamKey key;
    final String job;
    final String instance;
    final String[] promoted;
    final Labels targetInfo;
    final List<String> warnings;

    ResourceContext(StreamKey key, String job, String instance, String[] promoted, Labels targetInfo, List<String> warnings) {
      this.key = key;
      this.job = job;
      this.instance = instance;
      this.promoted = promoted;
      this.targetInfo = targetInfo;
      this.warnings = warnings;
    }
  }

  static final class ScopeContext {
    final StreamKey key;
    final String[] pairs;
    final List<String> warnings;

    ScopeContext(StreamKey key, String[] pairs, List<String> warnings) {
      this.key = key;
      this.pairs = pairs;
      this.warnings = warnings;
    }
  }

  static final class MetricCtx {
    ResourceContext rc;
    ScopeContext sc;
    String family;
    MetricMetadata meta;
    long hashHi;
    long hashLo;
    boolean delta;
    PromType promType;
  }

  /** Per-thread scratch, reused across requests. */
  final class RequestState {
    final SampleBatch batch = new SampleBatch(1024);
    final HashStream128 hs = Hashing.xxh3_128().hashStream();
    final MetricCtx metricCtx = new MetricCtx();
    final ExpHistogram exp = new ExpHistogram();
    final KeySet keySet = new KeySet();
    /** The data point being translated, decoded from either path. */
    final Pt pt = new Pt();
    /** The in-place path's decoder and scratch. */
    final InPlace inPlace = new InPlace(Translator.this);
    /** The lookup key of the current point; reused, so copied before it is stored anywhere. */
    final StreamKey probe = new StreamKey(0, 0);
    final List<DeltaAccumulator.Undo> undo = new ArrayList<>();
    final Set<TargetInfoSample> targetInfoSeen = new HashSet<>();
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
     * Opens a point. Without zero injection samples go straight into the batch (everything that
     * can reject a point is checked before its first sample is emitted); with it they are staged
     * so the zero point can precede them.
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
          batch.add(sLabels[i], mc.meta, ts, bits == NORMAL_NAN_BITS ? NORMAL_NAN : Double.longBitsToDouble(bits));
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
      return new TranslationResult(total, counts, examples, details, new ArrayList<>(warnings), written);
    }
  }
}
