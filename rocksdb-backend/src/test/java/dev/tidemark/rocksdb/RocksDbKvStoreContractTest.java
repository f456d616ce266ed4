package dev.tidemark.rocksdb;

import dev.tidemark.tsdb.kv.KvStore;
import dev.tidemark.tsdb.kv.KvStoreContractTest;
import java.nio.file.Path;
import org.junit.jupiter.api.io.TempDir;

/** The shared KV contract against a real RocksDB in a temporary folder. */
class RocksDbKvStoreContractTest extends KvStoreContractTest {

  @TempDir Path dir;

  @Override
  protected KvStore openStore() {
    // A small cache keeps the many short-lived test stores light.
    return RocksDbKvStore.open(dir, RocksDbConfig.builder().blockCacheBytes(8L << 20).build());
  }
}
