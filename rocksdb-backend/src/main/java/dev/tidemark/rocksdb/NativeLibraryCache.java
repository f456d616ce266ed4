package dev.tidemark.rocksdb;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.lang.System.Logger.Level;
import java.net.JarURLConnection;
import java.net.URL;
import java.net.URLConnection;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.jar.JarEntry;
import java.util.zip.CRC32;
import org.rocksdb.RocksDB;
import org.rocksdb.util.Environment;

/**
 * Loads RocksDB's JNI library from a cache folder, extracting it from the rocksdbjni jar only when
 * the folder lacks it. RocksDB's own loader ({@code RocksDB.loadLibrary()}) copies the 17 MB
 * library to a new randomly named file in {@code java.io.tmpdir} at every start, and the copy stays
 * there when the process does not exit normally; here it is written once per rocksdbjni version and
 * platform, to {@code <cache>/rocksdbjni-<version>/librocksdbjni-<platform>.so}, and reused by
 * every later start (of any Tidemark of that version, on any data folder).
 *
 * <p>The cache is the system property {@value #CACHE_DIR_PROPERTY} if set, else {@code
 * $XDG_CACHE_HOME/tidemark} (an absolute path, as the XDG base directory specification requires),
 * else {@code ~/.cache/tidemark}. The library is written to a temporary file in the same folder and
 * renamed over the final name in one atomic step, so a process that starts meanwhile sees either no
 * file or a whole one (two processes extracting at once both rename a whole copy). A file already
 * there is used only if its size and CRC-32 are the jar entry's (read from the jar's directory, so
 * a check costs one read of the cached file, about 10 ms); otherwise it is extracted again. If
 * anything fails (no home folder, a read-only one, the library not in the jar), a warning is logged
 * and RocksDB's own loader runs.
 *
 * <p>Thread-safe; {@link #load()} loads at most once per JVM.
 */
final class NativeLibraryCache {
  private static final System.Logger LOG = System.getLogger(NativeLibraryCache.class.getName());

  /** System property naming the cache folder, e.g. {@code -Dtidemark.cache.dir=/var/cache/x}. */
  static final String CACHE_DIR_PROPERTY = "tidemark.cache.dir";

  /** The rocksdbjni version this module was built against (Maven resource filtering). */
  static final String ROCKSDBJNI_VERSION = readVersion();

  private static boolean loaded; // guarded by the class

  private NativeLibraryCache() {}

  /** Loads RocksDB's library, from the cache if possible; a no-op after the first call. */
  static synchronized void load() {
    if (loaded) {
      return;
    }
    String entry = jarEntryName();
    Path folder = null;
    try {
      Path root = cacheRoot(System.getenv(), System.getProperties());
      if (root == null) {
        throw new IOException("no cache folder: set -D" + CACHE_DIR_PROPERTY + " or HOME");
      }
      folder = libraryFolder(root);
      URL resource = RocksDB.class.getClassLoader().getResource(entry);
      if (resource == null) {
        throw new IOException(entry + " is not in the rocksdbjni jar");
      }
      ensureExtracted(folder, cachedFileName(), resource);
      RocksDB.loadLibrary(List.of(folder.toString()));
      loaded = true;
      return;
    } catch (IOException | UncheckedIOException | InvalidPathException | SecurityException e) {
      warnFallback(folder, e);
    } catch (UnsatisfiedLinkError e) {
      warnFallback(folder, e);
    }
    RocksDB.loadLibrary();
    loaded = true;
  }

  /** This platform's library in the rocksdbjni jar: {@code librocksdbjni-linux64.so} on x86-64. */
  static String jarEntryName() {
    return Environment.getJniLibraryFileName("rocksdb");
  }

  /**
   * The name {@code RocksDB.loadLibrary(List)} loads from each folder it is given: {@code
   * <folder>/} + {@code Environment.getJniLibraryFileName("rocksdbjni")}, which is {@code
   * librocksdbjnijni-linux64.so} on x86-64 (rocksdbjni passes "rocksdbjni" where its jar entries
   * are named from "rocksdb"). Computed by the same call, so the two agree; should a later
   * rocksdbjni change the call, its load fails, the fallback logs it, and {@code
   * NativeLibraryCacheIT} fails on the copy in the temporary folder.
   */
  static String cachedFileName() {
    return Environment.getJniLibraryFileName("rocksdbjni");
  }

  private static void warnFallback(Path folder, Throwable e) {
    LOG.log(
        Level.WARNING,
        "cannot load RocksDB''s native library from the cache folder {0} ({1}); RocksDB extracts"
            + " it to {2} instead, a new copy at every start",
        folder,
        e.toString(),
        System.getProperty("java.io.tmpdir"));
  }

  /**
   * The cache folder: {@code properties[tidemark.cache.dir]}, else {@code $XDG_CACHE_HOME/tidemark}
   * if absolute, else {@code ${user.home}/.cache/tidemark}; null when none can be named.
   */
  static Path cacheRoot(Map<String, String> env, Properties properties) {
    String explicit = properties.getProperty(CACHE_DIR_PROPERTY);
    if (explicit != null && !explicit.isBlank()) {
      return Path.of(explicit).toAbsolutePath();
    }
    String xdg = env.get("XDG_CACHE_HOME");
    if (xdg != null && !xdg.isBlank() && Path.of(xdg).isAbsolute()) {
      return Path.of(xdg, "tidemark");
    }
    String home = properties.getProperty("user.home");
    if (home == null || home.isBlank() || home.equals("?")) {
      return null;
    }
    return Path.of(home, ".cache", "tidemark");
  }

  /** The folder of this rocksdbjni version's library under the cache. */
  static Path libraryFolder(Path cacheRoot) {
    return cacheRoot.resolve("rocksdbjni-" + ROCKSDBJNI_VERSION);
  }

  /**
   * Makes {@code folder/fileName} a verified copy of {@code resource} and returns it: reuses the
   * file if its size and CRC-32 match the resource's, else extracts the resource to a temporary
   * file in the folder, checks it, and renames it over the final name atomically.
   *
   * @throws IOException if the folder cannot be created or written, or the copy does not match
   */
  static Path ensureExtracted(Path folder, String fileName, URL resource) throws IOException {
    Checksum expected = checksumOf(resource);
    Path target = folder.resolve(fileName);
    if (Files.isRegularFile(target)
        && Files.size(target) == expected.size()
        && checksumOf(target).equals(expected)) {
      return target;
    }
    Files.createDirectories(folder);
    Path tmp = Files.createTempFile(folder, fileName + ".", ".tmp");
    try {
      Checksum copied;
      try (InputStream in = resource.openStream();
          OutputStream out = Files.newOutputStream(tmp)) {
        copied = copy(in, out);
      }
      if (!copied.equals(expected)) {
        throw new IOException(
            "extracted " + fileName + " is " + copied + ", the jar says " + expected);
      }
      Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
      LOG.log(Level.INFO, "extracted RocksDB''s native library to {0}", target);
    } finally {
      Files.deleteIfExists(tmp);
    }
    return target;
  }

  /** Size and CRC-32 of a file or resource. */
  record Checksum(long size, long crc) {
    @Override
    public String toString() {
      return size + " bytes with CRC-32 " + Long.toHexString(crc);
    }
  }

  /**
   * The resource's size and CRC-32: from the jar's directory for a jar entry (no inflating), else
   * by reading it.
   */
  static Checksum checksumOf(URL resource) throws IOException {
    URLConnection c = resource.openConnection();
    if (c instanceof JarURLConnection jar) {
      jar.setUseCaches(false);
      try (var file = jar.getJarFile()) {
        JarEntry e = file.getJarEntry(jar.getEntryName());
        if (e != null && e.getSize() >= 0 && e.getCrc() >= 0) {
          return new Checksum(e.getSize(), e.getCrc());
        }
      }
    }
    try (InputStream in = resource.openStream()) {
      return copy(in, OutputStream.nullOutputStream());
    }
  }

  static Checksum checksumOf(Path file) throws IOException {
    try (InputStream in = Files.newInputStream(file)) {
      return copy(in, OutputStream.nullOutputStream());
    }
  }

  private static Checksum copy(InputStream in, OutputStream out) throws IOException {
    CRC32 crc = new CRC32();
    byte[] buf = new byte[1 << 16];
    long size = 0;
    for (int n; (n = in.read(buf)) > 0; ) {
      crc.update(buf, 0, n);
      out.write(buf, 0, n);
      size += n;
    }
    return new Checksum(size, crc.getValue());
  }

  private static String readVersion() {
    Properties p = new Properties();
    try (InputStream in = NativeLibraryCache.class.getResourceAsStream("rocksdbjni.properties")) {
      if (in != null) {
        p.load(in);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    String v = p.getProperty("version");
    // Never expected (the build writes it); the CRC check still keeps a wrong reuse out.
    return v == null || v.isBlank() || v.startsWith("${") ? "unknown" : v;
  }
}
