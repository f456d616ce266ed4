package dev.tidemark.it;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * A real Prometheus (Debian's {@code prometheus} on the PATH) on a free loopback port with a given
 * configuration, for tests of what Prometheus does with Tidemark ({@code /federate}, remote read).
 */
final class PrometheusProcess implements AutoCloseable {
  private static final ObjectMapper JSON = new ObjectMapper();

  private final Process process;
  private final int port;
  private final Path log;
  private final HttpClient http =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  private PrometheusProcess(Process process, int port, Path log) {
    this.process = process;
    this.port = port;
    this.log = log;
  }

  /**
   * Starts Prometheus with {@code configYaml} as its configuration, data and log in {@code dir}.
   */
  static PrometheusProcess start(Path dir, String configYaml) throws IOException {
    int port;
    try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      port = s.getLocalPort();
    }
    Path config = dir.resolve("prometheus.yml");
    Files.writeString(config, configYaml);
    Path log = dir.resolve("prometheus.log");
    Process p =
        new ProcessBuilder(
                "prometheus",
                "--config.file=" + config,
                "--storage.tsdb.path=" + dir.resolve("prometheus-data"),
                "--web.listen-address=127.0.0.1:" + port)
            .directory(dir.toFile())
            .redirectErrorStream(true)
            .redirectOutput(log.toFile())
            .start();
    return new PrometheusProcess(p, port, log);
  }

  /**
   * Polls Prometheus' instant query API with {@code promql} until the result satisfies {@code done}
   * (within 60 s); the last result, or null if it never did.
   */
  JsonNode queryUntil(String promql, Predicate<JsonNode> done) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (System.nanoTime() < deadline && process.isAlive()) {
      try {
        HttpResponse<String> r =
            http.send(
                HttpRequest.newBuilder(
                        URI.create(
                            "http://127.0.0.1:"
                                + port
                                + "/api/v1/query?query="
                                + URLEncoder.encode(promql, StandardCharsets.UTF_8)))
                    .build(),
                HttpResponse.BodyHandlers.ofString());
        JsonNode result = JSON.readTree(r.body()).path("data").path("result");
        if (done.test(result)) {
          return result;
        }
      } catch (IOException notYet) {
        // still starting
      }
      Thread.sleep(250);
    }
    return null;
  }

  /** Prometheus' own log, for failure messages. */
  String log() throws IOException {
    return Files.readString(log);
  }

  @Override
  public void close() throws InterruptedException {
    process.destroy();
    if (!process.waitFor(30, TimeUnit.SECONDS)) {
      process.destroyForcibly().waitFor();
    }
  }
}
