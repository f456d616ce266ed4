package dev.tidemark.server;

import static dev.tidemark.server.Setting.choice;
import static dev.tidemark.server.Setting.count;
import static dev.tidemark.server.Setting.duration;
import static dev.tidemark.server.Setting.durationList;
import static dev.tidemark.server.Setting.flag;
import static dev.tidemark.server.Setting.integer;
import static dev.tidemark.server.Setting.labels;
import static dev.tidemark.server.Setting.nameList;
import static dev.tidemark.server.Setting.path;
import static dev.tidemark.server.Setting.port;
import static dev.tidemark.server.Setting.repeatedNames;
import static dev.tidemark.server.Setting.size;
import static dev.tidemark.server.Setting.sizeOrZero;
import static dev.tidemark.server.Setting.text;
import static dev.tidemark.server.Setting.token;

import dev.tidemark.receiver.ReceiverConfig;
import dev.tidemark.rocksdb.RocksDbConfig;
import dev.tidemark.server.ServerConfig.Builder;
import dev.tidemark.server.api.QueryConfig;
import dev.tidemark.server.text.ConfigValues;
import dev.tidemark.translator.TranslationStrategy;
import dev.tidemark.translator.TranslatorConfig;
import dev.tidemark.translator.TranslatorConfig.DeltaMode;
import dev.tidemark.translator.TranslatorConfig.ExponentialHistogramMode;
import dev.tidemark.translator.TranslatorConfig.LeFormat;
import dev.tidemark.translator.TranslatorConfig.StartTimeMode;
import dev.tidemark.translator.TranslatorConfig.ZeroTimestampPolicy;
import dev.tidemark.tsdb.engine.EngineConfig;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.BiConsumer;

/**
 * Every server setting, each declared once, in documentation order: the order of {@code --help} and
 * of the README's settings table. {@link Main} builds the command-line options from this list,
 * {@link ServerConfig.Builder} reads YAML keys and starts from the defaults through it, and tests
 * compare it with {@code --help} and with the README. A declaration is the setting's only home
 * (name, type, default, checks, description): {@link ServerConfig.Builder} keeps the value under
 * it, and {@link ServerConfig.Builder#build()} reads it from there. To add a setting: one constant
 * here, listed in {@link #ALL}; its use in {@code build()}; one README row (the README test prints
 * the row to paste); a typed builder setter only if code or tests need one.
 *
 * <p>What is checked here is one value at a time (syntax, range); what involves several settings
 * (distinct ports) or a whole component's rules is checked when {@link
 * ServerConfig.Builder#build()} builds the config.
 */
final class Settings {

  private static final TranslatorConfig TRANSLATOR_DEFAULTS = TranslatorConfig.defaults();

  static final Setting<Path> DATA_DIR =
      path("data-dir", "DIR")
          .byDefault(ServerConfig.DEFAULT_DATA_DIR)
          .shown("`./data`")
          .describedAs("folder of the embedded RocksDB store");

  static final Setting<String> LISTEN_ADDRESS =
      text("listen-address", "ADDR")
          .byDefault(ServerConfig.DEFAULT_LISTEN_ADDRESS)
          .describedAs(
              "address every port binds; `"
                  + ServerConfig.ALL_INTERFACES
                  + "` (or `--listen-all`)"
                  + " **exposes every port on all interfaces**");

  static final Setting<Integer> OTLP_GRPC_PORT =
      port("otlp-grpc-port")
          .byDefault(ServerConfig.DEFAULT_OTLP_GRPC_PORT)
          .describedAs("OTLP/gRPC (`0` picks a free port)");

  static final Setting<Integer> OTLP_HTTP_PORT =
      port("otlp-http-port")
          .byDefault(ServerConfig.DEFAULT_OTLP_HTTP_PORT)
          .describedAs("OTLP/HTTP, `POST /v1/metrics`");

  static final Setting<Integer> HTTP_PORT =
      port("http-port")
          .byDefault(ServerConfig.DEFAULT_HTTP_PORT)
          .describedAs(
              "HTTP: `/metrics`, `/-/healthy`, `/-/ready` and the query API (`--query-*`)");

  static final Setting<Integer> ADMIN_PORT =
      port("admin-port")
          .byDefault(ServerConfig.DEFAULT_ADMIN_PORT)
          .describedAs("admin gRPC API (`tidemark admin`), with gRPC health and reflection");

  static final Setting<String> ADMIN_TOKEN =
      token("admin-token", "TOKEN")
          .byDefault(null)
          .shown(Setting.NONE + " (env `" + ServerConfig.ADMIN_TOKEN_ENV + "`)")
          .describedAs(
              "bearer token every admin call must carry; without one the admin API is open to"
                  + " whoever reaches the port");

  static final Setting<Duration> RETENTION =
      duration("retention", EngineConfig.MIN_RETENTION, EngineConfig.MIN_RETENTION_TEXT)
          .byDefault(EngineConfig.DEFAULT_RETENTION)
          .describedAs(
              "how long data is kept (at least `" + EngineConfig.MIN_RETENTION.toHours() + "h`)");

  static final Setting<Duration> OUT_OF_ORDER_WINDOW =
      duration("out-of-order-window", Duration.ZERO, null)
          .byDefault(EngineConfig.DEFAULT_OUT_OF_ORDER_WINDOW)
          .describedAs("how far behind its series' newest sample a sample may arrive");

  static final Setting<Duration> MAX_FUTURE_SKEW =
      duration("max-future-skew", Duration.ZERO, null)
          .byDefault(EngineConfig.DEFAULT_MAX_FUTURE_SKEW)
          .describedAs("how far ahead of the clock a sample may be");

  static final Setting<Boolean> FSYNC =
      flag("fsync")
          .byDefault(false)
          .describedAs(
              "`false`: an acknowledged export survives a crash of the process (RocksDB WAL);"
                  + " `true`: also power loss (fsync with group commit before the answer)");

  static final Setting<Long> HEAD_MEMORY_LIMIT =
      size("head-memory-limit")
          .computedDefault(ServerConfig::defaultMaxHeadBytes)
          .shown(capOrHeapShare(ServerConfig.MAX_DEFAULT_HEAD_BYTES, "half"))
          .describedAs(
              "in-memory head budget; beyond it new series are refused one by one (partial"
                  + " success, `series limit reached` naming the budget) while series already"
                  + " in the head are still stored");

  static final Setting<Integer> HEAD_FREEZE_SAMPLES =
      integer("head-freeze-samples", 0, Integer.MAX_VALUE)
          .byDefault(EngineConfig.DEFAULT_HEAD_FREEZE_SAMPLES)
          .describedAs(
              "samples a head series keeps in its appendable encoding before the background"
                  + " thread re-encodes them, denser, in the sealed one (30 % less head memory"
                  + " for some CPU); `0` never");

  static final Setting<Integer> MAX_ACTIVE_SERIES =
      integer("max-active-series", 0, Integer.MAX_VALUE)
          .computedDefault(ServerConfig::defaultMaxActiveSeries)
          .shown(
              "`"
                  + ServerConfig.MAX_DEFAULT_ACTIVE_SERIES
                  + "` or max heap / 4 KiB, whichever is smaller")
          .describedAs(
              "most distinct series in the head; a sample of a series new to it beyond this"
                  + " is refused on its own (the rest of its request is stored), series"
                  + " already in the head never; `0` no limit");

  static final Setting<Long> BLOCK_CACHE_SIZE =
      size("block-cache-size")
          .byDefault(RocksDbConfig.DEFAULT_BLOCK_CACHE_BYTES)
          .describedAs("RocksDB block cache");

  static final Setting<List<Duration>> COMPACTION_LEVELS =
      durationList("compaction-levels", "DURATION,...")
          .byDefault(EngineConfig.DEFAULT_COMPACTION_LEVELS)
          .describedAs(
              "bucket sizes sealed one-hour buckets are merged into in the background: `1h`"
                  + " first, then larger powers of two hours; `1h` alone turns compaction off");

  static final Setting<Duration> COMPACTION_DELAY =
      duration("compaction-delay", Duration.ZERO, null)
          .byDefault(EngineConfig.DEFAULT_COMPACTION_DELAY)
          .describedAs(
              "how far behind the clock and the newest sample a group of buckets must end before"
                  + " it is compacted (never less than the out-of-order window)");

  static final Setting<Duration> COMPACTION_INTERVAL =
      duration("compaction-interval", Duration.ZERO, null)
          .byDefault(EngineConfig.DEFAULT_COMPACTION_INTERVAL)
          .describedAs("how often the compactor looks for due groups; `0` turns it off");

  static final Setting<Long> LABEL_CACHE_SIZE =
      sizeOrZero("label-cache-size")
          .computedDefault(ServerConfig::defaultLabelCacheBytes)
          .shown(capOrHeapShare(EngineConfig.DEFAULT_LABEL_CACHE_BYTES, "an eighth"))
          .describedAs(
              "decoded series labels of stored buckets kept for queries (estimated heap bytes);"
                  + " `0` turns the cache off");

  static final Setting<Long> OTLP_GRPC_MAX_MESSAGE_SIZE =
      size("otlp-grpc-max-message-size")
          .byDefault((long) ReceiverConfig.DEFAULT_MAX_GRPC_MESSAGE_BYTES)
          .describedAs("largest gRPC message, after decompression");

  static final Setting<Long> OTLP_HTTP_MAX_BODY_SIZE =
      size("otlp-http-max-body-size")
          .byDefault(ReceiverConfig.DEFAULT_MAX_HTTP_BODY_BYTES)
          .describedAs("largest HTTP body, after decompression");

  static final Setting<Long> OTLP_MAX_IN_FLIGHT_SIZE =
      size("otlp-max-in-flight-size")
          .computedDefault(ServerConfig::defaultMaxInFlightBytes)
          .shown(capOrHeapShare(ReceiverConfig.DEFAULT_MAX_IN_FLIGHT_BYTES, "a quarter"))
          .describedAs("request bytes processed at once; beyond it `UNAVAILABLE`/503");

  static final Setting<Duration> OTLP_RETRY_AFTER =
      duration("otlp-retry-after", Duration.ofSeconds(1), "at least 1s")
          .byDefault(ReceiverConfig.DEFAULT_RETRY_AFTER)
          .describedAs("retry delay suggested to overloaded clients (at least `1s`)");

  static final Setting<Duration> SHUTDOWN_TIMEOUT =
      duration("shutdown-timeout", Duration.ZERO, null)
          .byDefault(ServerConfig.DEFAULT_SHUTDOWN_TIMEOUT)
          .describedAs("how long a stop waits for in-flight requests");

  static final Setting<Duration> QUERY_TIMEOUT =
      duration("query-timeout", Duration.ofMillis(1), "positive")
          .byDefault(QueryConfig.DEFAULTS.timeout())
          .describedAs(
              "longest a query may take, waiting for a slot included; a request's `timeout` can"
                  + " only shorten it");

  static final Setting<Long> QUERY_MAX_SAMPLES =
      count("query-max-samples", 1, Long.MAX_VALUE)
          .computedDefault(ServerConfig::defaultQueryMaxSamples)
          .shown(
              "`"
                  + QueryConfig.DEFAULT_MAX_SAMPLES
                  + "` or max heap / 64 bytes (a quarter of it at 16 bytes a sample),"
                  + " whichever is smaller")
          .describedAs("most samples one query may hold in memory at once");

  static final Setting<Long> QUERY_MAX_SAMPLES_TOTAL =
      count("query-max-samples-total", 1, Long.MAX_VALUE)
          .computedDefault(QueryConfig::defaultMaxSamplesTotal)
          .shown(
              "max heap / 64 bytes (a quarter of it at 16 bytes a sample): `100663296` with a"
                  + " 6 GiB heap")
          .describedAs(
              "most samples all queries together may hold in memory at once; a query that"
                  + " would pass it fails as one over `--query-max-samples` does (422,"
                  + " Prometheus' text naming the shared limit), so queries cannot take the"
                  + " heap ingestion needs");

  static final Setting<Integer> QUERY_MAX_CONCURRENCY =
      integer("query-max-concurrency", 1, Integer.MAX_VALUE)
          .computedDefault(QueryConfig::defaultQueryThreads)
          .shown("the processors but one, at least `1`")
          .describedAs(
              "queries evaluated at once (each on one thread and its helpers up to the same"
                  + " count); the others wait for a slot, so ingestion always keeps a core");

  static final Setting<Integer> QUERY_MAX_QUEUED =
      integer("query-max-queued", 0, Integer.MAX_VALUE)
          .byDefault(QueryConfig.DEFAULTS.maxQueued())
          .describedAs("queries waiting for a slot; one more is answered 503 at once");

  static final Setting<Duration> QUERY_LOOKBACK_DELTA =
      duration("query-lookback-delta", Duration.ofMillis(1), "positive")
          .byDefault(QueryConfig.DEFAULTS.lookbackDelta())
          .describedAs(
              "how far back an instant selector looks for a sample; a request's `lookback_delta`"
                  + " overrides it");

  static final Setting<List<String>> ENABLE_FEATURE =
      repeatedNames("enable-feature", "FEATURE,...")
          .byDefault(List.of())
          .describedAs(
              "Prometheus 3.14's experimental features by its names, comma-separated, the option"
                  + " repeatable (a YAML list in the file): `promql-experimental-functions`,"
                  + " `promql-binop-fill-modifiers`, `promql-delayed-name-removal`,"
                  + " `promql-extended-range-selectors`; any other"
                  + " name is accepted and the start logs what it does here (below)");

  static final Setting<Boolean> QUERY_EXPERIMENTAL_FUNCTIONS =
      flag("query-experimental-functions")
          .byDefault(QueryConfig.DEFAULTS.experimentalFunctions())
          .describedAs(
              "accept Prometheus' experimental PromQL functions: the same as"
                  + " `--enable-feature=promql-experimental-functions`");

  static final Setting<String> QUERY_LOG_FILE =
      text("query-log-file", "FILE")
          .byDefault(null)
          .shown(Setting.NONE)
          .describedAs(
              "append every PromQL query evaluated to FILE, one JSON object a line as Prometheus'"
                  + " `query_log_file` (client, parameters, timings)");

  static final Setting<Boolean> WEB_ENABLE_ADMIN_API =
      flag("web-enable-admin-api")
          .byDefault(false)
          .describedAs(
              "serve Prometheus' TSDB admin APIs on the HTTP port (`/api/v1/admin/tsdb/snapshot`,"
                  + " `delete_series`, `clean_tombstones`), as Prometheus'"
                  + " `--web.enable-admin-api`: anyone who reaches the port can then delete data");

  static final Setting<Path> WEB_CONFIG_FILE =
      path("web-config-file", "FILE")
          .byDefault(null)
          .shown(Setting.NONE)
          .describedAs(
              "Prometheus' web configuration file (as its `--web.config.file`): TLS"
                  + " (`tls_server_config`) and basic authentication (`basic_auth_users`, bcrypt)"
                  + " on the HTTP API, OTLP/HTTP and OTLP/gRPC ports; see TLS and authentication"
                  + " below");

  static final Setting<Boolean> WEB_ENABLE_LIFECYCLE =
      flag("web-enable-lifecycle")
          .byDefault(false)
          .describedAs(
              "as Prometheus' `--web.enable-lifecycle`: `POST /-/reload` on the HTTP port reloads"
                  + " the config and web config files as SIGHUP does; without it 403");

  static final Setting<Logging.LogFormat> LOG_FORMAT =
      choice("log-format", "FORMAT", Logging.LogFormat.class)
          .byDefault(Logging.LogFormat.TEXT)
          .describedAs(
              "`text` (one line a record: time, level, logger, message) or `json` (one JSON"
                  + " object a line: `time`, `level`, `logger`, `msg`, `err`), as Prometheus'"
                  + " `--log.format`");

  /** Every setting, in documentation order. */
  static final List<Setting<?>> ALL =
      List.of(
          // ---- where data lives, where the server listens
          DATA_DIR,
          LISTEN_ADDRESS,
          OTLP_GRPC_PORT,
          OTLP_HTTP_PORT,
          HTTP_PORT,
          ADMIN_PORT,
          ADMIN_TOKEN,
          WEB_CONFIG_FILE,
          // ---- the store
          RETENTION,
          OUT_OF_ORDER_WINDOW,
          MAX_FUTURE_SKEW,
          FSYNC,
          HEAD_MEMORY_LIMIT,
          HEAD_FREEZE_SAMPLES,
          MAX_ACTIVE_SERIES,
          BLOCK_CACHE_SIZE,
          COMPACTION_LEVELS,
          COMPACTION_DELAY,
          COMPACTION_INTERVAL,
          LABEL_CACHE_SIZE,
          // ---- the OTLP receivers
          OTLP_GRPC_MAX_MESSAGE_SIZE,
          OTLP_HTTP_MAX_BODY_SIZE,
          OTLP_MAX_IN_FLIGHT_SIZE,
          OTLP_RETRY_AFTER,
          SHUTDOWN_TIMEOUT,
          // ---- the translation of OTLP into Prometheus series (docs/otlp-translation.md)
          choice("translation-strategy", "STRATEGY", TranslationStrategy.class)
              .byDefault(TRANSLATOR_DEFAULTS.translationStrategy())
              .shown("`UnderscoreEscapingWithSuffixes`")
              .sets(translator(TranslatorConfig.Builder::translationStrategy))
              .describedAs(
                  "metric and label names, as Prometheus' `otlp.translation_strategy`"
                      + " (`UnderscoreEscapingWithoutSuffixes`, `NoUTF8EscapingWithSuffixes`,"
                      + " `NoTranslation`)"),
          text("metric-namespace", "PREFIX")
              .byDefault(TRANSLATOR_DEFAULTS.namespace())
              .sets(translator(TranslatorConfig.Builder::namespace))
              .describedAs("prefix for every metric name"),
          nameList("promote-resource-attributes", "ATTR,...")
              .byDefault(TRANSLATOR_DEFAULTS.promoteResourceAttributes())
              .sets(translator(TranslatorConfig.Builder::promoteResourceAttributes))
              .describedAs("resource attributes (comma-separated) added as labels to every series"),
          flag("promote-all-resource-attributes")
              .byDefault(TRANSLATOR_DEFAULTS.promoteAllResourceAttributes())
              .sets(translator(TranslatorConfig.Builder::promoteAllResourceAttributes))
              .describedAs("promote every resource attribute but `--ignore-resource-attributes`"),
          nameList("ignore-resource-attributes", "ATTR,...")
              .byDefault(TRANSLATOR_DEFAULTS.ignoreResourceAttributes())
              .sets(translator(TranslatorConfig.Builder::ignoreResourceAttributes))
              .describedAs("with `--promote-all-resource-attributes`: attributes not promoted"),
          flag("keep-identifying-resource-attributes")
              .byDefault(TRANSLATOR_DEFAULTS.keepIdentifyingResourceAttributes())
              .sets(translator(TranslatorConfig.Builder::keepIdentifyingResourceAttributes))
              .describedAs(
                  "keep `service.name`, `service.namespace`, `service.instance.id` on `target_info`"),
          flag("promote-scope-metadata")
              .byDefault(TRANSLATOR_DEFAULTS.promoteScopeMetadata())
              .sets(translator(TranslatorConfig.Builder::promoteScopeMetadata))
              .describedAs("`otel_scope_name`, `otel_scope_version`, ... labels"),
          labels("external-labels", "NAME=VALUE,...")
              .byDefault(TRANSLATOR_DEFAULTS.externalLabels())
              .sets(translator(TranslatorConfig.Builder::externalLabels))
              .describedAs("`name=value,...` added to every series that lacks them"),
          choice("exponential-histogram-mode", "MODE", ExponentialHistogramMode.class)
              .byDefault(TRANSLATOR_DEFAULTS.exponentialHistogramMode())
              .sets(translator(TranslatorConfig.Builder::exponentialHistogramMode))
              .describedAs(
                  "`classic` (`_bucket{le}` series), `count-sum-only`, `drop` or `native` (native histograms, issue #25)"),
          integer(
                  "exponential-histogram-scale",
                  TranslatorConfig.MIN_SCALE,
                  TranslatorConfig.MAX_SCALE)
              .byDefault(TRANSLATOR_DEFAULTS.exponentialHistogramScale())
              .sets(translator(TranslatorConfig.Builder::exponentialHistogramScale))
              .describedAs(
                  "target scale of the classic conversion, "
                      + TranslatorConfig.MIN_SCALE
                      + ".."
                      + TranslatorConfig.MAX_SCALE),
          integer("exponential-histogram-max-buckets", 2, Integer.MAX_VALUE)
              .byDefault(TRANSLATOR_DEFAULTS.exponentialHistogramMaxBuckets())
              .sets(translator(TranslatorConfig.Builder::exponentialHistogramMaxBuckets))
              .describedAs("bucket cap per converted series"),
          integer("cached-streams", 1, Integer.MAX_VALUE)
              .computedDefault(ServerConfig::defaultSeriesCacheSize)
              .shown(
                  "`"
                      + ServerConfig.MAX_DEFAULT_SERIES_CACHE_SIZE
                      + "` or max heap / 4 KiB, whichever is smaller")
              .sets(translator(TranslatorConfig.Builder::seriesCacheSize))
              .describedAs(
                  "OTLP streams whose series the translator keeps resolved; more active streams"
                      + " than this are resolved again on every request"),
          choice("delta-mode", "MODE", DeltaMode.class)
              .byDefault(TRANSLATOR_DEFAULTS.deltaMode())
              .sets(translator(TranslatorConfig.Builder::deltaMode))
              .describedAs("delta temporality: `accumulate` into cumulative series, or `reject`"),
          duration("delta-max-stale", Duration.ofMillis(1), "positive")
              .byDefault(TRANSLATOR_DEFAULTS.maxStale())
              .sets(translator(TranslatorConfig.Builder::maxStale))
              .describedAs("a delta stream idle longer than this is forgotten"),
          integer("delta-max-streams", 1, Integer.MAX_VALUE)
              .byDefault(TRANSLATOR_DEFAULTS.maxStreams())
              .sets(translator(TranslatorConfig.Builder::maxStreams))
              .describedAs("most delta streams accumulated at once"),
          choice("start-time-mode", "MODE", StartTimeMode.class)
              .byDefault(TRANSLATOR_DEFAULTS.startTimeMode())
              .sets(translator(TranslatorConfig.Builder::startTimeMode))
              .describedAs("`ignore` or `inject-zero` (a 0 sample at `start_time_unix_nano`)"),
          choice("zero-timestamp-policy", "POLICY", ZeroTimestampPolicy.class)
              .byDefault(TRANSLATOR_DEFAULTS.zeroTimestampPolicy())
              .sets(translator(TranslatorConfig.Builder::zeroTimestampPolicy))
              .describedAs("points with `time_unix_nano` 0: `reject` or `use-receive-time`"),
          choice("le-format", "FORMAT", LeFormat.class)
              .byDefault(TRANSLATOR_DEFAULTS.leFormat())
              .sets(translator(TranslatorConfig.Builder::leFormat))
              .describedAs("`le`/`quantile` values: `go` (`1`, `0.5`) or `openmetrics` (`1.0`)"),
          // ---- the Prometheus query API on --http-port (QueryConfig; Prometheus' --query.* flags)
          QUERY_TIMEOUT,
          QUERY_MAX_SAMPLES,
          QUERY_MAX_SAMPLES_TOTAL,
          QUERY_MAX_CONCURRENCY,
          QUERY_MAX_QUEUED,
          QUERY_LOOKBACK_DELTA,
          ENABLE_FEATURE,
          QUERY_EXPERIMENTAL_FUNCTIONS,
          QUERY_LOG_FILE,
          WEB_ENABLE_ADMIN_API,
          WEB_ENABLE_LIFECYCLE,
          LOG_FORMAT);

  /**
   * What a reload (SIGHUP, {@code POST /-/reload}) changes in a running server: these settings' new
   * values, and whatever the web configuration file now says. Every other setting keeps the value
   * it started with until a restart (the reload logs which ones changed in the file).
   */
  static final List<Setting<?>> RELOADABLE = List.of(RETENTION);

  private static final Map<String, Setting<?>> BY_NAME = byName();

  private Settings() {}

  /**
   * How a default capped at {@code capBytes} or a share of the heap reads in `--help` and README.
   */
  private static String capOrHeapShare(long capBytes, String share) {
    return "`"
        + ConfigValues.formatSize(capBytes)
        + "` or "
        + share
        + " of the JVM max heap, whichever is smaller";
  }

  private static Map<String, Setting<?>> byName() {
    Map<String, Setting<?>> out = new LinkedHashMap<>();
    for (Setting<?> s : ALL) {
      if (out.put(s.name(), s) != null) {
        throw new IllegalStateException("setting '" + s.name() + "' is declared twice");
      }
    }
    return out;
  }

  /** The setting named {@code name}, or null. */
  static Setting<?> find(String name) {
    return BY_NAME.get(name);
  }

  /**
   * The setting named {@code name}, for code that refers to one by name (messages of checks that
   * involve several settings): a misspelt or renamed name fails at once, not in a message later.
   */
  static Setting<?> named(String name) {
    Setting<?> s = BY_NAME.get(name);
    if (s == null) {
      throw new IllegalArgumentException("no setting is named '" + name + "'");
    }
    return s;
  }

  /** Every name, in documentation order. */
  static List<String> names() {
    return ALL.stream().map(Setting::name).toList();
  }

  /** " (did you mean 'retention'?)" for a near miss such as {@code retension}, else "". */
  static String suggestion(String name) {
    String n = name.toLowerCase(Locale.ROOT).replace('_', '-');
    for (Setting<?> s : ALL) {
      if (s.name().equals(n) || levenshtein(s.name(), n) <= 2) {
        return " (did you mean '" + s.name() + "'?)";
      }
    }
    return "";
  }

  /** A target that edits the translator's builder, which {@link ServerConfig.Builder} holds. */
  private static <T> BiConsumer<Builder, T> translator(
      BiConsumer<TranslatorConfig.Builder, T> setter) {
    return (b, v) -> b.translator(t -> setter.accept(t, v));
  }

  private static int levenshtein(String a, String b) {
    int[] prev = new int[b.length() + 1];
    int[] cur = new int[b.length() + 1];
    for (int j = 0; j <= b.length(); j++) {
      prev[j] = j;
    }
    for (int i = 1; i <= a.length(); i++) {
      cur[0] = i;
      for (int j = 1; j <= b.length(); j++) {
        int cost = a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1;
        cur[j] = Math.min(Math.min(cur[j - 1] + 1, prev[j] + 1), prev[j - 1] + cost);
      }
      int[] t = prev;
      prev = cur;
      cur = t;
    }
    return prev[b.length()];
  }
}
