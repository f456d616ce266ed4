package dev.tidemark.server.admin;

import dev.tidemark.admin.v1.AdminServiceGrpc;
import dev.tidemark.admin.v1.Selection;
import dev.tidemark.receiver.ErrorMessages;
import dev.tidemark.server.text.ConfigValues;
import dev.tidemark.tsdb.query.LabelMatcher;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.MetadataUtils;
import java.io.PrintWriter;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * What every {@code tidemark admin} command shares: the connection options ({@code --address},
 * {@code --token}, {@code --timeout}) and {@code --json}, the channel and the call, the mapping of
 * errors to one line on standard error and an exit code ({@link AdminCommand}), and the syntax of
 * the arguments (times, durations, selectors). A command implements {@link #run} and hands its
 * answer to the {@link AdminOutput} that {@code --json} chose.
 */
abstract class AdminSubcommand implements Callable<Integer> {
  @Spec CommandSpec spec;

  @Option(
      names = {"-h", "--help"},
      usageHelp = true,
      description = "Show this help message and exit.")
  boolean help;

  @Option(
      names = "--address",
      paramLabel = "HOST:PORT",
      description = "Admin API address. Default: " + AdminCommand.DEFAULT_ADDRESS)
  String address = AdminCommand.DEFAULT_ADDRESS;

  @Option(
      names = "--token",
      paramLabel = "TOKEN",
      description = "Bearer token (the server's --admin-token). Default: env TIDEMARK_ADMIN_TOKEN")
  String token;

  @Option(names = "--json", description = "Print JSON instead of a table.")
  boolean json;

  @Option(
      names = "--timeout",
      paramLabel = "DURATION",
      description = "Deadline of the call. Default: 5m")
  String timeout = "5m";

  /** A bad command line found after parsing (selector, time, address): exit code 2. */
  static final class UsageException extends RuntimeException {
    UsageException(String message) {
      super(message);
    }
  }

  /** Runs the call(s) on {@code stub} and hands the answer to {@code output}. */
  abstract void run(AdminServiceGrpc.AdminServiceBlockingStub stub, AdminOutput output)
      throws Exception;

  @Override
  public final Integer call() throws Exception {
    PrintWriter out = spec.commandLine().getOut();
    PrintWriter err = spec.commandLine().getErr();
    String name = spec.qualifiedName();
    ManagedChannel channel = null;
    try {
      Duration deadline = duration("--timeout", timeout);
      String[] hostPort = hostPort(address);
      channel =
          Grpc.newChannelBuilderForAddress(
                  hostPort[0], Integer.parseInt(hostPort[1]), InsecureChannelCredentials.create())
              .maxInboundMessageSize(64 << 20)
              .build();
      AdminServiceGrpc.AdminServiceBlockingStub stub =
          AdminServiceGrpc.newBlockingStub(channel)
              .withDeadlineAfter(deadline.toMillis(), TimeUnit.MILLISECONDS);
      String t = token != null ? token : System.getenv(AdminAuthInterceptor.TOKEN_ENV);
      if (t != null && !t.isEmpty()) {
        Metadata md = new Metadata();
        md.put(AdminAuthInterceptor.AUTHORIZATION, "Bearer " + t);
        stub = stub.withInterceptors(MetadataUtils.newAttachHeadersInterceptor(md));
      }
      run(stub, json ? new JsonOutput(out) : new TextOutput(out, err));
      out.flush();
      return AdminCommand.EXIT_OK;
    } catch (UsageException | IllegalArgumentException e) {
      out.flush();
      err.println(name + ": " + e.getMessage());
      err.println("Try '" + name + " --help'.");
      err.flush();
      return AdminCommand.EXIT_USAGE;
    } catch (StatusRuntimeException e) {
      out.flush();
      Status s = e.getStatus();
      String what =
          s.getDescription() != null
              ? s.getDescription()
              : ErrorMessages.describe(s.getCause(), "no detail");
      if (s.getCode() == Status.Code.UNAVAILABLE
          && s.getDescription() != null
          && s.getDescription().startsWith("io exception")) {
        what = "cannot reach the admin API at " + address + " (" + what + ")";
      }
      err.println(name + ": " + s.getCode() + ": " + what);
      err.flush();
      return s.getCode() == Status.Code.UNAUTHENTICATED
          ? AdminCommand.EXIT_UNAUTHENTICATED
          : AdminCommand.EXIT_RPC;
    } finally {
      if (channel != null) {
        channel.shutdownNow();
        channel.awaitTermination(5, TimeUnit.SECONDS);
      }
    }
  }

  /** Base of the commands that select series: selector, time range. */
  abstract static class Selecting extends AdminSubcommand {
    @Option(
        names = "--start",
        paramLabel = "TIME",
        description = "Start of the range (inclusive). Default: the beginning of time.")
    String start;

    @Option(
        names = "--end",
        paramLabel = "TIME",
        description = "End of the range (inclusive). Default: the end of time.")
    String end;

    Selection selection(String selector) {
      Selection.Builder b = Selection.newBuilder();
      if (selector != null && !selector.isBlank()) {
        List<LabelMatcher> matchers;
        try {
          matchers = SelectorParser.parse(selector);
        } catch (IllegalArgumentException e) {
          throw new UsageException(e.getMessage());
        }
        try {
          SelectorRule.check(matchers); // the server refuses it too; known here, it is exit code 2
        } catch (IllegalArgumentException e) {
          throw new UsageException("invalid selector '" + selector + "': " + e.getMessage());
        }
        for (LabelMatcher m : matchers) {
          b.addMatchers(toProto(m));
        }
      }
      Instant now = Instant.now();
      if (start != null) {
        b.setMinTimeMs(time("--start", start, now));
      }
      if (end != null) {
        b.setMaxTimeMs(time("--end", end, now));
      }
      return b.build();
    }
  }

  // ---- the arguments' syntax ----

  static long time(String option, String text, Instant now) {
    try {
      return TimeArgs.parse(text, now);
    } catch (IllegalArgumentException e) {
      throw new UsageException(option + ": " + e.getMessage());
    }
  }

  static Duration duration(String option, String text) {
    try {
      return ConfigValues.parseDuration(text);
    } catch (IllegalArgumentException e) {
      throw new UsageException("invalid " + option + " '" + text + "': " + e.getMessage());
    }
  }

  /** {@code host:port} or {@code [v6]:port} → {host, port}. */
  static String[] hostPort(String address) {
    String a = address.strip();
    int colon = a.lastIndexOf(':');
    if (colon <= 0 || colon == a.length() - 1) {
      throw new UsageException(
          "invalid --address '"
              + address
              + "': expected HOST:PORT, e.g. "
              + AdminCommand.DEFAULT_ADDRESS);
    }
    String host = a.substring(0, colon);
    if (host.startsWith("[") && host.endsWith("]")) {
      host = host.substring(1, host.length() - 1);
    }
    String port = a.substring(colon + 1);
    try {
      int p = Integer.parseInt(port);
      if (p < 1 || p > 65535) {
        throw new NumberFormatException();
      }
    } catch (NumberFormatException e) {
      throw new UsageException("invalid --address '" + address + "': port must be 1..65535");
    }
    return new String[] {host, port};
  }

  static dev.tidemark.admin.v1.LabelMatcher toProto(LabelMatcher m) {
    dev.tidemark.admin.v1.LabelMatcher.Op op =
        switch (m.op()) {
          case EQUAL -> dev.tidemark.admin.v1.LabelMatcher.Op.EQUAL;
          case NOT_EQUAL -> dev.tidemark.admin.v1.LabelMatcher.Op.NOT_EQUAL;
          case REGEX -> dev.tidemark.admin.v1.LabelMatcher.Op.REGEX;
          case NOT_REGEX -> dev.tidemark.admin.v1.LabelMatcher.Op.NOT_REGEX;
        };
    return dev.tidemark.admin.v1.LabelMatcher.newBuilder()
        .setName(m.name())
        .setOp(op)
        .setValue(m.value())
        .build();
  }
}
