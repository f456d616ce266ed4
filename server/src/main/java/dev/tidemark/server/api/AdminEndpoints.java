package dev.tidemark.server.api;

import dev.tidemark.tsdb.query.LabelMatcher;
import java.util.List;
import java.util.Map;

/**
 * Prometheus' TSDB admin APIs ({@code docs/querying/api.md}, "TSDB Admin APIs"): {@code
 * admin/tsdb/snapshot} (200 with the snapshot's name), {@code admin/tsdb/delete_series} (204;
 * {@code match[]} required, {@code start} and {@code end} default to all time) and {@code
 * admin/tsdb/clean_tombstones} (204), POST or PUT; 503 {@code unavailable} "admin APIs disabled"
 * unless {@code --web-enable-admin-api} gave a {@link TsdbAdmin}.
 */
final class AdminEndpoints {
  static final String PREFIX = "admin/tsdb/";

  private AdminEndpoints() {}

  /** The answer's data for a success with a body, or null for 204. */
  static Map<String, String> run(TsdbAdmin admin, String endpoint, ApiParams p) {
    if (admin == null) {
      throw new ApiError(ApiError.Type.UNAVAILABLE, "admin APIs disabled");
    }
    switch (endpoint.substring(PREFIX.length())) {
      case "snapshot" -> {
        return Map.of("name", admin.snapshot());
      }
      case "delete_series" -> {
        if (p.getAll("match[]").isEmpty()) {
          throw ApiError.badData("no match[] parameter provided");
        }
        List<List<LabelMatcher>> sets = p.matcherSets();
        long start = p.time("start", ApiParams.MIN_TIME);
        long end = p.time("end", ApiParams.MAX_TIME);
        for (List<LabelMatcher> set : sets) {
          admin.deleteSeries(set, start, end);
        }
        return null;
      }
      case "clean_tombstones" -> {
        admin.cleanTombstones();
        return null;
      }
      default -> throw new ApiError(ApiError.Type.NOT_FOUND, "unknown admin API " + endpoint);
    }
  }
}
