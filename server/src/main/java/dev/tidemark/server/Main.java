package dev.tidemark.server;

import dev.tidemark.server.admin.AdminCommand;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * The {@code tidemark} command. {@code tidemark} alone (or {@code tidemark serve}) runs the server
 * with the options of {@link ServeOptions}; later subcommands ({@code tidemark admin ...}, {@code
 * tidemark verify ...}) sit beside {@code serve}, each with its own exit codes.
 *
 * <p>Exit codes: {@value #EXIT_OK} after a clean stop (SIGTERM or Ctrl-C included: the shutdown
 * hook ends the process with 0 once the graceful stop has finished), {@value #EXIT_FAILURE} when
 * the server cannot start (port in use, data folder locked, schema conflict) or its stop failed,
 * {@value #EXIT_USAGE} for a bad command line or configuration. Operator errors are printed as one
 * line on standard error, without a stack trace.
 */
@Command(
    name = "tidemark",
    mixinStandardHelpOptions = true,
    versionProvider = Main.Version.class,
    sortOptions = false,
    usageHelpWidth = 100,
    customSynopsis = {
      "tidemark [serve] [OPTIONS]",
      "tidemark admin COMMAND [OPTIONS]",
      "tidemark verify --data-dir DIR [--repair]",
      "tidemark (-h | --help | -V | --version)"
    },
    subcommands = {Main.Serve.class, AdminCommand.class, VerifyCommand.class},
    description = {
      "Tidemark, a time series database for OpenTelemetry metrics.",
      "Without a subcommand, runs the server (same as 'tidemark serve').",
      "'tidemark admin --help' lists the administration commands (admin gRPC API).",
      "'tidemark verify --data-dir DIR [--repair]' checks (and repairs) a stopped server's store.",
      ""
    },
    footer = {
      "",
      "Every setting can also be given in a YAML file (--config), under the option's name",
      "without the dashes, e.g. 'retention: 30d'. Command-line options win over the file.",
      "Durations: 15d, 30m, 10s, 1h30m, 500ms. Sizes: 4MiB, 512MB, 2GiB (KB/MB/GB are powers",
      "of 1000, KiB/MiB/GiB powers of 1024).",
      "",
      "Exit codes: 0 clean stop (also after SIGTERM or Ctrl-C), 1 cannot start or stop failed,",
      "2 bad command line or configuration."
    })
public final class Main implements Callable<Integer> {

  public static final int EXIT_OK = 0;
  public static final int EXIT_FAILURE = 1;
  public static final int EXIT_USAGE = 2;

  @Mixin ServeOptions options;

  @Spec CommandSpec spec;

  private Main() {}

  public static void main(String[] args) {
    Logging.install();
    int code = run(args);
    Logging.flush();
    System.exit(code);
  }

  /** Runs the command line and returns the exit code (blocks while the server runs). */
  static int run(String... args) {
    return run(null, null, args);
  }

  /** {@link #run(String...)} writing to {@code out} and {@code err} (null: the standard streams). */
  static int run(PrintWriter out, PrintWriter err, String... args) {
    CommandLine cl = new CommandLine(new Main());
    if (out != null) {
      cl.setOut(out);
    }
    if (err != null) {
      cl.setErr(err);
    }
    cl.setParameterExceptionHandler(
        (ex, a) -> {
          PrintWriter w = ex.getCommandLine().getErr();
          w.println("tidemark: " + ex.getMessage());
          w.println(
              "Try '" + ex.getCommandLine().getCommandSpec().qualifiedName() + " --help' for the"
                  + " options and their defaults.");
          w.flush();
          return EXIT_USAGE;
        });
    cl.setExecutionStrategy(
        parseResult -> {
          if (parseResult.hasSubcommand()
              && !(parseResult.subcommand().commandSpec().userObject() instanceof Serve)) {
            Logging.quietForOneShotCommand();
          }
          return new CommandLine.RunLast().execute(parseResult);
        });
    cl.setExecutionExceptionHandler(
        (ex, c, parseResult) -> {
          PrintWriter w = c.getErr();
          if (ex instanceof ConfigException) {
            w.println("tidemark: " + ex.getMessage());
            w.flush();
            return EXIT_USAGE;
          }
          if (ex instanceof StartupException) {
            w.println("tidemark: " + ex.getMessage());
            w.flush();
            return EXIT_FAILURE;
          }
          throw ex;
        });
    return cl.execute(args);
  }

  @Override
  public Integer call() throws Exception {
    return options.serve(spec);
  }

  /**
   * The config a command line names, without starting anything (tests).
   *
   * @throws CommandLine.ParameterException for an unknown option
   * @throws ConfigException for a bad setting
   */
  static ServerConfig parseConfig(String... args) {
    Main main = new Main();
    CommandLine.ParseResult parsed = new CommandLine(main).parseArgs(args);
    if (parsed.hasSubcommand()) {
      Serve serve = (Serve) parsed.subcommand().commandSpec().userObject();
      return ServerConfig.load(serve.options.configFile, serve.options.overrides(serve.spec));
    }
    return ServerConfig.load(main.options.configFile, main.options.overrides(main.spec));
  }

  /** {@code tidemark serve}: the same as {@code tidemark} alone. */
  @Command(
      name = "serve",
      mixinStandardHelpOptions = true,
      versionProvider = Main.Version.class,
      sortOptions = false,
      usageHelpWidth = 100,
      customSynopsis = {"tidemark serve [OPTIONS]"},
      description = {"Runs the server.", ""})
  static final class Serve implements Callable<Integer> {
    @Mixin ServeOptions options;

    @Spec CommandSpec spec;

    @CommandLine.ParentCommand Main parent;

    @Override
    public Integer call() throws Exception {
      if (!parent.options.overrides(parent.spec).isEmpty() || parent.options.configFile != null) {
        throw new ConfigException("put the server options after 'serve': tidemark serve --retention 30d");
      }
      return options.serve(spec);
    }
  }

  /** The server's options: one per {@link ServerConfig#SETTINGS} entry, plus --config and --listen-all. */
  static final class ServeOptions {
    @Option(
        names = "--config",
        paramLabel = "FILE",
        description = "YAML file with settings (keys are the option names without '--').")
    Path configFile;

    @Option(
        names = "--data-dir",
        paramLabel = "DIR",
        description = "Folder of the embedded RocksDB store. Default: ./data")
    String dataDir;

    @Option(
        names = "--listen-address",
        paramLabel = "ADDR",
        description = "Address every port binds. Default: 127.0.0.1 (this machine only).")
    String listenAddress;

    @Option(
        names = "--listen-all",
        description = "Listen on all interfaces (0.0.0.0): exposes every port to the network.")
    boolean listenAll;

    @Option(names = "--otlp-grpc-port", paramLabel = "PORT", description = "OTLP/gRPC port. Default: 4317")
    String otlpGrpcPort;

    @Option(names = "--otlp-http-port", paramLabel = "PORT", description = "OTLP/HTTP port. Default: 4318")
    String otlpHttpPort;

    @Option(
        names = "--http-port",
        paramLabel = "PORT",
        description = "HTTP API port: /metrics, /-/healthy, /-/ready. Default: 9090")
    String httpPort;

    @Option(
        names = "--admin-port",
        paramLabel = "PORT",
        description = "Admin gRPC API port (tidemark admin), with gRPC health and reflection. Default: 9091")
    String adminPort;

    @Option(
        names = "--admin-token",
        paramLabel = "TOKEN",
        description = {
          "Bearer token every admin API call must carry (or env TIDEMARK_ADMIN_TOKEN).",
          "Default: none (the admin API is open to whoever reaches its port)."
        })
    String adminToken;

    @Option(names = "--retention", paramLabel = "DURATION", description = "How long data is kept (at least 1h). Default: 15d")
    String retention;

    @Option(
        names = "--out-of-order-window",
        paramLabel = "DURATION",
        description = "How far behind its series' newest sample a sample may arrive. Default: 30m")
    String outOfOrderWindow;

    @Option(
        names = "--max-future-skew",
        paramLabel = "DURATION",
        description = "How far ahead of the clock a sample may be. Default: 10m")
    String maxFutureSkew;

    @Option(
        names = "--fsync",
        negatable = true,
        description = {
          "Acknowledge exports only after an fsync (survives power loss; group commit).",
          "Default: false (acknowledged exports survive a process crash via the RocksDB WAL)."
        })
    Boolean fsync;

    @Option(
        names = "--head-memory-limit",
        paramLabel = "SIZE",
        description = {
          "Memory budget of the in-memory head; beyond it exports get UNAVAILABLE/503.",
          "Default: 4GiB or half the JVM's max heap, whichever is smaller."
        })
    String headMemoryLimit;

    @Option(names = "--block-cache-size", paramLabel = "SIZE", description = "RocksDB block cache. Default: 256MiB")
    String blockCacheSize;

    @Option(
        names = "--otlp-grpc-max-message-size",
        paramLabel = "SIZE",
        description = "Largest OTLP/gRPC message (after decompression). Default: 4MiB")
    String otlpGrpcMaxMessageSize;

    @Option(
        names = "--otlp-http-max-body-size",
        paramLabel = "SIZE",
        description = "Largest OTLP/HTTP body (after decompression). Default: 64MiB")
    String otlpHttpMaxBodySize;

    @Option(
        names = "--otlp-max-in-flight-size",
        paramLabel = "SIZE",
        description = "OTLP request bytes processed at once; beyond it UNAVAILABLE/503. Default: 256MiB")
    String otlpMaxInFlightSize;

    @Option(
        names = "--otlp-retry-after",
        paramLabel = "DURATION",
        description = "Retry delay suggested to overloaded clients. Default: 1s")
    String otlpRetryAfter;

    @Option(
        names = "--shutdown-timeout",
        paramLabel = "DURATION",
        description = "How long a stop waits for in-flight requests. Default: 30s")
    String shutdownTimeout;

    @Option(
        names = "--translation-strategy",
        paramLabel = "STRATEGY",
        description = {
          "OTLP to Prometheus names: UnderscoreEscapingWithSuffixes,",
          "UnderscoreEscapingWithoutSuffixes, NoUTF8EscapingWithSuffixes, NoTranslation.",
          "Default: UnderscoreEscapingWithSuffixes"
        })
    String translationStrategy;

    @Option(names = "--metric-namespace", paramLabel = "PREFIX", description = "Prefix for every metric name. Default: none")
    String metricNamespace;

    @Option(
        names = "--promote-resource-attributes",
        paramLabel = "ATTR,...",
        description = "Resource attributes added as labels to every series. Default: none")
    String promoteResourceAttributes;

    @Option(
        names = "--promote-all-resource-attributes",
        negatable = true,
        description = "Promote every resource attribute (except --ignore-resource-attributes). Default: false")
    Boolean promoteAllResourceAttributes;

    @Option(
        names = "--ignore-resource-attributes",
        paramLabel = "ATTR,...",
        description = "With --promote-all-resource-attributes: attributes not promoted. Default: none")
    String ignoreResourceAttributes;

    @Option(
        names = "--keep-identifying-resource-attributes",
        negatable = true,
        description = "Keep service.name, service.namespace, service.instance.id on target_info. Default: false")
    Boolean keepIdentifyingResourceAttributes;

    @Option(
        names = "--promote-scope-metadata",
        negatable = true,
        description = "Add otel_scope_name/version/... labels. Default: true")
    Boolean promoteScopeMetadata;

    @Option(
        names = "--external-labels",
        paramLabel = "NAME=VALUE,...",
        description = "Labels added to every series that lacks them. Default: none")
    String externalLabels;

    @Option(
        names = "--exponential-histogram-mode",
        paramLabel = "MODE",
        description = "classic (convert to _bucket{le}), count-sum-only or drop. Default: classic")
    String exponentialHistogramMode;

    @Option(
        names = "--exponential-histogram-scale",
        paramLabel = "N",
        description = "Target scale of the classic conversion, -4..8. Default: 2")
    String exponentialHistogramScale;

    @Option(
        names = "--exponential-histogram-max-buckets",
        paramLabel = "N",
        description = "Bucket cap per converted exponential series. Default: 160")
    String exponentialHistogramMaxBuckets;

    @Option(names = "--delta-mode", paramLabel = "MODE", description = "Delta temporality: accumulate or reject. Default: accumulate")
    String deltaMode;

    @Option(
        names = "--delta-max-stale",
        paramLabel = "DURATION",
        description = "A delta stream idle longer than this is forgotten. Default: 5m")
    String deltaMaxStale;

    @Option(names = "--delta-max-streams", paramLabel = "N", description = "Most delta streams accumulated at once. Default: 100000")
    String deltaMaxStreams;

    @Option(
        names = "--start-time-mode",
        paramLabel = "MODE",
        description = "Use of start_time_unix_nano: ignore or inject-zero. Default: ignore")
    String startTimeMode;

    @Option(
        names = "--zero-timestamp-policy",
        paramLabel = "POLICY",
        description = "Points with time_unix_nano 0: reject or use-receive-time. Default: reject")
    String zeroTimestampPolicy;

    @Option(names = "--le-format", paramLabel = "FORMAT", description = "le/quantile label values: go (1, 0.5) or openmetrics (1.0). Default: go")
    String leFormat;

    /** The settings given on this command line, by setting name. */
    Map<String, Object> overrides(CommandSpec spec) {
      Map<String, Object> out = new LinkedHashMap<>();
      for (OptionSpec o : spec.options()) {
        String name = o.longestName().replaceFirst("^--", "");
        if (!ServerConfig.SETTINGS.contains(name)) {
          continue;
        }
        Object v = o.getValue();
        if (v != null) {
          out.put(name, v);
        }
      }
      if (listenAll) {
        Object given = out.get("listen-address");
        if (given != null && !ServerConfig.ALL_INTERFACES.equals(String.valueOf(given).strip())) {
          throw new ConfigException(
              "--listen-all and --listen-address " + given + " contradict each other; give one");
        }
        out.put("listen-address", ServerConfig.ALL_INTERFACES);
      }
      return out;
    }

    int serve(CommandSpec spec) throws InterruptedException {
      ServerConfig config = ServerConfig.load(configFile, overrides(spec));
      TidemarkServer server = new TidemarkServer(config);
      Thread hook =
          new Thread(
              () -> {
                boolean clean = server.stop(); // waits for a start in progress first
                if (server.isStopped()) {
                  // The JVM would exit with 128 + signal (143 for SIGTERM); a completed graceful
                  // stop is a success. (A failed start is left to main, which reports it.)
                  Logging.flush();
                  Runtime.getRuntime().halt(clean ? EXIT_OK : EXIT_FAILURE);
                }
              },
              "tidemark-shutdown");
      Runtime.getRuntime().addShutdownHook(hook);
      try {
        server.start();
      } catch (StartupException e) {
        try {
          Runtime.getRuntime().removeShutdownHook(hook);
        } catch (IllegalStateException shuttingDown) {
          // a signal arrived during the start; the hook finds nothing to stop
        }
        throw e;
      }
      server.awaitStopped();
      return EXIT_OK;
    }
  }

  /** The version from the jar manifest ({@code Implementation-Version}), or "dev". */
  static String version() {
    String v = Main.class.getPackage().getImplementationVersion();
    return v == null ? "dev" : v;
  }

  static final class Version implements CommandLine.IVersionProvider {
    @Override
    public String[] getVersion() {
      return new String[] {"tidemark " + version(), "Java " + Runtime.version()};
    }
  }
}
