package dev.tidemark.tsdb.kv;

class InMemoryKvStoreTest extends KvStoreContractTest {
  @Override
  protected KvStore openStore() {
    return new InMemoryKvStore();
  }
}
