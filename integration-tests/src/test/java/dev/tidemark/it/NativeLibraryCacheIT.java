package dev.tidemark.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * RocksDB's native library is extracted once into the cache folder and loaded from there by every
 * later start (issue #22): the real jar started twice, each with a fresh {@code java.io.tmpdir} and
 * the same {@code -Dtidemark.cache.dir}, leaves no {@code librocksdbjni*} in the temporary folder
 * (RocksDB's own loader puts a new 17 MB copy there at every start), while running or after, and
 * the second start reuses the first one's file.
 */
@ExtendWith(ServerLogs.class)
class NativeLibraryCacheIT {

  @TempDir Path tmp;

  @Test
  void theLibraryIsExtractedOnceIntoTheCacheAndNeverIntoTheTemporaryFolder() throws Exception {
    Path cache = tmp.resolve("cache");
    Path tmp1 = Files.createDirectories(tmp.resolve("tmp1"));
    Path tmp2 = Files.createDirectories(tmp.resolve("tmp2"));

    ServerProcess first = start(tmp1, cache);
    try {
      assertThat(rocksLibraries(tmp1)).as("in java.io.tmpdir while running").isEmpty();
    } finally {
      assertThat(first.stop()).isZero();
    }
    assertThat(rocksLibraries(tmp1)).as("in java.io.tmpdir after the stop").isEmpty();
    List<Path> cached = rocksLibraries(cache);
    assertThat(cached).as("one library in the cache").hasSize(1);
    Path lib = cached.get(0);
    assertThat(lib.getParent().getFileName().toString()).startsWith("rocksdbjni-");
    assertThat(Files.size(lib)).isGreaterThan(1 << 20);
    assertThat(first.log()).contains("extracted RocksDB's native library to " + lib);

    FileTime marked = FileTime.fromMillis(1_000_000_000_000L);
    Files.setLastModifiedTime(lib, marked);
    ServerProcess second = start(tmp2, cache);
    try {
      assertThat(rocksLibraries(tmp2)).as("in java.io.tmpdir while running").isEmpty();
      assertThat(second.log()).doesNotContain("extracted").doesNotContain("cannot load");
    } finally {
      assertThat(second.stop()).isZero();
    }
    assertThat(rocksLibraries(cache)).containsExactly(lib);
    assertThat(Files.getLastModifiedTime(lib)).as("reused, not written again").isEqualTo(marked);
    assertThat(rocksLibraries(tmp2)).isEmpty();
  }

  private ServerProcess start(Path javaTmp, Path cache) throws IOException, InterruptedException {
    return ServerProcess.start(
        tmp.resolve("data"),
        List.of("-Djava.io.tmpdir=" + javaTmp, "-Dtidemark.cache.dir=" + cache),
        List.of());
  }

  /** Every file named {@code librocksdbjni*} under {@code folder}. */
  private static List<Path> rocksLibraries(Path folder) throws IOException {
    if (!Files.exists(folder)) {
      return List.of();
    }
    try (Stream<Path> files = Files.walk(folder)) {
      return files
          .filter(Files::isRegularFile)
          .filter(p -> p.getFileName().toString().startsWith("librocksdbjni"))
          .toList();
    }
  }
}
