package dev.tidemark.rocksdb;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.tuple;

import dev.tidemark.tsdb.kv.KeyRanges;
import dev.tidemark.tsdb.kv.KvCursor;
import dev.tidemark.tsdb.kv.KvReader;
import dev.tidemark.tsdb.kv.KvSnapshot;
import dev.tidemark.tsdb.kv.KvStoreException;
import dev.tidemark.tsdb.kv.WriteBatch;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * RocksDB-specific behaviour beyond the shared contract: persistence, space, checkpoints, locks.
 */
class RocksDbKvStoreTest {

  private static final RocksDbConfig SMALL =
      RocksDbConfig.builder().blockCacheBytes(8L << 20).build();

  @TempDir Path tmp;

  private static byte[] b(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static List<String> keys(KvCursor c) {
    List<String> out = new ArrayList<>();
    try (c) {
      while (c.next()) {
        out.add(new String(c.key(), StandardCharsets.UTF_8));
      }
    }
    return out;
  }

  /**
   * A large batch goes into RocksDB in key order, and what it leaves is what the same operations in
   * their given order leave: a seeded mix of puts and point deletes on few keys (so the same key
   * recurs within a batch), checked against a map applied in batch order.
   */
  @Test
  void batchesInKeyOrderLeaveWhatTheirOperationsInOrderLeave() {
    SplittableRandom random = new SplittableRandom(22);
    TreeMap<String, String> model = new TreeMap<>();
    try (RocksDbKvStore store = RocksDbKvStore.open(tmp.resolve("db"), SMALL)) {
      for (int round = 0; round < 200; round++) {
        WriteBatch batch = new WriteBatch();
        int n = 1 + random.nextInt(3 * RocksDbKvStore.SORTED_INSERT_MIN_OPS);
        for (int i = 0; i < n; i++) {
          String key = "k" + random.nextInt(24);
          if (random.nextInt(4) == 0) {
            batch.delete(b(key));
            model.remove(key);
          } else {
            String value = round + "." + i;
            batch.put(b(key), b(value));
            model.put(key, value);
          }
        }
        store.write(batch);
      }
      for (int k = 0; k < 24; k++) {
        String key = "k" + k;
        byte[] stored = store.get(b(key));
        assertThat(stored == null ? null : new String(stored, StandardCharsets.UTF_8))
            .as(key)
            .isEqualTo(model.get(key));
      }
    }
  }

  @Test
  void insertOrderSortsOnlyLargePointBatchesAndKeepsOneKeysOrder() {
    WriteBatch small = new WriteBatch().put(b("b"), b("1")).put(b("a"), b("2"));
    assertThat(RocksDbKvStore.inInsertOrder(small.ops())).isSameAs(small.ops());

    WriteBatch large = new WriteBatch();
    for (int i = RocksDbKvStore.SORTED_INSERT_MIN_OPS; i > 0; i--) {
      large.put(b("k" + i), b("v" + i));
    }
    large.delete(b("k3")).put(b("k3"), b("again"));
    List<WriteBatch.Op> ordered = RocksDbKvStore.inInsertOrder(large.ops());
    assertThat(ordered).extracting(op -> new String(op.key(), StandardCharsets.UTF_8)).isSorted();
    assertThat(ordered)
        .filteredOn(op -> new String(op.key(), StandardCharsets.UTF_8).equals("k3"))
        .extracting(
            WriteBatch.Op::kind,
            op -> op.value() == null ? null : new String(op.value(), StandardCharsets.UTF_8))
        .containsExactly(
            tuple(WriteBatch.Kind.PUT, "v3"),
            tuple(WriteBatch.Kind.DELETE, null),
            tuple(WriteBatch.Kind.PUT, "again"));

    large.deleteRange(b("k1"), b("k2"));
    assertThat(RocksDbKvStore.inInsertOrder(large.ops())).isSameAs(large.ops());
  }

  @Test
  void dataSurvivesCloseAndReopenIncludingRangeDeletes() {
    Path dir = tmp.resolve("db");
    try (RocksDbKvStore store = RocksDbKvStore.open(dir, SMALL)) {
      store.write(new WriteBatch().put(b("a"), b("1")).put(b("b1"), b("2")).put(b("b2"), b("3")));
      store.write(new WriteBatch().put(b("c"), b("4")).deleteRange(b("b"), b("c")));
    }
    try (RocksDbKvStore store = RocksDbKvStore.open(dir, SMALL)) {
      assertThat(keys(store.scan(null, null))).containsExactly("a", "c");
      assertThat(store.get(b("a"))).isEqualTo(b("1"));
      store.flush();
      store.write(new WriteBatch().delete(b("a")));
    }
    try (RocksDbKvStore store = RocksDbKvStore.open(dir, SMALL)) {
      assertThat(keys(store.scan(null, null))).containsExactly("c");
    }
  }

  @Test
  void rangeDeletePlusCompactRangeFreesTheDisk() {
    try (RocksDbKvStore store = RocksDbKvStore.open(tmp.resolve("db"), SMALL)) {
      SplittableRandom rnd = new SplittableRandom(42);
      int valueBytes = 4096;
      int count = 50 * 256; // 50 MiB of random (incompressible) values under prefix "A"
      for (int i = 0; i < count; ) {
        WriteBatch batch = new WriteBatch();
        for (int j = 0; j < 256; j++, i++) {
          byte[] v = new byte[valueBytes];
          rnd.nextBytes(v);
          batch.put(b(String.format("A%08d", i)), v);
        }
        store.write(batch);
      }
      WriteBatch small = new WriteBatch();
      for (int i = 0; i < 100; i++) {
        small.put(b(String.format("B%08d", i)), b("value" + i));
      }
      store.write(small);
      store.flush();
      long before = store.approximateSizeBytes();

      store.write(new WriteBatch().deleteRange(b("A"), b("B")));
      store.compactRange(b("A"), KeyRanges.prefixEnd(b("A")));
      long after = store.approximateSizeBytes();

      System.out.printf("range delete: size before %,d bytes, after %,d bytes%n", before, after);
      assertThat(before).isGreaterThan(50L << 20);
      assertThat(before - after).as("bytes freed").isGreaterThan(45L << 20);
      assertThat(keys(store.scanPrefix(b("A")))).isEmpty();
      assertThat(keys(store.scanPrefix(b("B")))).hasSize(100);
      assertThat(store.get(b("B00000042"))).isEqualTo(b("value42"));
    }
  }

  @Test
  void compactRangeDropsWholeFilesOnlyWhenTheRangeIsDeleted() {
    try (RocksDbKvStore store = RocksDbKvStore.open(tmp.resolve("db"), SMALL)) {
      WriteBatch batch = new WriteBatch();
      for (int i = 0; i < 1000; i++) {
        batch.put(b(String.format("C%05d", i)), new byte[100]);
      }
      store.write(batch);
      store.flush();
      store.compactRange(null, null); // the prefix now sits in files below L0, wholly in range
      store.compactRange(b("C"), b("D")); // live keys: nothing may be dropped
      assertThat(keys(store.scanPrefix(b("C")))).hasSize(1000);

      try (KvSnapshot snap = store.snapshot()) {
        store.write(new WriteBatch().deleteRange(b("C"), b("D")));
        store.compactRange(b("C"), b("D")); // a snapshot still needs the keys
        assertThat(keys(snap.scanPrefix(b("C")))).hasSize(1000);
        assertThat(snap.get(b("C00007"))).hasSize(100);
      }
      assertThat(keys(store.scanPrefix(b("C")))).isEmpty();
      store.compactRange(b("C"), b("D"));
      assertThat(store.statistics().get(RocksDbKvStore.STAT_SST_FILES)).isZero();
    }
  }

  @Test
  void checkpointIsAConsistentIndependentCopy() {
    Path target = tmp.resolve("checkpoint");
    try (RocksDbKvStore store = RocksDbKvStore.open(tmp.resolve("db"), SMALL)) {
      store.write(new WriteBatch().put(b("a"), b("1")).put(b("b"), b("2")));
      store.flush();
      store.write(new WriteBatch().put(b("c"), b("3"))); // still in the memtable/WAL
      store.createCheckpoint(target);
      store.write(new WriteBatch().put(b("d"), b("4")).delete(b("a")));

      try (RocksDbKvStore copy = RocksDbKvStore.open(target, SMALL)) {
        assertThat(keys(copy.scan(null, null))).containsExactly("a", "b", "c");
        assertThat(copy.get(b("c"))).isEqualTo(b("3"));
        copy.write(new WriteBatch().put(b("e"), b("5")));
      }
      assertThat(keys(store.scan(null, null))).containsExactly("b", "c", "d");

      assertThatThrownBy(() -> store.createCheckpoint(target))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining(target.toString())
          .hasMessageContaining("already exists");
    }
  }

  @Test
  void secondOpenOfTheSameFolderIsRefused() {
    Path dir = tmp.resolve("db");
    try (RocksDbKvStore store = RocksDbKvStore.open(dir, SMALL)) {
      store.write(new WriteBatch().put(b("a"), b("1")));
      assertThatThrownBy(() -> RocksDbKvStore.open(dir, SMALL))
          .isInstanceOf(KvStoreException.class)
          .hasMessageContaining(dir.toAbsolutePath().toString())
          .hasMessageContaining("in use");
      assertThat(store.get(b("a"))).isEqualTo(b("1")); // the first store is unharmed
    }
    try (RocksDbKvStore again = RocksDbKvStore.open(dir, SMALL)) { // free once closed
      assertThat(again.get(b("a"))).isEqualTo(b("1"));
    }
  }

  @Test
  void closeReleasesCursorsAndSnapshotsLeftOpen() {
    RocksDbKvStore store = RocksDbKvStore.open(tmp.resolve("db"), SMALL);
    store.write(new WriteBatch().put(b("a"), b("1")).put(b("b"), b("2")));
    KvCursor cursor = store.scan(null, null);
    assertThat(cursor.next()).isTrue();
    KvSnapshot snap = store.snapshot();
    KvCursor snapCursor = snap.scan(null, null);
    assertThat(store.openResourceCount()).isEqualTo(3);

    store.close();

    assertThatThrownBy(cursor::next).isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(cursor::key).isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(snapCursor::next).isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(() -> snap.get(b("a"))).isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(() -> snap.scan(null, null)).isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(store::snapshot).isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(store::sync).isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(store::approximateSizeBytes).isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(() -> store.createCheckpoint(tmp.resolve("cp")))
        .isInstanceOf(IllegalStateException.class);
    cursor.close(); // closing again after the store did is harmless
    snap.close();
    store.close();
  }

  /** Close racing with reads and cursors on other threads: only IllegalStateException, no crash. */
  @Test
  void closeWhileOtherThreadsReadFailsCleanly() throws Exception {
    RocksDbKvStore store = RocksDbKvStore.open(tmp.resolve("db"), SMALL);
    WriteBatch batch = new WriteBatch();
    for (int i = 0; i < 500; i++) {
      batch.put(b(String.format("k%04d", i)), b("v" + i));
    }
    store.write(batch);
    AtomicReference<Throwable> unexpected = new AtomicReference<>();
    CountDownLatch running = new CountDownLatch(4);
    List<Thread> threads = new ArrayList<>();
    for (int t = 0; t < 4; t++) {
      int id = t;
      Thread thread =
          new Thread(
              () -> {
                boolean counted = false;
                try {
                  while (true) {
                    if (id % 2 == 0) {
                      try (KvCursor c = store.scan(null, null)) {
                        while (c.next()) {
                          c.key();
                          c.value();
                        }
                      }
                    } else {
                      try (KvSnapshot snap = store.snapshot();
                          KvCursor c = snap.scan(b("k0100"), b("k0400"))) {
                        snap.get(b("k0007"));
                        while (c.next()) {
                          c.value();
                        }
                      }
                    }
                    if (!counted) {
                      counted = true;
                      running.countDown();
                    }
                  }
                } catch (IllegalStateException expected) {
                  // the store (or the cursor's owner) was closed under us
                } catch (Throwable e) {
                  unexpected.set(e);
                }
              });
      thread.start();
      threads.add(thread);
    }
    // Every reader has finished one pass and is in its next (or failed: checked below).
    running.await(10, TimeUnit.SECONDS);
    store.close();
    for (Thread thread : threads) {
      thread.join(10_000);
      assertThat(thread.isAlive()).isFalse();
    }
    assertThat(unexpected.get()).isNull();
  }

  @Test
  void closingASnapshotClosesItsCursorsAndUnregisters() {
    try (RocksDbKvStore store = RocksDbKvStore.open(tmp.resolve("db"), SMALL)) {
      store.write(new WriteBatch().put(b("a"), b("1")));
      KvSnapshot snap = store.snapshot();
      KvCursor c = snap.scan(null, null);
      snap.close();
      assertThatThrownBy(c::next).isInstanceOf(IllegalStateException.class);
      c.close();
      try (KvCursor c2 = store.scan(b("a"), null)) {
        assertThat(c2.next()).isTrue();
      }
      assertThat(store.openResourceCount()).isZero();
    }
  }

  @Test
  void statisticsReportWritesFilesAndSizes() {
    try (RocksDbKvStore store = RocksDbKvStore.open(tmp.resolve("db"), SMALL)) {
      store.write(new WriteBatch().put(b("a"), new byte[10_000]));
      Map<String, Long> s = store.statistics();
      assertThat(s.get(RocksDbKvStore.STAT_BYTES_WRITTEN)).isGreaterThanOrEqualTo(10_000);
      assertThat(s.get(RocksDbKvStore.STAT_MEMTABLE_BYTES)).isPositive();
      assertThat(s.get(RocksDbKvStore.STAT_WAL_BYTES)).isGreaterThanOrEqualTo(10_000);
      store.flush();
      store.get(b("a"));
      Map<String, Long> t = store.statistics();
      assertThat(t.get(RocksDbKvStore.STAT_SST_FILES)).isEqualTo(1);
      assertThat(t.get(RocksDbKvStore.STAT_SST_BYTES)).isPositive();
      assertThat(t.get(RocksDbKvStore.STAT_FLUSH_BYTES_WRITTEN)).isPositive();
      assertThat(t)
          .containsKeys(
              RocksDbKvStore.STAT_BLOCK_CACHE_HIT,
              RocksDbKvStore.STAT_BLOCK_CACHE_MISS,
              RocksDbKvStore.STAT_BLOCK_CACHE_USAGE_BYTES,
              RocksDbKvStore.STAT_COMPACTION_BYTES_READ,
              RocksDbKvStore.STAT_COMPACTION_BYTES_WRITTEN,
              RocksDbKvStore.STAT_PENDING_COMPACTION_BYTES);
      assertThatThrownBy(() -> t.put("x", 1L)).isInstanceOf(UnsupportedOperationException.class);
    }
  }

  @Test
  void fsyncOnWriteStoreWorks() {
    RocksDbConfig config = SMALL.toBuilder().fsyncOnWrite(true).build();
    Path dir = tmp.resolve("db");
    try (RocksDbKvStore store = RocksDbKvStore.open(dir, config)) {
      store.write(new WriteBatch().put(b("a"), b("1")));
      store.sync();
    }
    try (RocksDbKvStore store = RocksDbKvStore.open(dir, config)) {
      assertThat(store.get(b("a"))).isEqualTo(b("1"));
    }
  }

  @Test
  void openFailsWhenTheFolderCannotBeCreated() throws Exception {
    Path file = Files.writeString(tmp.resolve("plain-file"), "x");
    assertThatThrownBy(() -> RocksDbKvStore.open(file.resolve("db"), SMALL))
        .isInstanceOf(KvStoreException.class)
        .hasMessageContaining(file.toString());
  }

  @Test
  void configRejectsBadValuesNamingThem() {
    assertThatThrownBy(() -> RocksDbConfig.builder().blockCacheBytes(-1).build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("blockCacheBytes must be positive, was -1");
    assertThatThrownBy(() -> RocksDbConfig.builder().writeBufferBytes(1000).build())
        .hasMessageContaining("writeBufferBytes")
        .hasMessageContaining("was 1000");
    assertThatThrownBy(() -> RocksDbConfig.builder().maxBackgroundJobs(0).build())
        .hasMessageContaining("maxBackgroundJobs")
        .hasMessageContaining("was 0");
    assertThatThrownBy(() -> RocksDbConfig.builder().blockSizeBytes(100).build())
        .hasMessageContaining("blockSizeBytes")
        .hasMessageContaining("was 100");
    assertThatThrownBy(() -> RocksDbConfig.builder().maxOpenFiles(5).build())
        .hasMessageContaining("maxOpenFiles")
        .hasMessageContaining("was 5");
    RocksDbConfig d = RocksDbConfig.defaults();
    assertThat(d.blockCacheBytes()).isEqualTo(256L << 20);
    assertThat(d.fsyncOnWrite()).isFalse();
    assertThat(d.toBuilder().build()).isEqualTo(d);
  }

  @Test
  void oneShotReadsFindTheDataAndLeaveTheBlockCacheAsItWas() {
    try (RocksDbKvStore store = RocksDbKvStore.open(tmp.resolve("db"), SMALL)) {
      WriteBatch batch = new WriteBatch();
      for (int i = 0; i < 2_000; i++) {
        batch.put(b(String.format("k%05d", i)), new byte[100]);
      }
      store.write(batch);
      store.flush(); // into an SST file: reads go through blocks
      long before = store.statistics().get(RocksDbKvStore.STAT_BLOCK_CACHE_USAGE_BYTES);
      KvReader oneShot = store.oneShot();
      for (int i = 0; i < 2_000; i += 7) {
        assertThat(oneShot.get(b(String.format("k%05d", i)))).hasSize(100);
      }
      assertThat(oneShot.multiGet(List.of(b("k00001"), b("nope"))))
          .satisfiesExactly(v -> assertThat(v).hasSize(100), v -> assertThat(v).isNull());
      long afterOneShot = store.statistics().get(RocksDbKvStore.STAT_BLOCK_CACHE_USAGE_BYTES);
      for (int i = 0; i < 2_000; i += 7) {
        assertThat(store.get(b(String.format("k%05d", i)))).hasSize(100);
      }
      long afterGets = store.statistics().get(RocksDbKvStore.STAT_BLOCK_CACHE_USAGE_BYTES);
      assertThat(afterOneShot).as("one-shot reads cache no data block").isEqualTo(before);
      assertThat(afterGets).as("the same gets through the cache").isGreaterThan(afterOneShot);
    }
  }
}
