package dev.tidemark.translator;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * The translator's knobs (contract §7; names mirror Prometheus where one exists). Immutable; {@link
 * Builder#build()} validates and throws {@link IllegalArgumentException} naming the bad value.
 */
public final class TranslatorConfig {

  /** What to do with exponential histograms (contract §3.4 b). */
  public enum ExponentialHistogramMode {
    /**
     * Convert to classic cumulative {@code _bucket{le}} series at a fixed target scale. Default.
     */
    CLASSIC,
    /** Emit only {@code _count} and {@code _sum}. */
    COUNT_SUM_ONLY,
    /** Reject the points (S1's default when the store has no native histograms). */
    DROP,
    /**
     * Store each point as one native histogram sample of the series named after the family, as
     * Prometheus' OTLP endpoint does ({@code NativeHistogramConversion}; issue #25). Not the
     * default yet: PromQL reads no native histograms so far (docs/architecture.md, Native
     * histograms).
     */
    NATIVE
  }

  /** What to do with delta temporality sums and histograms (contract §3.7). */
  public enum DeltaMode {
    /** Accumulate into cumulative series. Default. */
    ACCUMULATE,
    /** Reject delta points (Prometheus' default behaviour, but per point). */
    REJECT
  }

  /** Use of {@code start_time_unix_nano} (contract §4.2). */
  public enum StartTimeMode {
    /** Not stored. Default. */
    IGNORE,
    /**
     * Before the real sample, write value 0 at the start time for counters, classic histogram and
     * summary {@code _sum}/{@code _count}/{@code _bucket} series, when {@code 0 < ST < T}. Written
     * as a separate point whose failure is ignored.
     */
    INJECT_ZERO
  }

  /** Points with {@code time_unix_nano == 0} (contract §4.2). */
  public enum ZeroTimestampPolicy {
    /** Reject the point (counted). Default. */
    REJECT,
    /** Use the receive time. */
    USE_RECEIVE_TIME
  }

  /** How {@code le} and {@code quantile} values are written (contract §3.3). */
  public enum LeFormat {
    /** Go {@code 'f'} form: {@code 1}, {@code 0.5} (Prometheus OTLP endpoint parity). Default. */
    GO,
    /** OpenMetrics form: {@code 1.0}, {@code 0.5} (Prometheus 3 scrape parity). */
    OPENMETRICS
  }

  public static final TranslationStrategy DEFAULT_STRATEGY =
      TranslationStrategy.UNDERSCORE_ESCAPING_WITH_SUFFIXES;
  public static final Duration DEFAULT_MAX_STALE = Duration.ofMinutes(5);
  public static final int DEFAULT_MAX_STREAMS = 100_000;
  public static final Duration DEFAULT_MAX_FUTURE_SKEW = Duration.ofMinutes(10);
  public static final Duration DEFAULT_LOOKBACK_DELTA = Duration.ofMinutes(5);
  public static final int DEFAULT_EXPONENTIAL_SCALE = 2;
  public static final int DEFAULT_EXPONENTIAL_MAX_BUCKETS = 160;
  public static final int DEFAULT_SERIES_CACHE_SIZE = 100_000;
  public static final int MIN_SCALE = -4;
  public static final int MAX_SCALE = 8;

  private final TranslationStrategy translationStrategy;
  private final String namespace;
  private final List<String> promoteResourceAttributes;
  private final boolean promoteAllResourceAttributes;
  private final List<String> ignoreResourceAttributes;
  private final boolean keepIdentifyingResourceAttributes;
  private final boolean promoteScopeMetadata;
  private final boolean labelNameUnderscoreSanitization;
  private final boolean labelNamePreserveMultipleUnderscores;
  private final Map<String, String> externalLabels;
  private final ExponentialHistogramMode exponentialHistogramMode;
  private final int exponentialHistogramScale;
  private final int exponentialHistogramMaxBuckets;
  private final DeltaMode deltaMode;
  private final Duration maxStale;
  private final int maxStreams;
  private final boolean deltaResetOnGap;
  private final StartTimeMode startTimeMode;
  private final Duration maxFutureSkew;
  private final ZeroTimestampPolicy zeroTimestampPolicy;
  private final LeFormat leFormat;
  private final Duration lookbackDelta;
  private final int seriesCacheSize;
  private final boolean typeAndUnitLabels;

  private TranslatorConfig(Builder b) {
    translationStrategy = b.translationStrategy;
    namespace = b.namespace;
    promoteResourceAttributes = List.copyOf(b.promoteResourceAttributes);
    promoteAllResourceAttributes = b.promoteAllResourceAttributes;
    ignoreResourceAttributes = List.copyOf(b.ignoreResourceAttributes);
    keepIdentifyingResourceAttributes = b.keepIdentifyingResourceAttributes;
    promoteScopeMetadata = b.promoteScopeMetadata;
    labelNameUnderscoreSanitization = b.labelNameUnderscoreSanitization;
    labelNamePreserveMultipleUnderscores = b.labelNamePreserveMultipleUnderscores;
    externalLabels = Collections.unmodifiableMap(new LinkedHashMap<>(b.externalLabels));
    exponentialHistogramMode = b.exponentialHistogramMode;
    exponentialHistogramScale = b.exponentialHistogramScale;
    exponentialHistogramMaxBuckets = b.exponentialHistogramMaxBuckets;
    deltaMode = b.deltaMode;
    maxStale = b.maxStale;
    maxStreams = b.maxStreams;
    deltaResetOnGap = b.deltaResetOnGap;
    startTimeMode = b.startTimeMode;
    maxFutureSkew = b.maxFutureSkew;
    zeroTimestampPolicy = b.zeroTimestampPolicy;
    leFormat = b.leFormat;
    lookbackDelta = b.lookbackDelta;
    seriesCacheSize = b.seriesCacheSize;
    typeAndUnitLabels = b.typeAndUnitLabels;
  }

  /** The defaults. */
  public static TranslatorConfig defaults() {
    return builder().build();
  }

  public static Builder builder() {
    return new Builder();
  }

  public TranslationStrategy translationStrategy() {
    return translationStrategy;
  }

  /** Prefix for every metric name, {@code ""} for none. */
  public String namespace() {
    return namespace;
  }

  /** Resource attributes put on every series of their resource (trimmed, unique). */
  public List<String> promoteResourceAttributes() {
    return promoteResourceAttributes;
  }

  public boolean promoteAllResourceAttributes() {
    return promoteAllResourceAttributes;
  }

  /** With {@link #promoteAllResourceAttributes()}: the attributes not promoted. */
  public List<String> ignoreResourceAttributes() {
    return ignoreResourceAttributes;
  }

  /** Keep service.name/namespace/instance.id on {@code target_info} too. Default false. */
  public boolean keepIdentifyingResourceAttributes() {
    return keepIdentifyingResourceAttributes;
  }

  /** Add {@code otel_scope_*} labels. Default true (S1; Prometheus' default is false). */
  public boolean promoteScopeMetadata() {
    return promoteScopeMetadata;
  }

  public boolean labelNameUnderscoreSanitization() {
    return labelNameUnderscoreSanitization;
  }

  public boolean labelNamePreserveMultipleUnderscores() {
    return labelNamePreserveMultipleUnderscores;
  }

  /** Labels added to every series when absent (not on target_info's scope). */
  public Map<String, String> externalLabels() {
    return externalLabels;
  }

  public ExponentialHistogramMode exponentialHistogramMode() {
    return exponentialHistogramMode;
  }

  /**
   * Target scale of the classic conversion, {@value #MIN_SCALE}..{@value #MAX_SCALE}; default
   * {@value #DEFAULT_EXPONENTIAL_SCALE}.
   */
  public int exponentialHistogramScale() {
    return exponentialHistogramScale;
  }

  /**
   * Bucket cap per exponential series; the scale drops further to stay under it. Default {@value
   * #DEFAULT_EXPONENTIAL_MAX_BUCKETS}.
   */
  public int exponentialHistogramMaxBuckets() {
    return exponentialHistogramMaxBuckets;
  }

  public DeltaMode deltaMode() {
    return deltaMode;
  }

  /** A delta stream idle (by receive time) longer than this is forgotten. Default 5m. */
  public Duration maxStale() {
    return maxStale;
  }

  /** At most this many delta streams; points of new streams beyond it are rejected. */
  public int maxStreams() {
    return maxStreams;
  }

  /**
   * Reset a delta stream when a point starts after the previous one ended (S2, optional). Default
   * false.
   */
  public boolean deltaResetOnGap() {
    return deltaResetOnGap;
  }

  public StartTimeMode startTimeMode() {
    return startTimeMode;
  }

  /** Points later than now plus this are rejected. Default 10m (Prometheus maxAheadTime). */
  public Duration maxFutureSkew() {
    return maxFutureSkew;
  }

  public ZeroTimestampPolicy zeroTimestampPolicy() {
    return zeroTimestampPolicy;
  }

  public LeFormat leFormat() {
    return leFormat;
  }

  /** {@code target_info} samples are written every lookbackDelta/2 over a resource's time range. */
  public Duration lookbackDelta() {
    return lookbackDelta;
  }

  /** Series label sets cached (and le-bound memory kept) for at most this many streams. */
  public int seriesCacheSize() {
    return seriesCacheSize;
  }

  /**
   * Add {@code __type__} and {@code __unit__} labels to every series of a metric, as Prometheus'
   * {@code --enable-feature=type-and-unit-labels} does on its OTLP endpoint: {@code __type__} is
   * the metric's Prometheus type ({@code counter}, {@code gauge}, {@code histogram}, {@code
   * summary}; none for {@code unknown}), {@code __unit__} the unit as its UNIT metadata word
   * ({@code s} → {@code seconds}, {@code By/s} → {@code bytes_per_second}; none when that is empty,
   * as for {@code 1} or {@code {packet}}). They replace attributes of those names; {@code
   * target_info} gets neither. Default false.
   */
  public boolean typeAndUnitLabels() {
    return typeAndUnitLabels;
  }

  @Override
  public String toString() {
    return "TranslatorConfig{strategy="
        + translationStrategy
        + ", namespace='"
        + namespace
        + "', promote="
        + promoteResourceAttributes
        + ", promoteAll="
        + promoteAllResourceAttributes
        + ", ignore="
        + ignoreResourceAttributes
        + ", scopeLabels="
        + promoteScopeMetadata
        + ", expMode="
        + exponentialHistogramMode
        + ", expScale="
        + exponentialHistogramScale
        + ", deltaMode="
        + deltaMode
        + ", maxStale="
        + maxStale
        + ", maxStreams="
        + maxStreams
        + (typeAndUnitLabels ? ", typeAndUnitLabels" : "")
        + "}";
  }

  /**
   * Not thread-safe. Every setter validates what it can alone; {@link #build()} checks the rest.
   */
  public static final class Builder {
    private TranslationStrategy translationStrategy = DEFAULT_STRATEGY;
    private String namespace = "";
    private List<String> promoteResourceAttributes = List.of();
    private boolean promoteAllResourceAttributes;
    private List<String> ignoreResourceAttributes = List.of();
    private boolean keepIdentifyingResourceAttributes;
    private boolean promoteScopeMetadata = true;
    private boolean labelNameUnderscoreSanitization = true;
    private boolean labelNamePreserveMultipleUnderscores = true;
    private Map<String, String> externalLabels = Map.of();
    private ExponentialHistogramMode exponentialHistogramMode = ExponentialHistogramMode.CLASSIC;
    private int exponentialHistogramScale = DEFAULT_EXPONENTIAL_SCALE;
    private int exponentialHistogramMaxBuckets = DEFAULT_EXPONENTIAL_MAX_BUCKETS;
    private DeltaMode deltaMode = DeltaMode.ACCUMULATE;
    private Duration maxStale = DEFAULT_MAX_STALE;
    private int maxStreams = DEFAULT_MAX_STREAMS;
    private boolean deltaResetOnGap;
    private StartTimeMode startTimeMode = StartTimeMode.IGNORE;
    private Duration maxFutureSkew = DEFAULT_MAX_FUTURE_SKEW;
    private ZeroTimestampPolicy zeroTimestampPolicy = ZeroTimestampPolicy.REJECT;
    private LeFormat leFormat = LeFormat.GO;
    private Duration lookbackDelta = DEFAULT_LOOKBACK_DELTA;
    private int seriesCacheSize = DEFAULT_SERIES_CACHE_SIZE;
    private boolean typeAndUnitLabels;

    private Builder() {}

    public Builder translationStrategy(TranslationStrategy v) {
      translationStrategy = Objects.requireNonNull(v, "translationStrategy");
      return this;
    }

    public Builder namespace(String v) {
      namespace = Objects.requireNonNull(v, "namespace");
      return this;
    }

    public Builder promoteResourceAttributes(List<String> v) {
      promoteResourceAttributes =
          new ArrayList<>(Objects.requireNonNull(v, "promoteResourceAttributes"));
      return this;
    }

    public Builder promoteAllResourceAttributes(boolean v) {
      promoteAllResourceAttributes = v;
      return this;
    }

    public Builder ignoreResourceAttributes(List<String> v) {
      ignoreResourceAttributes =
          new ArrayList<>(Objects.requireNonNull(v, "ignoreResourceAttributes"));
      return this;
    }

    public Builder keepIdentifyingResourceAttributes(boolean v) {
      keepIdentifyingResourceAttributes = v;
      return this;
    }

    public Builder promoteScopeMetadata(boolean v) {
      promoteScopeMetadata = v;
      return this;
    }

    public Builder labelNameUnderscoreSanitization(boolean v) {
      labelNameUnderscoreSanitization = v;
      return this;
    }

    public Builder labelNamePreserveMultipleUnderscores(boolean v) {
      labelNamePreserveMultipleUnderscores = v;
      return this;
    }

    public Builder externalLabels(Map<String, String> v) {
      externalLabels = new LinkedHashMap<>(Objects.requireNonNull(v, "externalLabels"));
      return this;
    }

    public Builder exponentialHistogramMode(ExponentialHistogramMode v) {
      exponentialHistogramMode = Objects.requireNonNull(v, "exponentialHistogramMode");
      return this;
    }

    public Builder exponentialHistogramScale(int v) {
      exponentialHistogramScale = v;
      return this;
    }

    public Builder exponentialHistogramMaxBuckets(int v) {
      exponentialHistogramMaxBuckets = v;
      return this;
    }

    public Builder deltaMode(DeltaMode v) {
      deltaMode = Objects.requireNonNull(v, "deltaMode");
      return this;
    }

    public Builder maxStale(Duration v) {
      maxStale = Objects.requireNonNull(v, "maxStale");
      return this;
    }

    public Builder maxStreams(int v) {
      maxStreams = v;
      return this;
    }

    public Builder deltaResetOnGap(boolean v) {
      deltaResetOnGap = v;
      return this;
    }

    public Builder startTimeMode(StartTimeMode v) {
      startTimeMode = Objects.requireNonNull(v, "startTimeMode");
      return this;
    }

    public Builder maxFutureSkew(Duration v) {
      maxFutureSkew = Objects.requireNonNull(v, "maxFutureSkew");
      return this;
    }

    public Builder zeroTimestampPolicy(ZeroTimestampPolicy v) {
      zeroTimestampPolicy = Objects.requireNonNull(v, "zeroTimestampPolicy");
      return this;
    }

    public Builder leFormat(LeFormat v) {
      leFormat = Objects.requireNonNull(v, "leFormat");
      return this;
    }

    public Builder lookbackDelta(Duration v) {
      lookbackDelta = Objects.requireNonNull(v, "lookbackDelta");
      return this;
    }

    public Builder typeAndUnitLabels(boolean v) {
      typeAndUnitLabels = v;
      return this;
    }

    public Builder seriesCacheSize(int v) {
      seriesCacheSize = v;
      return this;
    }

    /**
     * @throws IllegalArgumentException naming the first bad value
     */
    public TranslatorConfig build() {
      promoteResourceAttributes =
          trimmedUnique("promoteResourceAttributes", promoteResourceAttributes);
      ignoreResourceAttributes =
          trimmedUnique("ignoreResourceAttributes", ignoreResourceAttributes);
      if (promoteAllResourceAttributes && !promoteResourceAttributes.isEmpty()) {
        throw new IllegalArgumentException(
            "promoteResourceAttributes and promoteAllResourceAttributes are mutually exclusive, got "
                + promoteResourceAttributes
                + " with promoteAllResourceAttributes=true");
      }
      if (!promoteAllResourceAttributes && !ignoreResourceAttributes.isEmpty()) {
        throw new IllegalArgumentException(
            "ignoreResourceAttributes needs promoteAllResourceAttributes=true, got "
                + ignoreResourceAttributes);
      }
      if (!namespace.isEmpty() && namespace.isBlank()) {
        throw new IllegalArgumentException("namespace must not be blank, was '" + namespace + "'");
      }
      LabelNamer namer = new LabelNamer(!translationStrategy.shouldEscape(), false, true);
      for (Map.Entry<String, String> e : externalLabels.entrySet()) {
        String k = e.getKey();
        if (k == null || k.isEmpty()) {
          throw new IllegalArgumentException(
              "externalLabels has an empty label name (value " + e.getValue() + ")");
        }
        try {
          if (!namer.build(k).equals(k)
              || k.equals("__name__")
              || k.equals("le")
              || k.equals("quantile")) {
            throw new IllegalArgumentException(
                "externalLabels name is not a valid label name, was '" + k + "'");
          }
        } catch (InvalidNameException ex) {
          throw new IllegalArgumentException(
              "externalLabels name is not a valid label name, was '" + k + "'");
        }
        if (e.getValue() == null || e.getValue().isEmpty()) {
          throw new IllegalArgumentException("externalLabels value of " + k + " must not be empty");
        }
      }
      if (exponentialHistogramScale < MIN_SCALE || exponentialHistogramScale > MAX_SCALE) {
        throw new IllegalArgumentException(
            "exponentialHistogramScale must be between "
                + MIN_SCALE
                + " and "
                + MAX_SCALE
                + ", was "
                + exponentialHistogramScale);
      }
      if (exponentialHistogramMaxBuckets < 2) {
        throw new IllegalArgumentException(
            "exponentialHistogramMaxBuckets must be at least 2, was "
                + exponentialHistogramMaxBuckets);
      }
      positive("maxStale", maxStale);
      if (maxStreams <= 0) {
        throw new IllegalArgumentException("maxStreams must be positive, was " + maxStreams);
      }
      if (maxFutureSkew.isNegative()) {
        throw new IllegalArgumentException(
            "maxFutureSkew must not be negative, was " + maxFutureSkew);
      }
      positive("lookbackDelta", lookbackDelta);
      if (lookbackDelta.toMillis() < 2) {
        throw new IllegalArgumentException(
            "lookbackDelta must be at least 2ms, was " + lookbackDelta);
      }
      if (seriesCacheSize <= 0) {
        throw new IllegalArgumentException(
            "seriesCacheSize must be positive, was " + seriesCacheSize);
      }
      return new TranslatorConfig(this);
    }

    private static void positive(String name, Duration d) {
      if (d.isNegative() || d.isZero()) {
        throw new IllegalArgumentException(name + " must be positive, was " + d);
      }
    }

    private static List<String> trimmedUnique(String name, List<String> in) {
      List<String> out = new ArrayList<>(in.size());
      Set<String> seen = new HashSet<>();
      for (String s : in) {
        String t = s == null ? "" : s.strip();
        if (t.isEmpty()) {
          throw new IllegalArgumentException(name + " has an empty entry, was " + in);
        }
        if (!seen.add(t)) {
          throw new IllegalArgumentException(
              name + " has a duplicate entry '" + t + "', was " + in);
        }
        out.add(t);
      }
      return out;
    }
  }
}
