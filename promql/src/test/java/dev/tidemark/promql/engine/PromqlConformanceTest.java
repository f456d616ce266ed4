package dev.tidemark.promql.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Every eval of the PromQL conformance scripts must pass (folder: system property {@code
 * tidemark.promql.conformance}, else {@code ../../shared/conformance/promql} from the module). A
 * missing folder is a failure, not a skip: the build must not go green without the scripts.
 */
class PromqlConformanceTest {

  @Test
  void allConformanceEvalsPass() throws Exception {
    Path dir = PromqlConformanceRunner.defaultFolder();
    assertThat(Files.isDirectory(dir)).as("conformance scripts folder %s", dir).isTrue();
    List<PromqlConformanceRunner.FileResult> results = new PromqlConformanceRunner().runFolder(dir);
    ByteArrayOutputStream buf = new ByteArrayOutputStream();
    int failed = PromqlConformanceRunner.report(results, new PrintStream(buf, true, StandardCharsets.UTF_8));
    String report = buf.toString(StandardCharsets.UTF_8);
    System.out.println(report);
    assertThat(results).as("no .test files in %s", dir).isNotEmpty();
    assertThat(failed).as(report).isZero();
  }
}
