package dev.tidemark.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.tidemark.tsdb.append.SampleBatch;
import dev.tidemark.tsdb.model.Labels;
import dev.tidemark.tsdb.model.MetricMetadata;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
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
  void anUnknownSubcommandIsOneLineNamingTheSubcommands() {
    Run r = run("admin", "frobnicate");
    assertThat(r.code()).isEqualTo(2);
    assertThat(r.err().lines()).hasSize(1);
    assertThat(r.err())
        .startsWith("tidemark admin: unknown subcommand 'frobnicate'; subcommands: ")
        .contains(COMMANDS);
    assertThat(run("frobnicate").err()).startsWith("tidemark: unknown subcommand 'frobnicate'");
    assertThat(run("admin", "--frobnicate").err())
        .as("an unknown option stays picocli's message")
        .contains("Unknown option");
  }

  @Test
  void tablesForSeriesAndSamples() {
    long t0 = (System.currentTimeMillis() - 600_000) / 1000 * 1000;
    if ((t0 + 2000) / 3_600_000 != t0 / 3_600_000) {
      t0 -= 3000; // all three samples in one hour: one head series for "status" below
    }
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

  /**
   * {@code read --json} end to end through the gRPC stream: one line per series, in label order; a
   * series longer than a message (the server splits at 10000 samples) is one line; values, NaN
   * bits, stale flags and labels as written.
   */
  @Test
  void readJsonIsOneLinePerSeries() throws Exception {
    long t0 = (System.currentTimeMillis() - 600_000) / 1000 * 1000;
    int many = 3000;
    int longSeries = 25_000;
    MetricMetadata meta = MetricMetadata.UNKNOWN;
    SampleBatch batch = new SampleBatch();
    for (int k = 0; k < many; k++) {
      Labels l = Labels.of("__name__", "m", "k", String.format(Locale.ROOT, "%05d", k));
      batch.addPoint(l, meta, t0, k + 0.25);
      if (k % 7 == 0) {
        batch.addStaleMarker(l, meta, t0 + 1000).endPoint();
      } else {
        batch.addPoint(l, meta, t0 + 1000, Double.longBitsToDouble(0x7ff8000000000000L | k));
      }
    }
    Labels lng = Labels.of("__name__", "n", "job", "long \"one\"");
    for (int i = 0; i < longSeries; i++) {
      batch.addPoint(lng, meta, t0 + i, i * 1.5);
    }
    server.engine().append(batch);

    Run read =
        run(
            "admin",
            "read",
            "{__name__=~\"m|n\"}",
            "--json",
            "--address",
            address,
            "--token",
            "tok");
    assertThat(read.code()).as("%s", read.err()).isZero();
    assertThat(read.out()).endsWith("\n");
    List<String> lines = read.out().lines().toList();
    assertThat(lines).hasSize(many + 1);
    ObjectMapper json = new ObjectMapper();
    for (int k = 0; k < many; k++) {
      JsonNode series = json.readTree(lines.get(k));
      assertThat(series.get("labels").size()).isEqualTo(2);
      assertThat(series.get("labels").get("__name__").asText()).isEqualTo("m");
      assertThat(series.get("labels").get("k").asText())
          .isEqualTo(String.format(Locale.ROOT, "%05d", k));
      JsonNode samples = series.get("samples");
      assertThat(samples).hasSize(2);
      assertThat(samples.get(0).get("timestamp_ms").asLong()).isEqualTo(t0);
      assertThat(samples.get(0).get("value").asDouble()).isEqualTo(k + 0.25);
      assertThat(bits(samples.get(0))).isEqualTo(Double.doubleToRawLongBits(k + 0.25));
      assertThat(samples.get(0).get("stale").asBoolean()).isFalse();
      assertThat(samples.get(1).get("timestamp_ms").asLong()).isEqualTo(t0 + 1000);
      assertThat(samples.get(1).get("value").asText()).isEqualTo("NaN");
      assertThat(bits(samples.get(1)))
          .isEqualTo(k % 7 == 0 ? 0x7ff0000000000002L : 0x7ff8000000000000L | k);
      assertThat(samples.get(1).get("stale").asBoolean()).isEqualTo(k % 7 == 0);
    }
    JsonNode last = json.readTree(lines.get(many));
    assertThat(last.get("labels").get("job").asText()).isEqualTo("long \"one\"");
    JsonNode samples = last.get("samples");
    assertThat(samples).hasSize(longSeries);
    for (int i = 0; i < longSeries; i++) {
      assertThat(samples.get(i).get("timestamp_ms").asLong()).isEqualTo(t0 + i);
      assertThat(bits(samples.get(i))).isEqualTo(Double.doubleToRawLongBits(i * 1.5));
    }

    Run none =
        run("admin", "read", "m", "--end", "-1h", "--json", "--address", address, "--token", "tok");
    assertThat(none.code()).isZero();
    assertThat(none.out()).isEmpty();
  }

  static long bits(JsonNode sample) {
    String hex = sample.get("value_bits").asText();
    assertThat(hex).startsWith("0x").hasSize(18);
    return Long.parseUnsignedLong(hex.substring(2), 16);
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
