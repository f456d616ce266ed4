package dev.tidemark.rocksdb;

import dev.tidemark.tsdb.kv.KvCursor;
import dev.tidemark.tsdb.kv.KvStoreException;
import dev.tidemark.tsdb.kv.WriteBatch;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

/**
 * The child process of {@link RocksDbCrashDurabilityTest}, run in its own JVM.
 *
 * <ul>
 *   <li>{@code write <dir>}: opens the store, finds the last batch present, then writes numbered
 *       batches forever, printing each batch number on stdout right after {@code write} returned
 *       (an acknowledgement). The parent kills it with SIGKILL.
 *   <li>{@code open <dir>}: tries to open the store and prints {@code OPENED} or {@code REFUSED
 *       <message>}.
 * </ul>
 */
public final class CrashingWriter {

  static final int KEYS_PER_BATCH = 10;

  private CrashingWriter() {}

  public static void main(String[] args) {
    PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
    Path dir = Path.of(args[1]);
    RocksDbConfig config = RocksDbConfig.builder().blockCacheBytes(8L << 20).build();
    switch (args[0]) {
      case "write" -> write(dir, config, out);
      case "open" -> {
        try (RocksDbKvStore store = RocksDbKvStore.open(dir, config)) {
          out.println("OPENED");
        } catch (KvStoreException e) {
          out.println("REFUSED " + e.getMessage());
        }
        out.flush();
      }
      default -> throw new IllegalArgumentException("unknown mode " + args[0]);
    }
  }

  private static void write(Path dir, RocksDbConfig config, PrintStream out) {
    RocksDbKvStore store = RocksDbKvStore.open(dir, config); // never closed: we get killed
    long next = lastBatch(store) + 1;
    while (true) {
      WriteBatch batch = new WriteBatch();
      for (int k = 0; k < KEYS_PER_BATCH; k++) {
        batch.put(key(next, k), value(next, k));
      }
      store.write(batch);
      out.println(next); // acknowledged: write returned
      out.flush();
      next++;
    }
  }

  /** The highest batch number in the store, or -1. */
  static long lastBatch(RocksDbKvStore store) {
    long last = -1;
    try (KvCursor c = store.scanPrefix(new byte[] {'b'})) {
      while (c.next()) {
        last = Math.max(last, batchOf(c.key()));
      }
    }
    return last;
  }

  static byte[] key(long batch, int k) {
    return String.format("b%012d/%02d", batch, k).getBytes(StandardCharsets.UTF_8);
  }

  static long batchOf(byte[] key) {
    return Long.parseLong(new String(key, 1, 12, StandardCharsets.UTF_8));
  }

  static byte[] value(long batch, int k) {
    return ("value of batch " + batch + " key " + k + " ")
        .repeat(4)
        .getBytes(StandardCharsets.UTF_8);
  }
}
