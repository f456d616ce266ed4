package dev.tidemark.tsdb.engine;

import dev.tidemark.tsdb.codec.Keys;
import dev.tidemark.tsdb.codec.MetadataValue;
import dev.tidemark.tsdb.kv.KvCursor;
import dev.tidemark.tsdb.kv.KvStore;
import dev.tidemark.tsdb.kv.WriteBatch;
import dev.tidemark.tsdb.model.FamilyMetadata;
import dev.tidemark.tsdb.model.MetadataRegistry;
import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * The metric families' metadata in the store: the Metadata records ({@code docs/format.md}), read
 * into the engine's {@link MetadataRegistry} at open, and each family registered since written
 * behind the requests.
 *
 * <p><b>Off the hot path.</b> A family registered for the first time (the only change the registry
 * knows: the first registration of a family wins) is queued by the registering thread, which goes
 * on at once; {@link #save} writes the queue in one batch, on the engine's background thread every
 * {@link #SAVE_EVERY_MILLIS} and at close. So the store is written when metadata changes, never per
 * request, and a family registered in the last second before a crash may have to be sent again
 * (Prometheus sends metadata every minute, OTLP with every request).
 *
 * <p>A family whose unit or help has more than 65535 UTF-8 bytes (the record's {@code Utf8}) is
 * served but not saved. Thread-safe.
 */
final class MetadataStore {
  /** How often queued families are written. */
  static final long SAVE_EVERY_MILLIS = 1000;

  private static final System.Logger LOG = System.getLogger(MetadataStore.class.getName());

  private final KvStore kv;
  private final ConcurrentLinkedQueue<FamilyMetadata> unsaved = new ConcurrentLinkedQueue<>();
  private final MetadataRegistry registry = new MetadataRegistry(unsaved::add);

  /** Reads every Metadata record of {@code kv} (one prefix scan). */
  MetadataStore(KvStore kv) {
    this.kv = kv;
    try (KvCursor c = kv.scanPrefix(Keys.metadataPrefix())) {
      while (c.next()) {
        registry.restore(MetadataValue.decode(c.key(), c.value()));
      }
    }
  }

  MetadataRegistry registry() {
    return registry;
  }

  /**
   * Writes the families registered since the last save, in one batch; returns how many. If the
   * write fails they stay queued for the next save, and the failure is thrown.
   */
  int save() {
    List<FamilyMetadata> taken = new ArrayList<>();
    WriteBatch wb = new WriteBatch();
    for (FamilyMetadata m = unsaved.poll(); m != null; m = unsaved.poll()) {
      taken.add(m);
      byte[] value;
      try {
        value = MetadataValue.encode(m);
      } catch (IllegalArgumentException e) {
        LOG.log(Level.WARNING, "metadata of {0} not saved: {1}", m.family(), e.getMessage());
        continue;
      }
      wb.put(Keys.metadata(m.family()), value);
    }
    if (wb.isEmpty()) {
      return 0;
    }
    try {
      kv.write(wb);
    } catch (RuntimeException e) {
      unsaved.addAll(taken);
      throw e;
    }
    return wb.size();
  }

  /** {@link #save}, logging a failure instead of throwing it (the background thread's task). */
  void saveQuietly() {
    try {
      save();
    } catch (RuntimeException e) {
      LOG.log(Level.WARNING, "saving metric metadata failed; will retry", e);
    }
  }
}
