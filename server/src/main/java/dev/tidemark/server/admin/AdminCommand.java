package dev.tidemark.server.admin;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.io.SerializedString;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.Message;
import dev.tidemark.admin.v1.AdminServiceGrpc;
import dev.tidemark.admin.v1.ApplyRetentionRequest;
import dev.tidemark.admin.v1.ApplyRetentionResponse;
import dev.tidemark.admin.v1.Bucket;
import dev.tidemark.admin.v1.BucketSeries;
import dev.tidemark.admin.v1.CompactRequest;
import dev.tidemark.admin.v1.CompactResponse;
import dev.tidemark.admin.v1.CreateCheckpointRequest;
import dev.tidemark.admin.v1.CreateCheckpointResponse;
import dev.tidemark.admin.v1.DeleteSeriesRequest;
import dev.tidemark.admin.v1.DeleteSeriesResponse;
import dev.tidemark.admin.v1.FindSeriesRequest;
import dev.tidemark.admin.v1.FindSeriesResponse;
import dev.tidemark.admin.v1.FlushRequest;
import dev.tidemark.admin.v1.FlushResponse;
import dev.tidemark.admin.v1.GetStatusRequest;
import dev.tidemark.admin.v1.GetStatusResponse;
import dev.tidemark.admin.v1.Label;
import dev.tidemark.admin.v1.LabelNamesRequest;
import dev.tidemark.admin.v1.LabelNamesResponse;
import dev.tidemark.admin.v1.LabelValuesRequest;
import dev.tidemark.admin.v1.LabelValuesResponse;
import dev.tidemark.admin.v1.ListBucketsRequest;
import dev.tidemark.admin.v1.ListBucketsResponse;
import dev.tidemark.admin.v1.ReadSamplesRequest;
import dev.tidemark.admin.v1.Sample;
import dev.tidemark.admin.v1.Selection;
import dev.tidemark.admin.v1.SeriesSamples;
import dev.tidemark.admin.v1.SetRetentionRequest;
import dev.tidemark.admin.v1.SetRetentionResponse;
import dev.tidemark.receiver.ErrorMessages;
import dev.tidemark.server.text.ConfigValues;
import dev.tidemark.tsdb.model.PromText;
import dev.tidemark.tsdb.query.LabelMatcher;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.MetadataUtils;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code tidemark admin COMMAND}: a client of the admin gRPC API ({@code admin.proto}), one
 * subcommand per RPC. Output is a human-readable table, or JSON with {@code --json} (proto field
 * names; 64-bit integers as numbers; raw value bits as {@code "0x..."} strings; NaN and infinities
 * as strings; labels as objects). {@code read} streams: its table and its JSON, JSON Lines with one
 * object per series, are written as the server's messages arrive.
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
      AdminCommand.StatusCmd.class,
      AdminCommand.BucketsCmd.class,
      AdminCommand.LabelNamesCmd.class,
      AdminCommand.LabelValuesCmd.class,
      AdminCommand.SeriesCmd.class,
      AdminCommand.ReadCmd.class,
      AdminCommand.DeleteCmd.class,
      AdminCommand.FlushCmd.class,
      AdminCommand.CompactCmd.class,
      AdminCommand.CheckpointCmd.class,
      AdminCommand.SetRetentionCmd.class,
      AdminCommand.ApplyRetentionCmd.class
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

  private static final ObjectMapper JSON =
      new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

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

  /** A bad command line found after parsing (selector, time, address): exit code 2. */
  static final class UsageException extends RuntimeException {
    UsageException(String message) {
      super(message);
    }
  }

  /** What every admin command shares: connection options, the call, error mapping, output. */
  abstract static class Base implements Callable<Integer> {
    @Spec CommandSpec spec;

    @Option(
        names = {"-h", "--help"},
        usageHelp = true,
        description = "Show this help message and exit.")
    boolean help;

    @Option(
        names = "--address",
        paramLabel = "HOST:PORT",
        description = "Admin API address. Default: " + DEFAULT_ADDRESS)
    String address = DEFAULT_ADDRESS;

    @Option(
        names = "--token",
        paramLabel = "TOKEN",
        description =
            "Bearer token (the server's --admin-token). Default: env TIDEMARK_ADMIN_TOKEN")
    String token;

    @Option(names = "--json", description = "Print JSON instead of a table.")
    boolean json;

    @Option(
        names = "--timeout",
        paramLabel = "DURATION",
        description = "Deadline of the call. Default: 5m")
    String timeout = "5m";

    PrintWriter out;

    /** Runs the call(s) on {@code stub} and prints the result. */
    abstract void run(AdminServiceGrpc.AdminServiceBlockingStub stub) throws Exception;

    @Override
    public final Integer call() throws Exception {
      out = spec.commandLine().getOut();
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
        run(stub);
        out.flush();
        return EXIT_OK;
      } catch (UsageException | IllegalArgumentException e) {
        out.flush();
        err.println(name + ": " + e.getMessage());
        err.println("Try '" + name + " --help'.");
        err.flush();
        return EXIT_USAGE;
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
        return s.getCode() == Status.Code.UNAUTHENTICATED ? EXIT_UNAUTHENTICATED : EXIT_RPC;
      } finally {
        if (channel != null) {
          channel.shutdownNow();
          channel.awaitTermination(5, TimeUnit.SECONDS);
        }
      }
    }

    /** A note on standard error when the server cut the answer at --limit. */
    void truncated(boolean truncated) {
      if (truncated) {
        spec.commandLine().getErr().println("(truncated at --limit; more matched)");
      }
    }

    void printJson(JsonNode node) throws Exception {
      out.println(JSON.writeValueAsString(node));
    }
  }

  /** Base of the commands that select series: selector, time range, limit. */
  abstract static class Selecting extends Base {
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

  @Command(
      name = "status",
      usageHelpWidth = 100,
      description =
          "Version, uptime, data folder, schema, retention, head, ingestion, disk, series per bucket.")
  static final class StatusCmd extends Base {
    @Override
    void run(AdminServiceGrpc.AdminServiceBlockingStub stub) throws Exception {
      GetStatusResponse r = stub.getStatus(GetStatusRequest.getDefaultInstance());
      if (json) {
        printJson(toJson(r));
        return;
      }
      List<String[]> rows = new ArrayList<>();
      rows.add(new String[] {"version", r.getVersion()});
      rows.add(new String[] {"started", TimeArgs.format(r.getStartTimeMs())});
      rows.add(
          new String[] {
            "uptime", PromText.formatDuration(Duration.ofSeconds(r.getUptimeMs() / 1000))
          });
      rows.add(new String[] {"data folder", r.getDataDir()});
      rows.add(new String[] {"schema version", Integer.toString(r.getSchemaVersion())});
      rows.add(new String[] {"retention", r.getRetention()});
      rows.add(new String[] {"head series", Long.toString(r.getHeadSeries())});
      rows.add(new String[] {"head bytes", bytes(r.getHeadBytes())});
      rows.add(new String[] {"buckets", r.getBuckets() + " (" + r.getOpenBuckets() + " open)"});
      rows.add(new String[] {"samples ingested", Long.toString(r.getSamplesIngested())});
      rows.add(new String[] {"samples rejected", Long.toString(r.getSamplesRejected())});
      rows.add(new String[] {"bytes on disk", bytes(r.getBytesOnDisk())});
      if (r.hasHeadMaxTimeMs()) {
        rows.add(new String[] {"newest sample", TimeArgs.format(r.getHeadMaxTimeMs())});
      }
      table(out, null, rows);
      if (r.getSeriesPerBucketCount() > 0) {
        out.println();
        List<String[]> buckets = new ArrayList<>();
        for (BucketSeries b : r.getSeriesPerBucketList()) {
          buckets.add(
              new String[] {TimeArgs.format(b.getStartTimeMs()), Long.toString(b.getSeries())});
        }
        table(out, new String[] {"BUCKET", "SERIES"}, buckets);
      }
    }
  }

  @Command(
      name = "buckets",
      usageHelpWidth = 100,
      description = "Every bucket with data, oldest first: start, size, state, series, bytes.")
  static final class BucketsCmd extends Base {
    @Override
    void run(AdminServiceGrpc.AdminServiceBlockingStub stub) throws Exception {
      ListBucketsResponse r = stub.listBuckets(ListBucketsRequest.getDefaultInstance());
      if (json) {
        printJson(toJson(r));
        return;
      }
      List<String[]> rows = new ArrayList<>();
      for (Bucket b : r.getBucketsList()) {
        rows.add(
            new String[] {
              TimeArgs.format(b.getStartTimeMs()),
              PromText.formatDuration(Duration.ofMillis(b.getSizeMs())),
              b.getOpen() ? "open" : "sealed",
              Long.toString(b.getSeriesCount()),
              bytes(b.getBytes())
            });
      }
      table(out, new String[] {"START", "SIZE", "STATE", "SERIES", "BYTES"}, rows);
    }
  }

  @Command(
      name = "label-names",
      usageHelpWidth = 100,
      description = "Label names of the matching series (all series without a selector), sorted.")
  static final class LabelNamesCmd extends Selecting {
    @Parameters(arity = "0..1", paramLabel = "SELECTOR", description = "e.g. '{job=\"a\"}'")
    String selector;

    @Option(
        names = "--limit",
        paramLabel = "N",
        description = "At most N names. Default: 0 (no limit)")
    int limit;

    @Override
    void run(AdminServiceGrpc.AdminServiceBlockingStub stub) throws Exception {
      LabelNamesResponse r =
          stub.labelNames(
              LabelNamesRequest.newBuilder()
                  .setSelection(selection(selector))
                  .setLimit(limit)
                  .build());
      if (json) {
        printJson(toJson(r));
        return;
      }
      r.getNamesList().forEach(out::println);
      truncated(r.getTruncated());
    }
  }

  @Command(
      name = "label-values",
      usageHelpWidth = 100,
      description = "Values of label NAME among the matching series, sorted.")
  static final class LabelValuesCmd extends Selecting {
    @Parameters(index = "0", paramLabel = "NAME", description = "Label name, e.g. job or __name__")
    String name;

    @Parameters(
        index = "1",
        arity = "0..1",
        paramLabel = "SELECTOR",
        description = "e.g. '{job=\"a\"}'")
    String selector;

    @Option(
        names = "--limit",
        paramLabel = "N",
        description = "At most N values. Default: 0 (no limit)")
    int limit;

    @Override
    void run(AdminServiceGrpc.AdminServiceBlockingStub stub) throws Exception {
      LabelValuesResponse r =
          stub.labelValues(
              LabelValuesRequest.newBuilder()
                  .setName(name)
                  .setSelection(selection(selector))
                  .setLimit(limit)
                  .build());
      if (json) {
        printJson(toJson(r));
        return;
      }
      r.getValuesList().forEach(out::println);
      truncated(r.getTruncated());
    }
  }

  @Command(
      name = "series",
      usageHelpWidth = 100,
      description = "Label sets of the matching series, one per line, sorted.")
  static final class SeriesCmd extends Selecting {
    @Parameters(arity = "0..1", paramLabel = "SELECTOR", description = "e.g. 'up{job=\"a\"}'")
    String selector;

    @Option(
        names = "--limit",
        paramLabel = "N",
        description = "At most N series. Default: 0 (no limit)")
    int limit;

    @Override
    void run(AdminServiceGrpc.AdminServiceBlockingStub stub) throws Exception {
      FindSeriesResponse r =
          stub.findSeries(
              FindSeriesRequest.newBuilder()
                  .setSelection(selection(selector))
                  .setLimit(limit)
                  .build());
      if (json) {
        printJson(toJson(r));
        return;
      }
      for (dev.tidemark.admin.v1.Series s : r.getSeriesList()) {
        out.println(formatLabels(s.getLabelsList()));
      }
      truncated(r.getTruncated());
    }
  }

  @Command(
      name = "read",
      usageHelpWidth = 100,
      description = {
        "Raw samples of the matching series, value bits exact, printed as the server sends them.",
        "Prints time, milliseconds and value per sample; staleness markers show as 'stale', other",
        "NaNs with their bits. --json prints JSON Lines: one object per series and line,",
        "{\"labels\":{...},\"samples\":[{\"timestamp_ms\":...,\"value_bits\":\"0x...\",\"value\":...,",
        "\"stale\":false},...]} (non-finite values as \"NaN\", \"+Inf\", \"-Inf\"); nothing for no series.",
        "If the call fails midway, the series printed so far stand and the last line may be cut off."
      })
  static final class ReadCmd extends Selecting {
    @Parameters(arity = "0..1", paramLabel = "SELECTOR", description = "e.g. 'up{job=\"a\"}'")
    String selector;

    @Option(
        names = "--limit",
        paramLabel = "N",
        description = "At most N series. Default: 0 (no limit)")
    int limit;

    @Override
    void run(AdminServiceGrpc.AdminServiceBlockingStub stub) throws Exception {
      ReadSamplesRequest request =
          ReadSamplesRequest.newBuilder().setSelection(selection(selector)).setLimit(limit).build();
      SamplesOutput output = json ? new JsonLinesOutput(out) : new TableOutput(out);
      // The messages are written on the transport thread as they arrive, each asking for the next
      // one from there (gRPC's automatic flow control): no hand-over to this thread per message
      // (a blocking stub's iterator wakes it and the transport for every message), and never more
      // than one message held. This thread waits for the end.
      CompletableFuture<Void> done = new CompletableFuture<>();
      AdminServiceGrpc.newStub(stub.getChannel()) // the channel with the token's interceptor
          .withDeadline(stub.getCallOptions().getDeadline())
          .withExecutor(Runnable::run)
          .readSamples(
              request,
              new StreamObserver<>() {
                @Override
                public void onNext(SeriesSamples s) {
                  try {
                    output.add(s);
                  } catch (IOException e) {
                    throw new UncheckedIOException(e); // gRPC cancels the call
                  }
                }

                @Override
                public void onError(Throwable t) {
                  done.completeExceptionally(t);
                }

                @Override
                public void onCompleted() {
                  done.complete(null);
                }
              });
      try {
        done.get();
        output.end();
      } catch (ExecutionException e) {
        if (e.getCause() instanceof RuntimeException r) {
          throw r; // a StatusRuntimeException, which Base maps to an exit code
        }
        throw e;
      } finally {
        output.flush();
      }
    }
  }

  /**
   * {@code read}'s output, fed the {@link SeriesSamples} messages as they arrive (the consecutive
   * messages of one series, which the server splits after 10000 samples, make one series); holds no
   * more than the current series' labels.
   */
  interface SamplesOutput {
    /** Writes the message's samples, after the series' start if the labels are new. */
    void add(SeriesSamples s) throws IOException;

    /** Ends the last series: the answer is complete. */
    void end() throws IOException;

    /** Passes what is buffered on, also after an error (an unfinished series stays unfinished). */
    void flush() throws IOException;
  }

  /**
   * {@code read}'s table: a series' labels, then one line per sample (time, milliseconds, value), a
   * blank line between series. Flushed at the end, not per line (picocli's standard out flushes on
   * every println: a write to the terminal or pipe per sample).
   */
  static final class TableOutput implements SamplesOutput {
    private final PrintWriter w;
    private final StringBuilder line = new StringBuilder(80);
    private List<Label> current;

    TableOutput(PrintWriter out) {
      this.w = new PrintWriter(out, false); // its println does not flush out
    }

    @Override
    public void add(SeriesSamples s) {
      if (!s.getLabelsList().equals(current)) {
        if (current != null) {
          w.println();
        }
        current = s.getLabelsList();
        w.println(formatLabels(current));
      }
      for (Sample sample : s.getSamplesList()) {
        line.setLength(0);
        line.append("  ")
            .append(TimeArgs.format(sample.getTimestampMs()))
            .append("  ")
            .append(sample.getTimestampMs())
            .append("  ")
            .append(formatValue(sample));
        w.println(line);
      }
    }

    @Override
    public void end() {}

    @Override
    public void flush() {
      w.flush();
    }
  }

  private static final SerializedString LABELS = new SerializedString("labels");
  private static final SerializedString SAMPLES = new SerializedString("samples");
  private static final SerializedString TIMESTAMP_MS = new SerializedString("timestamp_ms");
  private static final SerializedString VALUE_BITS = new SerializedString("value_bits");
  private static final SerializedString VALUE = new SerializedString("value");
  private static final SerializedString STALE = new SerializedString("stale");
  private static final char[] HEX = "0123456789abcdef".toCharArray();

  /**
   * {@code read --json}: JSON Lines written with Jackson's streaming generator, one object per
   * series, {@code {"labels":{...},"samples":[...]}}, each sample field by field as {@link
   * #toJson(Message)} prints a {@link Sample}. {@link #flush()} does not close what is open: a
   * series cut off by an error is an unfinished line, never a complete-looking object.
   */
  static final class JsonLinesOutput implements SamplesOutput {
    private final JsonGenerator g;
    private final char[] bits = {'0', 'x', 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    private List<Label> current;

    JsonLinesOutput(Writer out) throws IOException {
      g = JSON.getFactory().createGenerator(out);
      g.disable(JsonGenerator.Feature.AUTO_CLOSE_TARGET);
      g.disable(JsonGenerator.Feature.AUTO_CLOSE_JSON_CONTENT);
      g.setRootValueSeparator(null); // the newline after each object separates them
    }

    @Override
    public void add(SeriesSamples s) throws IOException {
      if (!s.getLabelsList().equals(current)) {
        end();
        current = s.getLabelsList();
        g.writeStartObject();
        g.writeFieldName(LABELS);
        g.writeStartObject();
        for (Label l : current) {
          g.writeStringField(l.getName(), l.getValue());
        }
        g.writeEndObject();
        g.writeFieldName(SAMPLES);
        g.writeStartArray();
      }
      for (Sample sample : s.getSamplesList()) {
        g.writeStartObject();
        g.writeFieldName(TIMESTAMP_MS);
        g.writeNumber(sample.getTimestampMs());
        g.writeFieldName(VALUE_BITS);
        long b = sample.getValueBits();
        for (int i = 17; i >= 2; i--, b >>>= 4) {
          bits[i] = HEX[(int) b & 0xf]; // "0x%016x"
        }
        g.writeString(bits, 0, bits.length);
        g.writeFieldName(VALUE);
        double v = sample.getValue();
        if (Double.isFinite(v)) {
          g.writeNumber(v);
        } else {
          g.writeString(Double.isNaN(v) ? "NaN" : v > 0 ? "+Inf" : "-Inf");
        }
        g.writeFieldName(STALE);
        g.writeBoolean(sample.getStale());
        g.writeEndObject();
      }
    }

    @Override
    public void end() throws IOException {
      if (current != null) {
        g.writeEndArray();
        g.writeEndObject();
        g.writeRaw('\n');
        current = null;
      }
    }

    @Override
    public void flush() throws IOException {
      g.flush();
    }
  }

  @Command(
      name = "delete",
      usageHelpWidth = 100,
      description = {
        "Deletes the matching samples in the range, for good.",
        "Whole buckets are dropped, partly covered ones rewritten, the space reclaimed by",
        "compaction; a restart does not bring the samples back."
      })
  static final class DeleteCmd extends Selecting {
    @Parameters(
        arity = "1",
        paramLabel = "SELECTOR",
        description = "At least one matcher, e.g. '{job=\"a\"}'")
    String selector;

    @Override
    void run(AdminServiceGrpc.AdminServiceBlockingStub stub) throws Exception {
      Selection sel = selection(selector);
      if (sel.getMatchersCount() == 0) {
        throw new UsageException("delete needs at least one matcher, e.g. '{job=\"a\"}'");
      }
      DeleteSeriesResponse r =
          stub.deleteSeries(DeleteSeriesRequest.newBuilder().setSelection(sel).build());
      if (json) {
        printJson(toJson(r));
        return;
      }
      out.printf(
          Locale.ROOT,
          "deleted %d samples of %d series in %d buckets (%.3f s)%n",
          r.getSamples(),
          r.getSeries(),
          r.getBuckets(),
          r.getDurationMs() / 1000.0);
    }
  }

  @Command(
      name = "flush",
      usageHelpWidth = 100,
      description = "Seals every open head bucket into the store now.")
  static final class FlushCmd extends Base {
    @Override
    void run(AdminServiceGrpc.AdminServiceBlockingStub stub) throws Exception {
      FlushResponse r = stub.flush(FlushRequest.getDefaultInstance());
      if (json) {
        printJson(toJson(r));
        return;
      }
      out.printf(
          Locale.ROOT,
          "sealed %d buckets (%d series) in %.3f s%n",
          r.getBucketsSealed(),
          r.getSeriesSealed(),
          r.getDurationMs() / 1000.0);
    }
  }

  @Command(
      name = "compact",
      usageHelpWidth = 100,
      description = "Compacts the store: the buckets overlapping --start/--end, or everything.")
  static final class CompactCmd extends Base {
    @Option(
        names = "--start",
        paramLabel = "TIME",
        description = "Start of the range. Default: with --end, the beginning of time.")
    String start;

    @Option(
        names = "--end",
        paramLabel = "TIME",
        description = "End of the range. Default: with --start, the end of time.")
    String end;

    @Override
    void run(AdminServiceGrpc.AdminServiceBlockingStub stub) throws Exception {
      CompactRequest.Builder b = CompactRequest.newBuilder();
      Instant now = Instant.now();
      if (start != null) {
        b.setMinTimeMs(time("--start", start, now));
      }
      if (end != null) {
        b.setMaxTimeMs(time("--end", end, now));
      }
      CompactResponse r = stub.compact(b.build());
      if (json) {
        printJson(toJson(r));
        return;
      }
      out.printf(
          Locale.ROOT,
          "compacted in %.3f s: %s on disk before, %s after%n",
          r.getDurationMs() / 1000.0,
          bytes(r.getBytesBefore()),
          bytes(r.getBytesAfter()));
    }
  }

  @Command(
      name = "checkpoint",
      usageHelpWidth = 100,
      description = {
        "Copies a consistent image of the store into a new folder.",
        "FOLDER is on the server's machine (a relative path is resolved against the current",
        "folder) and must not exist. Start a server on it with 'tidemark --data-dir FOLDER'."
      })
  static final class CheckpointCmd extends Base {
    @Parameters(
        arity = "1",
        paramLabel = "FOLDER",
        description = "A folder that does not exist yet.")
    String folder;

    @Override
    void run(AdminServiceGrpc.AdminServiceBlockingStub stub) throws Exception {
      String target;
      try {
        target = Path.of(folder).toAbsolutePath().normalize().toString();
      } catch (java.nio.file.InvalidPathException e) {
        throw new UsageException("invalid folder '" + folder + "': " + e.getReason());
      }
      CreateCheckpointResponse r =
          stub.createCheckpoint(CreateCheckpointRequest.newBuilder().setTargetDir(target).build());
      if (json) {
        printJson(toJson(r));
        return;
      }
      out.printf(
          Locale.ROOT,
          "checkpoint created in %s (%.3f s)%n",
          r.getPath(),
          r.getDurationMs() / 1000.0);
    }
  }

  @Command(
      name = "set-retention",
      usageHelpWidth = 100,
      description = {
        "Changes the retention (at least 1h) until the next restart.",
        "The next retention run (or apply-retention) and the too-old check of new samples use it."
      })
  static final class SetRetentionCmd extends Base {
    @Parameters(arity = "1", paramLabel = "DURATION", description = "e.g. 30d, 12h")
    String retention;

    @Override
    void run(AdminServiceGrpc.AdminServiceBlockingStub stub) throws Exception {
      duration("DURATION", retention); // syntax checked here; the 1h minimum by the server
      SetRetentionResponse r =
          stub.setRetention(
              SetRetentionRequest.newBuilder().setRetention(retention.strip()).build());
      if (json) {
        printJson(toJson(r));
        return;
      }
      out.println(
          "retention "
              + PromText.formatDuration(Duration.ofMillis(r.getRetentionMs()))
              + " (was "
              + PromText.formatDuration(Duration.ofMillis(r.getPreviousRetentionMs()))
              + ")");
    }
  }

  @Command(
      name = "apply-retention",
      usageHelpWidth = 100,
      description = "Drops the buckets older than the retention now.")
  static final class ApplyRetentionCmd extends Base {
    @Override
    void run(AdminServiceGrpc.AdminServiceBlockingStub stub) throws Exception {
      ApplyRetentionResponse r = stub.applyRetention(ApplyRetentionRequest.getDefaultInstance());
      if (json) {
        printJson(toJson(r));
        return;
      }
      out.printf(
          Locale.ROOT,
          "dropped %d buckets older than %s (%.3f s)%n",
          r.getBucketsDropped(),
          PromText.formatDuration(Duration.ofMillis(r.getRetentionMs())),
          r.getDurationMs() / 1000.0);
    }
  }

  // ---- helpers ----

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
          "invalid --address '" + address + "': expected HOST:PORT, e.g. " + DEFAULT_ADDRESS);
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

  /**
   * {@code name{a="x", b="y"}}: the metric name, then the other labels as Prometheus' {@code
   * Labels.String()} writes a set ({@link PromText#formatLabels}); {@code {}} after a name alone.
   */
  static String formatLabels(List<Label> labels) {
    String name = null;
    List<String> rest = new ArrayList<>(2 * labels.size());
    for (Label l : labels) {
      if (l.getName().equals("__name__")) {
        name = l.getValue();
      } else {
        rest.add(l.getName());
        rest.add(l.getValue());
      }
    }
    String set = PromText.formatLabels(rest);
    return name == null ? set : name + set;
  }

  /** A sample's value as Go's {@code %g} (promtool's dump), {@code stale}, or NaN with its bits. */
  static String formatValue(Sample s) {
    double v = s.getValue();
    if (s.getStale()) {
      return "stale";
    }
    if (Double.isNaN(v)) {
      return "NaN (0x" + Long.toHexString(s.getValueBits()) + ")";
    }
    return PromText.formatFloat(v);
  }

  static String bytes(long n) {
    if (n < 1024) {
      return n + " B";
    }
    String[] units = {"KiB", "MiB", "GiB", "TiB", "PiB"};
    double v = n;
    int u = -1;
    while (v >= 1024 && u < units.length - 1) {
      v /= 1024;
      u++;
    }
    return String.format(Locale.ROOT, "%.1f %s", v, units[u]);
  }

  /** Prints a table with left-aligned columns, two spaces apart. */
  static void table(PrintWriter out, String[] header, List<String[]> rows) {
    int cols = header != null ? header.length : rows.isEmpty() ? 0 : rows.get(0).length;
    int[] width = new int[cols];
    List<String[]> all = new ArrayList<>();
    if (header != null) {
      all.add(header);
    }
    all.addAll(rows);
    for (String[] r : all) {
      for (int i = 0; i < cols; i++) {
        width[i] = Math.max(width[i], r[i].length());
      }
    }
    for (String[] r : all) {
      StringBuilder sb = new StringBuilder();
      for (int i = 0; i < cols; i++) {
        if (i > 0) {
          sb.append("  ");
        }
        sb.append(r[i]);
        if (i < cols - 1) {
          sb.append(" ".repeat(width[i] - r[i].length()));
        }
      }
      out.println(sb);
    }
  }

  /**
   * A proto message as JSON: proto field names; unset optional fields left out; 64-bit integers as
   * numbers; {@code fixed64} (raw value bits) as {@code "0x..."}; non-finite doubles as strings;
   * enums by name; repeated {@link Label}s as one object.
   */
  static ObjectNode toJson(Message m) {
    ObjectNode node = JSON.createObjectNode();
    for (FieldDescriptor f : m.getDescriptorForType().getFields()) {
      if (f.hasPresence() && !f.isRepeated() && !m.hasField(f)) {
        continue;
      }
      String key = f.getName();
      if (f.isRepeated()) {
        if (f.getJavaType() == FieldDescriptor.JavaType.MESSAGE
            && f.getMessageType().equals(Label.getDescriptor())) {
          List<Label> labels = new ArrayList<>();
          for (int i = 0; i < m.getRepeatedFieldCount(f); i++) {
            labels.add((Label) m.getRepeatedField(f, i));
          }
          node.set(key, labelsJson(labels));
          continue;
        }
        ArrayNode arr = node.putArray(key);
        for (int i = 0; i < m.getRepeatedFieldCount(f); i++) {
          arr.add(scalar(f, m.getRepeatedField(f, i)));
        }
      } else {
        node.set(key, scalar(f, m.getField(f)));
      }
    }
    return node;
  }

  static ObjectNode labelsJson(List<Label> labels) {
    ObjectNode o = JSON.createObjectNode();
    for (Label l : labels) {
      o.put(l.getName(), l.getValue());
    }
    return o;
  }

  private static JsonNode scalar(FieldDescriptor f, Object v) {
    return switch (f.getType()) {
      case MESSAGE -> toJson((Message) v);
      case FIXED64 ->
          JSON.getNodeFactory().textNode(String.format(Locale.ROOT, "0x%016x", (Long) v));
      case INT64, SINT64, SFIXED64 -> JSON.getNodeFactory().numberNode((Long) v);
      case UINT64 ->
          JSON.getNodeFactory()
              .numberNode(new java.math.BigInteger(Long.toUnsignedString((Long) v)));
      case INT32, SINT32, SFIXED32, UINT32, FIXED32 ->
          JSON.getNodeFactory().numberNode((Integer) v);
      case DOUBLE -> {
        double d = (Double) v;
        yield Double.isFinite(d)
            ? JSON.getNodeFactory().numberNode(d)
            : JSON.getNodeFactory().textNode(Double.isNaN(d) ? "NaN" : d > 0 ? "+Inf" : "-Inf");
      }
      case FLOAT -> JSON.getNodeFactory().numberNode((Float) v);
      case BOOL -> JSON.getNodeFactory().booleanNode((Boolean) v);
      case ENUM ->
          JSON.getNodeFactory()
              .textNode(((com.google.protobuf.Descriptors.EnumValueDescriptor) v).getName());
      case STRING -> JSON.getNodeFactory().textNode((String) v);
      case BYTES ->
          JSON.getNodeFactory().binaryNode(((com.google.protobuf.ByteString) v).toByteArray());
      default -> JSON.getNodeFactory().textNode(String.valueOf(v));
    };
  }
}
