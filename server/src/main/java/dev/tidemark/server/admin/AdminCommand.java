package dev.tidemark.server.admin;

import java.io.PrintWriter;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code tidemark admin COMMAND}: a client of the admin gRPC API ({@code admin.proto}), one
 * subcommand per RPC. Output is a human-readable table, or JSON with {@code --json} (proto field
 * names; 64-bit integers as numbers; raw value bits as {@code "0x..."} strings; NaN and infinities
 * as strings; labels as objects). {@code read} streams: its table and its JSON, JSON Lines with one
 * object per series, are written as the server's messages arrive.
 *
 * <p>Layout, as promtool's {@code cmd/promtool} (a file per area): this class wires the commands;
 * {@link AdminSubcommand} is what every command shares (connection options, the call, errors and
 * exit codes, the arguments' syntax); the commands are grouped by area, {@link StatusCommands}
 * ({@code status}, {@code buckets}), {@link QueryCommands} ({@code label-names}, {@code
 * label-values}, {@code series}, {@code read}) and {@link StoreCommands} ({@code delete}, {@code
 * flush}, {@code compact}, {@code checkpoint}, {@code set-retention}, {@code apply-retention}); a
 * command hands its answer to an {@link AdminOutput}, chosen once by {@code --json}: {@link
 * TextOutput} or {@link JsonOutput}.
 *
 * <p>Exit codes: {@value #EXIT_OK} success; {@value #EXIT_RPC} the server refused or failed the
 * call, or cannot be reached; {@value #EXIT_USAGE} a bad command line (unknown option, unparsable
 * selector, time or duration); {@value #EXIT_UNAUTHENTICATED} the server wants a (different) token.
 * Errors are one line on standard error.
 */
@Command(
    name = "admin",
    usageHelpWidth = 100,
    synopsisSubcommandLabel = "COMMAND",
    description = {
      "Administers a running Tidemark server through its admin gRPC API (default 127.0.0.1:9091).",
      ""
    },
    subcommands = {
      StatusCommands.Status.class,
      StatusCommands.Buckets.class,
      QueryCommands.LabelNames.class,
      QueryCommands.LabelValues.class,
      QueryCommands.Series.class,
      QueryCommands.Read.class,
      StoreCommands.Delete.class,
      StoreCommands.Flush.class,
      StoreCommands.Compact.class,
      StoreCommands.Checkpoint.class,
      StoreCommands.SetRetention.class,
      StoreCommands.ApplyRetention.class
    },
    footer = {
      "",
      "Every command takes --address HOST:PORT, --token TOKEN (or env TIDEMARK_ADMIN_TOKEN),",
      "--json and --timeout. Selectors: 'up{job=\"a\",__name__=~\"http_.*\"}' (=, !=, =~, !~);",
      "as in PromQL, at least one matcher must not match the empty string ('{job=~\".*\"}' is refused).",
      "Times: RFC 3339 (2026-11-22T03:00:00Z), epoch milliseconds, now, -1h, now-30m.",
      "",
      "Exit codes: 0 ok, 1 the server refused or failed the call (or is unreachable),",
      "2 bad command line, 3 unauthenticated (missing or wrong token)."
    })
public final class AdminCommand implements Callable<Integer> {

  public static final int EXIT_OK = 0;
  public static final int EXIT_RPC = 1;
  public static final int EXIT_USAGE = 2;
  public static final int EXIT_UNAUTHENTICATED = 3;

  /** The default {@code --address}: the server's default listen address and admin port. */
  public static final String DEFAULT_ADDRESS = "127.0.0.1:" + AdminServer.DEFAULT_PORT;

  @Spec CommandSpec spec;

  @Option(
      names = {"-h", "--help"},
      usageHelp = true,
      description = "Show this help message and exit.")
  boolean help;

  @Override
  public Integer call() {
    PrintWriter err = spec.commandLine().getErr();
    err.println("tidemark admin: a command is required");
    spec.commandLine().usage(err);
    return EXIT_USAGE;
  }
}
