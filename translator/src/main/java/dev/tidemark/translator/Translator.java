package dev.tidemark.translator;

import com.dynatrace.hash4j.hashing.HashStream128;
import com.dynatrace.hash4j.hashing.HashValue128;
import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.google.protobuf.InvalidProtocolBufferException;
import dev.tidemark.translator.ResourceContexts.ResourceContext;
import dev.tidemark.translator.ResourceContexts.ScopeContext;
import dev.tidemark.tsdb.append.AppendResult;
import dev.tidemark.tsdb.append.Appender;
import dev.tidemark.tsdb.append.RejectReason;
import dev.tidemark.tsdb.append.SampleBatch;
import dev.tidemark.tsdb.append.StorageUnavailableException;
import dev.tidemark.tsdb.model.FamilyMetadata;
import dev.tidemark.tsdb.model.Labels;
import dev.tidemark.tsdb.model.MetadataRegistry;
import dev.tidemark.tsdb.model.MetricMetadata;
import dev.tidemark.tsdb.model.MetricType;
import dev.tidemark.tsdb.model.PromType;
import dev.tidemark.tsdb.model.Temporality;
import io.opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest;
import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.metrics.v1.AggregationTemporality;
import io.opentelemetry.proto.metrics.v1.ExponentialHistogramDataPoint;
import io.opentelemetry.proto.metrics.v1.HistogramDataPoint;
import io.opentelemetry.proto.metrics.v1.Metric;
import io.opentelemetry.proto.metrics.v1.NumberDataPoint;
import io.opentelemetry.proto.metrics.v1.ResourceMetrics;
import io.opentelemetry.proto.metrics.v1.ScopeMetrics;
import io.opentelemetry.proto.metrics.v1.SummaryDataPoint;
import java.time.Clock;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * Translates OTLP metrics into Prometheus-model samples and writes them through an {@link Appender}
 * (the contract is {@code docs/otlp-translation.md}; section numbers below refer to it).
 *
 * <p><b>Outcomes.</b> Every OTLP data point gets exactly one outcome. A point that passes
 * translation becomes one {@link SampleBatch} point holding all its derived samples (a histogram
 * point's {@code _bucket}s, {@code _sum}, {@code _count}), so the engine writes it all or nothing;
 * the translator's own rejections (names, TYPE conflicts, timestamps, delta streams, ...) and the
 * engine's per-point results are merged into one {@link TranslationResult}. Synthetic samples
 * ({@code target_info}, start-time zeros) travel as separate points whose failures are ignored. The
 * appender is called once per request, and not at all if nothing is left to write.
 *
 * <p><b>Thread safety.</b> Thread-safe; the receiver calls {@link #translate} concurrently. Per
 * request scratch (the batch, buffers, the hash stream) is reused per thread; shared state (series
 * cache, name caches, delta streams, {@link MetadataRegistry}) is concurrent.
 *
 * <p><b>Hot path.</b> A stream's identity is hashed straight from the protobuf (XXH3-128, {@link
 * StreamKey}) and looked up in a bounded cache of {@link SeriesEntry}s holding the finished {@link
 * Labels}; only a miss sanitizes names and builds label sets. Metric names are cached per (name,
 * unit, kind). A stream whose entry was evicted (cache size {@link
 * TranslatorConfig#seriesCacheSize()}, least recently/frequently used first) loses its le-bound
 * memory: a later NoRecordedValue marks only the bounds seen since.
 *
 * <p><b>Two ways in.</b> {@link #translate(ExportMetricsServiceRequest)} reads a decoded message
 * (OTLP/JSON; the reference); {@link #translate(byte[])} reads the serialized message in place
 * ({@link OtlpWire}, {@link InPlace}: no message tree, streams found by their attribute bytes) with
 * the same results. Both feed the same rules through {@link Pt}.
 *
 * <p><b>Structure.</b> This class is the facade: the public API, the request loop, the walk over
 * the message tree and the metric-level rules (names, TYPE conflicts, temporality). Beside it,
 * package-private, as Prometheus splits its OTLP translator by data-point kind: {@link
 * ResourceContexts} (job, instance, promoted attributes, scope labels, target_info), {@link
 * SeriesResolver} (the shared series-resolution path: timestamps, stream identity, labels, the
 * series cache, delta accumulation hooks; Prometheus' {@code helper.go}), and one class per kind:
 * {@link NumberPoints}, {@link HistogramPoints}, {@link ExponentialHistogramPoints}, {@link
 * SummaryPoints}. Per-request scratch is {@link RequestState}.
 *
 * <p><b>Time.</b> All "now" decisions (future skew, receive time, delta eviction) use the injected
 * {@link Clock}.
 */
public final class Translator {
  /** At most this many {@code target_info} samples per resource and request (the latest ones). */
  public static final int MAX_TARGET_INFO_SAMPLES = 1_000;

  static final int NAME_CACHE_SIZE = 10_000;
  private static final int KNOWN_RUNS = 1 << 15;

  private final Appender appender;
  private final TranslatorConfig config;
  private final Clock clock;
  private final MetadataRegistry registry;
  private final MetricNamer metricNamer;
  private final DeltaAccumulator delta;

  /** The in-place path's streams by hashed attribute bytes (see {@link InPlace}). */
  private final WireStreamCache wireStreams;

  private final MetricHeaders metricHeaders = new MetricHeaders();

  /**
   * Attribute runs of known wire streams by the low bits of their hash (direct-mapped, last writer
   * wins): {@link OtlpWire#isValid} skips checking a run it finds here.
   */
  private final AtomicReferenceArray<byte[]> knownRuns = new AtomicReferenceArray<>(KNOWN_RUNS);

  private final Cache<NameKey, Object> metricNames;
  // The parts: one shared series-resolution path, the resource/scope rules, one class per
  // data-point kind. Both paths (tree and in place) call the same parts.
  final SeriesResolver resolver;
  final ResourceContexts resources;
  final NumberPoints numbers;
  final HistogramPoints histograms;
  final ExponentialHistogramPoints exponentialHistograms;
  final SummaryPoints summaries;
  private final ThreadLocal<RequestState> requestState;

  public Translator(Appender appender, TranslatorConfig config, Clock clock) {
    this(appender, config, clock, new MetadataRegistry());
  }

  /**
   * @param registry where family metadata goes (shared with the metadata API)
   */
  public Translator(
      Appender appender, TranslatorConfig config, Clock clock, MetadataRegistry registry) {
    this.appender = Objects.requireNonNull(appender, "appender");
    this.config = Objects.requireNonNull(config, "config");
    this.clock = Objects.requireNonNull(clock, "clock");
    this.registry = Objects.requireNonNull(registry, "registry");
    this.metricNamer = new MetricNamer(config.namespace(), config.translationStrategy());
    this.delta =
        new DeltaAccumulator(
            config.maxStreams(), config.maxStale().toMillis(), config.deltaResetOnGap());
    this.wireStreams = new WireStreamCache(config.seriesCacheSize());
    this.metricNames =
        Caffeine.newBuilder().maximumSize(NAME_CACHE_SIZE).executor(Runnable::run).build();
    this.resolver = new SeriesResolver(config, delta);
    this.resources = new ResourceContexts(config, registry, resolver);
    this.numbers = new NumberPoints(resolver);
    this.histograms = new HistogramPoints(resolver);
    this.exponentialHistograms = new ExponentialHistogramPoints(resolver, config);
    this.summaries = new SummaryPoints(resolver);
    boolean injectZero = config.startTimeMode() == TranslatorConfig.StartTimeMode.INJECT_ZERO;
    this.requestState = ThreadLocal.withInitial(() -> new RequestState(this, injectZero));
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
   * @throws StorageUnavailableException if the appender cannot take writes now (retryable; nothing
   *     of this request was acknowledged, and its delta accumulation is rolled back)
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
   * Translates and appends one serialized {@code ExportMetricsServiceRequest} without building its
   * message tree (the in-place path, {@link InPlace}). Same outcome, samples and exceptions as
   * {@code translate(ExportMetricsServiceRequest.parseFrom(bytes))}: bytes protobuf-java cannot
   * parse throw its {@link InvalidProtocolBufferException} before anything is translated.
   */
  public TranslationResult translate(byte[] bytes) throws InvalidProtocolBufferException {
    return translate(bytes, 0, bytes.length);
  }

  /** {@link #translate(byte[])} over {@code bytes[offset, offset + length)}. */
  public TranslationResult translate(byte[] bytes, int offset, int length)
      throws InvalidProtocolBufferException {
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
    return OtlpWire.isValid(bytes, offset, length)
        ? InPlace.countDataPoints(bytes, offset, length)
        : -1;
  }

  MetricHeaders metricHeaders() {
    return metricHeaders;
  }

  WireStreamCache wireStreams() {
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

  // ---------------------------------------------------------------- the tree walk

  private void translateResource(RequestState rs, ResourceMetrics rm) {
    ResourceContext rc = resources.begin(rs, rm.getResource());
    for (int s = 0; s < rm.getScopeMetricsCount(); s++) {
      ScopeMetrics sm = rm.getScopeMetrics(s);
      ScopeContext sc = resources.scope(rs, sm, rc);
      for (int m = 0; m < sm.getMetricsCount(); m++) {
        translateMetric(rs, rc, sc, sm.getMetrics(m));
      }
    }
    resources.end(rs, rc);
  }

  // ---------------------------------------------------------------- metrics

  private void translateMetric(
      RequestState rs, ResourceContext rc, ScopeContext sc, Metric metric) {
    int n =
        switch (metric.getDataCase()) {
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
          numbers.point(rs, mc, pt.set(p), false);
        }
      }
      case SUM -> {
        boolean counter = mc.meta.monotonic();
        for (NumberDataPoint p : metric.getSum().getDataPointsList()) {
          numbers.point(rs, mc, pt.set(p), counter);
        }
      }
      case HISTOGRAM -> {
        for (HistogramDataPoint p : metric.getHistogram().getDataPointsList()) {
          histograms.point(rs, mc, pt.set(p));
        }
      }
      case EXPONENTIAL_HISTOGRAM -> {
        for (ExponentialHistogramDataPoint p :
            metric.getExponentialHistogram().getDataPointsList()) {
          exponentialHistograms.point(rs, mc, pt.set(p));
        }
      }
      case SUMMARY -> {
        for (SummaryDataPoint p : metric.getSummary().getDataPointsList()) {
          summaries.point(rs, mc, pt.set(p));
        }
      }
      default -> throw new AssertionError();
    }
  }

  /**
   * Starts a metric of {@code n} data points: counts them, checks temporality, name and type, and
   * returns its context, or null if the metric has no data or all its points were rejected. {@code
   * metric}'s data points are not read (the in-place path passes a header without them).
   */
  MetricCtx beginMetric(
      RequestState rs, ResourceContext rc, ScopeContext sc, Metric metric, int n) {
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
        kind =
            monotonic ? MetricNamer.Kind.MONOTONIC_COUNTER : MetricNamer.Kind.NON_MONOTONIC_COUNTER;
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
        rs.reject(
            RejectionReason.INVALID_TEMPORALITY,
            metric.getName(),
            "aggregation_temporality "
                + temporalityValue(metric)
                + " is not DELTA (1) or CUMULATIVE (2)",
            n);
        return null;
      }
    }
    if (otlpType == MetricType.EXPONENTIAL_HISTOGRAM
        && config.exponentialHistogramMode() == TranslatorConfig.ExponentialHistogramMode.DROP) {
      rs.reject(
          RejectionReason.UNSUPPORTED_EXPONENTIAL_HISTOGRAM,
          metric.getName(),
          "exponential histograms are configured to be dropped",
          n);
      return null;
    }
    String unit = metric.getUnit();
    Object name = metricName(metric.getName(), unit, kind);
    if (name instanceof InvalidNameException e) {
      rs.reject(RejectionReason.INVALID_METRIC_NAME, metric.getName(), e.getMessage(), n);
      return null;
    }
    String family = ((FamilyName) name).family();
    FamilyMetadata fm =
        new FamilyMetadata(family, promType, ((FamilyName) name).unit(), metric.getDescription());
    FamilyMetadata conflict = registry.register(fm);
    if (conflict != null) {
      rs.reject(
          RejectionReason.TYPE_CONFLICT,
          family,
          "\""
              + metric.getName()
              + "\" is a "
              + promType.text()
              + " but \""
              + conflict.family()
              + "\" is already a "
              + conflict.type().text(),
          n);
      return null;
    }
    FamilyMetadata registered = registry.get(family).orElse(fm);
    if (!registered.unit().equals(fm.unit()) || !registered.help().equals(fm.help())) {
      rs.warn(
          "metric \""
              + family
              + "\": conflicting UNIT or HELP, keeping the first (unit \""
              + registered.unit()
              + "\")");
    }
    MetricMetadata meta = new MetricMetadata(otlpType, unit, storedTemporality, monotonic);
    HashStream128 hs = rs.hs;
    hs.reset();
    hs.putLong(sc.key.hi()).putLong(sc.key.lo());
    hs.putString(metric.getName())
        .putString(unit)
        .putInt(otlpType.id())
        .putBoolean(monotonic)
        .putInt(agg == null ? -1 : agg.getNumber())
        .putInt(kind.ordinal());
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

  record NameKey(String name, String unit, MetricNamer.Kind kind) {}

  /** A translated family name and its UNIT metadata. */
  record FamilyName(String family, String unit) {}
}
