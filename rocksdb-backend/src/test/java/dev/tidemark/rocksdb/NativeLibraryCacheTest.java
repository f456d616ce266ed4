package dev.tidemark.rocksdb;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.tidemark.tsdb.kv.WriteBatch;
import java.io.IOException;
import java.net.JarURLConnection;
import java.net.URL;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileTime;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.rocksdb.RocksDB;

class NativeLibraryCacheTest {

  @TempDir Path tmp;

  /** This platform's library in the rocksdbjni jar on the test class path. */
  private static final String ENTRY = NativeLibraryCache.jarEntryName();

  /** The name RocksDB.loadLibrary(List) loads from a folder. */
  private static final String FILE = NativeLibraryCache.cachedFileName();

  private static URL resource() {
    URL url = RocksDB.class.getClassLoader().getResource(ENTRY);
    assertThat(url).as(ENTRY + " in the rocksdbjni jar").isNotNull();
    return url;
  }

  private static Properties props(String... kv) {
    Properties p = new Properties();
    for (int i = 0; i < kv.length; i += 2) {
      p.setProperty(kv[i], kv[i + 1]);
    }
    return p;
  }

  @Test
  void theCacheIsThePropertyElseAnAbsoluteXdgCacheHomeElseTheHomeFolder() {
    assertThat(
            NativeLibraryCache.cacheRoot(
                Map.of("XDG_CACHE_HOME", "/xdg"),
                props("tidemark.cache.dir", "/explicit", "user.home", "/home/u")))
        .isEqualTo(Path.of("/explicit"));
    assertThat(
            NativeLibraryCache.cacheRoot(
                Map.of("XDG_CACHE_HOME", "/xdg"), props("user.home", "/home/u")))
        .isEqualTo(Path.of("/xdg/tidemark"));
    assertThat(
            NativeLibraryCache.cacheRoot(
                Map.of("XDG_CACHE_HOME", "relative/is/ignored"), props("user.home", "/home/u")))
        .isEqualTo(Path.of("/home/u/.cache/tidemark"));
    assertThat(NativeLibraryCache.cacheRoot(Map.of(), props("user.home", "?"))).isNull();
    assertThat(NativeLibraryCache.libraryFolder(Path.of("/c")))
        .as("keyed by the rocksdbjni version: an upgrade extracts a new file")
        .isEqualTo(Path.of("/c/rocksdbjni-" + NativeLibraryCache.ROCKSDBJNI_VERSION));
  }

  @Test
  void theVersionIsTheOneOnTheClassPath() throws IOException {
    // The rocksdbjni jar's own path ends in .../rocksdbjni/<version>/rocksdbjni-<version>.jar.
    URL url = resource();
    String jar = ((JarURLConnection) url.openConnection()).getJarFileURL().getPath();
    assertThat(jar).endsWith("/rocksdbjni-" + NativeLibraryCache.ROCKSDBJNI_VERSION + ".jar");
  }

  @Test
  void extractsOnceAndReusesTheVerifiedFile() throws IOException {
    Path folder = tmp.resolve("cache/rocksdbjni-x");
    Path lib = NativeLibraryCache.ensureExtracted(folder, FILE, resource());
    assertThat(lib).isEqualTo(folder.resolve(FILE));
    NativeLibraryCache.Checksum expected = NativeLibraryCache.checksumOf(resource());
    assertThat(Files.size(lib)).isEqualTo(expected.size()).isGreaterThan(1 << 20);
    assertThat(NativeLibraryCache.checksumOf(lib)).isEqualTo(expected);
    try (Stream<Path> files = Files.list(folder)) {
      assertThat(files.toList()).as("no temporary file left").containsExactly(lib);
    }

    FileTime marked = FileTime.fromMillis(1_000_000_000_000L);
    Files.setLastModifiedTime(lib, marked);
    assertThat(NativeLibraryCache.ensureExtracted(folder, FILE, resource())).isEqualTo(lib);
    assertThat(Files.getLastModifiedTime(lib)).as("reused, not written again").isEqualTo(marked);
  }

  @Test
  void aDamagedCopyIsReplaced() throws IOException {
    Path folder = tmp.resolve("cache");
    Path lib = NativeLibraryCache.ensureExtracted(folder, FILE, resource());
    NativeLibraryCache.Checksum expected = NativeLibraryCache.checksumOf(lib);

    // Same size, one byte changed: only the CRC tells.
    try (FileChannel ch = FileChannel.open(lib, StandardOpenOption.WRITE)) {
      ch.write(java.nio.ByteBuffer.wrap(new byte[] {0x5a}), expected.size() / 2);
    }
    assertThat(NativeLibraryCache.checksumOf(lib)).isNotEqualTo(expected);
    NativeLibraryCache.ensureExtracted(folder, FILE, resource());
    assertThat(NativeLibraryCache.checksumOf(lib)).isEqualTo(expected);

    // Cut short, as by a crash of a writer that did not use a temporary file.
    try (FileChannel ch = FileChannel.open(lib, StandardOpenOption.WRITE)) {
      ch.truncate(4096);
    }
    NativeLibraryCache.ensureExtracted(folder, FILE, resource());
    assertThat(NativeLibraryCache.checksumOf(lib)).isEqualTo(expected);
  }

  @Test
  void aFolderThatCannotBeCreatedFailsWithIoException() throws IOException {
    Path file = Files.writeString(tmp.resolve("not-a-folder"), "x");
    assertThatThrownBy(
            () -> NativeLibraryCache.ensureExtracted(file.resolve("sub"), FILE, resource()))
        .isInstanceOf(IOException.class);
  }

  @Test
  void thisJvmRunsRocksDbFromTheCacheFolder() throws IOException {
    NativeLibraryCache.load();
    Path expected =
        NativeLibraryCache.libraryFolder(
                NativeLibraryCache.cacheRoot(System.getenv(), System.getProperties()))
            .resolve(FILE);
    assertThat(expected).isRegularFile();
    // Linux: the mapped files of this process name the library's path.
    assertThat(Files.readString(Path.of("/proc/self/maps")))
        .as("RocksDB loaded from %s", expected)
        .contains(expected.toString())
        .doesNotContain(System.getProperty("java.io.tmpdir") + "/librocksdbjni");
  }

  @Test
  void twoStoresInOneJvmLoadTheLibraryOnce() {
    NativeLibraryCache.load();
    NativeLibraryCache.load(); // a no-op
    try (RocksDbKvStore a = RocksDbKvStore.open(tmp.resolve("a"));
        RocksDbKvStore b = RocksDbKvStore.open(tmp.resolve("b"))) {
      WriteBatch w = new WriteBatch();
      w.put("k".getBytes(StandardCharsets.UTF_8), "v".getBytes(StandardCharsets.UTF_8));
      a.write(w);
      b.write(w);
      assertThat(a.get("k".getBytes(StandardCharsets.UTF_8)))
          .isEqualTo("v".getBytes(StandardCharsets.UTF_8));
      assertThat(b.get("k".getBytes(StandardCharsets.UTF_8)))
          .isEqualTo("v".getBytes(StandardCharsets.UTF_8));
    }
    assertThat(List.of(tmp.resolve("a"), tmp.resolve("b"))).allMatch(Files::isDirectory);
  }
}
