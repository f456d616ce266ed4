package dev.tidemark.server.api;

import dev.tidemark.tsdb.query.LabelMatcher;
import java.util.List;

/**
 * What Prometheus' TSDB admin APIs ({@code /api/v1/admin/tsdb/...}, behind {@code
 * --web-enable-admin-api}) do to the store; the composition root implements it over the engine and
 * the store.
 */
public interface TsdbAdmin {

  /**
   * Copies a consistent image of the store into a new snapshot folder.
   *
   * @return the snapshot's name (its folder's name)
   */
  String snapshot();

  /** Deletes the samples in {@code [minT, maxT]} of the series matching every matcher. */
  void deleteSeries(List<LabelMatcher> matchers, long minT, long maxT);

  /** Reclaims the space of deleted samples now (Prometheus' tombstone cleaning). */
  void cleanTombstones();
}
