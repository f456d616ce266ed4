package dev.tidemark.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.tidemark.admin.v1.AdminServiceGrpc;
import dev.tidemark.admin.v1.Bucket;
import dev.tidemark.admin.v1.CompactRequest;
import dev.tidemark.admin.v1.CreateCheckpointRequest;
import dev.tidemark.admin.v1.DeleteSeriesRequest;
import dev.tidemark.admin.v1.DeleteSeriesResponse;
import dev.tidemark.admin.v1.FindSeriesRequest;
import dev.tidemark.admin.v1.FindSeriesResponse;
import dev.tidemark.admin.v1.FlushRequest;
import dev.tidemark.admin.v1.GetStatusRequest;
import dev.tidemark.admin.v1.GetStatusResponse;
import dev.tidemark.admin.v1.LabelMatcher.Op;
import dev.tidemark.admin.v1.LabelNamesRequest;
import dev.tidemark.admin.v1.LabelValuesRequest;
import dev.tidemark.admin.v1.LabelValuesResponse;
import dev.tidemark.admin.v1.ListBucketsRequest;
import dev.tidemark.admin.v1.ListBucketsResponse;
import dev.tidemark.admin.v1.ReadSamplesRequest;
import dev.tidemark.admin.v1.Selection;
import dev.tidemark.admin.v1.SetRetentionRequest;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.reflection.v1.ServerReflectionGrpc;
import io.grpc.reflection.v1.ServerReflectionRequest;
import io.grpc.reflection.v1.ServerReflectionResponse;
import io.opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest;
import io.opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceResponse;
import io.opentelemetry.proto.collector.metrics.v1.MetricsServiceGrpc;
import io.opentelemetry.proto.metrics.v1.NumberDataPoint;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * The admin API and {@code tidemark admin} end to end (issue #6) against the real jar: one server
 * with a token, fed over OTLP/gRPC with three hours of two gauges (with -0.0, +Inf, NaN and a
 * staleness marker) and two counters. Every RPC is called; deletes (a whole bucket, parts of two,
 * part of the open head bucket) survive SIGKILL and a restart while the rest stays intact; a
 * checkpoint started as a second server answers exactly as the first; the token is enforced (gRPC
 * and CLI exit code 3); bad input gets the documented status; selectors whose every matcher matches
 * the empty string are refused (CLI exit 2, INVALID_ARGUMENT) and delete nothing. The tests run in
 * order on the shared servers.
 */
@ExtendWith(ServerLogs.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class AdminIT {
  static final String TOKEN = "s3cret-admin-token";
  static final long HOUR = 3_600_000L;
  static final long STEP = 600_000L; // 10 min
  static final int POINTS = 18; // 3 hours
  static final long STALE_BITS = 0x7ff0000000000002L;
  static final long NORMAL_NAN_BITS = 0x7ff8000000000001L;
  static final ObjectMapper JSON = new ObjectMapper();

  @TempDir static Path tmp;

  ServerProcess server;
  ServerProcess copy;
  AdminRpc rpc;
  long base;

  @BeforeAll
  void startAndIngest() throws Exception {
    server = ServerProcess.start(tmp.resolve("data"), "--admin-token", TOKEN);
    rpc = new AdminRpc(server.adminPort());
    long now = System.currentTimeMillis();
    base = (now - 3 * HOUR) / HOUR * HOUR; // 3 to 4 hours ago: three 1-hour buckets
    ManagedChannel otlp = Otlp.channel(server.grpcPort());
    try {
      MetricsServiceGrpc.MetricsServiceBlockingStub stub = MetricsServiceGrpc.newBlockingStub(otlp);
      List<NumberDataPoint> a = new ArrayList<>();
      List<NumberDataPoint> b = new ArrayList<>();
      List<NumberDataPoint> api = new ArrayList<>();
      List<NumberDataPoint> worker = new ArrayList<>();
      for (int k = 0; k < POINTS; k++) {
        long t = base + k * STEP;
        NumberDataPoint pa = Otlp.point(t, temperatureA(k), "room", "a");
        if (k == 6) {
          pa = pa.toBuilder().setFlags(1).build(); // no recorded value: a staleness marker
        }
        a.add(pa);
        b.add(Otlp.point(t, 20.0 + k, "room", "b"));
        api.add(Otlp.point(t, 10.0 * k));
        worker.add(Otlp.point(t, 7.0 * k + 0.25));
      }
      export(
          stub,
          Otlp.request(
              "api",
              "host-1",
              List.of(
                  Otlp.gauge("temperature", a.toArray(new NumberDataPoint[0])),
                  Otlp.gauge("temperature", b.toArray(new NumberDataPoint[0])),
                  Otlp.counter("requests", api.toArray(new NumberDataPoint[0])))));
      export(
          stub,
          Otlp.request(
              "worker",
              "host-2",
              List.of(Otlp.counter("requests", worker.toArray(new NumberDataPoint[0])))));
    } finally {
      otlp.shutdownNow();
    }
  }

  /** Room a: k * 1.5, except -0.0, +Inf and NaN at k = 3, 4, 5 (and a stale marker at 6). */
  static double temperatureA(int k) {
    return switch (k) {
      case 3 -> -0.0;
      case 4 -> Double.POSITIVE_INFINITY;
      case 5 -> Double.NaN;
      default -> k * 1.5;
    };
  }

  static long expectedBitsA(int k) {
    return switch (k) {
      case 5 -> NORMAL_NAN_BITS; // the translator canonicalises NaN, as Prometheus does
      case 6 -> STALE_BITS;
      default -> Double.doubleToRawLongBits(temperatureA(k));
    };
  }

  static void export(
      MetricsServiceGrpc.MetricsServiceBlockingStub stub, ExportMetricsServiceRequest r) {
    ExportMetricsServiceResponse resp = stub.withDeadlineAfter(30, TimeUnit.SECONDS).export(r);
    assertThat(resp.getPartialSuccess().getRejectedDataPoints())
        .as("rejected points: %s", resp)
        .isZero();
  }

  @AfterAll
  void stop() throws Exception {
    if (rpc != null) {
      rpc.close();
    }
    for (ServerProcess p : new ServerProcess[] {server, copy}) {
      if (p != null && p.isAlive()) {
        assertThat(p.stop()).as("exit code of %s", p).isZero();
      }
    }
  }

  AdminServiceGrpc.AdminServiceBlockingStub admin() {
    return rpc.stub(TOKEN);
  }

  static Selection sel(String selector) {
    return Selection.newBuilder().setSelector(selector).build();
  }

  // ---------------------------------------------------------------------------------------------

  @Test
  @Order(1)
  void statusBucketsLabelsSeriesAndBitExactRead() {
    GetStatusResponse st = admin().getStatus(GetStatusRequest.getDefaultInstance());
    assertThat(st.getVersion()).isNotBlank();
    assertThat(st.getDataDir()).isEqualTo(server.dataDir().toAbsolutePath().normalize().toString());
    assertThat(st.getSchemaVersion()).isEqualTo(1);
    assertThat(st.getRetention()).isEqualTo("15d");
    assertThat(st.getRetentionMs()).isEqualTo(15 * 24 * HOUR);
    assertThat(st.getHeadSeries()).isPositive();
    assertThat(st.getSamplesIngested()).isGreaterThanOrEqualTo(4L * POINTS);
    assertThat(st.getBytesOnDisk()).isPositive();
    assertThat(st.getUptimeMs()).isNotNegative();

    ListBucketsResponse buckets = admin().listBuckets(ListBucketsRequest.getDefaultInstance());
    assertThat(buckets.getBucketsList())
        .extracting(Bucket::getStartTimeMs)
        .containsExactly(base, base + HOUR, base + 2 * HOUR);
    assertThat(buckets.getBucketsList())
        .allSatisfy(
            b -> {
              assertThat(b.getSizeMs()).isEqualTo(HOUR);
              assertThat(b.getEndTimeMs()).isEqualTo(b.getStartTimeMs() + HOUR);
              assertThat(b.getSeriesCount()).isEqualTo(4);
              assertThat(b.getBytes()).isPositive();
            });
    assertThat(buckets.getBuckets(2).getOpen()).as("newest bucket still in the head").isTrue();
    assertThat(st.getSeriesPerBucketList())
        .hasSize(3)
        .allSatisfy(b -> assertThat(b.getSeries()).isEqualTo(4));

    assertThat(admin().labelNames(LabelNamesRequest.getDefaultInstance()).getNamesList())
        .contains("__name__", "instance", "job", "room");
    assertThat(
            admin()
                .labelNames(
                    LabelNamesRequest.newBuilder().setSelection(sel("requests_total")).build())
                .getNamesList())
        .contains("__name__", "job")
        .doesNotContain("room");
    assertThat(
            admin()
                .labelValues(LabelValuesRequest.newBuilder().setName("job").build())
                .getValuesList())
        .containsExactly("api", "worker");
    LabelValuesResponse limited =
        admin()
            .labelValues(LabelValuesRequest.newBuilder().setName("__name__").setLimit(1).build());
    assertThat(limited.getValuesList()).containsExactly("requests_total");
    assertThat(limited.getTruncated()).isTrue();

    // Structured matchers and the selector string give the same series.
    FindSeriesResponse structured =
        admin()
            .findSeries(
                FindSeriesRequest.newBuilder()
                    .setSelection(
                        Selection.newBuilder()
                            .addMatchers(AdminRpc.matcher("__name__", Op.REGEX, "temp.*"))
                            .addMatchers(AdminRpc.matcher("room", Op.NOT_EQUAL, "c")))
                    .build());
    assertThat(structured.getSeriesList()).hasSize(2);
    assertThat(
            admin()
                .findSeries(
                    FindSeriesRequest.newBuilder()
                        .setSelection(sel("{__name__=~'temp.*',room!=\"c\"}"))
                        .build()))
        .isEqualTo(structured);
    assertThat(
            admin()
                .findSeries(
                    FindSeriesRequest.newBuilder()
                        .setSelection(sel("requests_total{job=\"worker\"}"))
                        .build())
                .getSeriesList())
        .hasSize(1);

    // ReadSamples: bit-exact values, the staleness marker flagged.
    Map<Map<String, String>, List<AdminRpc.Sample>> a =
        AdminRpc.read(admin(), sel("temperature{room=\"a\"}"));
    assertThat(a).hasSize(1);
    Map<String, String> labelsA = a.keySet().iterator().next();
    assertThat(labelsA)
        .containsEntry("__name__", "temperature")
        .containsEntry("job", "api")
        .containsEntry("instance", "host-1")
        .containsEntry("room", "a");
    List<AdminRpc.Sample> samples = a.get(labelsA);
    assertThat(samples).hasSize(POINTS);
    for (int k = 0; k < POINTS; k++) {
      AdminRpc.Sample s = samples.get(k);
      assertThat(s.t()).isEqualTo(base + k * STEP);
      assertThat(s.bits()).as("bits of sample %d", k).isEqualTo(expectedBitsA(k));
      assertThat(s.stale()).as("stale flag of sample %d", k).isEqualTo(k == 6);
    }
    // A time range: [base + 1h, base + 1h30m] holds k = 6..9.
    Map<Map<String, String>, List<AdminRpc.Sample>> ranged =
        AdminRpc.read(
            admin(),
            Selection.newBuilder()
                .setSelector("temperature")
                .setMinTimeMs(base + HOUR)
                .setMaxTimeMs(base + HOUR + 3 * STEP)
                .build());
    assertThat(ranged).hasSize(2).allSatisfy((l, s) -> assertThat(s).hasSize(4));
    assertThat(AdminRpc.read(admin(), AdminRpc.all())).hasSize(4);
  }

  @Test
  @Order(2)
  void tokenIsEnforcedHealthAndReflectionStayOpen() throws Exception {
    for (String wrong : new String[] {null, "wrong-token"}) {
      AdminServiceGrpc.AdminServiceBlockingStub stub = rpc.stub(wrong);
      assertStatus(
          () -> stub.getStatus(GetStatusRequest.getDefaultInstance()),
          Status.Code.UNAUTHENTICATED,
          "token");
      assertStatus(
          () -> stub.flush(FlushRequest.getDefaultInstance()),
          Status.Code.UNAUTHENTICATED,
          "token");
      assertStatus(
          () -> stub.readSamples(ReadSamplesRequest.getDefaultInstance()).hasNext(),
          Status.Code.UNAUTHENTICATED,
          "token");
    }
    HealthCheckResponse health =
        HealthGrpc.newBlockingStub(rpc.channel())
            .withDeadlineAfter(10, TimeUnit.SECONDS)
            .check(
                HealthCheckRequest.newBuilder()
                    .setService("tidemark.admin.v1.AdminService")
                    .build());
    assertThat(health.getStatus()).isEqualTo(HealthCheckResponse.ServingStatus.SERVING);

    // Server reflection answers without a token too (grpcurl list), in v1 and in v1alpha (older
    // grpcurl releases, Postman).
    assertThat(reflectedServices(rpc.channel()))
        .contains("tidemark.admin.v1.AdminService", "grpc.health.v1.Health");
    assertThat(reflectedServicesV1alpha(rpc.channel()))
        .contains("tidemark.admin.v1.AdminService", "grpc.health.v1.Health");
  }

  private static List<String> reflectedServices(io.grpc.Channel channel) throws Exception {
    List<String> services = new ArrayList<>();
    java.util.concurrent.CountDownLatch done = new java.util.concurrent.CountDownLatch(1);
    io.grpc.stub.StreamObserver<ServerReflectionRequest> req =
        ServerReflectionGrpc.newStub(channel)
            .serverReflectionInfo(
                new io.grpc.stub.StreamObserver<>() {
                  @Override
                  public void onNext(ServerReflectionResponse r) {
                    r.getListServicesResponse()
                        .getServiceList()
                        .forEach(s -> services.add(s.getName()));
                  }

                  @Override
                  public void onError(Throwable t) {
                    done.countDown();
                  }

                  @Override
                  public void onCompleted() {
                    done.countDown();
                  }
                });
    req.onNext(ServerReflectionRequest.newBuilder().setListServices("").build());
    req.onCompleted();
    assertThat(done.await(10, TimeUnit.SECONDS)).isTrue();
    return services;
  }

  @SuppressWarnings("deprecation") // v1alpha is what the test is about
  private static List<String> reflectedServicesV1alpha(io.grpc.Channel channel) throws Exception {
    List<String> services = new ArrayList<>();
    java.util.concurrent.CountDownLatch done = new java.util.concurrent.CountDownLatch(1);
    io.grpc.stub.StreamObserver<io.grpc.reflection.v1alpha.ServerReflectionRequest> req =
        io.grpc.reflection.v1alpha.ServerReflectionGrpc.newStub(channel)
            .serverReflectionInfo(
                new io.grpc.stub.StreamObserver<>() {
                  @Override
                  public void onNext(io.grpc.reflection.v1alpha.ServerReflectionResponse r) {
                    r.getListServicesResponse()
                        .getServiceList()
                        .forEach(s -> services.add(s.getName()));
                  }

                  @Override
                  public void onError(Throwable t) {
                    done.countDown();
                  }

                  @Override
                  public void onCompleted() {
                    done.countDown();
                  }
                });
    req.onNext(
        io.grpc.reflection.v1alpha.ServerReflectionRequest.newBuilder()
            .setListServices("")
            .build());
    req.onCompleted();
    assertThat(done.await(10, TimeUnit.SECONDS)).isTrue();
    return services;
  }

  @Test
  @Order(3)
  void badInputGetsTheDocumentedStatus() throws Exception {
    assertStatus(
        () ->
            admin()
                .findSeries(
                    FindSeriesRequest.newBuilder()
                        .setSelection(
                            Selection.newBuilder()
                                .addMatchers(AdminRpc.matcher("job", Op.REGEX, "(unclosed")))
                        .build()),
        Status.Code.INVALID_ARGUMENT,
        "(unclosed");
    assertStatus(
        () ->
            admin()
                .findSeries(FindSeriesRequest.newBuilder().setSelection(sel("up{job=}")).build()),
        Status.Code.INVALID_ARGUMENT,
        "invalid selector");
    assertStatus(
        () ->
            AdminRpc.read(
                admin(), Selection.newBuilder().setMinTimeMs(2000).setMaxTimeMs(1000).build()),
        Status.Code.INVALID_ARGUMENT,
        "is after");
    assertStatus(
        () -> admin().labelNames(LabelNamesRequest.newBuilder().setLimit(-1).build()),
        Status.Code.INVALID_ARGUMENT,
        "limit");
    assertStatus(
        () -> admin().deleteSeries(DeleteSeriesRequest.getDefaultInstance()),
        Status.Code.INVALID_ARGUMENT,
        "at least one matcher");
    assertStatus(
        () -> admin().setRetention(SetRetentionRequest.newBuilder().setRetention("30m").build()),
        Status.Code.INVALID_ARGUMENT,
        "at least 1h");
    Path existing = Files.createDirectories(tmp.resolve("existing"));
    assertStatus(
        () ->
            admin()
                .createCheckpoint(
                    CreateCheckpointRequest.newBuilder().setTargetDir(existing.toString()).build()),
        Status.Code.FAILED_PRECONDITION,
        "already exists");
    assertStatus(
        () ->
            admin()
                .createCheckpoint(
                    CreateCheckpointRequest.newBuilder().setTargetDir("relative/cp").build()),
        Status.Code.INVALID_ARGUMENT,
        "absolute");
    assertThat(admin().getStatus(GetStatusRequest.getDefaultInstance()).getRetention())
        .as("unchanged")
        .isEqualTo("15d");
  }

  @Test
  @Order(4)
  void commandLineTablesJsonAndExitCodes() throws Exception {
    Path work = tmp.resolve("cli");
    String address = "127.0.0.1:" + server.adminPort();
    Map<String, String> env = Map.of("TIDEMARK_ADMIN_TOKEN", TOKEN);

    AdminCli.Result status = AdminCli.run(work, env, "status", "--address", address, "--json");
    assertThat(status.code()).as("%s", status).isZero();
    JsonNode st = JSON.readTree(status.out());
    assertThat(st.get("schema_version").asInt()).isEqualTo(1);
    assertThat(st.get("data_dir").asText())
        .isEqualTo(server.dataDir().toAbsolutePath().normalize().toString());
    assertThat(st.get("series_per_bucket")).hasSize(3);

    AdminCli.Result read =
        AdminCli.run(
            work,
            Map.of(),
            "read",
            "temperature{room=\"a\"}",
            "--address",
            address,
            "--token",
            TOKEN,
            "--json");
    assertThat(read.code()).as("%s", read).isZero();
    List<String> series = read.out().lines().toList(); // JSON Lines: one object per series
    assertThat(series).hasSize(1);
    JsonNode first = JSON.readTree(series.get(0));
    assertThat(first.get("labels").get("room").asText()).isEqualTo("a");
    JsonNode samples = first.get("samples");
    assertThat(samples).hasSize(POINTS);
    for (int k = 0; k < POINTS; k++) {
      assertThat(samples.get(k).get("timestamp_ms").asLong()).isEqualTo(base + k * STEP);
      assertThat(Long.parseUnsignedLong(samples.get(k).get("value_bits").asText().substring(2), 16))
          .as("bits of sample %d", k)
          .isEqualTo(expectedBitsA(k));
      assertThat(samples.get(k).get("stale").asBoolean()).isEqualTo(k == 6);
    }

    AdminCli.Result values = AdminCli.run(work, env, "label-values", "job", "--address", address);
    assertThat(values.code()).as("%s", values).isZero();
    assertThat(values.out().lines()).containsExactly("api", "worker");

    AdminCli.Result buckets = AdminCli.run(work, env, "buckets", "--address", address);
    assertThat(buckets.code()).as("%s", buckets).isZero();
    assertThat(buckets.out().lines().findFirst().orElse(""))
        .contains("START")
        .contains("SERIES")
        .contains("BYTES");
    assertThat(buckets.out().lines()).hasSize(4);

    AdminCli.Result noToken = AdminCli.run(work, Map.of(), "status", "--address", address);
    assertThat(noToken.code()).as("%s", noToken).isEqualTo(3);
    assertThat(noToken.err()).contains("UNAUTHENTICATED");
    AdminCli.Result wrongToken =
        AdminCli.run(work, Map.of(), "flush", "--address", address, "--token", "nope");
    assertThat(wrongToken.code()).as("%s", wrongToken).isEqualTo(3);

    AdminCli.Result badSelector =
        AdminCli.run(work, env, "series", "{job=~\"(\"}", "--address", address);
    assertThat(badSelector.code()).as("%s", badSelector).isEqualTo(2);
    assertThat(badSelector.err()).contains("invalid").contains("job").doesNotContain("\tat ");
    AdminCli.Result badTime =
        AdminCli.run(work, env, "read", "up", "--start", "yesterday", "--address", address);
    assertThat(badTime.code()).as("%s", badTime).isEqualTo(2);
    AdminCli.Result refused = AdminCli.run(work, env, "set-retention", "30m", "--address", address);
    assertThat(refused.code()).as("%s", refused).isEqualTo(1);
    assertThat(refused.err()).contains("INVALID_ARGUMENT").contains("1h");

    AdminCli.Result help = AdminCli.run(work, Map.of(), "delete", "--help");
    assertThat(help.code()).isZero();
    assertThat(help.out()).contains("--start").contains("--json").contains("SELECTOR");
  }

  @Test
  @Order(5)
  void deleteThenSigkillAndRestartTheDeletedDataStaysGone() throws Exception {
    Map<Map<String, String>, List<AdminRpc.Sample>> before = AdminRpc.read(admin(), AdminRpc.all());
    assertThat(before).hasSize(4);

    // A whole bucket of one series: room b in [base + 1h, base + 2h).
    DeleteSeriesResponse whole =
        admin()
            .deleteSeries(
                DeleteSeriesRequest.newBuilder()
                    .setSelection(
                        Selection.newBuilder()
                            .setSelector("temperature{room=\"b\"}")
                            .setMinTimeMs(base + HOUR)
                            .setMaxTimeMs(base + 2 * HOUR - 1))
                    .build());
    assertThat(whole.getSamples()).isEqualTo(6);
    assertThat(whole.getSeries()).isEqualTo(1);
    assertThat(whole.getBuckets()).isEqualTo(1);
    // Parts of two buckets of another: worker's counter in [base + 30m, base + 1h30m].
    DeleteSeriesResponse partial =
        admin()
            .deleteSeries(
                DeleteSeriesRequest.newBuilder()
                    .setSelection(
                        Selection.newBuilder()
                            .addMatchers(AdminRpc.matcher("__name__", Op.EQUAL, "requests_total"))
                            .addMatchers(AdminRpc.matcher("job", Op.EQUAL, "worker"))
                            .setMinTimeMs(base + 3 * STEP)
                            .setMaxTimeMs(base + 9 * STEP))
                    .build());
    assertThat(partial.getSamples()).isEqualTo(7);
    assertThat(partial.getBuckets()).isEqualTo(2);
    // The tail of room a, in the bucket that is still open in the head: [base + 2h30m, end of
    // time].
    DeleteSeriesResponse head =
        admin()
            .deleteSeries(
                DeleteSeriesRequest.newBuilder()
                    .setSelection(
                        Selection.newBuilder()
                            .setSelector("temperature{room=\"a\"}")
                            .setMinTimeMs(base + 15 * STEP))
                    .build());
    assertThat(head.getSamples()).isEqualTo(3);

    Map<Map<String, String>, List<AdminRpc.Sample>> expected = new LinkedHashMap<>();
    before.forEach(
        (labels, samples) -> {
          List<AdminRpc.Sample> kept = new ArrayList<>();
          for (AdminRpc.Sample s : samples) {
            boolean goneB =
                "b".equals(labels.get("room")) && s.t() >= base + HOUR && s.t() < base + 2 * HOUR;
            boolean goneWorker =
                "worker".equals(labels.get("job"))
                    && s.t() >= base + 3 * STEP
                    && s.t() <= base + 9 * STEP;
            boolean goneA = "a".equals(labels.get("room")) && s.t() >= base + 15 * STEP;
            if (!goneB && !goneWorker && !goneA) {
              kept.add(s);
            }
          }
          expected.put(labels, kept);
        });
    assertThat(AdminRpc.read(admin(), AdminRpc.all())).isEqualTo(expected);

    // SIGKILL: no graceful seal; whatever the restart replays must not bring deleted samples back.
    server.kill();
    rpc.close();
    server = server.restart();
    rpc = new AdminRpc(server.adminPort());
    assertThat(AdminRpc.read(admin(), AdminRpc.all()))
        .as("after SIGKILL and a restart")
        .isEqualTo(expected);
    assertThat(
            admin()
                .labelValues(LabelValuesRequest.newBuilder().setName("room").build())
                .getValuesList())
        .containsExactly("a", "b");

    admin().flush(FlushRequest.getDefaultInstance());
    assertThat(admin().listBuckets(ListBucketsRequest.getDefaultInstance()).getBucketsList())
        .hasSize(3)
        .noneMatch(Bucket::getOpen);
    assertThat(admin().getStatus(GetStatusRequest.getDefaultInstance()).getHeadSeries()).isZero();
    assertThat(admin().compact(CompactRequest.getDefaultInstance()).getBytesAfter()).isPositive();
    assertThat(
            admin()
                .compact(
                    CompactRequest.newBuilder()
                        .setMinTimeMs(base)
                        .setMaxTimeMs(base + HOUR)
                        .build())
                .getBytesAfter())
        .isPositive();
    assertThat(AdminRpc.read(admin(), AdminRpc.all()))
        .as("after flush and compaction")
        .isEqualTo(expected);
  }

  @Test
  @Order(6)
  void checkpointStartedAsASecondServerAnswersTheSame() throws Exception {
    Path cp = tmp.resolve("checkpoint");
    AdminCli.Result made =
        AdminCli.run(
            tmp.resolve("cli"),
            Map.of("TIDEMARK_ADMIN_TOKEN", TOKEN),
            "checkpoint",
            cp.toString(),
            "--address",
            "127.0.0.1:" + server.adminPort(),
            "--json");
    assertThat(made.code()).as("%s", made).isZero();
    assertThat(JSON.readTree(made.out()).get("path").asText())
        .isEqualTo(cp.toAbsolutePath().normalize().toString());

    copy = ServerProcess.start(cp, "--admin-token", TOKEN);
    try (AdminRpc second = new AdminRpc(copy.adminPort())) {
      AdminServiceGrpc.AdminServiceBlockingStub other = second.stub(TOKEN);
      assertThat(AdminRpc.read(other, AdminRpc.all()))
          .isEqualTo(AdminRpc.read(admin(), AdminRpc.all()));
      assertThat(other.findSeries(FindSeriesRequest.getDefaultInstance()))
          .isEqualTo(admin().findSeries(FindSeriesRequest.getDefaultInstance()));
      assertThat(other.labelNames(LabelNamesRequest.getDefaultInstance()))
          .isEqualTo(admin().labelNames(LabelNamesRequest.getDefaultInstance()));
      assertThat(other.getStatus(GetStatusRequest.getDefaultInstance()).getDataDir())
          .isEqualTo(cp.toAbsolutePath().normalize().toString());

      // Retention on the copy only: 1h drops the two buckets that ended more than an hour ago.
      String address = "127.0.0.1:" + copy.adminPort();
      Map<String, String> env = Map.of("TIDEMARK_ADMIN_TOKEN", TOKEN);
      AdminCli.Result set =
          AdminCli.run(
              tmp.resolve("cli"), env, "set-retention", "1h", "--address", address, "--json");
      assertThat(set.code()).as("%s", set).isZero();
      assertThat(JSON.readTree(set.out()).get("retention_ms").asLong()).isEqualTo(HOUR);
      AdminCli.Result applied =
          AdminCli.run(tmp.resolve("cli"), env, "apply-retention", "--address", address, "--json");
      assertThat(applied.code()).as("%s", applied).isZero();
      assertThat(JSON.readTree(applied.out()).get("buckets_dropped").asInt()).isEqualTo(2);
      assertThat(other.listBuckets(ListBucketsRequest.getDefaultInstance()).getBucketsList())
          .extracting(Bucket::getStartTimeMs)
          .containsExactly(base + 2 * HOUR);
      assertThat(admin().listBuckets(ListBucketsRequest.getDefaultInstance()).getBucketsCount())
          .as("the first server keeps its buckets")
          .isEqualTo(3);
    }
    assertThat(copy.stop()).isZero();
  }

  @Test
  @Order(7)
  void selectorsThatMatchEverySeriesAreRefusedAndDeleteNothing() throws Exception {
    Map<Map<String, String>, List<AdminRpc.Sample>> before = AdminRpc.read(admin(), AdminRpc.all());
    assertThat(before).hasSize(4);
    String address = "127.0.0.1:" + server.adminPort();
    Map<String, String> env = Map.of("TIDEMARK_ADMIN_TOKEN", TOKEN);
    String message = "vector selector must contain at least one non-empty matcher";

    // The CLI knows locally: exit code 2, no call made.
    for (String selector :
        List.of(
            "{case=~\".*\"}", "{nosuch=\"\"}", "{job!=\"nope\"}", "{room=~\"a|\", x=\"\"}", "{}")) {
      AdminCli.Result r =
          AdminCli.run(tmp.resolve("cli"), env, "delete", selector, "--address", address);
      assertThat(r.code()).as("delete %s: %s", selector, r).isEqualTo(2);
      assertThat(r.err()).contains(message).doesNotContain("\tat ");
    }
    AdminCli.Result series =
        AdminCli.run(tmp.resolve("cli"), env, "series", "{case=~\".*\"}", "--address", address);
    assertThat(series.code()).as("%s", series).isEqualTo(2);
    assertThat(series.err()).contains(message);

    // The server is the real guard: the selector string and the structured matchers, together.
    Selection structured =
        Selection.newBuilder().addMatchers(AdminRpc.matcher("nosuch", Op.EQUAL, "")).build();
    Selection both =
        Selection.newBuilder()
            .addMatchers(AdminRpc.matcher("job", Op.REGEX, ".*"))
            .setSelector("{room!=\"x\"}")
            .build();
    for (Selection s :
        List.of(sel("{case=~\".*\"}"), sel("{nosuch=\"\"}"), sel("{}"), structured, both)) {
      assertStatus(
          () -> admin().deleteSeries(DeleteSeriesRequest.newBuilder().setSelection(s).build()),
          Status.Code.INVALID_ARGUMENT,
          message);
      assertStatus(
          () -> admin().findSeries(FindSeriesRequest.newBuilder().setSelection(s).build()),
          Status.Code.INVALID_ARGUMENT,
          message);
      assertStatus(() -> AdminRpc.read(admin(), s), Status.Code.INVALID_ARGUMENT, message);
      assertStatus(
          () -> admin().labelNames(LabelNamesRequest.newBuilder().setSelection(s).build()),
          Status.Code.INVALID_ARGUMENT,
          message);
      assertStatus(
          () ->
              admin()
                  .labelValues(
                      LabelValuesRequest.newBuilder().setName("job").setSelection(s).build()),
          Status.Code.INVALID_ARGUMENT,
          message);
    }
    assertThat(AdminRpc.read(admin(), AdminRpc.all())).as("nothing deleted").isEqualTo(before);

    // Without a selector the inspection calls still cover every series; one non-empty matcher is
    // enough.
    AdminCli.Result all = AdminCli.run(tmp.resolve("cli"), env, "series", "--address", address);
    assertThat(all.code()).as("%s", all).isZero();
    assertThat(all.out().lines()).hasSize(4);
    assertThat(
            admin()
                .findSeries(
                    FindSeriesRequest.newBuilder()
                        .setSelection(sel("{case=~\".*\", room=\"a\"}"))
                        .build())
                .getSeriesList())
        .hasSize(1);
  }

  static void assertStatus(
      org.assertj.core.api.ThrowableAssert.ThrowingCallable call,
      Status.Code code,
      String inMessage) {
    assertThatThrownBy(call)
        .isInstanceOfSatisfying(
            StatusRuntimeException.class,
            e -> {
              assertThat(e.getStatus().getCode()).as("status of %s", e).isEqualTo(code);
              assertThat(e.getStatus().getDescription()).contains(inMessage);
            });
  }
}
