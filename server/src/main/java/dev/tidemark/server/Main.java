package dev.tidemark.server;

import dev.tidemark.server.admin.AdminCommand;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;
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
    modelTransformer = Main.ServeOptions.class,
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

  @Spec CommandSpec spec;

  private Main() {}

  public static void main(String[] args) {
    Logging.install();
    int code = run(args);
    Logging.flush();
    System.exit(code);
  }

  /**
   * One line for a word where a command expects one of its subcommands ({@code tidemark admin
   * frobnicate}), naming them; null for any other usage error.
   */
  static String unknownSubcommand(CommandLine.ParameterException ex) {
    CommandLine cmd = ex.getCommandLine();
    if (!(ex instanceof CommandLine.UnmatchedArgumentException u)
        || cmd.getSubcommands().isEmpty()
        || u.getUnmatched().isEmpty()
        || u.getUnmatched().get(0).startsWith("-")) {
      return null;
    }
    return cmd.getCommandSpec().qualifiedName()
        + ": unknown subcommand '"
        + u.getUnmatched().get(0)
        + "'; subcommands: "
        + String.join(", ", cmd.getSubcommands().keySet());
  }

  /** Runs the command line and returns the exit code (blocks while the server runs). */
  static int run(String... args) {
    return run(null, null, args);
  }

  /**
   * {@link #run(String...)} writing to {@code out} and {@code err} (null: the standard streams).
   */
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
          String unknown = unknownSubcommand(ex);
          if (unknown != null) {
            w.println(unknown);
            w.flush();
            return EXIT_USAGE;
          }
          w.println("tidemark: " + ex.getMessage());
          w.println(
              "Try '"
                  + ex.getCommandLine().getCommandSpec().qualifiedName()
                  + " --help' for the"
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
    return ServeOptions.serve(spec);
  }

  /**
   * The config a command line names, without starting anything (tests).
   *
   * @throws CommandLine.ParameterException for an unknown option
   * @throws ConfigException for a bad setting
   */
  static ServerConfig parseConfig(String... args) {
    CommandLine.ParseResult parsed = new CommandLine(new Main()).parseArgs(args);
    return ServeOptions.load(
        parsed.hasSubcommand() ? parsed.subcommand().commandSpec() : parsed.commandSpec());
  }

  /** {@code tidemark serve}: the same as {@code tidemark} alone. */
  @Command(
      name = "serve",
      mixinStandardHelpOptions = true,
      versionProvider = Main.Version.class,
      sortOptions = false,
      usageHelpWidth = 100,
      customSynopsis = {"tidemark serve [OPTIONS]"},
      description = {"Runs the server.", ""},
      modelTransformer = Main.ServeOptions.class)
  static final class Serve implements Callable<Integer> {
    @Spec CommandSpec spec;

    @CommandLine.ParentCommand Main parent;

    @Override
    public Integer call() throws Exception {
      if (ServeOptions.anyGiven(parent.spec)) {
        throw new ConfigException(
            "put the server options after 'serve': tidemark serve --retention 30d");
      }
      return ServeOptions.serve(spec);
    }
  }

  /**
   * The server's options, which picocli adds to {@code tidemark} and to {@code tidemark serve} when
   * it builds their specs: {@code --config}, one option per setting declared in {@link
   * Settings#ALL} (name, value label, description and default from the declaration; booleans are
   * negatable: {@code --[no-]fsync}), and {@code --listen-all}, shown after {@code
   * --listen-address}. The options hold the text as given (null when absent); {@link
   * ServerConfig#load} parses it with the declaration's parser, so a value is checked, and its
   * message worded, the same way whether it comes from the command line or from the file.
   */
  static final class ServeOptions implements CommandLine.IModelTransformer {
    static final String CONFIG = "--config";
    static final String LISTEN_ALL = "--listen-all";

    @Override
    public CommandSpec transform(CommandSpec spec) {
      // -h and -V (mixinStandardHelpOptions) are already in; move them after the server's options
      List<OptionSpec> standard =
          spec.options().stream().filter(o -> o.usageHelp() || o.versionHelp()).toList();
      standard.forEach(spec::remove);
      addServerOptions(spec);
      standard.forEach(spec::addOption);
      return spec;
    }

    private static void addServerOptions(CommandSpec spec) {
      spec.addOption(
          OptionSpec.builder(CONFIG)
              .paramLabel("FILE")
              .type(Path.class)
              .description("YAML file with settings (keys are the option names without '--').")
              .build());
      Setting<?> listenAddress = Settings.named("listen-address");
      for (Setting<?> s : Settings.ALL) {
        spec.addOption(optionOf(s));
        if (s == listenAddress) {
          spec.addOption(
              OptionSpec.builder(LISTEN_ALL)
                  .type(Boolean.class)
                  .description(
                      "Same as --listen-address "
                          + ServerConfig.ALL_INTERFACES
                          + ": exposes every port on all interfaces.")
                  .build());
        }
      }
    }

    /**
     * The option of one setting: {@code --retention=DURATION}, or a negatable flag for a boolean.
     */
    static OptionSpec optionOf(Setting<?> s) {
      OptionSpec.Builder o = OptionSpec.builder("--" + s.name()).description(helpText(s));
      if (s.isFlag()) {
        o.type(Boolean.class).negatable(true);
      } else if (s.repeatable()) {
        o.type(List.class).auxiliaryTypes(String.class).paramLabel(s.valueLabel());
      } else {
        o.type(String.class).paramLabel(s.valueLabel());
      }
      return o.build();
    }

    /**
     * The setting's line in {@code --help}: its description, capitalized as a sentence, and its
     * default, both without Markdown ({@code %} doubled: picocli reads descriptions as format
     * strings).
     */
    static String helpText(Setting<?> s) {
      String d = s.description();
      if (!d.startsWith(
          "`")) { // a sentence, unless it starts with a literal value ("`classic` (...)")
        d = Character.toUpperCase(d.charAt(0)) + d.substring(1);
      }
      return (Setting.plain(d) + ". Default: " + Setting.plain(s.shownDefault()))
          .replace("%", "%%");
    }

    /**
     * The config the options of {@code spec} (a parsed {@code tidemark} or {@code tidemark serve})
     * name.
     */
    static ServerConfig load(CommandSpec spec) {
      return ServerConfig.load(configFile(spec), overrides(spec));
    }

    static Path configFile(CommandSpec spec) {
      return spec.findOption(CONFIG).getValue();
    }

    /** Whether any server option was given on {@code spec}'s command line. */
    static boolean anyGiven(CommandSpec spec) {
      return configFile(spec) != null || listenAll(spec) || !settingsGiven(spec).isEmpty();
    }

    private static boolean listenAll(CommandSpec spec) {
      return Boolean.TRUE.equals(spec.findOption(LISTEN_ALL).getValue());
    }

    /** The settings given as options, by setting name, as given. */
    private static Map<String, Object> settingsGiven(CommandSpec spec) {
      Map<String, Object> out = new LinkedHashMap<>();
      for (Setting<?> s : Settings.ALL) {
        Object v = spec.findOption("--" + s.name()).getValue();
        if (v != null) {
          out.put(s.name(), v);
        }
      }
      return out;
    }

    /**
     * The settings given on this command line, by setting name, with {@code --listen-all} applied.
     */
    static Map<String, Object> overrides(CommandSpec spec) {
      Map<String, Object> out = settingsGiven(spec);
      if (listenAll(spec)) {
        Object given = out.get("listen-address");
        if (given != null && !ServerConfig.ALL_INTERFACES.equals(String.valueOf(given).strip())) {
          throw new ConfigException(
              LISTEN_ALL + " and --listen-address " + given + " contradict each other; give one");
        }
        out.put(Settings.named("listen-address").name(), ServerConfig.ALL_INTERFACES);
      }
      return out;
    }

    static int serve(CommandSpec spec) throws InterruptedException {
      ServerConfig config = load(spec);
      Logging.format(config.logFormat());
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
      reloadOnSighup(server);
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

  /**
   * SIGHUP reloads the configuration ({@link TidemarkServer#reload()}) instead of stopping the
   * process, as in Prometheus. The outcome is logged by the reload.
   */
  /** The start of the warning logged when SIGHUP cannot reload (the tests look for it). */
  static final String SIGHUP_IGNORED = "SIGHUP is ignored and does not reload the configuration";

  @SuppressWarnings(
      "sunapi") // sun.misc.Signal: the JDK's only way to handle SIGHUP (jdk.unsupported)
  static void reloadOnSighup(TidemarkServer server) {
    try {
      sun.misc.SignalHandler before =
          sun.misc.Signal.handle(
              new sun.misc.Signal("HUP"),
              signal -> {
                System.getLogger(Main.class.getName())
                    .log(System.Logger.Level.INFO, "SIGHUP: reloading the configuration");
                server.reload();
              });
      if (before == sun.misc.SignalHandler.SIG_IGN) {
        // The process was started with SIGHUP ignored (nohup, or a parent that ignores it): the
        // JVM then leaves it ignored and installs nothing (HotSpot's JVM_RegisterSignal).
        System.getLogger(Main.class.getName())
            .log(
                System.Logger.Level.WARNING,
                SIGHUP_IGNORED
                    + " (the process was started with SIGHUP ignored, as nohup does):"
                    + " reload with POST /-/reload (--web-enable-lifecycle)");
      }
    } catch (IllegalArgumentException e) { // -Xrs, or a platform without SIGHUP
      System.getLogger(Main.class.getName())
          .log(
              System.Logger.Level.WARNING,
              "cannot handle SIGHUP (" + e.getMessage() + "): reload with POST /-/reload");
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
