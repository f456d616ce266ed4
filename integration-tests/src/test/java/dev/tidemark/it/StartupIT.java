package dev.tidemark.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Starting the real jar (issue #5, "Running it"): the startup line names the ports, the data
 * folder, the retention and the recovery time; a data folder locked by a running server, a port in
 * use and a bad setting each stop a second process with a one-line message naming the problem (no
 * stack trace) and the documented exit code (1 cannot start, 2 bad configuration); SIGTERM ends the
 * server with 0.
 */
@ExtendWith(ServerLogs.class)
class StartupIT {
  static final Duration RUN_DEADLINE = Duration.ofSeconds(60);

  @TempDir Path tmp;

  @Test
  void startupLineAndClearErrorsForLockedFolderPortInUseAndBadSettings() throws Exception {
    Path data = tmp.resolve("data");
    ServerProcess server = ServerProcess.start(data);
    try {
      String log = server.log();
      assertThat(log)
          .as("startup line")
          .contains(":" + server.grpcPort())
          .contains(":" + server.otlpHttpPort())
          .contains(":" + server.apiPort())
          .contains("web UI http://127.0.0.1:" + server.apiPort() + "/")
          .contains(data.toAbsolutePath().toString())
          .contains("retention 15d")
          .contains("recovery");

      int[] ports = ServerProcess.freePorts(3);
      ServerProcess.Exit locked =
          ServerProcess.runToExit(
              tmp.resolve("second"),
              RUN_DEADLINE,
              "--data-dir",
              data.toAbsolutePath().toString(),
              "--otlp-grpc-port",
              Integer.toString(ports[0]),
              "--otlp-http-port",
              Integer.toString(ports[1]),
              "--http-port",
              Integer.toString(ports[2]));
      assertThat(locked.code())
          .as("exit code, data folder locked; output:\n%s", locked.output())
          .isEqualTo(1);
      assertThat(locked.output()).contains("locked by another process").doesNotContain("\tat ");

      ports = ServerProcess.freePorts(3);
      ServerProcess.Exit portInUse =
          ServerProcess.runToExit(
              tmp.resolve("third"),
              RUN_DEADLINE,
              "--data-dir",
              tmp.resolve("third-data").toAbsolutePath().toString(),
              "--otlp-grpc-port",
              Integer.toString(server.grpcPort()),
              "--otlp-http-port",
              Integer.toString(ports[1]),
              "--http-port",
              Integer.toString(ports[2]));
      assertThat(portInUse.code())
          .as("exit code, port in use; output:\n%s", portInUse.output())
          .isEqualTo(1);
      assertThat(portInUse.output())
          .contains("port " + server.grpcPort())
          .contains("already in use")
          .doesNotContain("\tat ");
    } finally {
      assertThat(server.stop()).as("exit code after SIGTERM").isZero();
    }
    assertThat(server.log()).contains("stopped cleanly");

    ServerProcess.Exit badValue =
        ServerProcess.runToExit(
            tmp.resolve("fourth"),
            RUN_DEADLINE,
            "--data-dir",
            tmp.resolve("fourth-data").toAbsolutePath().toString(),
            "--retention",
            "5m");
    assertThat(badValue.code())
        .as("exit code, bad value; output:\n%s", badValue.output())
        .isEqualTo(2);
    assertThat(badValue.output()).contains("retention").contains("5m").doesNotContain("\tat ");

    ServerProcess.Exit unknown =
        ServerProcess.runToExit(tmp.resolve("fifth"), RUN_DEADLINE, "--no-such-option", "1");
    assertThat(unknown.code())
        .as("exit code, unknown option; output:\n%s", unknown.output())
        .isEqualTo(2);
    assertThat(unknown.output()).contains("--no-such-option").doesNotContain("\tat ");
  }
}
