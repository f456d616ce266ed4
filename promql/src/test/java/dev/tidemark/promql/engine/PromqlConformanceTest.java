package dev.tidemark.promql.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * Every eval of the PromQL conformance scripts must pass (folder: system property {@code
 * tidemark.promql.conformance}, else {@code src/test/resources/conformance/promql} of the module).
 * A missing folder is a failure, not a skip: the build must not go green without the scripts.
 *
 * <p><b>Script defects, stated and checked, not skipped.</b> When the scripts were ported, native
 * histogram samples were replaced by {@code _} but 27 {@code expect info} lines stayed behind (each
 * under the comment "The histogram is ignored here … but it has an info annotation now"): the info
 * they ask for is the one Prometheus gives for those histograms, so no engine, Prometheus included,
 * can produce it from the float samples left. {@link #SCRIPT_DEFECTS} names them; each must fail
 * with exactly that missing-info message and nothing else (its result is still checked), any other
 * failure fails the build, and so does a listed eval that starts passing (then the scripts were
 * fixed and the entry must go). Issue #10 is not done while this list is not empty.
 */
class PromqlConformanceTest {

  static final String MISSING_INFO = ": expected info annotations but none were found";

  static final Set<String> SCRIPT_DEFECTS =
      Set.of(
          "aggregators.test:240",
          "aggregators.test:251",
          "aggregators.test:369",
          "aggregators.test:373",
          "aggregators.test:377",
          "aggregators.test:381",
          "aggregators.test:391",
          "aggregators.test:395",
          "aggregators.test:399",
          "aggregators.test:403",
          "aggregators.test:467",
          "aggregators.test:742",
          "aggregators.test:746",
          "aggregators.test:752",
          "aggregators.test:757",
          "aggregators.test:768",
          "aggregators.test:772",
          "aggregators.test:776",
          "aggregators.test:781",
          "functions.test:293",
          "functions.test:297",
          "functions.test:965",
          "functions.test:971",
          "functions.test:1092",
          "functions.test:1227",
          "functions.test:1245",
          "operators.test:292");

  @Test
  void allConformanceEvalsPass() throws Exception {
    Path dir = PromqlConformanceRunner.defaultFolder();
    assertThat(Files.isDirectory(dir)).as("conformance scripts folder %s", dir).isTrue();
    List<PromqlConformanceRunner.FileResult> results = new PromqlConformanceRunner().runFolder(dir);
    ByteArrayOutputStream buf = new ByteArrayOutputStream();
    PromqlConformanceRunner.report(results, new PrintStream(buf, true, StandardCharsets.UTF_8));
    String report = buf.toString(StandardCharsets.UTF_8);
    System.out.println(report);
    assertThat(results).as("no .test files in %s", dir).isNotEmpty();

    boolean defaultScripts = System.getProperty(PromqlConformanceRunner.FOLDER_PROPERTY) == null;
    List<String> unexpected = new ArrayList<>();
    Set<String> defectsSeen = new TreeSet<>();
    for (PromqlConformanceRunner.FileResult r : results) {
      for (String failure : r.failures()) {
        String where = failure.substring(0, Math.max(0, failure.indexOf(' ')));
        if (defaultScripts && SCRIPT_DEFECTS.contains(where) && failure.endsWith(MISSING_INFO)) {
          defectsSeen.add(where);
        } else {
          unexpected.add(failure);
        }
      }
    }
    assertThat(unexpected).as(report).isEmpty();
    if (defaultScripts) {
      assertThat(defectsSeen)
          .as(
              "listed script defects that no longer fail (the scripts were fixed: drop them from SCRIPT_DEFECTS)")
          .containsExactlyInAnyOrderElementsOf(SCRIPT_DEFECTS);
    }
  }
}
