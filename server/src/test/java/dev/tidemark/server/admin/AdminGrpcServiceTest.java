package dev.tidemark.server.admin;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.tidemark.admin.v1.AdminServiceGrpc;
import dev.tidemark.admin.v1.CompactRequest;
import dev.tidemark.admin.v1.CreateCheckpointRequest;
import dev.tidemark.admin.v1.DeleteSeriesRequest;
import dev.tidemark.admin.v1.FindSeriesRequest;
import dev.tidemark.admin.v1.GetStatusRequest;
import dev.tidemark.admin.v1.LabelMatcher;
import dev.tidemark.admin.v1.LabelNamesRequest;
import dev.tidemark.admin.v1.LabelValuesRequest;
import dev.tidemark.admin.v1.ReadSamplesRequest;
import dev.tidemark.admin.v1.Sample;
import dev.tidemark.admin.v1.Selection;
import dev.tidemark.admin.v1.SeriesSamples;
import dev.tidemark.admin.v1.SetRetentionRequest;
import dev.tidemark.server.ServerConfig;
import dev.tidemark.server.TidemarkServer;
import dev.tidemark.tsdb.append.SampleBatch;
import dev.tidemark.tsdb.model.Labels;
import dev.tidemark.tsdb.model.MetricMetadata;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptors;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.MetadataUtils;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The admin service in-process (TidemarkServer on free ports, with a token): validation and
 * mapping.
 */
class AdminGrpcServiceTest {
  static final String TOKEN = "unit-token";

  @TempDir Path dir;

  TidemarkServer server;
  ManagedChannel channel;
  AdminServiceGrpc.AdminServiceBlockingStub admin;
  long t0;

  @BeforeEach
  void start() {
    server =
        TidemarkServer.start(
            ServerConfig.builder()
                .dataDir(dir.resolve("data"))
                .anyFreePorts()
                .adminToken(TOKEN)
                .shutdownTimeout(Duration.ofSeconds(5))
                .build());
    channel =
        Grpc.newChannelBuilderForAddress(
                "127.0.0.1", server.adminPort(), InsecureChannelCredentials.create())
            .build();
    admin = withToken(TOKEN);
    // A minute into the previous hour: every sample of a test (200 s at most) lies in one bucket
    // whatever the time of day (ten minutes ago crossed an hour 5 % of the time: two head series).
    t0 = (System.currentTimeMillis() / 3_600_000 - 1) * 3_600_000 + 60_000;
    SampleBatch batch = new SampleBatch();
    Labels up = Labels.of("__name__", "up", "job", "a");
    batch.addPoint(up, MetricMetadata.UNKNOWN, t0, 1.0);
    batch.addPoint(
        up, MetricMetadata.UNKNOWN, t0 + 1000, Double.longBitsToDouble(0x7ff8000000000123L));
    batch.addStaleMarker(up, MetricMetadata.UNKNOWN, t0 + 2000).endPoint();
    batch.addPoint(Labels.of("__name__", "up", "job", "b"), MetricMetadata.UNKNOWN, t0, 2.0);
    server.engine().append(batch);
  }

  @AfterEach
  void stop() throws InterruptedException {
    channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    server.close();
  }

  AdminServiceGrpc.AdminServiceBlockingStub withToken(String token) {
    Metadata md = new Metadata();
    md.put(AdminAuthInterceptor.AUTHORIZATION, "Bearer " + token);
    return AdminServiceGrpc.newBlockingStub(channel)
        .withDeadlineAfter(30, TimeUnit.SECONDS)
        .withInterceptors(MetadataUtils.newAttachHeadersInterceptor(md));
  }

  static Selection sel(String selector) {
    return Selection.newBuilder().setSelector(selector).build();
  }

  @Test
  void readsRawBitsAndFlagsStaleMarkers() {
    Iterator<SeriesSamples> it =
        admin.readSamples(
            ReadSamplesRequest.newBuilder().setSelection(sel("up{job=\"a\"}")).build());
    List<Sample> samples = new ArrayList<>();
    it.forEachRemaining(s -> samples.addAll(s.getSamplesList()));
    assertThat(samples)
        .extracting(Sample::getValueBits)
        .containsExactly(
            Double.doubleToRawLongBits(1.0), 0x7ff8000000000123L, SampleBatch.STALE_NAN_BITS);
    assertThat(samples).extracting(Sample::getStale).containsExactly(false, false, true);
    assertThat(samples)
        .extracting(Sample::getTimestampMs)
        .containsExactly(t0, t0 + 1000, t0 + 2000);
  }

  /**
   * ReadSamples answers that the clients do not read yet hold no thread: more of them than the
   * admin pool has threads leave room for another call, and each goes on, to the last sample and in
   * order, once its client reads again (gRPC's onReady, not a timeout).
   */
  @Test
  void unreadAnswersHoldNoThreadAndGoOnWhenRead() throws Exception {
    int n = 200_000; // 20 messages of about 300 KB: more than the transport's window
    SampleBatch batch = new SampleBatch();
    Labels big = Labels.of("__name__", "big");
    for (int i = 0; i < n; i++) {
      batch.addPoint(big, MetricMetadata.UNKNOWN, t0 + i, i);
    }
    server.engine().append(batch);

    Metadata md = new Metadata();
    md.put(AdminAuthInterceptor.AUTHORIZATION, "Bearer " + TOKEN);
    Channel authed =
        ClientInterceptors.intercept(channel, MetadataUtils.newAttachHeadersInterceptor(md));
    int calls = AdminServer.THREADS + 2;
    List<ClientCall<ReadSamplesRequest, SeriesSamples>> started = new ArrayList<>();
    List<CountDownLatch> firstMessage = new ArrayList<>();
    List<CompletableFuture<Status>> closed = new ArrayList<>();
    List<List<Long>> timestamps = new ArrayList<>();
    for (int c = 0; c < calls; c++) {
      ClientCall<ReadSamplesRequest, SeriesSamples> call =
          authed.newCall(
              AdminServiceGrpc.getReadSamplesMethod(),
              CallOptions.DEFAULT.withDeadlineAfter(60, TimeUnit.SECONDS));
      CountDownLatch first = new CountDownLatch(1);
      CompletableFuture<Status> done = new CompletableFuture<>();
      List<Long> seen = new ArrayList<>();
      call.start(
          new ClientCall.Listener<>() {
            @Override
            public void onMessage(SeriesSamples m) {
              m.getSamplesList().forEach(x -> seen.add(x.getTimestampMs()));
              first.countDown();
            }

            @Override
            public void onClose(Status status, Metadata trailers) {
              done.complete(status);
            }
          },
          new Metadata());
      call.sendMessage(ReadSamplesRequest.newBuilder().setSelection(sel("big")).build());
      call.halfClose();
      call.request(1); // one message, then the client reads no more for now
      started.add(call);
      firstMessage.add(first);
      closed.add(done);
      timestamps.add(seen);
    }
    for (int c = 0; c < calls; c++) {
      assertThat(firstMessage.get(c).await(30, TimeUnit.SECONDS))
          .as("call %d of %d has its first message (the others hold no thread)", c + 1, calls)
          .isTrue();
    }
    Thread.sleep(300); // the server fills the windows and finds the transports not ready

    assertThat(
            withToken(TOKEN)
                .withDeadlineAfter(5, TimeUnit.SECONDS)
                .getStatus(GetStatusRequest.getDefaultInstance())
                .getHeadSeries())
        .as("a call beside %d unread answers", calls)
        .isEqualTo(3);
    for (CompletableFuture<Status> done : closed) {
      assertThat(done).as("nothing ends while unread").isNotDone();
    }

    long start = System.nanoTime();
    started.forEach(call -> call.request(Integer.MAX_VALUE));
    for (int c = 0; c < calls; c++) {
      assertThat(closed.get(c).get(30, TimeUnit.SECONDS).getCode()).isEqualTo(Status.Code.OK);
      List<Long> seen = timestamps.get(c);
      assertThat(seen).hasSize(n);
      for (int i = 0; i < n; i++) {
        assertThat(seen.get(i)).isEqualTo(t0 + i);
      }
    }
    // Waiting for a timeout instead of onReady took about a second per pause (minutes here).
    assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(20));
  }

  @Test
  void structuredMatchersAndSelectorAreAnded() {
    Selection both =
        Selection.newBuilder()
            .setSelector("up")
            .addMatchers(
                LabelMatcher.newBuilder()
                    .setName("job")
                    .setOp(LabelMatcher.Op.NOT_EQUAL)
                    .setValue("a"))
            .build();
    assertThat(
            admin
                .findSeries(FindSeriesRequest.newBuilder().setSelection(both).build())
                .getSeriesCount())
        .isEqualTo(1);
    assertThat(
            admin
                .labelValues(LabelValuesRequest.newBuilder().setName("job").build())
                .getValuesList())
        .containsExactly("a", "b");
  }

  @Test
  void badRequestsAreInvalidArgumentOrFailedPrecondition() throws Exception {
    assertStatus(
        () ->
            admin.findSeries(
                FindSeriesRequest.newBuilder()
                    .setSelection(
                        Selection.newBuilder()
                            .addMatchers(
                                LabelMatcher.newBuilder()
                                    .setName("job")
                                    .setOp(LabelMatcher.Op.REGEX)
                                    .setValue("[z")))
                    .build()),
        Status.Code.INVALID_ARGUMENT,
        "invalid regex in matcher job=~\"[z\"");
    assertStatus(
        () ->
            admin.findSeries(
                FindSeriesRequest.newBuilder()
                    .setSelection(
                        Selection.newBuilder().addMatchers(LabelMatcher.newBuilder().setValue("x")))
                    .build()),
        Status.Code.INVALID_ARGUMENT,
        "empty label name");
    assertStatus(
        () ->
            admin.findSeries(
                FindSeriesRequest.newBuilder()
                    .setSelection(
                        Selection.newBuilder()
                            .addMatchers(LabelMatcher.newBuilder().setName("a").setOpValue(9)))
                    .build()),
        Status.Code.INVALID_ARGUMENT,
        "unknown op 9");
    assertStatus(
        () ->
            admin.labelNames(
                LabelNamesRequest.newBuilder()
                    .setSelection(Selection.newBuilder().setMinTimeMs(10).setMaxTimeMs(9))
                    .build()),
        Status.Code.INVALID_ARGUMENT,
        "min_time_ms 10");
    assertStatus(
        () -> admin.compact(CompactRequest.newBuilder().setMinTimeMs(10).setMaxTimeMs(9).build()),
        Status.Code.INVALID_ARGUMENT,
        "is after");
    assertStatus(
        () -> admin.labelValues(LabelValuesRequest.getDefaultInstance()),
        Status.Code.INVALID_ARGUMENT,
        "name is required");
    assertStatus(
        () -> admin.deleteSeries(DeleteSeriesRequest.newBuilder().setSelection(sel("{}")).build()),
        Status.Code.INVALID_ARGUMENT,
        "at least one non-empty matcher");
    assertStatus(
        () -> admin.deleteSeries(DeleteSeriesRequest.getDefaultInstance()),
        Status.Code.INVALID_ARGUMENT,
        "delete needs at least one matcher");
    assertStatus(
        () ->
            admin.setRetention(
                SetRetentionRequest.newBuilder().setRetentionMs(59 * 60_000).build()),
        Status.Code.INVALID_ARGUMENT,
        "at least 1h");
    assertStatus(
        () -> admin.setRetention(SetRetentionRequest.newBuilder().setRetention("ten days").build()),
        Status.Code.INVALID_ARGUMENT,
        "invalid retention 'ten days'");
    assertStatus(
        () ->
            admin.setRetention(
                SetRetentionRequest.newBuilder()
                    .setRetention("2h")
                    .setRetentionMs(7_200_000)
                    .build()),
        Status.Code.INVALID_ARGUMENT,
        "exactly one");
    Path exists = Files.createDirectories(dir.resolve("exists"));
    assertStatus(
        () ->
            admin.createCheckpoint(
                CreateCheckpointRequest.newBuilder().setTargetDir(exists.toString()).build()),
        Status.Code.FAILED_PRECONDITION,
        "already exists");
    assertStatus(
        () ->
            admin.createCheckpoint(
                CreateCheckpointRequest.newBuilder()
                    .setTargetDir(dir.resolve("data").resolve("inside").toAbsolutePath().toString())
                    .build()),
        Status.Code.INVALID_ARGUMENT,
        "inside the data folder");
    assertThat(server.engine().retention()).isEqualTo(Duration.ofDays(15));
  }

  @Test
  void selectionsThatMatchEverySeriesAreRefusedAndDeleteNothing() {
    Selection caseAll = sel("{case=~\".*\"}");
    Selection nosuch = sel("{nosuch=\"\"}");
    LabelMatcher anyJob =
        LabelMatcher.newBuilder()
            .setName("job")
            .setOp(LabelMatcher.Op.REGEX)
            .setValue(".*")
            .build();
    LabelMatcher notC =
        LabelMatcher.newBuilder()
            .setName("job")
            .setOp(LabelMatcher.Op.NOT_EQUAL)
            .setValue("c")
            .build();
    Selection structured = Selection.newBuilder().addMatchers(anyJob).build();
    Selection both = Selection.newBuilder().addMatchers(notC).setSelector("{x=\"\"}").build();
    String msg = "vector selector must contain at least one non-empty matcher";
    for (Selection s : List.of(caseAll, nosuch, structured, both, sel("{}"))) {
      assertStatus(
          () -> admin.deleteSeries(DeleteSeriesRequest.newBuilder().setSelection(s).build()),
          Status.Code.INVALID_ARGUMENT,
          msg);
      assertStatus(
          () -> admin.findSeries(FindSeriesRequest.newBuilder().setSelection(s).build()),
          Status.Code.INVALID_ARGUMENT,
          msg);
      assertStatus(
          () ->
              admin.readSamples(ReadSamplesRequest.newBuilder().setSelection(s).build()).hasNext(),
          Status.Code.INVALID_ARGUMENT,
          msg);
      assertStatus(
          () -> admin.labelNames(LabelNamesRequest.newBuilder().setSelection(s).build()),
          Status.Code.INVALID_ARGUMENT,
          msg);
      assertStatus(
          () ->
              admin.labelValues(
                  LabelValuesRequest.newBuilder().setName("job").setSelection(s).build()),
          Status.Code.INVALID_ARGUMENT,
          msg);
    }
    assertThat(admin.findSeries(FindSeriesRequest.getDefaultInstance()).getSeriesCount())
        .as("nothing deleted")
        .isEqualTo(2);

    // No selection at all still means every series where it did; one non-empty matcher is enough.
    assertThat(admin.labelNames(LabelNamesRequest.getDefaultInstance()).getNamesList())
        .containsExactly("__name__", "job");
    Iterator<SeriesSamples> all = admin.readSamples(ReadSamplesRequest.getDefaultInstance());
    List<SeriesSamples> read = new ArrayList<>();
    all.forEachRemaining(read::add);
    assertThat(read).hasSize(2);
    Selection anchored =
        Selection.newBuilder().addMatchers(anyJob).setSelector("{job=\"b\"}").build();
    assertThat(
            admin
                .findSeries(FindSeriesRequest.newBuilder().setSelection(anchored).build())
                .getSeriesCount())
        .isEqualTo(1);
    assertThat(
            admin
                .deleteSeries(
                    DeleteSeriesRequest.newBuilder()
                        .setSelection(sel("{case=~\".*\", job=\"b\"}"))
                        .build())
                .getSeries())
        .isEqualTo(1);
    assertThat(admin.findSeries(FindSeriesRequest.getDefaultInstance()).getSeriesCount())
        .isEqualTo(1);
  }

  @Test
  void setRetentionChangesTheEngine() {
    var r = admin.setRetention(SetRetentionRequest.newBuilder().setRetention("2h").build());
    assertThat(r.getPreviousRetentionMs()).isEqualTo(Duration.ofDays(15).toMillis());
    assertThat(server.engine().retention()).isEqualTo(Duration.ofHours(2));
    assertThat(admin.getStatus(GetStatusRequest.getDefaultInstance()).getRetention())
        .isEqualTo("2h");
  }

  @Test
  void storeReadsGetTheCallsDeadlineAndCancellation() throws Exception {
    java.util.concurrent.ScheduledExecutorService timer =
        java.util.concurrent.Executors.newSingleThreadScheduledExecutor();
    try {
      io.grpc.Context.CancellableContext withDeadline =
          io.grpc.Context.ROOT.withDeadlineAfter(50, TimeUnit.MILLISECONDS, timer);
      dev.tidemark.tsdb.query.QueryContext ctx = withDeadline.call(AdminGrpcService::callContext);
      assertThat(ctx.hasDeadline()).isTrue();
      Thread.sleep(100);
      assertThatThrownBy(ctx::check)
          .isInstanceOfSatisfying(
              dev.tidemark.tsdb.query.QueryAbortedException.class,
              e ->
                  assertThat(e.reason())
                      .isEqualTo(dev.tidemark.tsdb.query.QueryAbortedException.Reason.TIMEOUT));
      withDeadline.close();
      io.grpc.Context.CancellableContext cancellable = io.grpc.Context.ROOT.withCancellation();
      dev.tidemark.tsdb.query.QueryContext noDeadline =
          cancellable.call(AdminGrpcService::callContext);
      noDeadline.check(); // neither past a deadline nor canceled
      cancellable.cancel(null);
      assertThatThrownBy(noDeadline::check)
          .isInstanceOfSatisfying(
              dev.tidemark.tsdb.query.QueryAbortedException.class,
              e ->
                  assertThat(e.reason())
                      .isEqualTo(dev.tidemark.tsdb.query.QueryAbortedException.Reason.CANCELED));
    } finally {
      timer.shutdownNow();
    }
    assertThat(
            AdminGrpcService.status(
                    new dev.tidemark.tsdb.query.QueryAbortedException(
                        dev.tidemark.tsdb.query.QueryAbortedException.Reason.TIMEOUT))
                .getStatus()
                .getCode())
        .isEqualTo(Status.Code.DEADLINE_EXCEEDED);
  }

  @Test
  void everyCallNeedsTheToken() {
    assertStatus(
        () -> withToken("other").getStatus(GetStatusRequest.getDefaultInstance()),
        Status.Code.UNAUTHENTICATED,
        "invalid admin token");
    assertStatus(
        () ->
            AdminServiceGrpc.newBlockingStub(channel)
                .getStatus(GetStatusRequest.getDefaultInstance()),
        Status.Code.UNAUTHENTICATED,
        "needs a token");
    assertThat(admin.getStatus(GetStatusRequest.getDefaultInstance()).getHeadSeries()).isEqualTo(2);
  }

  static void assertStatus(ThrowingCallable call, Status.Code code, String message) {
    assertThatThrownBy(call)
        .isInstanceOfSatisfying(
            StatusRuntimeException.class,
            e -> {
              assertThat(e.getStatus().getCode()).as("%s", e).isEqualTo(code);
              assertThat(e.getStatus().getDescription()).contains(message);
            });
  }

  @Test
  void failuresNameNoJavaClass() {
    StatusRuntimeException corrupt =
        AdminGrpcService.status(
            new dev.tidemark.tsdb.codec.CorruptRecordException(
                "posting of bucket b names series 71 without a ForwardIndex record"));
    assertThat(corrupt.getStatus().getCode()).isEqualTo(Status.Code.DATA_LOSS);
    assertThat(corrupt.getStatus().getDescription())
        .isEqualTo(
            "posting of bucket b names series 71 without a ForwardIndex record"
                + " (stop the server and run tidemark verify --data-dir DIR)");
    StatusRuntimeException bug =
        AdminGrpcService.status(
            new IllegalStateException("java.lang.ArithmeticException: / by zero"));
    assertThat(bug.getStatus().getCode()).isEqualTo(Status.Code.INTERNAL);
    assertThat(bug.getStatus().getDescription())
        .isEqualTo("internal error: / by zero")
        .doesNotContain("Exception");
  }
}
