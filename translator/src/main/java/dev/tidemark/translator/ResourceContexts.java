package dev.tidemark.translator;

import com.dynatrace.hash4j.hashing.HashStream128;
import com.dynatrace.hash4j.hashing.HashValue128;
import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import dev.tidemark.tsdb.codec.SeriesLimits;
import dev.tidemark.tsdb.model.FamilyMetadata;
import dev.tidemark.tsdb.model.Labels;
import dev.tidemark.tsdb.model.MetadataRegistry;
import dev.tidemark.tsdb.model.MetricMetadata;
import dev.tidemark.tsdb.model.MetricType;
import dev.tidemark.tsdb.model.PromType;
import dev.tidemark.tsdb.model.Temporality;
import io.opentelemetry.proto.common.v1.InstrumentationScope;
import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.metrics.v1.ScopeMetrics;
import io.opentelemetry.proto.resource.v1.Resource;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Resources and scopes (§2.4–§2.6, Prometheus' {@code setResourceContext}, {@code setScopeContext},
 * {@code addResourceTargetInfo}): {@code job} and {@code instance}, promoted resource attributes,
 * scope labels and the {@code target_info} samples of a resource, each context cached by the hash
 * of its attributes. Both paths call {@link #begin}, {@link #scope} and {@link #end}. Thread-safe
 * (concurrent caches; per-request state in {@link RequestState}).
 */
final class ResourceContexts {
  private static final int NAME_CACHE_SIZE = Translator.NAME_CACHE_SIZE;
  private static final String SERVICE_NAME = "service.name";
  private static final String SERVICE_NAMESPACE = "service.namespace";
  private static final String SERVICE_INSTANCE_ID = "service.instance.id";
  private static final MetricMetadata TARGET_INFO_META =
      new MetricMetadata(MetricType.GAUGE, "", Temporality.UNSPECIFIED, false);

  private final TranslatorConfig config;
  private final MetadataRegistry registry;
  private final SeriesResolver resolver;
  private final Cache<StreamKey, ResourceContext> resources;
  private final Cache<StreamKey, ScopeContext> scopes;
  private final String targetInfoName;
  private final long targetInfoIntervalMillis;

  ResourceContexts(TranslatorConfig config, MetadataRegistry registry, SeriesResolver resolver) {
    this.config = config;
    this.registry = registry;
    this.resolver = resolver;
    this.resources =
        Caffeine.newBuilder().maximumSize(NAME_CACHE_SIZE).executor(Runnable::run).build();
    this.scopes =
        Caffeine.newBuilder().maximumSize(NAME_CACHE_SIZE).executor(Runnable::run).build();
    this.targetInfoName =
        config.namespace().isEmpty() ? "target_info" : config.namespace() + "_target_info";
    this.targetInfoIntervalMillis = Math.max(1, config.lookbackDelta().toMillis() / 2);
  }

  /** Starts a resource: its context (cached), its warnings, the per-resource time range. */
  ResourceContext begin(RequestState rs, Resource resource) {
    ResourceContext rc = resourceContext(rs, resource);
    rs.resourceMinMillis = Long.MAX_VALUE;
    rs.resourceMaxMillis = Long.MIN_VALUE;
    for (String w : rc.warnings) {
      rs.warn(w);
    }
    StreamKey firstWithJob =
        rc.instance == null && rc.job != null
            ? rs.jobsWithoutInstance.putIfAbsent(rc.job, rc.key)
            : null;
    if (firstWithJob != null && !firstWithJob.equals(rc.key)) {
      rs.warn(
          "several resources with service.name \""
              + rc.job
              + "\" lack service.instance.id; their series collide");
    }
    return rc;
  }

  /** Ends a resource: its target_info samples. */
  void end(RequestState rs, ResourceContext rc) {
    if (rc.targetInfo != null && rs.resourceMaxMillis != Long.MIN_VALUE) {
      emitTargetInfo(rs, rc.targetInfo);
    }
  }

  private void emitTargetInfo(RequestState rs, Labels labels) {
    FamilyMetadata conflict =
        registry.register(
            new FamilyMetadata(targetInfoName, PromType.GAUGE, "", "Target metadata"));
    if (conflict != null) {
      rs.warn(
          "target_info not written: "
              + targetInfoName
              + " is registered as "
              + conflict.type().text());
      return;
    }
    long min = rs.resourceMinMillis;
    long max = rs.resourceMaxMillis;
    long step = targetInfoIntervalMillis;
    long n = (max - min) / step;
    long t = min;
    if (n > Translator.MAX_TARGET_INFO_SAMPLES) {
      t = min + (n - Translator.MAX_TARGET_INFO_SAMPLES) * step;
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
    SeriesResolver.hashAttributes(hs, attrs, rs);
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
    List<KeyValue> sorted = SeriesResolver.sortedByKey(attrs);
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
      if (config.promoteAllResourceAttributes()
          ? !ignore.contains(kv.getKey())
          : promoteSet.contains(kv.getKey())) {
        promote.add(kv);
      }
    }
    LinkedHashMap<String, String> promoted = new LinkedHashMap<>();
    resolver.addAttributes(promoted, promote, warnings, "resource");
    // target_info (§2.5).
    Labels targetInfo = null;
    if (hasOther && (job != null || instance != null)) {
      List<KeyValue> info = new ArrayList<>();
      for (KeyValue kv : sorted) {
        String k = kv.getKey();
        boolean identifying =
            k.equals(SERVICE_NAME) || k.equals(SERVICE_NAMESPACE) || k.equals(SERVICE_INSTANCE_ID);
        if (!identifying || config.keepIdentifyingResourceAttributes()) {
          info.add(kv);
        }
      }
      LinkedHashMap<String, String> m = new LinkedHashMap<>();
      resolver.addAttributes(m, info, warnings, "target_info");
      SeriesResolver.putIfNotEmpty(m, "job", job);
      SeriesResolver.putIfNotEmpty(m, "instance", instance);
      config.externalLabels().forEach(m::putIfAbsent);
      m.put(Labels.METRIC_NAME, targetInfoName);
      String limit;
      try {
        targetInfo = SeriesResolver.toLabels(m);
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
    return new ResourceContext(
        key, job, instance, promotedPairs, targetInfo, List.copyOf(warnings));
  }

  ScopeContext scope(RequestState rs, ScopeMetrics sm, ResourceContext rc) {
    InstrumentationScope scope = sm.getScope();
    HashStream128 hs = rs.hs;
    hs.reset();
    hs.putLong(rc.key.hi()).putLong(rc.key.lo());
    hs.putString(scope.getName()).putString(scope.getVersion()).putString(sm.getSchemaUrl());
    SeriesResolver.hashAttributes(hs, scope.getAttributesList(), rs);
    HashValue128 h = hs.get();
    StreamKey key = new StreamKey(h.getMostSignificantBits(), h.getLeastSignificantBits());
    ScopeContext sc = scopes.getIfPresent(key);
    if (sc == null) {
      sc = buildScopeContext(key, scope, sm.getSchemaUrl());
      scopes.put(key, sc);
    }
    return sc;
  }

  private ScopeContext buildScopeContext(
      StreamKey key, InstrumentationScope scope, String schemaUrl) {
    List<String> warnings = new ArrayList<>();
    // Prometheus adds scope labels only for a non-empty scope name (R1 setScopeContext).
    if (!config.promoteScopeMetadata() || scope.getName().isEmpty()) {
      return new ScopeContext(key, new String[0], List.of());
    }
    LinkedHashMap<String, String> m = new LinkedHashMap<>();
    for (KeyValue kv : SeriesResolver.sortedByKey(scope.getAttributesList())) {
      String name;
      try {
        name = resolver.labelName("otel_scope_" + kv.getKey());
      } catch (InvalidNameException e) {
        warnings.add("scope attribute dropped: " + e.getMessage());
        continue;
      }
      String v = AttributeValues.toLabelValue(kv.getValue());
      if (!v.isEmpty()) {
        m.merge(name, v, (a, b) -> a + ";" + b);
      }
    }
    SeriesResolver.putIfNotEmpty(m, "otel_scope_name", scope.getName());
    SeriesResolver.putIfNotEmpty(m, "otel_scope_version", scope.getVersion());
    SeriesResolver.putIfNotEmpty(m, "otel_scope_schema_url", schemaUrl);
    String[] pairs = new String[m.size() * 2];
    int i = 0;
    for (Map.Entry<String, String> e : m.entrySet()) {
      pairs[i++] = e.getKey();
      pairs[i++] = e.getValue();
    }
    return new ScopeContext(key, pairs, List.copyOf(warnings));
  }

  record TargetInfoSample(Labels labels, long timestampMillis) {}

  static final class ResourceContext {
    final StreamKey key;
    final String job;
    final String instance;
    final String[] promoted;
    final Labels targetInfo;
    final List<String> warnings;

    ResourceContext(
        StreamKey key,
        String job,
        String instance,
        String[] promoted,
        Labels targetInfo,
        List<String> warnings) {
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
}
