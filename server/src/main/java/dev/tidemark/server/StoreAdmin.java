package dev.tidemark.server;

import dev.tidemark.rocksdb.RocksDbKvStore;
import dev.tidemark.server.api.TsdbAdmin;
import dev.tidemark.tsdb.engine.Engine;
import dev.tidemark.tsdb.query.LabelMatcher;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.HexFormat;
import java.util.List;

/**
 * Prometheus' TSDB admin APIs over the engine and the store ({@code --web-enable-admin-api}).
 *
 * <ul>
 *   <li>A snapshot is the store's checkpoint (hard links where the file system allows) in a new
 *       folder named as Prometheus names its snapshots ({@code 20261128T083500Z-<16 hex digits>}),
 *       under {@code <data-dir>.snapshots/}: beside the data folder, not in it as Prometheus keeps
 *       them, since the data folder is RocksDB's own. A server started on a snapshot serves what
 *       the store held, the head's samples included (its log is part of the copy).
 *   <li>A delete is the engine's: the samples go from the store and their space is reclaimed by the
 *       compaction the delete runs, so there are no tombstones left to clean and {@code
 *       clean_tombstones} has nothing to do.
 * </ul>
 */
final class StoreAdmin implements TsdbAdmin {
  private static final DateTimeFormatter NAME =
      DateTimeFormatter.ofPattern("yyyyMMdd'T'HHmmss'Z'").withZone(ZoneOffset.UTC);

  private final Engine engine;
  private final RocksDbKvStore store;
  private final Path snapshots;
  private final Clock clock;
  private final SecureRandom random = new SecureRandom();

  StoreAdmin(Engine engine, RocksDbKvStore store, Path dataFolder, Clock clock) {
    this.engine = engine;
    this.store = store;
    this.snapshots = snapshotsFolder(dataFolder);
    this.clock = clock;
  }

  /** Where the snapshots of the store in {@code dataFolder} go. */
  static Path snapshotsFolder(Path dataFolder) {
    Path abs = dataFolder.toAbsolutePath().normalize();
    return abs.resolveSibling(abs.getFileName() + ".snapshots");
  }

  @Override
  public String snapshot() {
    byte[] suffix = new byte[8];
    random.nextBytes(suffix);
    String name = NAME.format(clock.instant()) + "-" + HexFormat.of().formatHex(suffix);
    try {
      Files.createDirectories(snapshots);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot create the snapshots folder " + snapshots, e);
    }
    store.createCheckpoint(snapshots.resolve(name));
    return name;
  }

  @Override
  public void deleteSeries(List<LabelMatcher> matchers, long minT, long maxT) {
    engine.deleteSeries(minT, maxT, matchers);
  }

  @Override
  public void cleanTombstones() {
    // Nothing to do: a delete leaves no tombstones (see the class comment).
  }
}
