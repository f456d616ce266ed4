package dev.tidemark.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.ManagedChannel;
import io.opentelemetry.proto.collector.metrics.v1.MetricsServiceGrpc;
import io.opentelemetry.proto.metrics.v1.NumberDataPoint;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code /api/v1/export} from one server and {@code /api/v1/import} into another, with curl as an
 * operator moves data: VictoriaMetrics' JSON lines and the Prometheus text format each carry every
 * sample of the series across, bit for bit (a NaN, 0.1, 1e-7, large counters), so that the second
 * server's export is the first's.
 */
class ExportImportIT {
  @TempDir Path tmp;

  @Test
  void exportFromOneServerImportsIntoAnotherInBothFormats() throws Exception {
    long now = System.currentTimeMillis() / 1000 * 1000;
    try (ServerProcess a = ServerProcess.start(tmp.resolve("a"));
        ServerProcess b = ServerProcess.start(tmp.resolve("b"));
        ServerProcess c = ServerProcess.start(tmp.resolve("c"))) {
      ManagedChannel ch = Otlp.channel(a.grpcPort());
      try {
        NumberDataPoint[] done = new NumberDataPoint[40];
        NumberDataPoint[] temp = new NumberDataPoint[4];
        for (int i = 0; i < done.length; i++) {
          done[i] = Otlp.point(now - (done.length - 1 - i) * 15_000L, 1e12 + i * 10, "queue", "q1");
        }
        double[] temps = {0.1, Double.NaN, 1e-7, -21.5};
        for (int i = 0; i < temps.length; i++) {
          temp[i] = Otlp.point(now - (temps.length - 1 - i) * 60_000L, temps[i], "room", "r\"1");
        }
        MetricsServiceGrpc.newBlockingStub(ch)
            .withDeadlineAfter(30, TimeUnit.SECONDS)
            .export(
                Otlp.request(
                    "mover",
                    "i-1",
                    List.of(Otlp.counter("jobs.done", done), Otlp.gauge("temp", temp))));
      } finally {
        ch.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
      }
      String match = "match[]={job=\"mover\"}";

      // JSON lines: A -> file -> B
      Path json = tmp.resolve("export.jsonl");
      WebConfigIT.Curl exported =
          WebConfigIT.curl(
              "-o", json.toString(), a.apiUrl("/api/v1/export"), "--data-urlencode", match);
      assertThat(exported.status()).isEqualTo("200");
      List<String> lines = Files.readAllLines(json);
      assertThat(lines).hasSizeGreaterThanOrEqualTo(2); // and target_info, the resource's
      assertThat(String.join("\n", lines))
          .contains(
              "\"__name__\":\"jobs_done_total\"", "\"queue\":\"q1\"", "\"NaN\"", "0.1", "1.0E-7")
          .contains("\"timestamps\":[" + (now - 39 * 15_000L) + ",");
      WebConfigIT.Curl imported =
          WebConfigIT.curl("--data-binary", "@" + json, b.apiUrl("/api/v1/import"));
      assertThat(imported.status()).as(imported.body()).isEqualTo("204");
      Path again = tmp.resolve("again.jsonl");
      WebConfigIT.curl(
          "-o", again.toString(), b.apiUrl("/api/v1/export"), "--data-urlencode", match);
      assertThat(sorted(again)).isEqualTo(sorted(json));

      // the Prometheus text format: A -> file -> C
      Path text = tmp.resolve("export.prom");
      WebConfigIT.curl(
          "-o",
          text.toString(),
          a.apiUrl("/api/v1/export"),
          "--data-urlencode",
          match,
          "-d",
          "format=prometheus");
      assertThat(Files.readAllLines(text))
          .anySatisfy(
              l ->
                  assertThat(l)
                      .startsWith("temp{")
                      .contains("room=\"r\\\"1\"")
                      .endsWith("} NaN " + (now - 120_000L)));
      WebConfigIT.Curl importedText =
          WebConfigIT.curl("--data-binary", "@" + text, c.apiUrl("/api/v1/import/prometheus"));
      assertThat(importedText.status()).as(importedText.body()).isEqualTo("204");
      Path textAgain = tmp.resolve("again.prom");
      WebConfigIT.curl(
          "-o",
          textAgain.toString(),
          c.apiUrl("/api/v1/export"),
          "--data-urlencode",
          match,
          "-d",
          "format=prometheus");
      assertThat(sorted(textAgain)).isEqualTo(sorted(text));

      // a line that does not parse: 400 naming it; the lines before it are stored
      Path bad = tmp.resolve("bad.jsonl");
      Files.writeString(
          bad,
          "{\"metric\":{\"__name__\":\"ok\"},\"values\":[1],\"timestamps\":["
              + now
              + "]}\n"
              + "{\"metric\":{\"__name__\":\"bad\"},\"values\":[1,2],\"timestamps\":["
              + now
              + "]}\n");
      WebConfigIT.Curl refused =
          WebConfigIT.curl("--data-binary", "@" + bad, b.apiUrl("/api/v1/import"));
      assertThat(refused.status()).isEqualTo("400");
      assertThat(refused.body()).contains("cannot parse line 2", "2 values but 1 timestamps");
      assertThat(WebConfigIT.curl(b.apiUrl("/api/v1/query?query=ok")).body()).contains("\"ok\"");
    }
  }

  private static List<String> sorted(Path file) throws Exception {
    String[] lines = Files.readString(file).split("\n");
    Arrays.sort(lines);
    return List.of(lines);
  }
}
