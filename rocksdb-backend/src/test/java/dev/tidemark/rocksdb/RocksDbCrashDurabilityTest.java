package dev.tidemark.rocksdb;

import static org.assertj.core.api.Assertions.assertThat;

import dev.tidemark.tsdb.kv.KvCursor;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A real process killed with SIGKILL: every batch whose {@code write} returned before the kill is
 * there after reopening, and no batch is there in part. Also: a folder held by this process is
 * refused to another process.
 */
class RocksDbCrashDurabilityTest {

  private static final int KILLS = 4;
  private static final long SEED = 20261122L;

  @TempDir Path tmp;

  @Test
  void everyAcknowledgedBatchSurvivesSigkill() throws Exception {
    Path dir = tmp.resolve("db");
    SplittableRandom rnd = new SplittableRandom(SEED);
    long lastAcked = -1;
    for (int round = 0; round < KILLS; round++) {
      int killAfter = 200 + rnd.nextInt(3000);
      Process child = startChild("write", dir, round);
      List<Long> acked = new ArrayList<>();
      try (Reader out = new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8)) {
        readAcks(out, acked, killAfter, child, round);
        // SIGKILL on Linux. Through the handle: Process.destroyForcibly() would also close our end
        // of the pipe and lose the acknowledgements still in it.
        child.toHandle().destroyForcibly();
        assertThat(child.waitFor(20, TimeUnit.SECONDS)).as("child died").isTrue();
        readAcks(out, acked, Integer.MAX_VALUE, child, round); // acks still in the pipe count too
      } finally {
        child.destroyForcibly();
      }
      assertThat(acked)
          .as("round %d acknowledgements", round)
          .hasSizeGreaterThanOrEqualTo(killAfter);
      assertThat(acked.get(0))
          .as("round %d resumes after the last batch", round)
          .isGreaterThan(lastAcked);
      lastAcked = acked.get(acked.size() - 1);

      try (RocksDbKvStore store = RocksDbKvStore.open(dir, RocksDbConfig.defaults())) {
        TreeMap<Long, Integer> keysPerBatch = new TreeMap<>();
        try (KvCursor c = store.scanPrefix(new byte[] {'b'})) {
          while (c.next()) {
            byte[] key = c.key();
            long batch = CrashingWriter.batchOf(key);
            int k = Integer.parseInt(new String(key, 14, 2, StandardCharsets.UTF_8));
            assertThat(c.value()).isEqualTo(CrashingWriter.value(batch, k));
            keysPerBatch.merge(batch, 1, Integer::sum);
          }
        }
        System.out.printf(
            "crash round %d: killed after %d acks (last acked %d), store holds batches 0..%d%n",
            round, acked.size(), lastAcked, keysPerBatch.isEmpty() ? -1 : keysPerBatch.lastKey());
        assertThat(keysPerBatch.lastKey())
            .as("round %d: last acked batch present", round)
            .isGreaterThanOrEqualTo(lastAcked);
        assertThat(keysPerBatch.firstKey()).isZero();
        assertThat(keysPerBatch.size())
            .as("round %d: batches form a prefix 0..n (point-in-time recovery)", round)
            .isEqualTo((int) (keysPerBatch.lastKey() + 1));
        keysPerBatch.forEach(
            (batch, n) ->
                assertThat(n)
                    .as("keys of batch %d (atomic)", batch)
                    .isEqualTo(CrashingWriter.KEYS_PER_BATCH));
        lastAcked = keysPerBatch.lastKey(); // an unacknowledged but written batch may be there
      }
    }
  }

  @Test
  void anotherProcessCannotOpenAFolderInUse() throws Exception {
    Path dir = tmp.resolve("db");
    try (RocksDbKvStore store = RocksDbKvStore.open(dir, RocksDbConfig.defaults())) {
      Process child = startChild("open", dir, 0);
      try {
        String out = new String(child.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(child.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(out)
            .startsWith("REFUSED ")
            .contains(dir.toAbsolutePath().toString())
            .contains("in use");
      } finally {
        child.destroyForcibly();
      }
    }
  }

  private Process startChild(String mode, Path dir, int round) throws IOException {
    Path childTmp =
        Files.createDirectories(tmp.resolve("child-tmp")); // RocksDB unpacks its .so here
    List<String> cmd =
        List.of(
            Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "-Xmx128m",
            "-XX:+UseSerialGC",
            "-XX:TieredStopAtLevel=1",
            "-Djava.io.tmpdir=" + childTmp,
            "-cp",
            System.getProperty("java.class.path"),
            CrashingWriter.class.getName(),
            mode,
            dir.toString());
    return new ProcessBuilder(cmd)
        .redirectError(tmp.resolve("child-" + mode + "-" + round + ".err").toFile())
        .start();
  }

  /**
   * Reads newline-terminated batch numbers into {@code acked} until it holds {@code atLeast} or the
   * stream ends; a trailing fragment without newline (cut by the kill) is not an ack.
   */
  private void readAcks(Reader out, List<Long> acked, int atLeast, Process child, int round)
      throws IOException {
    StringBuilder line = new StringBuilder();
    while (acked.size() < atLeast) {
      int ch = out.read();
      if (ch < 0) {
        if (atLeast != Integer.MAX_VALUE) {
          throw new AssertionError(
              "round "
                  + round
                  + ": child ended early (exit "
                  + exitCode(child)
                  + "), stderr: "
                  + Files.readString(tmp.resolve("child-write-" + round + ".err")));
        }
        return;
      }
      if (ch == '\n') {
        acked.add(Long.parseLong(line.toString()));
        line.setLength(0);
      } else {
        line.append((char) ch);
      }
    }
  }

  private static String exitCode(Process p) {
    try {
      return p.waitFor(5, TimeUnit.SECONDS) ? Integer.toString(p.exitValue()) : "still running";
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return "unknown";
    }
  }
}
