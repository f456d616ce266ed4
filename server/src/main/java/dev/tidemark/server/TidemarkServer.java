package dev.tidemark.server;

import dev.tidemark.receiver.HeapGuard;
import dev.tidemark.receiver.InFlightBytes;
import dev.tidemark.receiver.grpc.GrpcDecompressors;
import dev.tidemark.receiver.grpc.OtlpGrpcService;
import dev.tidemark.receiver.http.OtlpHttpHandler;
import dev.tidemark.receiver.http.PlainTextErrorHandler;
import dev.tidemark.receiver.http.RemoteWriteHandler;
import dev.tidemark.receiver.otlp.OtlpIngestor;
import dev.tidemark.receiver.remotewrite.RemoteWriteIngestor;
import dev.tidemark.rocksdb.RocksDbKvStore;
import dev.tidemark.server.admin.AdminGrpcService;
import dev.tidemark.server.admin.AdminServer;
import dev.tidemark.server.admin.Reflection;
import dev.tidemark.server.api.ApiBackend;
import dev.tidemark.server.api.ConfigState;
import dev.tidemark.server.api.PrometheusApi;
import dev.tidemark.server.api.QueryLog;
import dev.tidemark.server.web.BasicAuthHandler;
import dev.tidemark.server.web.BasicAuthInterceptor;
import dev.tidemark.server.web.WebConfig;
import dev.tidemark.server.web.WebSecurity;
import dev.tidemark.translator.Translator;
import dev.tidemark.tsdb.engine.Engine;
import dev.tidemark.tsdb.kv.KvStoreException;
import dev.tidemark.tsdb.model.PromText;
import io.grpc.Server;
import io.grpc.ServerInterceptors;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.protobuf.services.HealthStatusManager;
import io.opentelemetry.proto.collector.metrics.v1.MetricsServiceGrpc;
import io.prometheus.metrics.core.metrics.CounterWithCallback;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.instrumentation.jvm.JvmMetrics;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.IOException;
import java.net.BindException;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.eclipse.jetty.io.Connection;
import org.eclipse.jetty.io.EndPoint;
import org.eclipse.jetty.io.ssl.SslConnection;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.SecureRequestCustomizer;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.server.SslConnectionFactory;
import org.eclipse.jetty.server.handler.GracefulHandler;
import org.eclipse.jetty.server.handler.gzip.GzipHandler;
import org.eclipse.jetty.server.internal.HttpConnection;
import org.eclipse.jetty.util.component.Graceful;
import org.eclipse.jetty.util.thread.QueuedThreadPool;

/**
 * A running Tidemark: RocksDB store → {@link Engine} → {@link Translator} → {@link OtlpIngestor},
 * served by an OTLP/gRPC server, an OTLP/HTTP server and the HTTP API server ({@code /metrics},
 * {@code /-/healthy}, {@code /-/ready}). Usable in-process (tests) as well as from {@link Main}.
 *
 * <p><b>Start</b> ({@link #start()}), in this order: the HTTP API port (so {@code /-/ready} answers
 * 503 while the engine recovers), the store in the data folder, the engine (recovering the head;
 * the time is logged and exported as {@code tidemark_recovery_seconds}), translator and ingestor,
 * the OTLP/gRPC port (with the gRPC health service and server reflection), the OTLP/HTTP port, the
 * admin gRPC port ({@link dev.tidemark.server.admin.AdminServer}); then the server is ready and
 * logs one line with the ports, the data folder, the retention and the recovery time. A failure
 * throws {@link StartupException} with a message for the operator (a port in use, a data folder
 * locked by another process, a schema conflict) after releasing everything opened so far.
 *
 * <p><b>Stop</b> ({@link #close()}, from a shutdown hook on SIGTERM or Ctrl-C): not ready; the OTLP
 * and admin ports all stop accepting at the same moment (gRPC shutdown, Jetty graceful shutdown),
 * HTTP keep-alive connections with no request in progress (on the API port too) are closed at once,
 * and in-flight requests finish (remote writes on the API port too), for at most {@link
 * ServerConfig#shutdownTimeout()} in all, after which the rest are cut off; the engine closes
 * (sealing the head, so the next start replays nothing); the store closes; the API port, which
 * answers {@code /-/ready}, queries and writes with 503 meanwhile, closes last (again closing its
 * idle connections at once). Each step is logged. Every acknowledged export is durable before this
 * starts, so a request cut off was never acknowledged. Idle connections of clients (collectors keep
 * theirs open) do not slow the stop down.
 *
 * <p>Port 0 picks a free port; the bound ports are {@link #otlpGrpcPort()}, {@link
 * #otlpHttpPort()}, {@link #httpPort()} and {@link #adminPort()}. Thread-safe; {@link #start()}
 * once.
 */
public final class TidemarkServer implements AutoCloseable {

  private static final System.Logger LOG = System.getLogger(TidemarkServer.class.getName());

  /**
   * Threads running OTLP/gRPC calls. {@code Export} blocks until its samples are durable (a group
   * commit), so this bounds concurrent exports; calls beyond it wait for a thread without their
   * messages being read (HTTP/2 flow control holds them at the client).
   */
  static final int GRPC_THREADS = 32;

  /** Most threads of the OTLP/HTTP server; its requests block on the group commit too. */
  static final int OTLP_HTTP_MAX_THREADS = 64;

  /**
   * HTTP connections (OTLP/HTTP and API) silent this long are closed: 30 s. This bounds how long a
   * client that stalls, before or while sending a body, holds its connection and the body bytes it
   * has sent (a request waiting for its body holds no thread: see {@link OtlpHttpHandler}).
   */
  static final Duration HTTP_IDLE_TIMEOUT = Duration.ofSeconds(30);

  /**
   * During a stop, an HTTP connection with a request in progress whose client sends or reads
   * nothing for this long is closed: 2 s (a connection with no request in progress is closed at
   * once, see {@link #closeIdleConnections}).
   */
  static final Duration SHUTDOWN_IDLE_TIMEOUT = Duration.ofSeconds(2);

  /**
   * Most threads of the HTTP API server. Remote-write requests block on the group commit like
   * OTLP/HTTP ones, and up to 8 queries run on these threads (the rest on the query pool's).
   */
  static final int API_MAX_THREADS = 64;

  /** Where Prometheus serves OTLP/HTTP; the same receiver as {@code /v1/metrics} on its port. */
  static final String PROMETHEUS_OTLP_PATH = "/api/v1/otlp/v1/metrics";

  private enum State {
    NEW,
    STARTING,
    RUNNING,
    STOPPING,
    STOPPED,
    FAILED
  }

  /** The configuration in force: the start's, then each successful reload's. */
  private volatile ServerConfig config;

  /** Serializes reloads (never the server's own lock: a stop waits for a /-/reload request). */
  private final Object reloadLock = new Object();

  private volatile boolean lastReloadSuccessful = true;
  private volatile Instant lastReloadSuccess = Instant.now();

  /** TLS and basic auth of the HTTP API, OTLP/HTTP and OTLP/gRPC ports (web-config-file). */
  private final WebSecurity web;

  private final PrometheusRegistry registry = new PrometheusRegistry();
  private final CountDownLatch stopped = new CountDownLatch(1);
  private volatile State state = State.NEW;

  private org.eclipse.jetty.server.Server apiServer;
  private ApiHandler apiHandler;
  private IngestRoutes ingestRoutes;
  private PrometheusApi queryApi;
  private QueryLog queryLog;
  private final Instant startTime = Instant.now();
  private ServerConnector apiConnector;
  private RocksDbKvStore store;
  private Engine engine;
  private OtlpIngestor ingestor;
  private HeapGuard heapGuard;
  private HealthStatusManager health;
  private ExecutorService grpcExecutor;
  private Server grpcServer;
  private org.eclipse.jetty.server.Server otlpHttpServer;
  private ServerConnector otlpHttpConnector;
  private Duration recoveryTime = Duration.ZERO;
  private volatile int boundGrpcPort = -1;
  private volatile int boundOtlpHttpPort = -1;
  private volatile int boundHttpPort = -1;
  private AdminServer adminServer;
  private volatile int boundAdminPort = -1;

  public TidemarkServer(ServerConfig config) {
    this.config = config;
    this.web = new WebSecurity(config.webConfig());
  }

  /** Creates and {@linkplain #start() starts} a server. */
  public static TidemarkServer start(ServerConfig config) {
    TidemarkServer server = new TidemarkServer(config);
    server.start();
    return server;
  }

  /**
   * Starts every part and returns once the server is ready.
   *
   * @throws StartupException with an operator-facing message, everything released
   * @throws IllegalStateException if called twice
   */
  public synchronized void start() {
    if (state != State.NEW) {
      throw new IllegalStateException("server already " + state.name().toLowerCase(Locale.ROOT));
    }
    state = State.STARTING;
    long t0 = System.nanoTime();
    for (Features.LogLine line : config.features().logLines()) {
      LOG.log(line.level(), line.text()); // as Prometheus logs them while reading its flags
    }
    try {
      JvmMetrics.builder().register(registry);
      GaugeWithCallback.builder()
          .name("tidemark_build_info")
          .help(
              "A metric with a constant '1' value labeled by version, Java version, OS and"
                  + " architecture from which tidemark was built and runs (as prometheus_build_info)")
          .labelNames("version", "javaversion", "os", "arch")
          .callback(
              cb ->
                  cb.call(
                      1,
                      Main.version(),
                      Runtime.version().toString(),
                      System.getProperty("os.name", "").toLowerCase(java.util.Locale.ROOT),
                      System.getProperty("os.arch", "")))
          .register(registry);
      GaugeWithCallback.builder()
          .name("tidemark_config_last_reload_successful")
          .help(
              "Whether the last configuration reload attempt was successful (as"
                  + " prometheus_config_last_reload_successful)")
          .callback(cb -> cb.call(lastReloadSuccessful ? 1 : 0))
          .register(registry);
      GaugeWithCallback.builder()
          .name("tidemark_config_last_reload_success_timestamp_seconds")
          .help("Timestamp of the last successful configuration load or reload")
          .callback(cb -> cb.call(lastReloadSuccess.toEpochMilli() / 1000.0))
          .register(registry);
      startApi();
      openStorage();
      Translator translator =
          new Translator(
              engine, config.translatorConfig(), config.engineConfig().clock(), engine.metadata());
      heapGuard = HeapGuard.install(HeapGuard.DEFAULT_THRESHOLD);
      HeapGuard guard = heapGuard;
      GaugeWithCallback.builder()
          .name("tidemark_heap_refusing_writes")
          .help(
              "1 while writes are refused because the heap was over 90% full after the last"
                  + " garbage collection")
          .callback(cb -> cb.call(guard.getAsBoolean() ? 1 : 0))
          .register(registry);
      GaugeWithCallback.builder()
          .name("tidemark_heap_used_after_gc_ratio")
          .help("Share of the maximum heap in use after the last garbage collection")
          .callback(cb -> cb.call(guard.lastShare()))
          .register(registry);
      InFlightBytes inFlight =
          new InFlightBytes(config.receiverConfig().maxInFlightBytes(), heapGuard::refusal);
      ingestor = new OtlpIngestor(translator, config.receiverConfig(), registry, inFlight);
      startQueryApi(translator);
      startRemoteWrite(translator, inFlight);
      startGrpc();
      startOtlpHttp();
      startAdmin();
    } catch (RuntimeException | Error e) {
      state = State.FAILED;
      releaseAfterFailure();
      stopped.countDown();
      throw e;
    }
    state = State.RUNNING;
    // What the listeners are exposed with comes before the ready line, the start's last: a
    // reader that waits for "ready" (a supervisor, a test) finds it there.
    LOG.log(System.Logger.Level.INFO, webLine(web.config()));
    warnIfExposed();
    LOG.log(System.Logger.Level.INFO, startupLine((System.nanoTime() - t0) / 1_000_000));
  }

  /** What the web config file puts in front of the listeners, for the log. */
  static String webLine(WebConfig w) {
    if (w.file() == null) {
      return "HTTP API, OTLP/HTTP and OTLP/gRPC: no TLS, no authentication (no --web-config-file)";
    }
    WebConfig.Tls tls = w.tls();
    return "web config file "
        + w.file()
        + ": HTTP API, OTLP/HTTP and OTLP/gRPC with "
        + (tls == null
            ? "no TLS"
            : "TLS ("
                + String.join(", ", tls.protocols())
                + "; client certificates: "
                + tls.clientAuth()
                + ")")
        + " and "
        + (w.hasAuth()
            ? "basic authentication (" + w.users().size() + " user(s))"
            : "no authentication");
  }

  /**
   * Logs a warning for each listener that binds beyond loopback with neither TLS nor basic
   * authentication: anyone who reaches it can write and read every series.
   */
  private void warnIfExposed() {
    if (config.listenInetAddress().isLoopbackAddress()
        || web.tls() != null
        || web.auth().enabled()) {
      return;
    }
    for (String listener :
        new String[] {
          "the HTTP API on " + config.listenAddress() + ":" + httpPort(),
          "OTLP/HTTP on " + config.listenAddress() + ":" + otlpHttpPort(),
          "OTLP/gRPC on " + config.listenAddress() + ":" + otlpGrpcPort()
        }) {
      LOG.log(
          System.Logger.Level.WARNING,
          "*** "
              + listener
              + " is reachable beyond this machine with neither TLS nor authentication: anyone"
              + " who reaches it can read and write every series; set --web-config-file"
              + " (README, TLS and authentication) ***");
    }
  }

  private String startupLine(long startMillis) {
    String host = config.listenAddress();
    Engine.Stats stats = engine.stats();
    return String.format(
        Locale.ROOT,
        "Tidemark %s ready in %.2f s: OTLP/gRPC %s:%d, OTLP/HTTP %s:%d, HTTP API %s:%d"
            + " (web UI %s://%s:%d/, /metrics, /-/healthy, /-/ready), admin gRPC %s:%d (%s);"
            + " data folder %s; retention %s; recovery %.3f s (%d head series)",
        Main.version(),
        startMillis / 1000.0,
        host,
        otlpGrpcPort(),
        host,
        otlpHttpPort(),
        host,
        httpPort(),
        web.tls() == null ? "http" : "https",
        host.equals("0.0.0.0") ? "127.0.0.1" : host.contains(":") ? "[" + host + "]" : host,
        httpPort(),
        host,
        adminPort(),
        config.adminToken() == null ? "no token" : "token required",
        dataFolder(),
        PromText.formatDuration(config.engineConfig().retention()),
        recoveryTime.toMillis() / 1000.0,
        stats.headSeries());
  }

  private Path dataFolder() {
    return config.dataDir().toAbsolutePath().normalize();
  }

  // ---- start steps ----

  private void startApi() {
    apiServer = newJetty("tidemark-api", API_MAX_THREADS);
    apiConnector = newConnector(apiServer, config.httpPort(), "api");
    apiHandler =
        new ApiHandler(
            registry,
            this::isReady,
            this::writeRefusal,
            config.webEnableLifecycle() ? this::reload : null);
    GzipHandler gzip = new GzipHandler(apiHandler);
    gzip.setIncludedMethods("GET", "POST");
    ingestRoutes =
        new IngestRoutes(
            Set.of(RemoteWriteHandler.PATH, PROMETHEUS_OTLP_PATH),
            config.receiverConfig().retryAfterSeconds());
    apiServer.setHandler(
        graceful(new BasicAuthHandler(web.auth(), new Handler.Sequence(ingestRoutes, gzip))));
    startJetty(apiServer, apiConnector, config.httpPort(), "HTTP API");
    boundHttpPort = apiConnector.getLocalPort();
  }

  /** The Prometheus query API over the open engine, served on the HTTP API port from now on. */
  private void startQueryApi(Translator translator) {
    ApiBackend backend =
        new ApiBackend(
            engine,
            () -> translator.metadata().snapshot(),
            engine::stats,
            engine::bucketInfo,
            this::configState,
            Main.version(),
            startTime,
            config.engineConfig().clock());
    queryApi = new PrometheusApi(backend, config.queryConfig());
    queryApi.register(registry);
    if (config.queryLogFile() != null) {
      try {
        queryLog = QueryLog.open(config.queryLogFile(), config.engineConfig().clock());
      } catch (IOException e) {
        throw new StartupException(
            "cannot open the query log " + config.queryLogFile() + ": " + e.getMessage(), e);
      }
      queryApi.queryLog(queryLog);
    }
    PrometheusApi api = queryApi;
    GaugeWithCallback.builder()
        .name("tidemark_query_running")
        .help("Queries of the HTTP API being evaluated now")
        .callback(cb -> cb.call(api.runningQueries()))
        .register(registry);
    GaugeWithCallback.builder()
        .name("tidemark_query_queued")
        .help("Queries of the HTTP API waiting for a slot (query-max-concurrency)")
        .callback(cb -> cb.call(api.queuedQueries()))
        .register(registry);
    GaugeWithCallback.builder()
        .name("tidemark_query_samples_held")
        .help(
            "Samples the running queries hold in memory together (query-max-samples-total bounds"
                + " it)")
        .callback(cb -> cb.call(api.samplesHeld()))
        .register(registry);
    GaugeWithCallback.builder()
        .name("tidemark_query_max_samples_total")
        .help("Most samples all queries together may hold in memory (query-max-samples-total)")
        .callback(cb -> cb.call(config.queryConfig().maxSamplesTotal()))
        .register(registry);
    CounterWithCallback.builder()
        .name("tidemark_query_canceled_by_client_total")
        .help("Queries cancelled because their client went away")
        .callback(cb -> cb.call(api.canceledByClient()))
        .register(registry);
    queryApi.bulk(engine, config.receiverConfig().maxHttpBodyBytes());
    if (config.webEnableAdminApi()) {
      queryApi.admin(new StoreAdmin(engine, store, dataFolder(), config.engineConfig().clock()));
    }
    apiHandler.api(queryApi);
  }

  /**
   * Remote write ({@code /api/v1/write}) and OTLP/HTTP on Prometheus' path ({@code
   * /api/v1/otlp/v1/metrics}) on the HTTP API port, sharing the OTLP receivers' admission control.
   */
  private void startRemoteWrite(Translator translator, InFlightBytes inFlight) {
    RemoteWriteIngestor rw =
        new RemoteWriteIngestor(
            engine,
            engine.metadata(),
            inFlight,
            config.translatorConfig().seriesCacheSize(),
            registry,
            config.translatorConfig().typeAndUnitLabels()); // the same feature flag
    ingestRoutes.open(
        Map.of(
            RemoteWriteHandler.PATH,
            new RemoteWriteHandler(rw, config.receiverConfig()),
            PROMETHEUS_OTLP_PATH,
            new OtlpHttpHandler(ingestor, PROMETHEUS_OTLP_PATH)));
  }

  /** The configuration in force, as the status endpoints show it. */
  private ConfigState configState() {
    ServerConfig c = config;
    return new ConfigState(
        c.settingValues(),
        c.settingsYaml(),
        engine.retention(),
        lastReloadSuccessful,
        lastReloadSuccess);
  }

  /**
   * Reads the config file and the web config file again and applies what a running server can
   * change (SIGHUP, {@code POST /-/reload}): the web config file's users, certificates, client CA,
   * client auth type and TLS versions, and the reloadable settings ({@code Settings.RELOADABLE}:
   * the retention). A file that does not read, or a web config that would turn TLS on or off, is
   * refused whole and the configuration in force is kept. Settings that changed in the file but
   * need a restart are named in a warning.
   *
   * @return null when applied, else the error (logged, and 500 for {@code /-/reload})
   */
  public String reload() {
    synchronized (reloadLock) {
      if (state != State.RUNNING) {
        return "the server is " + state.name().toLowerCase(Locale.ROOT);
      }
      ServerConfig running = config;
      ServerConfig fresh;
      try {
        fresh = running.reread();
        String problem = web.reloadProblem(fresh.webConfig());
        if (problem != null) {
          throw new ConfigException(problem);
        }
      } catch (ConfigException e) {
        lastReloadSuccessful = false;
        LOG.log(
            System.Logger.Level.ERROR,
            "reloading the configuration failed, the configuration in force is kept: "
                + e.getMessage());
        return e.getMessage();
      }
      List<String> needRestart = running.changedNeedingRestart(fresh);
      ServerConfig next = running.reloaded(fresh);
      web.apply(next.webConfig());
      java.time.Duration retention = next.engineConfig().retention();
      if (!retention.equals(engine.retention())) {
        engine.setRetention(retention);
      }
      config = next;
      lastReloadSuccessful = true;
      lastReloadSuccess = Instant.now();
      LOG.log(
          System.Logger.Level.INFO,
          "configuration reloaded: retention "
              + PromText.formatDuration(retention)
              + "; "
              + webLine(next.webConfig()));
      if (!needRestart.isEmpty()) {
        LOG.log(
            System.Logger.Level.WARNING,
            "the configuration changes "
                + String.join(", ", needRestart)
                + ", which a reload does not apply: restart to apply "
                + (needRestart.size() == 1 ? "it" : "them"));
      }
      warnIfExposed();
      return null;
    }
  }

  private void openStorage() {
    Path folder = dataFolder();
    try {
      store = RocksDbKvStore.open(folder, config.rocksDbConfig());
    } catch (KvStoreException e) {
      String msg = String.valueOf(e.getMessage());
      if (msg.contains("in use by another")) {
        throw new StartupException(
            "data folder "
                + folder
                + " is locked by another process (is another Tidemark running on it?)",
            e);
      }
      throw new StartupException("cannot open the data folder " + folder + ": " + msg, e);
    }
    long t0 = System.nanoTime();
    try {
      engine = Engine.open(store, config.engineConfig(), new EngineDurations(registry));
    } catch (RuntimeException e) {
      throw new StartupException(
          "cannot open the store in data folder " + folder + ": " + e.getMessage(), e);
    }
    Engine.Stats stats = engine.stats();
    recoveryTime = Duration.ofMillis(stats.recoveryMillis());
    LOG.log(
        System.Logger.Level.INFO,
        String.format(
            Locale.ROOT,
            "engine opened in %.3f s: recovery %.3f s, %d head series in %d open bucket(s), %d"
                + " bucket(s) in %s",
            (System.nanoTime() - t0) / 1e9,
            stats.recoveryMillis() / 1000.0,
            stats.headSeries(),
            stats.openBuckets(),
            stats.buckets(),
            folder));
    registry.register(new EngineMetrics(engine, store));
  }

  private void startGrpc() {
    health = new HealthStatusManager();
    grpcExecutor = Executors.newFixedThreadPool(GRPC_THREADS, named("tidemark-otlp-grpc"));
    InetSocketAddress address =
        new InetSocketAddress(config.listenInetAddress(), config.otlpGrpcPort());
    NettyServerBuilder builder =
        NettyServerBuilder.forAddress(address)
            .executor(grpcExecutor)
            .maxInboundMessageSize(config.receiverConfig().maxGrpcMessageBytes())
            .decompressorRegistry(GrpcDecompressors.registry())
            .addService(
                ServerInterceptors.intercept(
                    new OtlpGrpcService(ingestor).serviceDefinition(),
                    new BasicAuthInterceptor(web.auth())))
            .addService(health.getHealthService());
    if (web.tls() != null) {
      builder.sslContext(web.tls().grpc());
    }
    Server server = Reflection.addTo(builder).build();
    try {
      server.start();
    } catch (IOException e) {
      server.shutdownNow();
      throw bindFailure(e, config.otlpGrpcPort(), "OTLP gRPC");
    }
    grpcServer = server;
    boundGrpcPort = ((InetSocketAddress) server.getListenSockets().get(0)).getPort();
    health.setStatus("", ServingStatus.SERVING);
    health.setStatus(MetricsServiceGrpc.SERVICE_NAME, ServingStatus.SERVING);
  }

  private void startOtlpHttp() {
    otlpHttpServer = newJetty("tidemark-otlp-http", OTLP_HTTP_MAX_THREADS);
    otlpHttpConnector = newConnector(otlpHttpServer, config.otlpHttpPort(), "otlp-http");
    otlpHttpServer.setHandler(
        graceful(new BasicAuthHandler(web.auth(), new OtlpHttpHandler(ingestor))));
    startJetty(otlpHttpServer, otlpHttpConnector, config.otlpHttpPort(), "OTLP HTTP");
    boundOtlpHttpPort = otlpHttpConnector.getLocalPort();
  }

  private void startAdmin() {
    AdminGrpcService service =
        new AdminGrpcService(
            engine,
            engine,
            store::createCheckpoint,
            dataFolder(),
            Main.version(),
            config.engineConfig().clock());
    try {
      adminServer =
          AdminServer.start(
              new InetSocketAddress(config.listenInetAddress(), config.adminPort()),
              service,
              config.adminToken());
    } catch (IOException e) {
      throw bindFailure(e, config.adminPort(), "admin gRPC");
    }
    boundAdminPort = adminServer.port();
    if (config.adminToken() == null && !config.listenInetAddress().isLoopbackAddress()) {
      LOG.log(
          System.Logger.Level.WARNING,
          "the admin API listens on "
              + config.listenAddress()
              + ":"
              + boundAdminPort
              + " without a token: anyone who reaches it can delete data; set --admin-token");
    }
  }

  /**
   * Tracks requests so that a stop waits for them. During a stop Jetty closes connections that stay
   * idle for {@link #SHUTDOWN_IDLE_TIMEOUT} (Jetty's default is 1 s): a request whose client stalls
   * does not hold the stop for the whole shutdown timeout, while one whose client pauses briefly
   * while sending its body still completes. Keep-alive connections with no request in progress do
   * not wait for it: the stop closes them at once ({@link #closeIdleConnections}).
   */
  private GracefulHandler graceful(org.eclipse.jetty.server.Handler handler) {
    GracefulHandler g = new GracefulHandler(handler);
    g.setShutdownIdleTimeout(
        Math.max(
            1, Math.min(SHUTDOWN_IDLE_TIMEOUT.toMillis(), config.shutdownTimeout().toMillis())));
    return g;
  }

  private org.eclipse.jetty.server.Server newJetty(String name, int maxThreads) {
    QueuedThreadPool pool = new QueuedThreadPool(maxThreads, Math.min(4, maxThreads));
    pool.setName(name);
    org.eclipse.jetty.server.Server server = new org.eclipse.jetty.server.Server(pool);
    server.setStopTimeout(config.shutdownTimeout().toMillis());
    server.setStopAtShutdown(false); // our shutdown hook orders the stop
    // Unknown paths, unparsable requests, oversize headers: one line of text, never Jetty's HTML.
    server.setErrorHandler(new PlainTextErrorHandler());
    return server;
  }

  private ServerConnector newConnector(
      org.eclipse.jetty.server.Server server, int port, String name) {
    HttpConfiguration http = new HttpConfiguration();
    http.setSendServerVersion(false);
    http.setSendDateHeader(false);
    ServerConnector connector;
    if (web.tls() == null) {
      connector = new ServerConnector(server, 1, 1, new HttpConnectionFactory(http));
    } else {
      SecureRequestCustomizer secure = new SecureRequestCustomizer();
      secure.setSniHostCheck(false); // clients reach us by IP address as often as by name
      http.addCustomizer(secure);
      connector =
          new ServerConnector(
              server,
              1,
              1,
              new SslConnectionFactory(web.tls().jetty(), "http/1.1"),
              new HttpConnectionFactory(http));
    }
    connector.setName(name);
    connector.setIdleTimeout(HTTP_IDLE_TIMEOUT.toMillis());
    connector.setHost(config.listenInetAddress().getHostAddress());
    connector.setPort(port);
    server.addConnector(connector);
    return connector;
  }

  private void startJetty(
      org.eclipse.jetty.server.Server server, ServerConnector connector, int port, String what) {
    try {
      server.start();
    } catch (Exception e) {
      stopQuietly(server);
      if (e instanceof IOException) {
        throw bindFailure((IOException) e, port, what);
      }
      throw new StartupException("cannot start the " + what + " server: " + e, e);
    }
  }

  private StartupException bindFailure(IOException e, int port, String what) {
    String host = config.listenAddress();
    for (Throwable t = e; t != null; t = t.getCause()) {
      String m = String.valueOf(t.getMessage());
      if (m.contains("already in use")) {
        return new StartupException(
            "port " + port + " (" + what + ") on " + host + " is already in use", e);
      }
      if (t instanceof BindException || m.contains("ssign requested address")) {
        return new StartupException(
            "cannot listen on " + host + ":" + port + " (" + what + "): " + t.getMessage(), e);
      }
    }
    return new StartupException(
        "cannot listen on " + host + ":" + port + " (" + what + "): " + e.getMessage(), e);
  }

  private static ThreadFactory named(String prefix) {
    AtomicInteger n = new AtomicInteger();
    return r -> {
      Thread t = new Thread(r, prefix + "-" + n.incrementAndGet());
      t.setDaemon(true);
      return t;
    };
  }

  // ---- state ----

  /**
   * Whether the server has started and is not stopping: {@code /-/ready} answers 200 unless {@link
   * #writeRefusal()} names a reason.
   */
  public boolean isReady() {
    return state == State.RUNNING;
  }

  /**
   * Why every write is refused now, or null while writes are taken (and before the start, or while
   * stopping, where {@link #isReady()} says more): the heap nearly full after a collection ({@link
   * HeapGuard#refusal()}), else the engine's reason ({@link Engine#writeRefusal()}: the head over
   * its budget). {@code /-/ready} answers 503 with it.
   */
  public String writeRefusal() {
    if (state != State.RUNNING) {
      return null; // the fields below are set before RUNNING is (a volatile write)
    }
    String heap = heapGuard.refusal();
    return heap != null ? heap : engine.writeRefusal();
  }

  /** Whether a {@link #stop()} has run to its end (false after a failed start). */
  public boolean isStopped() {
    return state == State.STOPPED;
  }

  /** The bound OTLP/gRPC port (the real one when configured as 0); -1 before it is bound. */
  public int otlpGrpcPort() {
    return boundGrpcPort;
  }

  /** The bound OTLP/HTTP port; -1 before it is bound. */
  public int otlpHttpPort() {
    return boundOtlpHttpPort;
  }

  /**
   * The bound HTTP API port ({@code /metrics}, {@code /-/healthy}, {@code /-/ready}); -1 before.
   */
  public int httpPort() {
    return boundHttpPort;
  }

  /** The bound admin gRPC port; -1 before it is bound. */
  public int adminPort() {
    return boundAdminPort;
  }

  public ServerConfig config() {
    return config;
  }

  /** How long the engine took to recover the head at start. */
  public Duration recoveryTime() {
    return recoveryTime;
  }

  /** The registry behind {@code /metrics}. */
  public PrometheusRegistry registry() {
    return registry;
  }

  /** The engine (for the admin and query APIs to come, and for tests). */
  public Engine engine() {
    return engine;
  }

  /** Blocks until the server has stopped (or failed to start). */
  public void awaitStopped() throws InterruptedException {
    stopped.await();
  }

  // ---- stop ----

  /** Stops gracefully (see the class comment); idempotent. Same as {@link #stop()}. */
  @Override
  public void close() {
    stop();
  }

  /**
   * Stops gracefully (see the class comment). Idempotent; a second caller waits for the first.
   *
   * @return true if this call stopped a running server without a failure, false if it was not
   *     running or a step failed (logged)
   */
  public synchronized boolean stop() {
    if (state != State.RUNNING) {
      return false;
    }
    state = State.STOPPING;
    long t0 = System.nanoTime();
    boolean clean = true;
    LOG.log(System.Logger.Level.INFO, "stopping: not ready; OTLP ports stop accepting");
    health.enterTerminalState(); // NOT_SERVING for every service
    long deadline = t0 + config.shutdownTimeout().toNanos();

    // Every OTLP and admin listener stops at once, and the waits below share one deadline: the
    // stop takes as long as the slowest in-flight request, not the sum of the servers' stops.
    grpcServer.shutdown();
    adminServer.shutdown();
    ingestRoutes.refuse();
    CompletableFuture<Void> otlpHttpDrained = beginStop(otlpHttpServer, otlpHttpConnector);
    // The API port keeps accepting (503 on /-/ready, queries and writes) until it closes last; its
    // clients'
    // idle keep-alive connections are closed now all the same.
    closeIdleConnections(apiConnector);
    try {
      long left = Math.max(0, deadline - System.nanoTime());
      if (!grpcServer.awaitTermination(left, TimeUnit.NANOSECONDS)) {
        LOG.log(
            System.Logger.Level.WARNING,
            "OTLP/gRPC calls still running after "
                + PromText.formatDuration(config.shutdownTimeout())
                + "; cancelling them");
        grpcServer.shutdownNow();
        grpcServer.awaitTermination(5, TimeUnit.SECONDS);
        clean = false;
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      grpcServer.shutdownNow();
      clean = false;
    }
    grpcExecutor.shutdown();
    clean &= finishStop(otlpHttpServer, otlpHttpDrained, deadline, "OTLP/HTTP");
    try {
      long left = Math.max(0, deadline - System.nanoTime());
      if (!adminServer.awaitTermination(left, TimeUnit.NANOSECONDS)) {
        LOG.log(System.Logger.Level.WARNING, "admin calls still running; cancelling them");
        adminServer.shutdownNow();
        clean = false;
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      adminServer.shutdownNow();
      clean = false;
    }
    LOG.log(
        System.Logger.Level.INFO,
        String.format(
            Locale.ROOT,
            "OTLP/gRPC, OTLP/HTTP and admin gRPC stopped after %.3f s; in-flight requests finished",
            (System.nanoTime() - t0) / 1e9));

    try {
      if (!ingestRoutes.close(Duration.ofNanos(Math.max(0, deadline - System.nanoTime())))) {
        LOG.log(System.Logger.Level.WARNING, "remote writes still running; closing the engine");
        clean = false;
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      clean = false;
    }
    apiHandler.api(null); // new queries get 503 from here on
    clean &= queryApi.close(Duration.ofSeconds(5));
    if (queryLog != null) {
      try {
        queryLog.close();
      } catch (IOException e) {
        LOG.log(System.Logger.Level.WARNING, "cannot close the query log: " + e.getMessage());
      }
    }

    if (heapGuard != null) {
      heapGuard.close();
    }
    long t1 = System.nanoTime();
    try {
      engine.close();
      LOG.log(
          System.Logger.Level.INFO,
          String.format(
              Locale.ROOT, "engine closed, head sealed in %.3f s", (System.nanoTime() - t1) / 1e9));
    } catch (RuntimeException e) {
      clean = false;
      LOG.log(
          System.Logger.Level.ERROR,
          "closing the engine failed; the next start recovers from the head log",
          e);
    }
    try {
      store.close();
      LOG.log(System.Logger.Level.INFO, "store closed: " + dataFolder());
    } catch (RuntimeException e) {
      clean = false;
      LOG.log(System.Logger.Level.ERROR, "closing the store failed", e);
    }
    clean &=
        finishStop(
            apiServer,
            beginStop(apiServer, apiConnector),
            System.nanoTime() + config.shutdownTimeout().toNanos(),
            "HTTP API");
    state = State.STOPPED;
    stopped.countDown();
    LOG.log(
        System.Logger.Level.INFO,
        String.format(
            Locale.ROOT,
            "Tidemark stopped %s in %.3f s",
            clean ? "cleanly" : "with errors (see above)",
            (System.nanoTime() - t0) / 1e9));
    return clean;
  }

  /**
   * Starts the graceful stop of a Jetty server and returns at once: its connector stops accepting
   * (the listening socket closes), a request arriving on an open connection gets 503, a response in
   * flight closes its connection, and the connections with no request in progress are closed now.
   * The future completes once the requests in progress are answered and their connections closed.
   */
  private static CompletableFuture<Void> beginStop(
      org.eclipse.jetty.server.Server server, ServerConnector connector) {
    CompletableFuture<Void> drained = Graceful.shutdown(server);
    closeIdleConnections(connector);
    return drained;
  }

  /**
   * Closes the connector's connections that have no request in progress (none being handled, no
   * byte of the next one received): keep-alive connections of clients between two requests, which
   * Jetty would otherwise keep until they had been idle for {@link #SHUTDOWN_IDLE_TIMEOUT}, each
   * holding the stop. The client sees its idle connection closed, as after an idle timeout. A
   * connection with a request in progress is left to finish it; after a {@link Graceful#shutdown}
   * of its connector, Jetty closes it once the response is sent.
   *
   * @return how many connections were closed
   */
  static int closeIdleConnections(ServerConnector connector) {
    int closed = 0;
    for (EndPoint endPoint : connector.getConnectedEndPoints()) {
      Connection c = endPoint.getConnection();
      if (c instanceof SslConnection ssl) { // TLS: the HTTP connection is on the decrypted side
        c = ssl.getSslEndPoint().getConnection();
      }
      // The test Jetty's own idle timeout makes: no request on the channel (and the parser at the
      // start of the next one, so no request whose first bytes have arrived is cut).
      if (c instanceof HttpConnection http
          && http.getHttpChannel().getRequest() == null
          && http.getParser().isStart()) {
        endPoint.close();
        closed++;
      }
    }
    return closed;
  }

  /**
   * Waits until {@code drained} (at most until {@code deadline}, in {@link System#nanoTime()}; not
   * at all with a zero shutdown timeout), then stops the server: what is still connected then is
   * cut off.
   *
   * @return false if requests were still in progress at the deadline or the stop failed (logged)
   */
  private boolean finishStop(
      org.eclipse.jetty.server.Server server,
      CompletableFuture<Void> drained,
      long deadline,
      String what) {
    boolean clean = true;
    boolean wait = !config.shutdownTimeout().isZero();
    if (wait) {
      try {
        drained.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
      } catch (TimeoutException e) {
        LOG.log(
            System.Logger.Level.WARNING,
            what
                + " requests still in progress at the shutdown timeout; closing their"
                + " connections");
        clean = false;
      } catch (ExecutionException e) {
        LOG.log(System.Logger.Level.WARNING, "stopping the " + what + " server: " + e.getCause());
        clean = false;
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        clean = false;
      }
    }
    // Jetty's own graceful wait in stop() then finds the shutdown done, or gives up at once.
    long leftMillis = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
    server.setStopTimeout(wait ? Math.max(1, leftMillis) : 0);
    try {
      server.stop();
    } catch (Exception e) {
      if (clean) {
        LOG.log(System.Logger.Level.WARNING, "stopping the " + what + " server: " + e);
      }
      clean = false;
    }
    return clean;
  }

  /** Releases, newest first, whatever a failed start had opened. */
  private void releaseAfterFailure() {
    if (heapGuard != null) {
      heapGuard.close();
    }
    if (adminServer != null) {
      adminServer.shutdownNow();
    }
    if (otlpHttpServer != null) {
      stopQuietly(otlpHttpServer);
    }
    if (grpcServer != null) {
      grpcServer.shutdownNow();
    }
    if (grpcExecutor != null) {
      grpcExecutor.shutdownNow();
    }
    if (engine != null) {
      try {
        engine.close();
      } catch (RuntimeException e) {
        LOG.log(System.Logger.Level.WARNING, "closing the engine after a failed start: " + e);
      }
    }
    if (store != null) {
      try {
        store.close();
      } catch (RuntimeException e) {
        LOG.log(System.Logger.Level.WARNING, "closing the store after a failed start: " + e);
      }
    }
    if (apiServer != null) {
      stopQuietly(apiServer);
    }
  }

  private static void stopQuietly(org.eclipse.jetty.server.Server server) {
    try {
      server.stop();
    } catch (Exception ignored) {
      // already failing; the original error is what matters
    }
  }
}
