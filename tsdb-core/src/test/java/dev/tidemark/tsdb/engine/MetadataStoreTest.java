package dev.tidemark.tsdb.engine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.tidemark.tsdb.codec.Keys;
import dev.tidemark.tsdb.codec.MetadataValue;
import dev.tidemark.tsdb.kv.InMemoryKvStore;
import dev.tidemark.tsdb.model.FamilyMetadata;
import dev.tidemark.tsdb.model.PromType;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** Metric metadata in the store: written when it changes, never per request, read back at open. */
class MetadataStoreTest {
  static final FamilyMetadata RPC =
      new FamilyMetadata("rpc_seconds", PromType.HISTOGRAM, "seconds", "RPC latency.");
  static final FamilyMetadata UP = new FamilyMetadata("up", PromType.GAUGE, "", "1 if up.");

  @Test
  void onlyFamiliesRegisteredForTheFirstTimeAreWrittenInOneBatchPerSave() {
    CountingKvStore kv = new CountingKvStore(new InMemoryKvStore());
    MetadataStore store = new MetadataStore(kv);
    assertThat(store.save()).as("nothing registered").isZero();
    assertThat(kv.writes.get()).isZero();

    store.registry().register(RPC);
    store.registry().register(UP);
    store.registry().register(RPC); // the same again: no change
    store.registry().offer(UP);
    assertThat(store.save()).isEqualTo(2);
    assertThat(kv.writes.get()).isEqualTo(1);

    for (int i = 0; i < 100; i++) { // requests that carry known metadata change nothing
      store.registry().register(RPC);
      store.registry().offer(new FamilyMetadata("up", PromType.COUNTER, "", "other"));
    }
    assertThat(store.save()).isZero();
    assertThat(kv.writes.get()).isEqualTo(1);
    assertThat(MetadataValue.decode(Keys.metadata("up"), kv.get(Keys.metadata("up"))))
        .isEqualTo(UP);

    MetadataStore reopened = new MetadataStore(kv);
    assertThat(reopened.registry().snapshot()).containsOnlyKeys("rpc_seconds", "up");
    assertThat(reopened.registry().get("rpc_seconds")).contains(RPC);
    assertThat(reopened.save()).as("restored families are not written again").isZero();
  }

  @Test
  void theEngineSavesAtCloseAndReadsBackAtOpen() {
    InMemoryKvStore kv = new InMemoryKvStore();
    EngineConfig config = EngineConfig.builder().retentionInterval(Duration.ZERO).build();
    try (Engine engine = Engine.open(kv, config)) {
      assertThat(engine.metadata().size()).isZero();
      engine.metadata().register(RPC);
    }
    try (Engine engine = Engine.open(kv, config)) {
      assertThat(engine.metadata().get("rpc_seconds")).contains(RPC);
    }
    assertThat(StoreVerifier.verify(kv).clean()).isTrue();
  }
}
