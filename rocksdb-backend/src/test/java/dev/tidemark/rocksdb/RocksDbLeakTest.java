package dev.tidemark.rocksdb;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.tidemark.tsdb.kv.KvCursor;
import dev.tidemark.tsdb.kv.KvSnapshot;
import dev.tidemark.tsdb.kv.WriteBatch;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.SplittableRandom;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Opens, uses and closes the same store 100 times in one JVM: every native object must be freed, so
 * open file descriptors and resident memory stay flat. Reads /proc (Linux); skipped elsewhere. Not
 * a timing test.
 */
class RocksDbLeakTest {

  private static final int WARM_UP_CYCLES = 10;
  private static final int CYCLES = 100;
  private static final int MAX_FD_GROWTH = 8;
  private static final long MAX_RSS_GROWTH_BYTES = 64L << 20;

  @TempDir Path tmp;

  @Test
  void hundredOpenUseCloseCyclesLeakNeitherDescriptorsNorNativeMemory() throws IOException {
    assumeTrue(Files.isDirectory(Path.of("/proc/self/fd")), "needs /proc/self/fd");
    assumeTrue(Files.isReadable(Path.of("/proc/self/status")), "needs /proc/self/status");
    Path dir = tmp.resolve("db");
    RocksDbConfig config = RocksDbConfig.builder().blockCacheBytes(16L << 20).build();
    SplittableRandom rnd = new SplittableRandom(7);

    for (int i = 0; i < WARM_UP_CYCLES; i++) {
      cycle(dir, config, i, rnd);
    }
    System.gc();
    long fdBefore = openFileDescriptors();
    long rssBefore = residentSetBytes();

    for (int i = WARM_UP_CYCLES; i < WARM_UP_CYCLES + CYCLES; i++) {
      cycle(dir, config, i, rnd);
    }
    System.gc();
    long fdAfter = openFileDescriptors();
    long rssAfter = residentSetBytes();

    System.out.printf(
        "leak test: fds %d -> %d, VmRSS %,d -> %,d bytes (%+,d) over %d cycles%n",
        fdBefore, fdAfter, rssBefore, rssAfter, rssAfter - rssBefore, CYCLES);
    assertThat(fdAfter - fdBefore).as("file descriptor growth").isLessThanOrEqualTo(MAX_FD_GROWTH);
    assertThat(rssAfter - rssBefore).as("resident memory growth").isLessThan(MAX_RSS_GROWTH_BYTES);
  }

  /** One life of the store: open, write, scan, snapshot, flush now and then, close. */
  private static void cycle(Path dir, RocksDbConfig config, int n, SplittableRandom rnd) {
    try (RocksDbKvStore store = RocksDbKvStore.open(dir, config)) {
      WriteBatch batch = new WriteBatch();
      for (int k = 0; k < 200; k++) {
        byte[] value = new byte[256];
        rnd.nextBytes(value);
        batch.put(key(n, k), value);
      }
      store.write(batch);
      int seen = 0;
      try (KvCursor c = store.scanPrefix(prefix(n))) {
        while (c.next()) {
          c.key();
          c.value();
          seen++;
        }
      }
      assertThat(seen).isEqualTo(200);
      try (KvSnapshot snap = store.snapshot()) {
        store.write(new WriteBatch().deleteRange(prefix(n), prefix(n + 1)));
        assertThat(snap.get(key(n, 3))).isNotNull();
        try (KvCursor c = snap.scan(key(n, 10), key(n, 20))) {
          while (c.next()) {
            c.value();
          }
        }
      }
      if (n % 10 == 0) {
        store.flush();
        store.compactRange(prefix(0), prefix(n + 1));
      }
      store.get(key(n, 5));
      store.statistics();
      store.approximateSizeBytes();
    }
  }

  private static byte[] prefix(int n) {
    return String.format("p%06d", n).getBytes(StandardCharsets.UTF_8);
  }

  private static byte[] key(int n, int k) {
    return String.format("p%06d/%04d", n, k).getBytes(StandardCharsets.UTF_8);
  }

  private static long openFileDescriptors() throws IOException {
    try (Stream<Path> s = Files.list(Path.of("/proc/self/fd"))) {
      return s.count();
    }
  }

  private static long residentSetBytes() throws IOException {
    for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
      if (line.startsWith("VmRSS:")) {
        String[] parts = line.substring("VmRSS:".length()).trim().split("\\s+");
        return Long.parseLong(parts[0]) * 1024; // reported in kB
      }
    }
    throw new IllegalStateException("no VmRSS line in /proc/self/status");
  }
}
