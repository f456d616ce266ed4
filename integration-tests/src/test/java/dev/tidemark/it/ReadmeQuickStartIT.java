package dev.tidemark.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The README's first-sample commands, taken from the README itself and run with bash and curl
 * against a real server (its ports put in place of the defaults): the send answers {@code {}} and
 * the query answers the sample under the name the README promises.
 */
class ReadmeQuickStartIT {
  private static final Path README = Path.of("..", "README.md").toAbsolutePath().normalize();

  @TempDir Path tmp;

  @Test
  void theFirstSampleCommandsWorkAsWritten() throws Exception {
    String readme = Files.readString(README, StandardCharsets.UTF_8);
    int section = readme.indexOf("Send a first sample");
    assertThat(section).as("the README's first-sample paragraph").isPositive();
    int open = readme.indexOf("```\n", section) + 4;
    int close = readme.indexOf("```", open);
    List<String> commands = readme.substring(open, close).strip().lines().toList();
    assertThat(commands).hasSize(2);
    assertThat(commands.get(0)).startsWith("curl ").contains("http://127.0.0.1:4318/v1/metrics");
    assertThat(commands.get(1)).startsWith("curl ").contains("http://127.0.0.1:9090/api/v1/query");

    try (ServerProcess server = ServerProcess.start(tmp.resolve("data"))) {
      String send = commands.get(0).replace(":4318/", ":" + server.otlpHttpPort() + "/");
      assertThat(bash(send)).isEqualTo("{}");
      String query = commands.get(1).replace(":9090/", ":" + server.apiPort() + "/");
      assertThat(bash(query))
          .startsWith("{\"status\":\"success\"")
          .contains(
              "{\"metric\":{\"__name__\":\"room_temperature_celsius\",\"job\":\"hello\"},\"value\":[")
          .endsWith(",\"21.5\"]}]}}");
    }
  }

  private String bash(String command) throws Exception {
    Path out = tmp.resolve("out.txt");
    Process p =
        new ProcessBuilder("bash", "-c", command)
            .directory(tmp.toFile())
            .redirectErrorStream(true)
            .redirectOutput(out.toFile())
            .start();
    assertThat(p.waitFor(30, TimeUnit.SECONDS)).as(command).isTrue();
    assertThat(p.exitValue()).as(Files.readString(out)).isZero();
    return Files.readString(out, StandardCharsets.UTF_8).strip();
  }
}
