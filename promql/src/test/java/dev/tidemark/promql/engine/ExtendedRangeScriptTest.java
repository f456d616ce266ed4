package dev.tidemark.promql.engine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.tidemark.promql.engine.PromqlConformanceRunner.EvalResult;
import dev.tidemark.promql.engine.PromqlConformanceRunner.FileResult;
import dev.tidemark.promql.engine.PromqlConformanceRunner.Status;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Runs Tidemark's own test scripts ({@code src/test/resources/scripts}, the language of the
 * conformance scripts) through the conformance runner, with its checks of every instant eval as a
 * range query and of step invariance under {@code @}: every eval must pass.
 */
class ExtendedRangeScriptTest {

  static final Path FOLDER = Path.of("src/test/resources/scripts");

  @Test
  void everyEvalOfTheOwnScriptsPasses() throws Exception {
    assertThat(Files.isDirectory(FOLDER)).as("scripts folder %s", FOLDER).isTrue();
    List<FileResult> results = new PromqlConformanceRunner().runFolder(FOLDER);
    List<EvalResult> evals =
        results.stream()
            .filter(r -> r.file().equals("extended_range_selectors.test"))
            .flatMap(r -> r.evals().stream())
            .toList();
    assertThat(evals).as("evals of extended_range_selectors.test").hasSize(42);
    for (FileResult r : results) {
      for (EvalResult e : r.evals()) {
        assertThat(e.status()).as(e.toString()).isEqualTo(Status.PASSED);
      }
    }
  }
}
