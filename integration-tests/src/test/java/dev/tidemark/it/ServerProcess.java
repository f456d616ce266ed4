package dev.tidemark.it;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

/**
 * A Tidemark server started from the shaded jar ({@code server/target/tidemark.jar}, system
 * property {@code tidemark.jar}) as a separate JVM: {@code java -Xmx512m -jar tidemark.jar
 * --data-dir DIR --otlp-grpc-port P1 --otlp-http-port P2 --http-port P3 --admin-port P4 [extra
 * args]} ({@code --admin-port} only when the extra args do not name it).
 *
 * <p>Everything binds 127.0.0.1 (the server's default). Ports are free ports picked just before the
 * start; a start that loses a port race is retried with new ports. The child's environment is
 * stripped of JVM option variables ({@code JAVA_TOOL_OPTIONS}, ...), its working folder is the
 * parent of the data folder, its standard output and error go to one log file beside the data
 * folder ({@link #log()}); {@link ServerLogs} prints the logs of every server of a failed test.
 *
 * <p>{@link #start} returns once {@code /-/ready} answers 200 (polled against a deadline). {@link
 * #stop()} sends SIGTERM and waits for the exit (the server persists its head and exits with 0);
 * {@link #kill()} sends SIGKILL. After either, the data folder is free: {@link #restart()} starts a
 * new server on it, {@link StoredData#read} reads it back.
 */
final class ServerProcess implements AutoCloseable {
  static final Duration START_DEADLINE = Duration.ofSeconds(90);
  static final Duration STOP_DEADLINE = Duration.ofSeconds(60);

  /** Every process started by this JVM, for {@link ServerLogs}. */
  static final List<ServerProcess> STARTED = new CopyOnWriteArrayList<>();

  static {
    // A test JVM that ends abruptly (timeout, Ctrl-C) must not leave servers behind.
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  for (ServerProcess p : STARTED) {
                    p.process.toHandle().destroyForcibly();
                  }
                },
                "kill-tidemark-servers"));
  }

  private static final HttpClient HTTP =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

  private final Path dataDir;
  private final List<String> jvmArgs;
  private final List<String> extraArgs;
  private final Path logFile;
  private final int grpcPort;
  private final int otlpHttpPort;
  private final int apiPort;
  private final int adminPort;
  private final Process process;

  private ServerProcess(
      Path dataDir,
      List<String> jvmArgs,
      List<String> extraArgs,
      Path logFile,
      int[] ports,
      Process process) {
    this.dataDir = dataDir;
    this.jvmArgs = jvmArgs;
    this.extraArgs = extraArgs;
    this.logFile = logFile;
    this.grpcPort = ports[0];
    this.otlpHttpPort = ports[1];
    this.apiPort = ports[2];
    this.adminPort = ports[3];
    this.process = process;
  }

  /** The server jar, checked to exist. */
  static Path jar() {
    String p = System.getProperty("tidemark.jar", "../server/target/tidemark.jar");
    Path jar = Path.of(p).toAbsolutePath().normalize();
    if (!Files.isRegularFile(jar)) {
      throw new IllegalStateException(
          "server jar " + jar + " not found: build it first (mvn -pl server -am package)");
    }
    return jar;
  }

  /**
   * Starts a server on {@code dataDir} (created if needed) and waits until it is ready.
   *
   * @param extraArgs further command-line options, e.g. {@code --otlp-http-max-body-size 64KiB}
   */
  static ServerProcess start(Path dataDir, String... extraArgs)
      throws IOException, InterruptedException {
    return start(dataDir, List.of(extraArgs));
  }

  static ServerProcess start(Path dataDir, List<String> extraArgs)
      throws IOException, InterruptedException {
    return start(dataDir, List.of(), extraArgs);
  }

  /**
   * As {@link #start(Path, List)}, with JVM options after the default ones (a later {@code -Xmx}
   * wins), e.g. {@code -Xmx256m}.
   */
  static ServerProcess start(Path dataDir, List<String> jvmArgs, List<String> extraArgs)
      throws IOException, InterruptedException {
    Files.createDirectories(dataDir);
    IOException portRace = null;
    for (int attempt = 1; attempt <= 3; attempt++) {
      int[] ports = freePorts(4);
      Path log =
          dataDir.resolveSibling(
              dataDir.getFileName() + "-server-" + (STARTED.size() + 1) + ".log");
      List<String> cmd = new ArrayList<>();
      cmd.add("--data-dir");
      cmd.add(dataDir.toAbsolutePath().toString());
      cmd.add("--otlp-grpc-port");
      cmd.add(Integer.toString(ports[0]));
      cmd.add("--otlp-http-port");
      cmd.add(Integer.toString(ports[1]));
      cmd.add("--http-port");
      cmd.add(Integer.toString(ports[2]));
      int at = extraArgs.indexOf("--admin-port");
      if (at >= 0 && at + 1 < extraArgs.size()) {
        ports[3] = Integer.parseInt(extraArgs.get(at + 1));
      } else {
        cmd.add("--admin-port");
        cmd.add(Integer.toString(ports[3]));
      }
      cmd.addAll(extraArgs);
      ProcessBuilder pb = processBuilder(dataDir.toAbsolutePath().getParent(), log, jvmArgs, cmd);
      ServerProcess sp =
          new ServerProcess(
              dataDir, List.copyOf(jvmArgs), List.copyOf(extraArgs), log, ports, pb.start());
      STARTED.add(sp);
      try {
        sp.awaitReady();
        return sp;
      } catch (IOException e) {
        if (!sp.process.isAlive() && sp.log().contains("already in use") && attempt < 3) {
          portRace = e;
          continue;
        }
        sp.close();
        throw e;
      }
    }
    throw portRace;
  }

  /**
   * {@code java -Xmx512m [jvmArgs] -jar tidemark.jar args...} in {@code workDir}, output to {@code
   * log}.
   */
  private static ProcessBuilder processBuilder(
      Path workDir, Path log, List<String> jvmArgs, List<String> args) {
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.add("-Xmx512m");
    cmd.add("-XX:+UseSerialGC");
    cmd.addAll(jvmArgs);
    cmd.add("-jar");
    cmd.add(jar().toString());
    cmd.addAll(args);
    ProcessBuilder pb = new ProcessBuilder(cmd);
    pb.directory(workDir.toFile());
    pb.environment()
        .keySet()
        .removeIf(
            k ->
                k.equals("JAVA_TOOL_OPTIONS")
                    || k.equals("_JAVA_OPTIONS")
                    || k.equals("JDK_JAVA_OPTIONS")
                    || k.equals("CLASSPATH")
                    || k.startsWith("MAVEN_"));
    pb.redirectErrorStream(true);
    pb.redirectOutput(log.toFile());
    pb.redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
    return pb;
  }

  /** The exit code and output of a {@link #runToExit} process. */
  record Exit(int code, String output) {}

  /**
   * Runs {@code java -jar tidemark.jar args...} in {@code workDir} until it exits by itself (a
   * start that must fail); kills it and fails after {@code timeout}.
   */
  static Exit runToExit(Path workDir, Duration timeout, String... args)
      throws IOException, InterruptedException {
    Files.createDirectories(workDir);
    Path log = Files.createTempFile(workDir, "tidemark-run-", ".log");
    Process p = processBuilder(workDir, log, List.of(), List.of(args)).start();
    if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
      p.toHandle().destroyForcibly();
      p.waitFor();
      throw new AssertionError(
          "tidemark "
              + String.join(" ", args)
              + " still running after "
              + timeout.toSeconds()
              + " s (expected it to exit); output:\n"
              + Files.readString(log, StandardCharsets.UTF_8));
    }
    return new Exit(p.exitValue(), Files.readString(log, StandardCharsets.UTF_8));
  }

  static int[] freePorts(int n) throws IOException {
    List<ServerSocket> sockets = new ArrayList<>();
    try {
      int[] ports = new int[n];
      for (int i = 0; i < n; i++) {
        ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
        sockets.add(s);
        ports[i] = s.getLocalPort();
      }
      return ports;
    } finally {
      for (ServerSocket s : sockets) {
        s.close();
      }
    }
  }

  private void awaitReady() throws IOException, InterruptedException {
    long deadline = System.nanoTime() + START_DEADLINE.toNanos();
    HttpRequest ready =
        HttpRequest.newBuilder(URI.create(apiUrl("/-/ready")))
            .timeout(Duration.ofSeconds(2))
            .GET()
            .build();
    while (true) {
      if (!process.isAlive()) {
        throw new IOException(
            "server exited with "
                + process.exitValue()
                + " before it was ready; log "
                + logFile
                + ":\n"
                + log());
      }
      try {
        HttpResponse<Void> r = HTTP.send(ready, HttpResponse.BodyHandlers.discarding());
        if (r.statusCode() == 200) {
          return;
        }
      } catch (IOException notYet) {
        // the API port is not bound yet, or speaks TLS (--web-config-file)
      }
      if (log().contains(" ready in ")) { // the startup line: behind TLS or basic auth too
        return;
      }
      if (System.nanoTime() > deadline) {
        throw new IOException(
            "server not ready after "
                + START_DEADLINE.toSeconds()
                + " s; log "
                + logFile
                + ":\n"
                + log());
      }
      // Poll interval while the JVM starts; the loop ends on the first 200.
      process.waitFor(50, TimeUnit.MILLISECONDS);
    }
  }

  /** Starts a new server (new ports) on the same data folder with the same options. */
  ServerProcess restart() throws IOException, InterruptedException {
    if (process.isAlive()) {
      throw new IllegalStateException("server still running (pid " + process.pid() + ")");
    }
    return start(dataDir, jvmArgs, extraArgs);
  }

  /**
   * SIGTERM, then waits for the exit.
   *
   * @return the exit code (0 after a clean stop)
   */
  int stop() throws InterruptedException {
    process.destroy();
    if (!process.waitFor(STOP_DEADLINE.toSeconds(), TimeUnit.SECONDS)) {
      process.toHandle().destroyForcibly();
      process.waitFor();
      throw new AssertionError(
          "server did not stop within "
              + STOP_DEADLINE.toSeconds()
              + " s of SIGTERM; log:\n"
              + log());
    }
    return process.exitValue();
  }

  /** SIGKILL, then waits for the exit. */
  void kill() throws InterruptedException {
    process.toHandle().destroyForcibly();
    process.waitFor();
  }

  boolean isAlive() {
    return process.isAlive();
  }

  long pid() {
    return process.pid();
  }

  Path dataDir() {
    return dataDir;
  }

  int grpcPort() {
    return grpcPort;
  }

  int otlpHttpPort() {
    return otlpHttpPort;
  }

  int apiPort() {
    return apiPort;
  }

  /** The admin gRPC port. */
  int adminPort() {
    return adminPort;
  }

  /** {@code http://127.0.0.1:<otlp http port>/v1/metrics}. */
  String otlpHttpUrl() {
    return "http://127.0.0.1:" + otlpHttpPort + "/v1/metrics";
  }

  String apiUrl(String path) {
    return "http://127.0.0.1:" + apiPort + path;
  }

  /** GET on the HTTP API port, e.g. {@code /metrics}. */
  String apiGet(String path) throws IOException, InterruptedException {
    HttpResponse<String> r =
        HTTP.send(
            HttpRequest.newBuilder(URI.create(apiUrl(path)))
                .timeout(Duration.ofSeconds(10))
                .GET()
                .build(),
            HttpResponse.BodyHandlers.ofString());
    if (r.statusCode() != 200) {
      throw new IOException("GET " + path + " answered " + r.statusCode() + ": " + r.body());
    }
    return r.body();
  }

  Path logFile() {
    return logFile;
  }

  /** The server's output so far. */
  String log() {
    try {
      return Files.readString(logFile, StandardCharsets.UTF_8);
    } catch (IOException e) {
      return "(cannot read " + logFile + ": " + e + ")";
    }
  }

  /** Kills the process if it still runs (cleanup after a failed test). */
  @Override
  public void close() {
    if (process.isAlive()) {
      process.toHandle().destroyForcibly();
      try {
        process.waitFor(STOP_DEADLINE.toSeconds(), TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  @Override
  public String toString() {
    return "tidemark pid "
        + process.pid()
        + " (gRPC "
        + grpcPort
        + ", HTTP "
        + otlpHttpPort
        + ", API "
        + apiPort
        + ", data "
        + dataDir
        + ")";
  }
}
