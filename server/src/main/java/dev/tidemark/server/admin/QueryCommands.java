package dev.tidemark.server.admin;

import dev.tidemark.admin.v1.AdminServiceGrpc;
import dev.tidemark.admin.v1.FindSeriesRequest;
import dev.tidemark.admin.v1.LabelNamesRequest;
import dev.tidemark.admin.v1.LabelValuesRequest;
import dev.tidemark.admin.v1.ReadSamplesRequest;
import dev.tidemark.admin.v1.SeriesSamples;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code tidemark admin label-names}, {@code label-values}, {@code series} and {@code read}: the
 * index and the raw samples of the series a selector and a time range pick.
 */
final class QueryCommands {
  private QueryCommands() {}

  @Command(
      name = "label-names",
      usageHelpWidth = 100,
      description = "Label names of the matching series (all series without a selector), sorted.")
  static final class LabelNames extends AdminSubcommand.Selecting {
    @Parameters(arity = "0..1", paramLabel = "SELECTOR", description = "e.g. '{job=\"a\"}'")
    String selector;

    @Option(
        names = "--limit",
        paramLabel = "N",
        description = "At most N names. Default: 0 (no limit)")
    int limit;

    @Override
    void run(AdminServiceGrpc.AdminServiceBlockingStub stub, AdminOutput output) throws Exception {
      output.labelNames(
          stub.labelNames(
              LabelNamesRequest.newBuilder()
                  .setSelection(selection(selector))
                  .setLimit(limit)
                  .build()));
    }
  }

  @Command(
      name = "label-values",
      usageHelpWidth = 100,
      description = "Values of label NAME among the matching series, sorted.")
  static final class LabelValues extends AdminSubcommand.Selecting {
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
    void run(AdminServiceGrpc.AdminServiceBlockingStub stub, AdminOutput output) throws Exception {
      output.labelValues(
          stub.labelValues(
              LabelValuesRequest.newBuilder()
                  .setName(name)
                  .setSelection(selection(selector))
                  .setLimit(limit)
                  .build()));
    }
  }

  @Command(
      name = "series",
      usageHelpWidth = 100,
      description = "Label sets of the matching series, one per line, sorted.")
  static final class Series extends AdminSubcommand.Selecting {
    @Parameters(arity = "0..1", paramLabel = "SELECTOR", description = "e.g. 'up{job=\"a\"}'")
    String selector;

    @Option(
        names = "--limit",
        paramLabel = "N",
        description = "At most N series. Default: 0 (no limit)")
    int limit;

    @Override
    void run(AdminServiceGrpc.AdminServiceBlockingStub stub, AdminOutput output) throws Exception {
      output.series(
          stub.findSeries(
              FindSeriesRequest.newBuilder()
                  .setSelection(selection(selector))
                  .setLimit(limit)
                  .build()));
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
  static final class Read extends AdminSubcommand.Selecting {
    @Parameters(arity = "0..1", paramLabel = "SELECTOR", description = "e.g. 'up{job=\"a\"}'")
    String selector;

    @Option(
        names = "--limit",
        paramLabel = "N",
        description = "At most N series. Default: 0 (no limit)")
    int limit;

    @Override
    void run(AdminServiceGrpc.AdminServiceBlockingStub stub, AdminOutput output) throws Exception {
      ReadSamplesRequest request =
          ReadSamplesRequest.newBuilder().setSelection(selection(selector)).setLimit(limit).build();
      SamplesOutput samples = output.samples();
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
                    samples.add(s);
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
        samples.end();
      } catch (ExecutionException e) {
        if (e.getCause() instanceof RuntimeException r) {
          throw r; // a StatusRuntimeException, which AdminSubcommand maps to an exit code
        }
        throw e;
      } finally {
        samples.flush();
      }
    }
  }
}
