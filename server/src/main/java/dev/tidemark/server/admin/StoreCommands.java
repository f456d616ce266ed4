package dev.tidemark.server.admin;

import dev.tidemark.admin.v1.AdminServiceGrpc;
import dev.tidemark.admin.v1.ApplyRetentionRequest;
import dev.tidemark.admin.v1.CompactRequest;
import dev.tidemark.admin.v1.CreateCheckpointRequest;
import dev.tidemark.admin.v1.DeleteSeriesRequest;
import dev.tidemark.admin.v1.FlushRequest;
import dev.tidemark.admin.v1.Selection;
import dev.tidemark.admin.v1.SetRetentionRequest;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.time.Instant;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code tidemark admin delete}, {@code flush}, {@code compact}, {@code checkpoint}, {@code
 * set-retention} and {@code apply-retention}: the commands that change the store or copy it.
 */
final class StoreCommands {
  private StoreCommands() {}

  @Command(
      name = "delete",
      usageHelpWidth = 100,
      description = {
        "Deletes the matching samples in the range, for good.",
        "Whole buckets are dropped, partly covered ones rewritten, the space reclaimed by",
        "compaction; a restart does not bring the samples back."
      })
  static final class Delete extends AdminSubcommand.Selecting {
    @Parameters(
        arity = "1",
        paramLabel = "SELECTOR",
        description = "At least one matcher, e.g. '{job=\"a\"}'")
    String selector;

    @Override
    void run(AdminServiceGrpc.AdminServiceBlockingStub stub, AdminOutput output) throws Exception {
      Selection sel = selection(selector);
      if (sel.getMatchersCount() == 0) {
        throw new UsageException("delete needs at least one matcher, e.g. '{job=\"a\"}'");
      }
      output.deleted(stub.deleteSeries(DeleteSeriesRequest.newBuilder().setSelection(sel).build()));
    }
  }

  @Command(
      name = "flush",
      usageHelpWidth = 100,
      description = "Seals every open head bucket into the store now.")
  static final class Flush extends AdminSubcommand {
    @Override
    void run(AdminServiceGrpc.AdminServiceBlockingStub stub, AdminOutput output) throws Exception {
      output.flushed(stub.flush(FlushRequest.getDefaultInstance()));
    }
  }

  @Command(
      name = "compact",
      usageHelpWidth = 100,
      description = "Compacts the store: the buckets overlapping --start/--end, or everything.")
  static final class Compact extends AdminSubcommand {
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
    void run(AdminServiceGrpc.AdminServiceBlockingStub stub, AdminOutput output) throws Exception {
      CompactRequest.Builder b = CompactRequest.newBuilder();
      Instant now = Instant.now();
      if (start != null) {
        b.setMinTimeMs(time("--start", start, now));
      }
      if (end != null) {
        b.setMaxTimeMs(time("--end", end, now));
      }
      output.compacted(stub.compact(b.build()));
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
  static final class Checkpoint extends AdminSubcommand {
    @Parameters(
        arity = "1",
        paramLabel = "FOLDER",
        description = "A folder that does not exist yet.")
    String folder;

    @Override
    void run(AdminServiceGrpc.AdminServiceBlockingStub stub, AdminOutput output) throws Exception {
      String target;
      try {
        target = Path.of(folder).toAbsolutePath().normalize().toString();
      } catch (InvalidPathException e) {
        throw new UsageException("invalid folder '" + folder + "': " + e.getReason());
      }
      output.checkpointCreated(
          stub.createCheckpoint(CreateCheckpointRequest.newBuilder().setTargetDir(target).build()));
    }
  }

  @Command(
      name = "set-retention",
      usageHelpWidth = 100,
      description = {
        "Changes the retention (at least 1h) until the next restart.",
        "The next retention run (or apply-retention) and the too-old check of new samples use it."
      })
  static final class SetRetention extends AdminSubcommand {
    @Parameters(arity = "1", paramLabel = "DURATION", description = "e.g. 30d, 12h")
    String retention;

    @Override
    void run(AdminServiceGrpc.AdminServiceBlockingStub stub, AdminOutput output) throws Exception {
      duration("DURATION", retention); // syntax checked here; the 1h minimum by the server
      output.retentionSet(
          stub.setRetention(
              SetRetentionRequest.newBuilder().setRetention(retention.strip()).build()));
    }
  }

  @Command(
      name = "apply-retention",
      usageHelpWidth = 100,
      description = "Drops the buckets older than the retention now.")
  static final class ApplyRetention extends AdminSubcommand {
    @Override
    void run(AdminServiceGrpc.AdminServiceBlockingStub stub, AdminOutput output) throws Exception {
      output.retentionApplied(stub.applyRetention(ApplyRetentionRequest.getDefaultInstance()));
    }
  }
}
