package dev.tidemark.it;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Runs {@code java -jar tidemark.jar admin ARGS} as a process (the real command line), with
 * standard output and error captured apart, and an optional {@code TIDEMARK_ADMIN_TOKEN}.
 */
final class AdminCli {
  static final Duration DEADLINE = Duration.ofSeconds(60);

  /** Exit code, standard output, standard error. */
  record Result(int code, String out, String err) {
    @Override
    public String toString() {
      return "exit " + code + "\n--- stdout\n" + out + "--- stderr\n" + err;
    }
  }

  private AdminCli() {}

  static Result run(Path workDir, Map<String, String> env, String... args)
      throws IOException, InterruptedException {
    Files.createDirectories(workDir);
    Path out = Files.createTempFile(workDir, "admin-", ".out");
    Path err = Files.createTempFile(workDir, "admin-", ".err");
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.add("-XX:+UseSerialGC");
    cmd.add("-XX:TieredStopAtLevel=1");
    cmd.add("-jar");
    cmd.add(ServerProcess.jar().toString());
    cmd.add("admin");
    cmd.addAll(List.of(args));
    ProcessBuilder pb = new ProcessBuilder(cmd).directory(workDir.toFile());
    pb.environment()
        .keySet()
        .removeIf(
            k ->
                k.equals("JAVA_TOOL_OPTIONS")
                    || k.equals("_JAVA_OPTIONS")
                    || k.equals("JDK_JAVA_OPTIONS")
                    || k.equals("CLASSPATH")
                    || k.startsWith("MAVEN_")
                    || k.equals("TIDEMARK_ADMIN_TOKEN"));
    pb.environment().putAll(env);
    pb.redirectOutput(out.toFile()).redirectError(err.toFile());
    pb.redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
    Process p = pb.start();
    if (!p.waitFor(DEADLINE.toMillis(), TimeUnit.MILLISECONDS)) {
      p.toHandle().destroyForcibly();
      p.waitFor();
      throw new AssertionError(
          "tidemark admin "
              + String.join(" ", args)
              + " still running after "
              + DEADLINE.toSeconds()
              + " s");
    }
    return new Result(
        p.exitValue(),
        Files.readString(out, StandardCharsets.UTF_8),
        Files.readString(err, StandardCharsets.UTF_8));
  }
}
