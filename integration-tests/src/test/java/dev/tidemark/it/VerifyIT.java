package dev.tidemark.it;

import static org.assertj.core.api.Assertions.assertThat;

import dev.tidemark.rocksdb.RocksDbKvStore;
import dev.tidemark.tsdb.codec.BucketListValue;
import dev.tidemark.tsdb.codec.ForwardIndexValue;
import dev.tidemark.tsdb.codec.Keys;
import dev.tidemark.tsdb.codec.RecordType;
import dev.tidemark.tsdb.codec.TimeBucket;
import dev.tidemark.tsdb.kv.KvCursor;
import dev.tidemark.tsdb.kv.WriteBatch;
import dev.tidemark.tsdb.model.Labels;
import io.grpc.ManagedChannel;
import io.opentelemetry.proto.collector.metrics.v1.MetricsServiceGrpc;
import io.opentelemetry.proto.metrics.v1.NumberDataPoint;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code tidemark verify} (issue #9) with the real jar as a process: a store written by a server
 * over OTLP verifies clean (exit 0); damaged the way the append bug of issue #9 damaged stores (the
 * ForwardIndex and dictionary records of one series of the first hour gone while its postings and
 * chunk remain; the second hour missing from the BucketList), it fails verification (exit 1) naming
 * both problems; {@code --repair} fixes it (exit 0); verify refuses to run beside a server; and a
 * server started on the repaired store serves every readable sample through the admin API, the
 * second hour's included.
 */
@ExtendWith(ServerLogs.class)
class VerifyIT {
  static final long HOUR = 3_600_000L;
  static final long STEP = 600_000L;
  static final Duration DEADLINE = Duration.ofSeconds(120);

  @TempDir Path tmp;

  @Test
  void damagedStoreIsFoundRepairedAndServedAgain() throws Exception {
    Path data = tmp.resolve("data");
    ServerProcess server = ServerProcess.start(data);
    long base = (System.currentTimeMillis() - 3 * HOUR) / HOUR * HOUR;
    ManagedChannel otlp = Otlp.channel(server.grpcPort());
    try {
      List<NumberDataPoint> a = new ArrayList<>();
      List<NumberDataPoint> b = new ArrayList<>();
      for (int k = 0; k < 18; k++) { // three hours, every 10 minutes
        a.add(Otlp.point(base + k * STEP, k, "room", "a"));
        b.add(Otlp.point(base + k * STEP, 100 + k, "room", "b"));
      }
      AdminIT.export(
          MetricsServiceGrpc.newBlockingStub(otlp),
          Otlp.request(
              "api",
              "host-1",
              List.of(
                  Otlp.gauge("temperature", a.toArray(new NumberDataPoint[0])),
                  Otlp.gauge("temperature", b.toArray(new NumberDataPoint[0])))));
    } finally {
      otlp.shutdownNow();
    }
    assertThat(server.stop()).isZero();

    ServerProcess.Exit clean = verify(data);
    assertThat(clean.code()).as(clean.output()).isZero();
    assertThat(clean.output())
        .contains("no problems found", "3 buckets with records (3 in the BucketList)");

    // The damage of issue #9, written with RocksDB and the codecs directly.
    TimeBucket b0 = TimeBucket.containing(base, 1);
    TimeBucket b1 = b0.next();
    TimeBucket b2 = b1.next();
    Labels roomB = null;
    try (RocksDbKvStore kv = RocksDbKvStore.open(data)) {
      int id = -1;
      try (KvCursor c = kv.scanPrefix(Keys.bucketPrefix(RecordType.FORWARD_INDEX, b0))) {
        while (c.next()) {
          Labels l = ForwardIndexValue.decode(c.value()).labels();
          if ("b".equals(l.get("room"))) {
            id = Keys.seriesId(c.key());
            roomB = l;
          }
        }
      }
      assertThat(id).isNotNegative();
      kv.write(
          new WriteBatch()
              .delete(Keys.forwardIndex(b0, id))
              .delete(Keys.seriesDictionary(b0, roomB))
              .put(Keys.bucketList(), BucketListValue.encode(List.of(b0, b2))));
    }

    ServerProcess.Exit damaged = verify(data);
    assertThat(damaged.code()).as(damaged.output()).isEqualTo(1);
    assertThat(damaged.output())
        .contains("bucket with records missing from the BucketList", "BUCKET_NOT_LISTED")
        .contains("posting names a series without a ForwardIndex record", "POSTING_UNKNOWN_SERIES")
        .contains("TIME_SERIES_UNKNOWN_SERIES")
        .contains("--repair")
        .doesNotContain("\tat ");

    ServerProcess.Exit repaired = verify(data, "--repair");
    assertThat(repaired.code()).as(repaired.output()).isZero();
    assertThat(repaired.output())
        .contains(
            "repair:",
            "1  buckets with records added to the BucketList",
            "after the repair:",
            "no problems found");
    assertThat(verify(data).code()).isZero();

    server = server.restart();
    try {
      ServerProcess.Exit locked = verify(data);
      assertThat(locked.code()).as(locked.output()).isEqualTo(1);
      assertThat(locked.output()).contains("locked by another process");

      Map<Map<String, String>, List<AdminRpc.Sample>> read;
      try (AdminRpc rpc = new AdminRpc(server.adminPort())) {
        read = AdminRpc.read(rpc.stub(null), AdminRpc.all());
      }
      Map<Long, Double> expectedA = new LinkedHashMap<>();
      Map<Long, Double> expectedB = new LinkedHashMap<>();
      for (int k = 0; k < 18; k++) {
        expectedA.put(base + k * STEP, (double) k);
        if (k >= 6) { // room b's first hour had lost its labels: dropped by the repair
          expectedB.put(base + k * STEP, 100.0 + k);
        }
      }
      assertThat(read).hasSize(2);
      read.forEach(
          (labels, samples) -> {
            Map<Long, Double> got = new LinkedHashMap<>();
            samples.forEach(s -> got.put(s.t(), Double.longBitsToDouble(s.bits())));
            assertThat(got)
                .as("%s", labels)
                .isEqualTo("a".equals(labels.get("room")) ? expectedA : expectedB);
          });
    } finally {
      assertThat(server.stop()).isZero();
    }
    ServerProcess.Exit after = verify(data);
    assertThat(after.code())
        .as("after the server ran on the repaired store: %s", after.output())
        .isZero();
  }

  private ServerProcess.Exit verify(Path data, String... extra) throws Exception {
    List<String> args =
        new ArrayList<>(List.of("verify", "--data-dir", data.toAbsolutePath().toString()));
    args.addAll(List.of(extra));
    return ServerProcess.runToExit(tmp.resolve("verify"), DEADLINE, args.toArray(new String[0]));
  }
}
