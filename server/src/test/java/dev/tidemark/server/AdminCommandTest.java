package dev.tidemark.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code tidemark admin ...} in-process against an in-process server: exit codes and output. */
class AdminCommandTest {
  static final String[] COMMANDS = {
    "status",
    "buckets",
    "label-names",
    "label-values",
    "series",
    "read",
    "delete",
    "flush",
    "compact",
    "checkpoint",
    "set-retention",
    "apply-retention"
  };

  @TempDir Path dir;
  TidemarkServer server;
  String address;

  record Run(int code, String out, String err) {}

  @BeforeEach
  void start() {
    server =
        TidemarkServer.start(
            ServerConfig.builder()
                .dataDir(dir.resolve("data"))
                .anyFreePorts()
                .adminToken("tok")
                .shutdownTimeout(Duration.ofSeconds(5))
                .build());
    address = "127.0.0.1:" + server.adminPort();
  }

  @AfterEach
  void stop() {
    server.close();
  }

  static Run run(String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    int code = Main.run(new PrintWriter(out, true), new PrintWriter(err, true), args);
    return new Run(code, out.toString(), err.toString());
  }

  @Test
  void helpOnEveryCommand() {
    assertThat(run("admin", "--help").out()).contains(COMMANDS).contains("Exit codes");
    for (String c : COMMANDS) {
      Run r = run("admin", c, "--help");
      assertThat(r.code()).as(c).isZero();
      assertThat(r.out()).as(c).contains("--address", "--token", "--json", "tidemark admin " + c);
    }
    assertThat(run("--help").out()).contains("tidemark admin");
  }

  @Test
  void tablesForSeriesAndSamples() {
    long t0 = (System.currentTimeMillis() - 600_000) / 1000 * 1000;
    dev.tidemark.tsdb.model.Labels up =
        dev.tidemark.tsdb.model.Labels.of("__name__", "up", "job", "a\"b");
    dev.tidemark.tsdb.append.SampleBatch batch = new dev.tidemark.tsdb.append.SampleBatch();
    batch.addPoint(up, dev.tidemark.tsdb.model.MetricMetadata.UNKNOWN, t0, 1.5);
    batch.addPoint(
        up,
        dev.tidemark.tsdb.model.MetricMetadata.UNKNOWN,
        t0 + 1000,
        Double.longBitsToDouble(0x7ff8000000000123L));
    batch.addStaleMarker(up, dev.tidemark.tsdb.model.MetricMetadata.UNKNOWN, t0 + 2000).endPoint();
    server.engine().append(batch);

    Run series = run("admin", "series", "--address", address, "--token", "tok");
    assertThat(series.out().lines()).containsExactly("up{job=\"a\\\"b\"}");
    Run read =
        run(
            "admin",
            "read",
            "up",
            "--start",
            "-1h",
            "--end",
            "now",
            "--address",
            address,
            "--token",
            "tok");
    assertThat(read.code()).as("%s", read).isZero();
    assertThat(read.out().lines()).hasSize(4);
    assertThat(read.out())
        .contains(t0 + "  1.5", "NaN (0x7ff8000000000123)", (t0 + 2000) + "  stale");
    Run none = run("admin", "read", "up", "--end", "-1h", "--address", address, "--token", "tok");
    assertThat(none.out()).isEmpty();
    Run status = run("admin", "status", "--address", address, "--token", "tok");
    assertThat(status.out()).contains("head series       1", "BUCKET", "SERIES");
  }

  @Test
  void exitCodes() {
    Run ok = run("admin", "status", "--address", address, "--token", "tok");
    assertThat(ok.code()).as("%s", ok).isZero();
    assertThat(ok.out()).contains("schema version", "retention", "15d");

    Run json = run("admin", "flush", "--address", address, "--token", "tok", "--json");
    assertThat(json.code()).as("%s", json).isZero();
    assertThat(json.out()).contains("\"buckets_sealed\"");

    Run unauth = run("admin", "buckets", "--address", address, "--token", "bad");
    assertThat(unauth.code()).isEqualTo(3);
    assertThat(unauth.err()).contains("UNAUTHENTICATED", "invalid admin token");

    Run refused = run("admin", "set-retention", "10m", "--address", address, "--token", "tok");
    assertThat(refused.code()).isEqualTo(1);
    assertThat(refused.err()).contains("INVALID_ARGUMENT", "at least 1h");

    assertThat(run("admin", "series", "up{", "--address", address, "--token", "tok").code())
        .isEqualTo(2);
    assertThat(
            run("admin", "read", "--end", "tomorrow", "--address", address, "--token", "tok")
                .code())
        .isEqualTo(2);
    assertThat(run("admin", "delete", "{}", "--address", address, "--token", "tok").code())
        .isEqualTo(2);
    for (String[] matchAll :
        new String[][] {
          {"delete", "{case=~\".*\"}"}, {"delete", "{nosuch=\"\"}"}, {"series", "{job!=\"x\"}"},
          {"read", "{a=~\".*\"}"}, {"label-names", "{a=\"\"}"}, {"label-values", "job", "{}"}
        }) {
      String[] args =
          java.util.stream.Stream.concat(
                  java.util.stream.Stream.of("admin"),
                  java.util.stream.Stream.concat(
                      java.util.Arrays.stream(matchAll),
                      java.util.stream.Stream.of("--address", address, "--token", "tok")))
              .toArray(String[]::new);
      Run r = run(args);
      assertThat(r.code()).as("%s: %s", String.join(" ", matchAll), r).isEqualTo(2);
      assertThat(r.err()).contains("vector selector must contain at least one non-empty matcher");
    }
    assertThat(run("admin", "series", "--address", address, "--token", "tok").code())
        .as("no selector")
        .isZero();
    assertThat(run("admin", "status", "--address", "nope", "--token", "tok").code()).isEqualTo(2);
    assertThat(run("admin", "status", "--no-such-option").code()).isEqualTo(2);
    assertThat(run("admin").code()).isEqualTo(2);

    Run unreachable = run("admin", "status", "--address", "127.0.0.1:1", "--timeout", "5s");
    assertThat(unreachable.code()).isEqualTo(1);
    assertThat(unreachable.err()).contains("UNAVAILABLE");
  }
}
