package dev.tidemark.tsdb.kv;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The contract every {@link KvStore} must pass. Shipped in the tsdb-core test-jar; a store's test
 * extends it and says how to open a fresh store.
 */
public abstract class KvStoreContractTest {

  protected KvStore store;

  /** A new, empty store, owned by the test. */
  protected abstract KvStore openStore() throws Exception;

  @BeforeEach
  void open() throws Exception {
    store = openStore();
  }

  @AfterEach
  void closeStore() {
    if (store != null) {
      store.close();
    }
  }

  protected static byte[] b(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  protected static byte[] bytes(int... v) {
    byte[] r = new byte[v.length];
    for (int i = 0; i < v.length; i++) {
      r[i] = (byte) v[i];
    }
    return r;
  }

  private static List<String> keys(KvCursor c) {
    List<String> out = new ArrayList<>();
    try (c) {
      while (c.next()) {
        out.add(new String(c.key(), StandardCharsets.ISO_8859_1));
      }
    }
    return out;
  }

  @Test
  void getOfMissingKeyIsNull() {
    assertThat(store.get(b("nope"))).isNull();
  }

  @Test
  void putThenGet() {
    store.write(new WriteBatch().put(b("k"), b("v")));
    assertThat(store.get(b("k"))).isEqualTo(b("v"));
  }

  @Test
  void emptyValueIsStoredAndDistinctFromAbsent() {
    store.write(new WriteBatch().put(b("k"), new byte[0]));
    assertThat(store.get(b("k"))).isEmpty();
  }

  @Test
  void laterOperationsInABatchWin() {
    store.write(new WriteBatch().put(b("k"), b("1")).put(b("k"), b("2")));
    assertThat(store.get(b("k"))).isEqualTo(b("2"));
    store.write(new WriteBatch().put(b("k"), b("3")).delete(b("k")));
    assertThat(store.get(b("k"))).isNull();
  }

  @Test
  void returnedArraysBelongToTheCaller() {
    byte[] value = b("value");
    store.write(new WriteBatch().put(b("k"), value));
    byte[] got = store.get(b("k"));
    got[0] = 'X';
    assertThat(store.get(b("k"))).isEqualTo(b("value"));
  }

  @Test
  void scanIsOrderedByUnsignedBytes() {
    WriteBatch batch = new WriteBatch();
    batch.put(bytes(0x80), b("a")).put(bytes(0x7F), b("b")).put(bytes(0xFF), b("c"));
    batch.put(bytes(0x00), b("d")).put(bytes(0x00, 0x00), b("e")).put(bytes(0x01), b("f"));
    store.write(batch);
    List<byte[]> seen = new ArrayList<>();
    try (KvCursor c = store.scan(null, null)) {
      while (c.next()) {
        seen.add(c.key());
      }
    }
    assertThat(seen)
        .containsExactly(
            bytes(0x00), bytes(0x00, 0x00), bytes(0x01), bytes(0x7F), bytes(0x80), bytes(0xFF));
  }

  @Test
  void scanBoundsAreInclusiveExclusive() {
    WriteBatch batch = new WriteBatch();
    for (String k : List.of("a", "b", "c", "d")) {
      batch.put(b(k), b(k));
    }
    store.write(batch);
    assertThat(keys(store.scan(b("b"), b("d")))).containsExactly("b", "c");
    assertThat(keys(store.scan(b("b"), null))).containsExactly("b", "c", "d");
    assertThat(keys(store.scan(null, b("b")))).containsExactly("a");
    assertThat(keys(store.scan(b("c"), b("c")))).isEmpty();
    assertThat(keys(store.scan(b("d"), b("a")))).isEmpty();
  }

  @Test
  void scanPrefixIncludesKeysEndingInFf() {
    store.write(
        new WriteBatch()
            .put(bytes(0x01, 0xFF), b("x"))
            .put(bytes(0x01, 0xFF, 0xFF), b("y"))
            .put(bytes(0x02), b("z"))
            .put(bytes(0x01), b("w")));
    List<byte[]> seen = new ArrayList<>();
    try (KvCursor c = store.scanPrefix(bytes(0x01, 0xFF))) {
      while (c.next()) {
        seen.add(c.key());
      }
    }
    assertThat(seen).containsExactly(bytes(0x01, 0xFF), bytes(0x01, 0xFF, 0xFF));
    assertThat(keys(store.scanPrefix(bytes(0xFF)))).isEmpty();
  }

  @Test
  void scanReturnsValues() {
    store.write(new WriteBatch().put(b("a"), b("1")).put(b("b"), b("2")));
    try (KvCursor c = store.scan(null, null)) {
      assertThat(c.next()).isTrue();
      assertThat(c.value()).isEqualTo(b("1"));
      assertThat(c.next()).isTrue();
      assertThat(c.value()).isEqualTo(b("2"));
      assertThat(c.next()).isFalse();
    }
  }

  @Test
  void deleteRangeRemovesExactlyTheRange() {
    WriteBatch batch = new WriteBatch();
    for (String k : List.of("a", "b", "ba", "c", "d")) {
      batch.put(b(k), b(k));
    }
    store.write(batch);
    store.write(new WriteBatch().deleteRange(b("b"), b("c")));
    assertThat(keys(store.scan(null, null))).containsExactly("a", "c", "d");
    store.compactRange(b("b"), b("c"));
    assertThat(keys(store.scan(null, null))).containsExactly("a", "c", "d");
  }

  @Test
  void putAfterDeleteRangeInTheSameBatchSurvives() {
    store.write(new WriteBatch().put(b("b1"), b("old")));
    store.write(new WriteBatch().deleteRange(b("b"), b("c")).put(b("b1"), b("new")));
    assertThat(store.get(b("b1"))).isEqualTo(b("new"));
  }

  @Test
  void snapshotIsIsolatedFromLaterWrites() {
    store.write(new WriteBatch().put(b("a"), b("1")).put(b("b"), b("1")));
    try (KvSnapshot snap = store.snapshot()) {
      store.write(new WriteBatch().put(b("a"), b("2")).delete(b("b")).put(b("c"), b("2")));
      assertThat(snap.get(b("a"))).isEqualTo(b("1"));
      assertThat(snap.get(b("b"))).isEqualTo(b("1"));
      assertThat(snap.get(b("c"))).isNull();
      assertThat(keys(snap.scan(null, null))).containsExactly("a", "b");
    }
    assertThat(keys(store.scan(null, null))).containsExactly("a", "c");
  }

  @Test
  void snapshotNeverSeesHalfABatch() throws Exception {
    int keys = 50;
    int rounds = 200;
    AtomicReference<Throwable> failure = new AtomicReference<>();
    CountDownLatch done = new CountDownLatch(1);
    Thread writer =
        new Thread(
            () -> {
              try {
                for (int r = 1; r <= rounds; r++) {
                  WriteBatch batch = new WriteBatch();
                  for (int k = 0; k < keys; k++) {
                    batch.put(b("k" + k), b(Integer.toString(r)));
                  }
                  store.write(batch);
                }
              } catch (Throwable t) {
                failure.set(t);
              } finally {
                done.countDown();
              }
            });
    writer.start();
    while (done.getCount() > 0) {
      try (KvSnapshot snap = store.snapshot();
          KvCursor c = snap.scan(null, null)) {
        String seen = null;
        while (c.next()) {
          String v = new String(c.value(), StandardCharsets.UTF_8);
          if (seen == null) {
            seen = v;
          }
          assertThat(v).as("every key of one snapshot comes from the same batch").isEqualTo(seen);
        }
      }
    }
    writer.join();
    assertThat(failure.get()).isNull();
  }

  @Test
  void syncAndSizeWork() {
    store.write(new WriteBatch().put(b("a"), new byte[1000]));
    store.sync();
    assertThat(store.approximateSizeBytes()).isGreaterThanOrEqualTo(0);
  }

  @Test
  void closedStoreRefusesCalls() {
    store.close();
    assertThatThrownBy(() -> store.get(b("a"))).isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(() -> store.write(new WriteBatch().put(b("a"), b("b"))))
        .isInstanceOf(IllegalStateException.class);
    store.close(); // idempotent
    store = null;
  }

  /** Random batches against a TreeMap model; seed printed on failure. */
  @Test
  void matchesSortedMapModelUnderRandomOperations() {
    long seed = new SplittableRandom().nextLong();
    SplittableRandom rnd = new SplittableRandom(seed);
    TreeMap<byte[], byte[]> model = new TreeMap<>(Arrays::compareUnsigned);
    for (int round = 0; round < 300; round++) {
      WriteBatch batch = new WriteBatch();
      int ops = 1 + rnd.nextInt(8);
      for (int i = 0; i < ops; i++) {
        byte[] key = randomKey(rnd);
        int kind = rnd.nextInt(10);
        if (kind < 6) {
          byte[] value = new byte[rnd.nextInt(4)];
          rnd.nextBytes(value);
          batch.put(key, value);
          model.put(key, value);
        } else if (kind < 9) {
          batch.delete(key);
          model.remove(key);
        } else {
          byte[] end = randomKey(rnd);
          if (Arrays.compareUnsigned(key, end) > 0) {
            byte[] t = key;
            key = end;
            end = t;
          }
          batch.deleteRange(key, end);
          model.subMap(key, true, end, false).clear();
        }
      }
      store.write(batch);
      byte[] from = rnd.nextBoolean() ? null : randomKey(rnd);
      byte[] to = rnd.nextBoolean() ? null : randomKey(rnd);
      Map<byte[], byte[]> expected =
          from == null && to == null
              ? model
              : from == null
                  ? model.headMap(to, false)
                  : to == null
                      ? model.tailMap(from, true)
                      : Arrays.compareUnsigned(from, to) >= 0
                          ? Map.of()
                          : model.subMap(from, true, to, false);
      List<String> want = new ArrayList<>();
      expected.forEach((k, v) -> want.add(Arrays.toString(k) + "=" + Arrays.toString(v)));
      List<String> got = new ArrayList<>();
      try (KvCursor c = store.scan(from, to)) {
        while (c.next()) {
          got.add(Arrays.toString(c.key()) + "=" + Arrays.toString(c.value()));
        }
      }
      assertThat(got).as("seed %d round %d", seed, round).isEqualTo(want);
      byte[] probe = randomKey(rnd);
      assertThat(store.get(probe)).as("seed %d round %d", seed, round).isEqualTo(model.get(probe));
    }
  }

  private static byte[] randomKey(SplittableRandom rnd) {
    byte[] k = new byte[1 + rnd.nextInt(3)];
    for (int i = 0; i < k.length; i++) {
      k[i] = (byte) (rnd.nextInt(4) * 0x55); // 00 55 AA FF: many shared prefixes, signed-byte traps
    }
    return k;
  }
}
