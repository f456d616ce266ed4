package dev.tidemark.server.admin;

import dev.tidemark.admin.v1.AdminServiceGrpc;
import dev.tidemark.admin.v1.GetStatusRequest;
import dev.tidemark.admin.v1.ListBucketsRequest;
import picocli.CommandLine.Command;

/** {@code tidemark admin status} and {@code buckets}: what the server holds, read-only. */
final class StatusCommands {
  private StatusCommands() {}

  @Command(
      name = "status",
      usageHelpWidth = 100,
      description =
          "Version, uptime, data folder, schema, retention, head, ingestion, disk, series per bucket.")
  static final class Status extends AdminSubcommand {
    @Override
    void run(AdminServiceGrpc.AdminServiceBlockingStub stub, AdminOutput output) throws Exception {
      output.status(stub.getStatus(GetStatusRequest.getDefaultInstance()));
    }
  }

  @Command(
      name = "buckets",
      usageHelpWidth = 100,
      description = "Every bucket with data, oldest first: start, size, state, series, bytes.")
  static final class Buckets extends AdminSubcommand {
    @Override
    void run(AdminServiceGrpc.AdminServiceBlockingStub stub, AdminOutput output) throws Exception {
      output.buckets(stub.listBuckets(ListBucketsRequest.getDefaultInstance()));
    }
  }
}
