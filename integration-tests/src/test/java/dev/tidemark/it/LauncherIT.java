package dev.tidemark.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The README's start command, {@code ./tidemark}: which JDK it picks (Java 17 or newer, the newest
 * found, 25 or newer preferred for compact object headers; {@code TIDEMARK_JAVA} wins), the options
 * it passes for that JDK, the message when no JDK fits, and a real start through it.
 *
 * <p>The choice is checked on fake JDK folders (a {@code release} file and a {@code bin/java}),
 * with {@code TIDEMARK_PRINT_COMMAND=1}, which prints the command line instead of running it.
 */
class LauncherIT {
  private static final Path LAUNCHER = Path.of("..", "tidemark").toAbsolutePath().normalize();

  @TempDir Path tmp;

  record Run(int code, String out, String err) {}

  private Path fakeJdk(String dir, String version) throws IOException {
    Path home = tmp.resolve(dir);
    Files.createDirectories(home.resolve("bin"));
    Files.writeString(home.resolve("release"), "JAVA_VERSION=\"" + version + "\"\n");
    Path java = home.resolve("bin").resolve("java");
    Files.writeString(java, "#!/bin/sh\nexit 0\n");
    Files.setPosixFilePermissions(java, PosixFilePermissions.fromString("rwxr-xr-x"));
    return home;
  }

  /** A PATH whose first folder holds {@code java} linked to {@code home}'s. */
  private String pathWith(Path home) throws IOException {
    Path dir = tmp.resolve("path-" + home.getFileName());
    Files.createDirectories(dir);
    Path link = dir.resolve("java");
    if (!Files.isSymbolicLink(link)) {
      Files.createSymbolicLink(link, home.resolve("bin").resolve("java"));
    }
    return dir + ":/usr/bin:/bin";
  }

  private Run launch(Map<String, String> env, String... args) throws Exception {
    List<String> cmd = new ArrayList<>(List.of("bash", LAUNCHER.toString()));
    cmd.addAll(List.of(args));
    ProcessBuilder pb = new ProcessBuilder(cmd).directory(tmp.toFile());
    pb.environment().keySet().removeIf(k -> k.startsWith("JAVA") || k.startsWith("TIDEMARK"));
    pb.environment().put("TIDEMARK_PRINT_COMMAND", "1");
    pb.environment().putAll(env);
    Path out = tmp.resolve("out.txt");
    Path err = tmp.resolve("err.txt");
    pb.redirectOutput(out.toFile()).redirectError(err.toFile());
    Process p = pb.start();
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).as("the launcher finishes").isTrue();
    return new Run(p.exitValue(), Files.readString(out).trim(), Files.readString(err).trim());
  }

  @Test
  void picksTheNewestJdkAndGivesJava25CompactHeaders() throws Exception {
    Path jdk17 = fakeJdk("jvms/jdk-17", "17.0.9");
    fakeJdk("jvms/jdk-25", "25.0.1");
    fakeJdk("jvms/jdk-11", "11.0.2");
    Run run =
        launch(
            Map.of("PATH", pathWith(jdk17), "TIDEMARK_JVM_DIRS", tmp.resolve("jvms").toString()),
            "--retention",
            "30d");

    assertThat(run.code()).as(run.err()).isZero();
    assertThat(run.out())
        .startsWith(tmp.resolve("jvms/jdk-25/bin/java") + " ")
        .contains(" -XX:+UseCompactObjectHeaders ")
        .contains(" -XX:MaxRAMPercentage=25 ")
        .endsWith(
            " -jar "
                + LAUNCHER.getParent().resolve("server/target/tidemark.jar")
                + " --retention 30d");
  }

  @Test
  void runsOnJava17WithoutTheJava25Options() throws Exception {
    Path jdk17 = fakeJdk("jvms/jdk-17", "17.0.9");
    fakeJdk("jvms/jdk-11", "11.0.2");
    Run run =
        launch(
            Map.of("PATH", pathWith(jdk17), "TIDEMARK_JVM_DIRS", tmp.resolve("jvms").toString()));

    assertThat(run.code()).as(run.err()).isZero();
    assertThat(run.out())
        .startsWith(tmp.resolve("path-jdk-17/java") + " ")
        .contains(" -XX:MaxRAMPercentage=25 ")
        .doesNotContain("CompactObjectHeaders");
  }

  @Test
  void javaHomeCountsAndTidemarkJavaWins() throws Exception {
    Path jdk17 = fakeJdk("jvms/jdk-17", "17.0.9");
    Path jdk25 = fakeJdk("other/jdk-25", "25.0.1");
    Map<String, String> env = new HashMap<>();
    env.put("PATH", pathWith(jdk17));
    env.put("TIDEMARK_JVM_DIRS", tmp.resolve("jvms").toString());
    env.put("JAVA_HOME", jdk25.toString());
    assertThat(launch(env).out()).startsWith(jdk25.resolve("bin/java") + " ");

    env.put("TIDEMARK_JAVA", jdk17.resolve("bin/java").toString());
    Run pinned = launch(env);
    assertThat(pinned.out())
        .startsWith(jdk17.resolve("bin/java") + " ")
        .doesNotContain("CompactObjectHeaders");
  }

  @Test
  void noFittingJdkIsAClearError() throws Exception {
    Path jdk11 = fakeJdk("jvms/jdk-11", "11.0.2");
    Run run =
        launch(
            Map.of("PATH", pathWith(jdk11), "TIDEMARK_JVM_DIRS", tmp.resolve("jvms").toString()));

    assertThat(run.code()).isEqualTo(1);
    assertThat(run.out()).isEmpty();
    assertThat(run.err())
        .contains("Java 17 or newer is needed")
        .contains("(Java 11)")
        .contains("TIDEMARK_JAVA");

    Run pinned =
        launch(
            Map.of(
                "PATH", pathWith(jdk11),
                "TIDEMARK_JVM_DIRS", "",
                "TIDEMARK_JAVA", jdk11.resolve("bin/java").toString()));
    assertThat(pinned.code()).isEqualTo(1);
    assertThat(pinned.err()).contains("is not Java 17 or newer");
  }

  @Test
  void adminKeepsItsOwnOptions() throws Exception {
    fakeJdk("jvms/jdk-25", "25.0.1");
    Path jdk17 = fakeJdk("jvms/jdk-17", "17.0.9");
    Run run =
        launch(
            Map.of("PATH", pathWith(jdk17), "TIDEMARK_JVM_DIRS", tmp.resolve("jvms").toString()),
            "admin",
            "status");

    assertThat(run.code()).as(run.err()).isZero();
    assertThat(run.out())
        .startsWith(tmp.resolve("jvms/jdk-25/bin/java") + " ")
        .contains(" -XX:TieredStopAtLevel=1 ")
        .contains(" --enable-native-access=ALL-UNNAMED ")
        .doesNotContain("MaxRAMPercentage")
        .endsWith("admin status");
  }

  /**
   * The real thing on this machine's JDKs: {@code ./tidemark} starts the server (on the newest JDK
   * it finds), which answers {@code /-/ready}, and the process runs the java the launcher printed.
   */
  @Test
  void startsTheServer() throws Exception {
    Run printed = launch(Map.of("PATH", System.getenv("PATH")));
    assertThat(printed.code()).as(printed.err()).isZero();
    String javaBin = printed.out().substring(0, printed.out().indexOf(' '));

    int[] ports = new int[4];
    for (int i = 0; i < ports.length; i++) {
      try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
        ports[i] = s.getLocalPort();
      }
    }
    List<String> cmd =
        List.of(
            "bash",
            LAUNCHER.toString(),
            "--data-dir",
            tmp.resolve("data").toString(),
            "--otlp-grpc-port",
            Integer.toString(ports[0]),
            "--otlp-http-port",
            Integer.toString(ports[1]),
            "--http-port",
            Integer.toString(ports[2]),
            "--admin-port",
            Integer.toString(ports[3]));
    ProcessBuilder pb = new ProcessBuilder(cmd).directory(tmp.toFile());
    pb.environment().keySet().removeIf(k -> k.startsWith("TIDEMARK") || k.endsWith("JAVA_OPTIONS"));
    pb.environment().put("JAVA_OPTS", "-Xmx256m");
    Path log = tmp.resolve("server.log");
    pb.redirectErrorStream(true).redirectOutput(log.toFile());
    Process server = pb.start();
    try {
      HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
      HttpRequest ready =
          HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + ports[2] + "/-/ready")).build();
      int status = -1;
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      while (status != 200 && System.nanoTime() < deadline && server.isAlive()) {
        try {
          status = http.send(ready, HttpResponse.BodyHandlers.discarding()).statusCode();
        } catch (IOException notYet) {
          Thread.sleep(200);
        }
      }
      assertThat(status).as(Files.readString(log, StandardCharsets.UTF_8)).isEqualTo(200);
      // exec: the launcher's process is the JVM itself.
      Path expected = Path.of(javaBin).toRealPath();
      assertThat(server.toHandle().info().command().map(c -> Path.of(c).toAbsolutePath()))
          .as("the process the launcher became")
          .hasValue(expected);
    } finally {
      server.destroy();
      if (!server.waitFor(30, TimeUnit.SECONDS)) {
        server.destroyForcibly().waitFor();
      }
    }
  }

  /**
   * The layout packaging/tidemark.service runs: the launcher with the jar next to it runs that jar
   * and never builds (no Maven there), and the unit passes {@code systemd-analyze verify} with its
   * launcher path pointed at that copy.
   */
  @Test
  void installedLayoutRunsTheJarNextToTheLauncherAndTheUnitVerifies() throws Exception {
    Path opt = tmp.resolve("opt-tidemark");
    Files.createDirectories(opt);
    Path launcher = opt.resolve("tidemark");
    Files.copy(LAUNCHER, launcher);
    Path jar =
        Path.of(System.getProperty("tidemark.jar", "../server/target/tidemark.jar"))
            .toAbsolutePath()
            .normalize();
    Files.copy(jar, opt.resolve("tidemark.jar"));

    List<String> cmd = List.of("bash", launcher.toString(), "--version");
    ProcessBuilder pb = new ProcessBuilder(cmd).directory(tmp.toFile());
    pb.environment().keySet().removeIf(k -> k.startsWith("TIDEMARK"));
    pb.environment().put("PATH", "/usr/bin:/bin"); // whatever Maven there is must not be needed
    pb.environment().put("TIDEMARK_JVM_DIRS", "/usr/lib/jvm");
    Path out = tmp.resolve("installed.txt");
    pb.redirectErrorStream(true).redirectOutput(out.toFile());
    Process p = pb.start();
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(Files.readString(out))
        .as("--version through the installed launcher")
        .startsWith("tidemark ")
        .doesNotContain("building");
    assertThat(p.exitValue()).isZero();

    Map<String, String> env = new HashMap<>();
    env.put("TIDEMARK_JAVA", ProcessHandle.current().info().command().orElseThrow());
    Run printed = launch(env);
    assertThat(printed.out())
        .endsWith("-jar " + LAUNCHER.getParent().resolve("server/target/tidemark.jar"));
    Path installedCopy = opt.resolve("tidemark");
    List<String> printCmd = List.of("bash", installedCopy.toString());
    ProcessBuilder pp = new ProcessBuilder(printCmd).directory(tmp.toFile());
    pp.environment().keySet().removeIf(k -> k.startsWith("JAVA") || k.startsWith("TIDEMARK"));
    pp.environment().putAll(env);
    pp.environment().put("TIDEMARK_PRINT_COMMAND", "1");
    Path printedOut = tmp.resolve("printed.txt");
    pp.redirectErrorStream(true).redirectOutput(printedOut.toFile());
    assertThat(pp.start().waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(Files.readString(printedOut).trim()).endsWith("-jar " + opt.resolve("tidemark.jar"));

    Path unit = tmp.resolve("tidemark.service");
    Files.writeString(
        unit,
        Files.readString(LAUNCHER.getParent().resolve("packaging/tidemark.service"))
            .replace("/opt/tidemark/tidemark", launcher.toString()));
    ProcessBuilder verify =
        new ProcessBuilder("systemd-analyze", "verify", unit.toString()).directory(tmp.toFile());
    Path verifyOut = tmp.resolve("verify.txt");
    verify.redirectErrorStream(true).redirectOutput(verifyOut.toFile());
    Process v = verify.start();
    assertThat(v.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(v.exitValue()).as(Files.readString(verifyOut)).isZero();
    assertThat(Files.readString(verifyOut)).as("no warning about the unit").isEmpty();
  }
}
