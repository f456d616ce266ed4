package dev.tidemark.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.tidemark.rocksdb.RocksDbKvStore;
import dev.tidemark.tsdb.append.SampleBatch;
import dev.tidemark.tsdb.codec.BucketListValue;
import dev.tidemark.tsdb.codec.Keys;
import dev.tidemark.tsdb.engine.Engine;
import dev.tidemark.tsdb.engine.EngineConfig;
import dev.tidemark.tsdb.kv.WriteBatch;
import dev.tidemark.tsdb.model.Labels;
import dev.tidemark.tsdb.model.MetricMetadata;
import dev.tidemark.tsdb.query.LabelMatcher;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code tidemark verify} in-process on RocksDB stores: exit codes, report, repair, the lock. */
class VerifyCommandTest {
  static final long HOUR = 3_600_000L;

  @TempDir Path dir;

  record Run(int code, String out, String err) {}

  static Run run(String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    int code = Main.run(new PrintWriter(out, true), new PrintWriter(err, true), args);
    return new Run(code, out.toString(), err.toString());
  }

  /** Two sealed hours of one series, written by the engine. */
  Path store() {
    Path data = dir.resolve("data");
    long t0 = (System.currentTimeMillis() - 3 * HOUR) / HOUR * HOUR;
    try (RocksDbKvStore kv = RocksDbKvStore.open(data);
        Engine e =
            Engine.open(kv, EngineConfig.builder().retentionInterval(Duration.ZERO).build())) {
      SampleBatch b = new SampleBatch();
      for (long t = t0; t < t0 + 2 * HOUR; t += 600_000) {
        b.addPoint(Labels.of("__name__", "up", "job", "a"), MetricMetadata.UNKNOWN, t, t / 1000.0);
      }
      assertThat(e.append(b).rejectedPoints()).isZero();
    }
    return data;
  }

  @Test
  void cleanDamagedRepairedAndLocked() {
    Path data = store();
    Run clean = run("verify", "--data-dir", data.toString());
    assertThat(clean.code()).as("%s", clean).isZero();
    assertThat(clean.out())
        .contains(
            "tidemark verify: " + data.toAbsolutePath(),
            "2 buckets with records",
            "no problems found");

    try (RocksDbKvStore kv = RocksDbKvStore.open(data)) {
      kv.write(new WriteBatch().put(Keys.bucketList(), BucketListValue.encode(List.of())));
      Run locked = run("verify", "--data-dir", data.toString());
      assertThat(locked.code()).isEqualTo(1);
      assertThat(locked.err())
          .contains("is locked by another process", "Stop it first")
          .doesNotContain("\tat ");
    }
    Run damaged = run("verify", "--data-dir", data.toString());
    assertThat(damaged.code()).as("%s", damaged).isEqualTo(1);
    assertThat(damaged.out())
        .contains(
            "2 problems of 1 kind:",
            "bucket with records missing from the BucketList",
            "BUCKET_NOT_LISTED")
        .contains("--repair");

    Run repaired = run("verify", "--data-dir", data.toString(), "--repair");
    assertThat(repaired.code()).as("%s", repaired).isZero();
    assertThat(repaired.out())
        .contains(
            "repair:",
            "2  buckets with records added to the BucketList",
            "after the repair:",
            "no problems found");
    assertThat(run("verify", "--data-dir", data.toString()).code()).isZero();
    try (RocksDbKvStore kv = RocksDbKvStore.open(data);
        Engine e =
            Engine.open(kv, EngineConfig.builder().retentionInterval(Duration.ZERO).build())) {
      assertThat(e.select(0, Long.MAX_VALUE, List.of(LabelMatcher.equal("job", "a"))).toList())
          .hasSize(1);
      assertThat(e.buckets()).hasSize(2);
    }
  }

  @Test
  void badArgumentsAreExitCode2() throws Exception {
    Run missing = run("verify");
    assertThat(missing.code()).isEqualTo(2);
    assertThat(missing.err()).contains("--data-dir");
    Run nothing = run("verify", "--data-dir", dir.resolve("nope").toString());
    assertThat(nothing.code()).isEqualTo(2);
    assertThat(nothing.err()).contains("does not exist");
    assertThat(Files.exists(dir.resolve("nope"))).as("not created").isFalse();
    Path empty = Files.createDirectories(dir.resolve("empty"));
    Run notAStore = run("verify", "--data-dir", empty.toString());
    assertThat(notAStore.code()).isEqualTo(2);
    assertThat(notAStore.err()).contains("not a Tidemark data folder");
    assertThat(run("verify", "--data-dir", empty.toString(), "--fix").code()).isEqualTo(2);
    Run help = run("verify", "--help");
    assertThat(help.code()).isZero();
    assertThat(help.out()).contains("--repair", "Exit codes");
    assertThat(run("--help").out()).contains("tidemark verify");
  }
}
