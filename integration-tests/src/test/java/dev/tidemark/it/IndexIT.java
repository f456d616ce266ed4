package dev.tidemark.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The package's index ({@code package-info.java}) names every test class in it with a line of its
 * own, so the list a reader opens first stays whole as tests are added.
 */
class IndexIT {

  private static final Path PACKAGE = Path.of("src/test/java/dev/tidemark/it");

  @Test
  void theIndexNamesEveryTestClass() throws IOException {
    String index = Files.readString(PACKAGE.resolve("package-info.java"));
    List<String> tests;
    try (Stream<Path> files = Files.list(PACKAGE)) {
      tests =
          files
              .map(p -> p.getFileName().toString())
              .filter(n -> n.endsWith("IT.java"))
              .map(n -> n.substring(0, n.length() - ".java".length()))
              .sorted()
              .toList();
    }
    assertThat(tests).as("test classes found").hasSizeGreaterThan(10);
    for (String test : tests) {
      assertThat(index)
          .as("package-info.java needs a line saying what %s proves", test)
          .contains("<li>{@code " + test + "}: ");
    }
  }
}
