package dev.tidemark.server;

import dev.tidemark.rocksdb.RocksDbKvStore;
import dev.tidemark.tsdb.engine.Engine;
import io.prometheus.metrics.model.registry.MultiCollector;
import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot;
import io.prometheus.metrics.model.snapshots.MetricSnapshot;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The engine's and the store's state as Prometheus metrics, read at scrape time.
 *
 * <p>One collector rather than a callback metric per family: {@link Engine#stats()} walks the head
 * under the read lock and {@link RocksDbKvStore#statistics()} reads a dozen RocksDB properties, so
 * each is called once per scrape and every family is cut from that one reading. A store that is
 * already closed (a scrape racing the shutdown) yields the engine families only.
 *
 * <p>Families: {@code tidemark_head_series}, {@code tidemark_head_bytes}, {@code
 * tidemark_head_bytes_per_series}, {@code tidemark_head_open_buckets}, {@code tidemark_buckets},
 * {@code tidemark_samples_appended_total}, {@code tidemark_samples_rejected_total}, the bucket
 * compactor's {@code tidemark_buckets_coarse} and {@code tidemark_bucket_compaction*} families,
 * {@code tidemark_recovery_seconds}, {@code tidemark_storage_bytes} and {@code
 * tidemark_rocksdb_<stat>} for every key of {@link RocksDbKvStore#statistics()} (cumulative tickers
 * as counters with {@code _total}, the rest as gauges). Thread-safe.
 */
final class EngineMetrics implements MultiCollector {

  /** The RocksDB statistics that only grow (tickers since open). */
  private static final Set<String> ROCKSDB_COUNTERS =
      Set.of(
          RocksDbKvStore.STAT_BYTES_WRITTEN,
          RocksDbKvStore.STAT_BLOCK_CACHE_HIT,
          RocksDbKvStore.STAT_BLOCK_CACHE_MISS,
          RocksDbKvStore.STAT_FLUSH_BYTES_WRITTEN,
          RocksDbKvStore.STAT_COMPACTION_BYTES_READ,
          RocksDbKvStore.STAT_COMPACTION_BYTES_WRITTEN);

  private final Engine engine;
  private final RocksDbKvStore store;
  private final List<String> names;

  EngineMetrics(Engine engine, RocksDbKvStore store) {
    this.engine = engine;
    this.store = store;
    List<String> n =
        new ArrayList<>(
            List.of(
                "tidemark_head_series",
                "tidemark_head_active_series",
                "tidemark_head_max_active_series",
                "tidemark_head_bytes",
                "tidemark_head_max_bytes",
                "tidemark_head_refusing_new_series",
                "tidemark_head_bytes_per_series",
                "tidemark_head_open_buckets",
                "tidemark_buckets",
                "tidemark_samples_appended",
                "tidemark_samples_rejected",
                "tidemark_buckets_coarse",
                "tidemark_bucket_compactions",
                "tidemark_bucket_compaction_merged_buckets",
                "tidemark_bucket_compaction_written_bytes",
                "tidemark_bucket_compaction_seconds",
                "tidemark_bucket_compactions_abandoned",
                "tidemark_bucket_compaction_failures",
                "tidemark_read_unreadable_records",
                "tidemark_recovery_seconds",
                "tidemark_storage_bytes"));
    for (String stat : store.statistics().keySet()) {
      n.add("tidemark_rocksdb_" + stat);
    }
    names = List.copyOf(n);
  }

  @Override
  public List<String> getPrometheusNames() {
    return names;
  }

  @Override
  public MetricSnapshots collect() {
    Engine.Stats s = engine.stats();
    List<MetricSnapshot> out = new ArrayList<>();
    out.add(gauge("tidemark_head_series", "Series in the in-memory head.", s.headSeries()));
    out.add(
        gauge(
            "tidemark_head_active_series",
            "Distinct series in the head's open buckets (one in two buckets counts once), which"
                + " max-active-series limits.",
            engine.activeSeries()));
    out.add(
        gauge(
            "tidemark_head_max_active_series",
            "The max-active-series limit: new series beyond it are refused (0: no limit).",
            engine.config().maxActiveSeries()));
    out.add(gauge("tidemark_head_bytes", "Estimated memory held by the head.", s.headBytes()));
    out.add(
        gauge(
            "tidemark_head_max_bytes",
            "The head's memory budget (--head-memory-limit): beyond it new series are refused.",
            engine.config().maxHeadBytes()));
    out.add(
        gauge(
            "tidemark_head_refusing_new_series",
            "1 while new series are refused because the head is over its memory budget (series"
                + " already in the head are still accepted)",
            engine.newSeriesRefusal() == null ? 0 : 1));
    out.add(
        gauge(
            "tidemark_head_bytes_per_series",
            "Head bytes per head series (0 with an empty head).",
            s.headBytesPerSeries()));
    out.add(gauge("tidemark_head_open_buckets", "Buckets open in the head.", s.openBuckets()));
    out.add(
        gauge(
            "tidemark_buckets",
            "Buckets holding data (open and sealed, of every size).",
            s.buckets()));
    out.add(
        gauge(
            "tidemark_buckets_coarse",
            "Buckets coarser than one hour, made by the bucket compactor.",
            s.coarseBuckets()));
    out.add(
        counter(
            "tidemark_bucket_compactions",
            "Coarse buckets the bucket compactor made since start.",
            s.compactions()));
    out.add(
        counter(
            "tidemark_bucket_compaction_merged_buckets",
            "Finer buckets merged into coarse ones since start.",
            s.compactedBuckets()));
    out.add(
        counter(
            "tidemark_bucket_compaction_written_bytes",
            "Key and value bytes the bucket compactor wrote since start.",
            s.compactionBytesWritten()));
    out.add(
        counter(
            "tidemark_bucket_compaction_seconds",
            "Time the bucket compactor spent since start.",
            s.compactionMillis() / 1000.0));
    out.add(
        counter(
            "tidemark_bucket_compactions_abandoned",
            "Bucket groups given up because a late sample reopened one of their buckets meanwhile.",
            s.compactionsAbandoned()));
    out.add(
        counter(
            "tidemark_bucket_compaction_failures",
            "Bucket compactions that failed on a store error since start (retried later).",
            s.compactionFailures()));
    out.add(
        counter(
            "tidemark_samples_appended",
            "Samples accepted by the engine since start.",
            s.samplesAccepted()));
    out.add(
        counter(
            "tidemark_samples_rejected",
            "Samples rejected by the engine since start (out of order, duplicate, too old, too far"
                + " in the future, invalid).",
            s.samplesRejected()));
    out.add(
        counter(
            "tidemark_read_unreadable_records",
            "Records a read had to skip since start (a posting without its ForwardIndex record, an"
                + " undecodable record); tidemark verify --repair fixes the store.",
            s.unreadableRecords()));
    out.add(
        gauge(
            "tidemark_recovery_seconds",
            "Time the engine took at start to recover the head from the head log.",
            s.recoveryMillis() / 1000.0));
    Map<String, Long> stats;
    long storageBytes;
    try {
      stats = store.statistics();
      storageBytes = store.approximateSizeBytes();
    } catch (RuntimeException closed) {
      return new MetricSnapshots(out);
    }
    out.add(
        gauge(
            "tidemark_storage_bytes",
            "Bytes on disk: RocksDB SST files and write-ahead log.",
            storageBytes));
    for (Map.Entry<String, Long> e : stats.entrySet()) {
      String name = "tidemark_rocksdb_" + e.getKey();
      String help = "RocksDB statistic " + e.getKey() + ".";
      out.add(
          ROCKSDB_COUNTERS.contains(e.getKey())
              ? counter(name, help + " Cumulative since start.", e.getValue())
              : gauge(name, help, e.getValue()));
    }
    return new MetricSnapshots(out);
  }

  private static GaugeSnapshot gauge(String name, String help, double value) {
    return GaugeSnapshot.builder()
        .name(name)
        .help(help)
        .dataPoint(GaugeSnapshot.GaugeDataPointSnapshot.builder().value(value).build())
        .build();
  }

  private static CounterSnapshot counter(String name, String help, double value) {
    return CounterSnapshot.builder()
        .name(name)
        .help(help)
        .dataPoint(CounterSnapshot.CounterDataPointSnapshot.builder().value(value).build())
        .build();
  }
}
