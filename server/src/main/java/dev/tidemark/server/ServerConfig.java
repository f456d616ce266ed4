package dev.tidemark.server;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import dev.tidemark.receiver.ReceiverConfig;
import dev.tidemark.rocksdb.RocksDbConfig;
import dev.tidemark.server.admin.AdminAuthInterceptor;
import dev.tidemark.server.admin.AdminServer;
import dev.tidemark.server.api.QueryConfig;
import dev.tidemark.server.text.ConfigValues;
import dev.tidemark.server.web.WebConfig;
import dev.tidemark.server.web.WebConfigException;
import dev.tidemark.translator.TranslatorConfig;
import dev.tidemark.tsdb.engine.EngineConfig;
import java.io.IOException;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.stream.Collectors;

/**
 * Every setting of a Tidemark server, with its default. Immutable.
 *
 * <p>Settings come from three places, later ones winning: the defaults (the {@code DEFAULT_*}
 * constants here and in {@link EngineConfig}, {@link RocksDbConfig}, {@link ReceiverConfig}, {@link
 * TranslatorConfig} and {@link QueryConfig}), an optional YAML file ({@link #load}), and the
 * command line. Each setting is declared once, in {@link Settings#ALL}: its name, used both as the
 * YAML key and as the long option ({@code retention: 30d} / {@code --retention 30d}), its default,
 * its parser and the builder setter it feeds; {@link #settingNames()} lists the names. A bad value,
 * an unknown key or two settings that contradict each other throw {@link ConfigException} naming
 * the setting, the value and its source.
 *
 * <p>Value syntax: durations as Prometheus writes them ({@code 15d}, {@code 30m}, {@code 1h30m},
 * {@code 500ms}); sizes with a unit ({@code 4MiB}, {@code 512MB}; KB/MB/GB are powers of 1000,
 * KiB/MiB/GiB powers of 1024); enumerations case-insensitively, with {@code -} or {@code _} ({@code
 * count-sum-only}, {@code UnderscoreEscapingWithSuffixes}).
 */
public final class ServerConfig {

  /** {@code ./data}, relative to the working folder. */
  public static final Path DEFAULT_DATA_DIR = Path.of("data");

  /** Loopback only; {@code --listen-all} (0.0.0.0) exposes every port on all interfaces. */
  public static final String DEFAULT_LISTEN_ADDRESS = "127.0.0.1";

  /** The address {@code --listen-all} stands for. */
  public static final String ALL_INTERFACES = "0.0.0.0";

  public static final int DEFAULT_OTLP_GRPC_PORT = 4317;
  public static final int DEFAULT_OTLP_HTTP_PORT = 4318;

  /**
   * {@code /metrics}, {@code /-/healthy}, {@code /-/ready} and the query API ({@link
   * #queryConfig()}).
   */
  public static final int DEFAULT_HTTP_PORT = 9090;

  /** The admin gRPC API ({@code tidemark admin}), with gRPC health and reflection. */
  public static final int DEFAULT_ADMIN_PORT = AdminServer.DEFAULT_PORT;

  /** Environment variable holding the admin token when {@code admin-token} is not given. */
  public static final String ADMIN_TOKEN_ENV = AdminAuthInterceptor.TOKEN_ENV;

  /** How long a graceful stop waits for in-flight requests before cutting them off: 30 s. */
  public static final Duration DEFAULT_SHUTDOWN_TIMEOUT = Duration.ofSeconds(30);

  /** The head budget never defaults above this: {@link EngineConfig#DEFAULT_MAX_HEAD_BYTES}. */
  public static final long MAX_DEFAULT_HEAD_BYTES = EngineConfig.DEFAULT_MAX_HEAD_BYTES;

  /**
   * The setting names, in documentation order ({@link Settings#ALL}). Each is a YAML key and (with
   * {@code --}) a long command-line option.
   */
  public static List<String> settingNames() {
    return Settings.names();
  }

  /** The text of each setting given explicitly, by name (for {@link #settingValues()}). */
  private final Map<String, String> given;

  /**
   * Where this config was read from, to read it again on a reload ({@link #reread()}): the YAML
   * file (or null), the command line's settings and the environment; null for a config built in
   * code, whose reread reads only its web configuration file again.
   */
  private final Sources sources;

  private record Sources(Path yamlFile, Map<String, Object> overrides, Map<String, String> env) {}

  private final Path dataDir;
  private final String listenAddress;
  private final InetAddress listenInetAddress;
  private final int otlpGrpcPort;
  private final int otlpHttpPort;
  private final int httpPort;
  private final int adminPort;
  private final String adminToken;
  private final EngineConfig engineConfig;
  private final RocksDbConfig rocksDbConfig;
  private final ReceiverConfig receiverConfig;
  private final TranslatorConfig translatorConfig;
  private final Duration shutdownTimeout;
  private final QueryConfig queryConfig;
  private final Features features;
  private final boolean webEnableAdminApi;
  private final String queryLogFile;
  private final Path webConfigFile;
  private final WebConfig webConfig;
  private final boolean webEnableLifecycle;
  private final Logging.LogFormat logFormat;

  private ServerConfig(Builder b, InetAddress address) {
    given = Map.copyOf(b.given);
    sources = b.loadedFrom;
    dataDir = b.get(Settings.DATA_DIR);
    listenAddress = b.get(Settings.LISTEN_ADDRESS);
    listenInetAddress = address;
    otlpGrpcPort = b.get(Settings.OTLP_GRPC_PORT);
    otlpHttpPort = b.get(Settings.OTLP_HTTP_PORT);
    httpPort = b.get(Settings.HTTP_PORT);
    adminPort = b.get(Settings.ADMIN_PORT);
    adminToken = b.get(Settings.ADMIN_TOKEN);
    engineConfig = b.engineConfig;
    rocksDbConfig = b.rocksDbConfig;
    receiverConfig = b.receiverConfig;
    translatorConfig = b.translatorConfig;
    shutdownTimeout = b.get(Settings.SHUTDOWN_TIMEOUT);
    queryConfig = b.queryConfig;
    features = b.features;
    webEnableAdminApi = b.get(Settings.WEB_ENABLE_ADMIN_API);
    queryLogFile = b.get(Settings.QUERY_LOG_FILE);
    webConfigFile = b.get(Settings.WEB_CONFIG_FILE);
    webConfig = b.webConfig;
    webEnableLifecycle = b.get(Settings.WEB_ENABLE_LIFECYCLE);
    logFormat = b.get(Settings.LOG_FORMAT);
  }

  /** {@code running} with the reloadable settings of {@code fresh} and {@code web}. */
  private ServerConfig(ServerConfig running, ServerConfig fresh, WebConfig web) {
    Map<String, String> g = new LinkedHashMap<>(running.given);
    for (Setting<?> s : Settings.RELOADABLE) {
      g.remove(s.name());
      if (fresh.given.containsKey(s.name())) {
        g.put(s.name(), fresh.given.get(s.name()));
      }
    }
    given = Map.copyOf(g);
    sources = running.sources;
    dataDir = running.dataDir;
    listenAddress = running.listenAddress;
    listenInetAddress = running.listenInetAddress;
    otlpGrpcPort = running.otlpGrpcPort;
    otlpHttpPort = running.otlpHttpPort;
    httpPort = running.httpPort;
    adminPort = running.adminPort;
    adminToken = running.adminToken;
    engineConfig =
        running.engineConfig.toBuilder().retention(fresh.engineConfig.retention()).build();
    rocksDbConfig = running.rocksDbConfig;
    receiverConfig = running.receiverConfig;
    translatorConfig = running.translatorConfig;
    shutdownTimeout = running.shutdownTimeout;
    queryConfig = running.queryConfig;
    features = running.features;
    webEnableAdminApi = running.webEnableAdminApi;
    queryLogFile = running.queryLogFile;
    webConfigFile = running.webConfigFile;
    webConfig = web;
    webEnableLifecycle = running.webEnableLifecycle;
    logFormat = running.logFormat;
  }

  /**
   * The config read again from where this one came from (the YAML file, whose settings may have
   * changed, with the same command line and environment; the web configuration file), checked whole
   * as at a start.
   *
   * @throws ConfigException if the files now hold a bad value, an unknown key or a bad web config
   */
  public ServerConfig reread() {
    if (sources == null) {
      return new ServerConfig(this, this, rereadWebConfig());
    }
    return load(sources.yamlFile(), sources.overrides(), sources.env());
  }

  private WebConfig rereadWebConfig() {
    try {
      return webConfigFile == null ? WebConfig.none() : WebConfig.read(webConfigFile);
    } catch (WebConfigException e) {
      throw new ConfigException("invalid web-config-file: " + e.getMessage(), e);
    }
  }

  /**
   * The config a reload makes of this running one and {@code fresh} ({@link #reread()}): the
   * reloadable settings ({@link Settings#RELOADABLE}) and the web configuration from {@code fresh},
   * every other setting as it is.
   */
  public ServerConfig reloaded(ServerConfig fresh) {
    return new ServerConfig(this, fresh, fresh.webConfig);
  }

  /**
   * The settings whose value in {@code fresh} differs from this running config's but which a reload
   * does not change (they need a restart), by name.
   */
  public List<String> changedNeedingRestart(ServerConfig fresh) {
    Map<String, String> now = settingValues();
    Map<String, String> next = fresh.settingValues();
    return Settings.ALL.stream()
        .filter(s -> !Settings.RELOADABLE.contains(s))
        .map(Setting::name)
        .filter(n -> !java.util.Objects.equals(now.get(n), next.get(n)))
        .toList();
  }

  /** How the log is written ({@code log-format}). */
  Logging.LogFormat logFormat() {
    return logFormat;
  }

  /** Whether {@code POST /-/reload} is served ({@code web-enable-lifecycle}). */
  public boolean webEnableLifecycle() {
    return webEnableLifecycle;
  }

  /**
   * The web configuration file's settings (TLS, users), read and checked when this config was
   * built; {@link WebConfig#none()} without {@code web-config-file}.
   */
  public WebConfig webConfig() {
    return webConfig;
  }

  /** The query log's file ({@code query-log-file}), or null for none. */
  public Path queryLogFile() {
    return queryLogFile == null || queryLogFile.isEmpty() ? null : Path.of(queryLogFile);
  }

  /** Whether the HTTP port serves Prometheus' TSDB admin APIs ({@code web-enable-admin-api}). */
  public boolean webEnableAdminApi() {
    return webEnableAdminApi;
  }

  /** Every setting at its default. */
  public static ServerConfig defaults() {
    return builder().build();
  }

  public static Builder builder() {
    return new Builder();
  }

  /**
   * Reads the YAML file {@code yamlFile} (if not null) over the defaults, then applies {@code
   * overrides} (the command line: setting name to value, the source given as {@code --name}).
   *
   * @throws ConfigException for a missing or malformed file, an unknown key, a bad value or
   *     contradicting settings
   */
  public static ServerConfig load(Path yamlFile, Map<String, Object> overrides) {
    return load(yamlFile, overrides, System.getenv());
  }

  /**
   * {@link #load(Path, Map)} with the environment {@code env}: a non-empty {@value
   * #ADMIN_TOKEN_ENV} sets {@code admin-token} over the file; {@code --admin-token} wins over it.
   */
  public static ServerConfig load(
      Path yamlFile, Map<String, Object> overrides, Map<String, String> env) {
    Builder b = builder();
    if (yamlFile != null) {
      b.setAll(readYaml(yamlFile), yamlFile.toString());
    }
    String envToken = env.get(ADMIN_TOKEN_ENV);
    if (envToken != null && !envToken.isEmpty()) {
      b.set("admin-token", envToken, "environment variable " + ADMIN_TOKEN_ENV);
    }
    for (Map.Entry<String, Object> e : overrides.entrySet()) {
      b.set(e.getKey(), e.getValue(), "--" + e.getKey());
    }
    b.loadedFrom = new Sources(yamlFile, Map.copyOf(overrides), Map.copyOf(env));
    return b.build();
  }

  /** Parses a YAML file into setting name → value. */
  static Map<String, Object> readYaml(Path file) {
    String text;
    try {
      text = Files.readString(file);
    } catch (NoSuchFileException e) {
      throw new ConfigException("config file " + file + " does not exist");
    } catch (IOException e) {
      throw new ConfigException("cannot read config file " + file + ": " + e.getMessage(), e);
    }
    Object tree;
    try {
      ObjectMapper mapper = new ObjectMapper(new YAMLFactory());
      com.fasterxml.jackson.databind.JsonNode node = mapper.readTree(text);
      tree = node == null || node.isMissingNode() ? null : mapper.treeToValue(node, Object.class);
    } catch (JsonProcessingException e) {
      throw new ConfigException(
          "config file "
              + file
              + " is not valid YAML: "
              + e.getOriginalMessage()
              + (e.getLocation() == null ? "" : " (line " + e.getLocation().getLineNr() + ")"),
          e);
    }
    if (tree == null) {
      return Map.of();
    }
    if (!(tree instanceof Map)) {
      throw new ConfigException(
          "config file "
              + file
              + " must be a mapping of setting names to values, e.g. 'retention: 30d'");
    }
    Map<String, Object> out = new LinkedHashMap<>();
    for (Map.Entry<?, ?> e : ((Map<?, ?>) tree).entrySet()) {
      out.put(String.valueOf(e.getKey()), e.getValue());
    }
    return out;
  }

  /** The folder holding the RocksDB store. */
  public Path dataDir() {
    return dataDir;
  }

  /** The address every port binds, as written ({@code 127.0.0.1}, {@code 0.0.0.0}, a host name). */
  public String listenAddress() {
    return listenAddress;
  }

  InetAddress listenInetAddress() {
    return listenInetAddress;
  }

  /** The OTLP/gRPC port; 0 picks a free port. */
  public int otlpGrpcPort() {
    return otlpGrpcPort;
  }

  /** The OTLP/HTTP port; 0 picks a free port. */
  public int otlpHttpPort() {
    return otlpHttpPort;
  }

  /**
   * The HTTP API port ({@code /metrics}, {@code /-/healthy}, {@code /-/ready}); 0 picks a free
   * port.
   */
  public int httpPort() {
    return httpPort;
  }

  /** The admin gRPC port; 0 picks a free port. */
  public int adminPort() {
    return adminPort;
  }

  /** The bearer token every admin call must carry, or null: the admin API is open. */
  public String adminToken() {
    return adminToken;
  }

  /** Parses a duration as the settings write them ({@code 15d}, {@code 1h30m}, {@code 500ms}). */
  public static Duration parseDuration(String text) {
    return ConfigValues.parseDuration(text);
  }

  /** The engine's settings, with the system UTC clock. */
  public EngineConfig engineConfig() {
    return engineConfig;
  }

  public RocksDbConfig rocksDbConfig() {
    return rocksDbConfig;
  }

  public ReceiverConfig receiverConfig() {
    return receiverConfig;
  }

  public TranslatorConfig translatorConfig() {
    return translatorConfig;
  }

  /** How long a graceful stop waits for in-flight requests. */
  public Duration shutdownTimeout() {
    return shutdownTimeout;
  }

  /** The query API's settings ({@code query-timeout}, {@code query-max-samples}, ...). */
  public QueryConfig queryConfig() {
    return queryConfig;
  }

  /**
   * The {@code --enable-feature} names given, which the start logs ({@link Features#logLines()});
   * the query API's share is in {@link #queryConfig()}.
   */
  Features features() {
    return features;
  }

  /**
   * Every setting by name with its value as given (file, environment or command line) or its
   * default as {@code --help} shows it; the admin token is never shown. For {@code
   * /api/v1/status/flags}.
   */
  public Map<String, String> settingValues() {
    Map<String, String> out = new LinkedHashMap<>();
    for (Setting<?> setting : Settings.ALL) {
      String name = setting.name();
      String v = given.get(name);
      if (name.equals("admin-token")) {
        v = adminToken == null ? "" : "<secret>";
      } else if (setting == Settings.ENABLE_FEATURE) {
        v = features.flagValue(); // Prometheus' own flag, as Prometheus shows it: "" when none
      } else if (v == null) {
        v = Setting.plain(setting.shownDefault());
      }
      out.put(name, v);
    }
    return out;
  }

  /**
   * {@link #settingValues()} as a YAML document ({@code retention: 15d}, one key a setting), what
   * {@code /api/v1/status/config} shows.
   */
  public String settingsYaml() {
    try {
      return new ObjectMapper(
              new YAMLFactory()
                  .disable(
                      com.fasterxml.jackson.dataformat.yaml.YAMLGenerator.Feature
                          .WRITE_DOC_START_MARKER))
          .writeValueAsString(settingValues());
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("cannot write the settings as YAML", e);
    }
  }

  @Override
  public String toString() {
    return "ServerConfig{dataDir="
        + dataDir
        + ", listen="
        + listenAddress
        + ", otlpGrpcPort="
        + otlpGrpcPort
        + ", otlpHttpPort="
        + otlpHttpPort
        + ", httpPort="
        + httpPort
        + ", adminPort="
        + adminPort
        + ", adminToken="
        + (adminToken == null ? "none" : "set")
        + ", engine="
        + engineConfig
        + ", rocksdb="
        + rocksDbConfig
        + ", receiver="
        + receiverConfig
        + ", "
        + translatorConfig
        + ", shutdownTimeout="
        + shutdownTimeout
        + ", query="
        + queryConfig
        + "}";
  }

  /**
   * The head budget by default: {@link #MAX_DEFAULT_HEAD_BYTES} or half the JVM's maximum heap,
   * whichever is smaller. The budget counts the head's samples and a fixed cost per series (about
   * 1.1 KiB a series at 240 samples with head freezing, 1.5 KiB without; within a few per cent of a
   * heap histogram's count, docs/benchmarks.md, session 12): the active-series limit ({@link
   * #defaultMaxActiveSeries()}) keeps the head under it, and the heap guard stays the last line
   * before an out-of-memory error.
   */
  public static long defaultMaxHeadBytes() {
    return heapShare(MAX_DEFAULT_HEAD_BYTES, 2);
  }

  /** The cap of {@link #defaultMaxActiveSeries()}: the head budget's cap over 2 KiB. */
  public static final int MAX_DEFAULT_ACTIVE_SERIES = (int) (MAX_DEFAULT_HEAD_BYTES / 2048);

  /**
   * The active-series limit by default: {@link #MAX_DEFAULT_ACTIVE_SERIES} or one series per 4 KiB
   * of the JVM's maximum heap (262,144 with 1 GiB, 1,048,576 with 4 GiB; the launcher's heap of a
   * quarter of a 24 GiB machine gives about 1.5 million), whichever is smaller. That is 2 KiB of
   * the default head budget (half the heap) per series: a series sampled every 15 s takes about 1.9
   * KiB of it at its peak, a full hour (1,132 bytes at 240 samples: 996 in docs/benchmarks.md, "The
   * head: frozen parts", with the fixed cost per series counted at 160 bytes until session 12, 296
   * since) plus the first half of the next while the out-of-order window keeps the old hour open.
   * So the limit, which refuses new series one by one, comes before the budget, which also refuses
   * only new series; and a series' whole heap is under a third of its share.
   */
  public static int defaultMaxActiveSeries() {
    return (int) heapShare(MAX_DEFAULT_ACTIVE_SERIES, 4096);
  }

  /**
   * The in-flight request bytes by default: {@link ReceiverConfig#DEFAULT_MAX_IN_FLIGHT_BYTES} or a
   * quarter of the JVM's maximum heap, whichever is smaller.
   */
  public static long defaultMaxInFlightBytes() {
    return heapShare(ReceiverConfig.DEFAULT_MAX_IN_FLIGHT_BYTES, 4);
  }

  /**
   * The label cache by default: {@link EngineConfig#DEFAULT_LABEL_CACHE_BYTES} or an eighth of the
   * JVM's maximum heap, whichever is smaller.
   */
  public static long defaultLabelCacheBytes() {
    return heapShare(EngineConfig.DEFAULT_LABEL_CACHE_BYTES, 8);
  }

  /**
   * A query's sample budget by default: {@link QueryConfig#DEFAULT_MAX_SAMPLES} (Prometheus' 50
   * million) or as many 16-byte samples as fill a quarter of the JVM's maximum heap, whichever is
   * smaller. These are limits, not reservations: with the head's quarter (about half the heap in
   * real objects), the requests' quarter and the label cache's eighth, a small heap gets
   * back-pressure and query errors rather than out-of-memory errors (README, "Configuration").
   */
  public static long defaultQueryMaxSamples() {
    return heapShare(QueryConfig.DEFAULT_MAX_SAMPLES, 64);
  }

  /**
   * The samples all queries together may hold by default: as many 16-byte samples as fill a quarter
   * of the JVM's maximum heap (the share README, "Configuration", gives queries), uncapped.
   */
  public static long defaultQueryMaxSamplesTotal() {
    return heapShare(Long.MAX_VALUE, 64);
  }

  /** The cap of {@link #defaultSeriesCacheSize()}. */
  public static final int MAX_DEFAULT_SERIES_CACHE_SIZE = 1_000_000;

  /**
   * The translator's stream cache by default: {@link #MAX_DEFAULT_SERIES_CACHE_SIZE} entries or one
   * per 4 KiB of the JVM's maximum heap (262,144 with 1 GiB), whichever is smaller. An entry costs
   * a few hundred bytes beyond the labels the head shares; a cache smaller than the active streams
   * resolves some of them again on every request (docs/benchmarks.md, session 7).
   */
  public static int defaultSeriesCacheSize() {
    return (int) heapShare(MAX_DEFAULT_SERIES_CACHE_SIZE, 4096);
  }

  /** {@code min(cap, max heap / divisor)}; {@code cap} when the heap has no limit. */
  private static long heapShare(long cap, int divisor) {
    long heap = Runtime.getRuntime().maxMemory();
    return heap == Long.MAX_VALUE ? cap : Math.min(cap, heap / divisor);
  }

  /**
   * Collects settings; {@link #build()} validates them together. Typed setters for code and tests,
   * {@link #set} for text from a file or the command line. Not thread-safe; build once.
   */
  public static final class Builder {
    /**
     * The value of every setting of {@link Settings#ALL} that has no target of its own, under its
     * declaration: there is no field per setting. The constructor puts every default; the typed
     * setters below, {@link #set} and {@link #build()} go through {@link #put} and {@link #get}.
     */
    private final Map<Setting<?>, Object> values = new HashMap<>();

    private final TranslatorConfig.Builder translator = TranslatorConfig.builder();
    private final Map<String, String> sources = new LinkedHashMap<>();
    private final Map<String, String> given = new LinkedHashMap<>();

    // built
    private EngineConfig engineConfig;
    private RocksDbConfig rocksDbConfig;
    private ReceiverConfig receiverConfig;
    private TranslatorConfig translatorConfig;
    private QueryConfig queryConfig;
    private Features features;
    private WebConfig webConfig;
    private Sources loadedFrom;

    private Builder() {
      for (Setting<?> s : Settings.ALL) {
        s.applyDefault(this);
      }
    }

    /**
     * Sets {@code setting} to {@code value}, already parsed and checked as one value ({@link
     * Setting#parse}); null only where the setting allows it ({@link Setting#nullable()}).
     */
    <T> Builder put(Setting<T> setting, T value) {
      if (value == null && !setting.nullable()) {
        throw new NullPointerException(setting.name());
      }
      values.put(setting, value);
      return this;
    }

    /** The value of {@code setting}: given, or its default. */
    @SuppressWarnings("unchecked") // put() stores only a T under a Setting<T>
    <T> T get(Setting<T> setting) {
      return (T) values.get(setting);
    }

    // ---- typed setters for code and tests: each stores the value under its declaration

    public Builder dataDir(Path v) {
      return put(Settings.DATA_DIR, v);
    }

    public Builder listenAddress(String v) {
      return put(Settings.LISTEN_ADDRESS, v);
    }

    public Builder otlpGrpcPort(int v) {
      return put(Settings.OTLP_GRPC_PORT, v);
    }

    public Builder otlpHttpPort(int v) {
      return put(Settings.OTLP_HTTP_PORT, v);
    }

    public Builder httpPort(int v) {
      return put(Settings.HTTP_PORT, v);
    }

    public Builder adminPort(int v) {
      return put(Settings.ADMIN_PORT, v);
    }

    /** The admin bearer token; null (the default) leaves the admin API open. */
    public Builder adminToken(String v) {
      return put(Settings.ADMIN_TOKEN, v);
    }

    /** Every port 0: the system picks free ones (tests). */
    public Builder anyFreePorts() {
      return otlpGrpcPort(0).otlpHttpPort(0).httpPort(0).adminPort(0);
    }

    public Builder retention(Duration v) {
      return put(Settings.RETENTION, v);
    }

    public Builder outOfOrderWindow(Duration v) {
      return put(Settings.OUT_OF_ORDER_WINDOW, v);
    }

    public Builder maxFutureSkew(Duration v) {
      return put(Settings.MAX_FUTURE_SKEW, v);
    }

    public Builder fsync(boolean v) {
      return put(Settings.FSYNC, v);
    }

    public Builder queryLogFile(Path v) {
      return put(Settings.QUERY_LOG_FILE, v == null ? null : v.toString());
    }

    /** Prometheus' web configuration file ({@code web-config-file}); null: none. */
    public Builder webConfigFile(Path v) {
      return put(Settings.WEB_CONFIG_FILE, v);
    }

    public Builder webEnableAdminApi(boolean v) {
      return put(Settings.WEB_ENABLE_ADMIN_API, v);
    }

    public Builder maxHeadBytes(long v) {
      return put(Settings.HEAD_MEMORY_LIMIT, v);
    }

    public Builder compactionLevels(List<Duration> v) {
      return put(Settings.COMPACTION_LEVELS, List.copyOf(v));
    }

    public Builder compactionDelay(Duration v) {
      return put(Settings.COMPACTION_DELAY, v);
    }

    public Builder compactionInterval(Duration v) {
      return put(Settings.COMPACTION_INTERVAL, v);
    }

    public Builder headFreezeSamples(int v) {
      return put(Settings.HEAD_FREEZE_SAMPLES, v);
    }

    /** Most distinct series in the head; new ones beyond are refused one by one; 0: no limit. */
    public Builder maxActiveSeries(int v) {
      return put(Settings.MAX_ACTIVE_SERIES, v);
    }

    public Builder labelCacheBytes(long v) {
      return put(Settings.LABEL_CACHE_SIZE, v);
    }

    public Builder blockCacheBytes(long v) {
      return put(Settings.BLOCK_CACHE_SIZE, v);
    }

    public Builder maxGrpcMessageBytes(long v) {
      return put(Settings.OTLP_GRPC_MAX_MESSAGE_SIZE, v);
    }

    public Builder maxHttpBodyBytes(long v) {
      return put(Settings.OTLP_HTTP_MAX_BODY_SIZE, v);
    }

    public Builder maxInFlightBytes(long v) {
      return put(Settings.OTLP_MAX_IN_FLIGHT_SIZE, v);
    }

    public Builder retryAfter(Duration v) {
      return put(Settings.OTLP_RETRY_AFTER, v);
    }

    public Builder shutdownTimeout(Duration v) {
      return put(Settings.SHUTDOWN_TIMEOUT, v);
    }

    /** {@link QueryConfig#timeout()}. */
    public Builder queryTimeout(Duration v) {
      return put(Settings.QUERY_TIMEOUT, v);
    }

    /** {@link QueryConfig#maxSamples()}. */
    public Builder queryMaxSamples(long v) {
      return put(Settings.QUERY_MAX_SAMPLES, v);
    }

    public Builder queryMaxSamplesTotal(long v) {
      return put(Settings.QUERY_MAX_SAMPLES_TOTAL, v);
    }

    /** {@link QueryConfig#maxConcurrency()}. */
    public Builder queryMaxConcurrency(int v) {
      return put(Settings.QUERY_MAX_CONCURRENCY, v);
    }

    /** {@link QueryConfig#maxQueued()}. */
    public Builder queryMaxQueued(int v) {
      return put(Settings.QUERY_MAX_QUEUED, v);
    }

    /** {@link QueryConfig#lookbackDelta()}. */
    public Builder queryLookbackDelta(Duration v) {
      return put(Settings.QUERY_LOOKBACK_DELTA, v);
    }

    /** {@link QueryConfig#experimentalFunctions()}. */
    public Builder queryExperimentalFunctions(boolean v) {
      return put(Settings.QUERY_EXPERIMENTAL_FUNCTIONS, v);
    }

    /** Edits the translator's settings ({@code maxFutureSkew} is taken from this builder). */
    public Builder translator(Consumer<TranslatorConfig.Builder> edit) {
      edit.accept(translator);
      return this;
    }

    /** Applies every entry of {@code settings} (from {@code source}, e.g. a file name). */
    public Builder setAll(Map<String, Object> settings, String source) {
      for (Map.Entry<String, Object> e : settings.entrySet()) {
        set(e.getKey(), e.getValue(), source);
      }
      return this;
    }

    /**
     * Sets one setting from text (or, for lists and maps, a {@code List} or {@code Map}).
     *
     * @param source where the value came from, for messages ({@code --retention}, {@code
     *     tidemark.yml})
     * @throws ConfigException for an unknown name or a bad value
     */
    public Builder set(String name, Object value, String source) {
      Setting<?> setting = Settings.find(name);
      if (setting == null) {
        throw new ConfigException(
            "unknown setting '"
                + name
                + "' in "
                + source
                + Settings.suggestion(name)
                + "; known settings: "
                + String.join(", ", Settings.names()));
      }
      setting.apply(this, value, source);
      sources.put(name, source);
      given.put(
          setting.name(),
          value instanceof List<?> l
              ? l.stream().map(String::valueOf).collect(Collectors.joining(","))
              : String.valueOf(value));
      return this;
    }

    private String sourceOf(Setting<?> setting) {
      String s = sources.get(setting.name());
      return s == null ? "" : " (" + s + ")";
    }

    /**
     * Validates the settings together and builds the config.
     *
     * @throws ConfigException naming the first bad or contradicting setting
     */
    public ServerConfig build() {
      String listenAddress = get(Settings.LISTEN_ADDRESS);
      InetAddress address;
      try {
        address = InetAddress.getByName(listenAddress.strip());
      } catch (UnknownHostException e) {
        throw new ConfigException(
            "invalid listen-address '"
                + listenAddress
                + "'"
                + sourceOf(Settings.LISTEN_ADDRESS)
                + ": not an IP address or a known host name");
      }
      List<Setting<Integer>> ports =
          List.of(
              Settings.OTLP_GRPC_PORT,
              Settings.OTLP_HTTP_PORT,
              Settings.HTTP_PORT,
              Settings.ADMIN_PORT);
      for (Setting<Integer> port : ports) {
        checkPort(port);
      }
      distinctPorts(Settings.OTLP_GRPC_PORT, Settings.OTLP_HTTP_PORT);
      distinctPorts(Settings.OTLP_GRPC_PORT, Settings.HTTP_PORT);
      distinctPorts(Settings.OTLP_HTTP_PORT, Settings.HTTP_PORT);
      distinctPorts(Settings.ADMIN_PORT, Settings.OTLP_GRPC_PORT);
      distinctPorts(Settings.ADMIN_PORT, Settings.OTLP_HTTP_PORT);
      distinctPorts(Settings.ADMIN_PORT, Settings.HTTP_PORT);
      String adminToken = get(Settings.ADMIN_TOKEN);
      if (adminToken != null) {
        String why = tokenProblem(adminToken);
        if (why != null) {
          throw new ConfigException(
              "invalid admin-token" + sourceOf(Settings.ADMIN_TOKEN) + ": " + why);
        }
      }
      long maxGrpcMessageBytes = get(Settings.OTLP_GRPC_MAX_MESSAGE_SIZE);
      if (maxGrpcMessageBytes <= 0 || maxGrpcMessageBytes > Integer.MAX_VALUE) {
        throw new ConfigException(
            "invalid otlp-grpc-max-message-size '"
                + ConfigValues.formatSize(maxGrpcMessageBytes)
                + "'"
                + sourceOf(Settings.OTLP_GRPC_MAX_MESSAGE_SIZE)
                + ": must be between 1B and 2GiB - 1B (gRPC's limit is an int)");
      }
      engineConfig =
          wrap(
              "engine",
              () ->
                  EngineConfig.builder()
                      .retention(get(Settings.RETENTION))
                      .outOfOrderWindow(get(Settings.OUT_OF_ORDER_WINDOW))
                      .maxFutureSkew(get(Settings.MAX_FUTURE_SKEW))
                      .fsync(get(Settings.FSYNC))
                      .maxHeadBytes(get(Settings.HEAD_MEMORY_LIMIT))
                      .compactionLevels(get(Settings.COMPACTION_LEVELS))
                      .compactionDelay(get(Settings.COMPACTION_DELAY))
                      .compactionInterval(get(Settings.COMPACTION_INTERVAL))
                      .labelCacheBytes(get(Settings.LABEL_CACHE_SIZE))
                      .headFreezeSamples(get(Settings.HEAD_FREEZE_SAMPLES))
                      .maxActiveSeries(get(Settings.MAX_ACTIVE_SERIES))
                      .readParallelism(QueryConfig.defaultQueryThreads())
                      .clock(Clock.systemUTC())
                      .build());
      rocksDbConfig =
          wrap(
              "RocksDB",
              () ->
                  RocksDbConfig.builder()
                      .blockCacheBytes(get(Settings.BLOCK_CACHE_SIZE))
                      .fsyncOnWrite(
                          false) // the engine syncs itself (group commit) when fsync is on
                      .build());
      receiverConfig =
          wrap(
              "receiver",
              () ->
                  new ReceiverConfig(
                      (int) maxGrpcMessageBytes,
                      get(Settings.OTLP_HTTP_MAX_BODY_SIZE),
                      get(Settings.OTLP_MAX_IN_FLIGHT_SIZE),
                      get(Settings.OTLP_RETRY_AFTER)));
      Path webConfigFile = get(Settings.WEB_CONFIG_FILE);
      try {
        webConfig = webConfigFile == null ? WebConfig.none() : WebConfig.read(webConfigFile);
      } catch (WebConfigException e) {
        throw new ConfigException(
            "invalid web-config-file" + sourceOf(Settings.WEB_CONFIG_FILE) + ": " + e.getMessage(),
            e);
      }
      features = Features.of(get(Settings.ENABLE_FEATURE));
      translatorConfig =
          wrap(
              "translator",
              () ->
                  translator
                      .maxFutureSkew(get(Settings.MAX_FUTURE_SKEW))
                      .typeAndUnitLabels(features.has(Features.TYPE_AND_UNIT_LABELS))
                      .build());
      queryConfig =
          wrap(
              "query",
              () ->
                  new QueryConfig(
                      get(Settings.QUERY_TIMEOUT),
                      get(Settings.QUERY_MAX_SAMPLES),
                      get(Settings.QUERY_MAX_CONCURRENCY),
                      get(Settings.QUERY_MAX_QUEUED),
                      get(Settings.QUERY_LOOKBACK_DELTA),
                      features.promql(get(Settings.QUERY_EXPERIMENTAL_FUNCTIONS)),
                      get(Settings.QUERY_MAX_SAMPLES_TOTAL)));
      return new ServerConfig(this, address);
    }

    /** Why {@code token} cannot be a bearer token in an HTTP/2 header, or null. Never echoes it. */
    static String tokenProblem(String token) {
      if (token.isEmpty()) {
        return "must not be empty";
      }
      for (int i = 0; i < token.length(); i++) {
        char c = token.charAt(i);
        if (c <= ' ' || c >= 0x7f) {
          return "must be printable ASCII without spaces (character " + (i + 1) + " is not)";
        }
      }
      return null;
    }

    private void checkPort(Setting<Integer> setting) {
      int port = get(setting);
      if (port < 0 || port > 65535) {
        throw new ConfigException(
            "invalid "
                + setting.name()
                + " '"
                + port
                + "'"
                + sourceOf(setting)
                + ": must be between 0 and 65535");
      }
    }

    private void distinctPorts(Setting<Integer> a, Setting<Integer> b) {
      int pa = get(a);
      if (pa != 0 && pa == get(b)) {
        throw new ConfigException(
            a.name()
                + sourceOf(a)
                + " and "
                + b.name()
                + sourceOf(b)
                + " are both "
                + pa
                + ": each port needs its own number");
      }
    }

    private static <T> T wrap(String what, java.util.function.Supplier<T> build) {
      try {
        return build.get();
      } catch (IllegalArgumentException | NullPointerException e) {
        throw new ConfigException("invalid " + what + " settings: " + e.getMessage(), e);
      }
    }
  }
}
