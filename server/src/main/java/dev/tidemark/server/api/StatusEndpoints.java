package dev.tidemark.server.api;

import com.fasterxml.jackson.core.JsonGenerator;
import dev.tidemark.tsdb.engine.Engine;
import dev.tidemark.tsdb.model.FamilyMetadata;
import dev.tidemark.tsdb.model.Labels;
import dev.tidemark.tsdb.model.PromText;
import dev.tidemark.tsdb.query.QueryAbortedException;
import dev.tidemark.tsdb.query.QueryContext;
import java.io.IOException;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * The endpoints that describe the server rather than query it: metadata, build and runtime
 * information, flags, TSDB statistics, and the empty rules, alerts and targets that Grafana's
 * screens ask for (Tidemark evaluates no rules and scrapes no targets).
 */
final class StatusEndpoints {

  /** How far back from the newest head sample {@code /status/tsdb} counts series: the head. */
  static final Duration HEAD_WINDOW = Duration.ofHours(2);

  /**
   * The churn of {@code /status/tsdb}: series of the newest hour bucket (the one holding the newest
   * sample) that the hour bucket before it did not have.
   */
  static final Duration CHURN_WINDOW = Duration.ofHours(1);

  private static final int MAX_TSDB_LIMIT = 10_000;

  private final ApiBackend backend;

  StatusEndpoints(ApiBackend backend) {
    this.backend = backend;
  }

  /** {@code /api/v1/metadata}: family → [{type, help, unit}], from what the translator accepted. */
  Answer metadata(ApiParams p) {
    int limit = number(p, "limit", "limit must be a number");
    number(p, "limit_per_metric", "limit_per_metric must be a number");
    String metric = p.get("metric");
    Map<String, FamilyMetadata> all = backend.metadata().get();
    List<FamilyMetadata> chosen = new ArrayList<>();
    for (FamilyMetadata m : new TreeMap<>(all).values()) {
      if (!metric.isEmpty() && !m.family().equals(metric)) {
        continue;
      }
      if (limit >= 0 && chosen.size() >= limit) {
        break;
      }
      chosen.add(m);
    }
    return Answer.of(
        json -> {
          JsonGenerator g = json.g;
          g.writeStartObject();
          for (FamilyMetadata m : chosen) {
            g.writeArrayFieldStart(m.family());
            g.writeStartObject();
            g.writeStringField("type", m.type().text());
            g.writeStringField("help", m.help());
            g.writeStringField("unit", m.unit());
            g.writeEndObject();
            g.writeEndArray();
          }
          g.writeEndObject();
        });
  }

  private static int number(ApiParams p, String name, String message) {
    String s = p.get(name);
    if (s.isEmpty()) {
      return -1;
    }
    try {
      return Integer.parseInt(s);
    } catch (NumberFormatException e) {
      throw ApiError.badData(message);
    }
  }

  Answer buildInfo() {
    return Answer.of(
        json -> {
          JsonGenerator g = json.g;
          g.writeStartObject();
          g.writeStringField("version", backend.version());
          g.writeStringField("revision", "");
          g.writeStringField("branch", "");
          g.writeStringField("buildUser", "");
          g.writeStringField("buildDate", "");
          g.writeStringField("goVersion", "java " + Runtime.version());
          g.writeStringField("application", "tidemark");
          g.writeEndObject();
        });
  }

  Answer runtimeInfo() {
    Engine.Stats stats = backend.engineStats().get();
    ConfigState config = backend.config().get();
    String host;
    try {
      host = InetAddress.getLocalHost().getHostName();
    } catch (IOException e) {
      host = "";
    }
    String hostname = host;
    return Answer.of(
        json -> {
          JsonGenerator g = json.g;
          g.writeStartObject();
          g.writeStringField("startTime", backend.startTime().toString());
          g.writeStringField("CWD", Path.of("").toAbsolutePath().toString());
          g.writeStringField("hostname", hostname);
          g.writeStringField(
              "serverTime", Instant.ofEpochMilli(backend.clock().millis()).toString());
          g.writeBooleanField("reloadConfigSuccess", config.lastReloadSuccessful());
          g.writeStringField("lastConfigTime", config.lastReloadSuccess().toString());
          g.writeNumberField("corruptionCount", stats.unreadableRecords());
          g.writeNumberField("goroutineCount", Thread.activeCount());
          g.writeNumberField("GOMAXPROCS", Runtime.getRuntime().availableProcessors());
          g.writeNumberField("GOMEMLIMIT", Runtime.getRuntime().maxMemory());
          g.writeStringField("GOGC", "");
          g.writeStringField("GODEBUG", "");
          g.writeStringField("storageRetention", PromText.formatDuration(config.retention()));
          g.writeEndObject();
        });
  }

  /** {@code /api/v1/status/config}: the effective settings as YAML, as Prometheus answers. */
  Answer config() {
    String yaml = backend.config().get().yaml();
    return Answer.of(
        json -> {
          JsonGenerator g = json.g;
          g.writeStartObject();
          g.writeStringField("yaml", yaml);
          g.writeEndObject();
        });
  }

  Answer flags() {
    Map<String, String> sorted = new TreeMap<>(backend.config().get().flags());
    return Answer.of(
        json -> {
          JsonGenerator g = json.g;
          g.writeStartObject();
          for (Map.Entry<String, String> e : sorted.entrySet()) {
            g.writeStringField(e.getKey(), e.getValue());
          }
          g.writeEndObject();
        });
  }

  /**
   * {@code /api/v1/status/tsdb}: the head's series (those in buckets overlapping the last {@link
   * #HEAD_WINDOW} before the newest sample) counted as Prometheus counts them: the top {@code
   * limit} metric names by series, label names by distinct values, label names by bytes of distinct
   * values, and label pairs by series. Tidemark adds, beside Prometheus' fields: {@code
   * newSeriesCountByMetricName} (churn: series of the newest hour bucket that the hour bucket
   * before did not have, per metric name), {@code compaction} (the engine's bucket and compactor
   * counters) and, with {@code buckets=1}, {@code buckets} (each bucket's start, size, state,
   * series and bytes on disk, which scans the store).
   */
  Answer tsdb(ApiParams p) {
    return tsdb(tsdbLimit(p), tsdbBuckets(p), QueryContext.NONE);
  }

  /** The {@code limit} of {@code /status/tsdb}: 10 by default, 1 to 10,000. */
  static int tsdbLimit(ApiParams p) {
    int limit = 10;
    String s = p.get("limit");
    if (!s.isEmpty()) {
      try {
        limit = Integer.parseInt(s);
      } catch (NumberFormatException e) {
        limit = -1;
      }
      if (limit < 1) {
        throw ApiError.badData("limit must be a positive number");
      }
      if (limit > MAX_TSDB_LIMIT) {
        throw ApiError.badData("limit must not exceed " + MAX_TSDB_LIMIT);
      }
    }
    return limit;
  }

  /** Tidemark's {@code buckets} of {@code /status/tsdb}: {@code 1} or {@code true} lists them. */
  static boolean tsdbBuckets(ApiParams p) {
    String s = p.get("buckets");
    switch (s) {
      case "", "0", "false":
        return false;
      case "1", "true":
        return true;
      default:
        throw ApiError.badData("buckets must be true or false");
    }
  }

  Answer tsdb(int limit) {
    return tsdb(limit, false, QueryContext.NONE);
  }

  /** The TSDB status, its series read within {@code ctx} (the query timeout, the client's wait). */
  Answer tsdb(int limit, boolean listBuckets, QueryContext ctx) {
    Engine.Stats stats = backend.engineStats().get();
    long maxT =
        stats.headMaxTimestampMillis() == Long.MIN_VALUE
            ? backend.clock().millis()
            : stats.headMaxTimestampMillis();
    long minT = maxT - HEAD_WINDOW.toMillis();
    long hour = CHURN_WINDOW.toMillis();
    long hourStart = maxT - Math.floorMod(maxT, hour);
    List<Labels> series;
    List<Labels> newest;
    List<Labels> before;
    try {
      series = backend.querier().series(minT, maxT, List.of(), 0, ctx);
      newest = backend.querier().series(hourStart, maxT, List.of(), 0, ctx);
      before = backend.querier().series(hourStart - hour, hourStart - 1, List.of(), 0, ctx);
    } catch (QueryAbortedException e) {
      throw QueryEndpoints.aborted(e, "TSDB status");
    }
    List<Engine.BucketInfo> buckets = listBuckets ? backend.buckets().get() : null;
    Map<String, Long> byMetric = new HashMap<>();
    Map<String, Long> byPair = new HashMap<>();
    Map<String, Map<String, Boolean>> valuesByName = new HashMap<>();
    for (Labels l : series) {
      for (int i = 0; i < l.size(); i++) {
        String name = l.name(i);
        String value = l.value(i);
        if (name.equals(Labels.METRIC_NAME)) {
          byMetric.merge(value, 1L, Long::sum);
        }
        byPair.merge(name + "=" + value, 1L, Long::sum);
        valuesByName.computeIfAbsent(name, k -> new HashMap<>()).put(value, Boolean.TRUE);
      }
    }
    // churn: the series of the newest hour bucket that the hour bucket before it did not have
    Set<Labels> old = new HashSet<>(before);
    Map<String, Long> newByMetric = new HashMap<>();
    for (Labels l : newest) {
      if (!old.contains(l)) {
        newByMetric.merge(
            l.get(Labels.METRIC_NAME) == null ? "" : l.get(Labels.METRIC_NAME), 1L, Long::sum);
      }
    }
    Map<String, Long> valueCounts = new HashMap<>();
    Map<String, Long> valueBytes = new HashMap<>();
    for (Map.Entry<String, Map<String, Boolean>> e : valuesByName.entrySet()) {
      valueCounts.put(e.getKey(), (long) e.getValue().size());
      long bytes = 0;
      for (String v : e.getValue().keySet()) {
        bytes += v.getBytes(StandardCharsets.UTF_8).length;
      }
      valueBytes.put(e.getKey(), bytes);
    }
    int top = limit;
    return Answer.of(
        json -> {
          JsonGenerator g = json.g;
          g.writeStartObject();
          g.writeObjectFieldStart("headStats");
          g.writeNumberField("numSeries", series.size());
          g.writeNumberField("chunkCount", stats.headSeries());
          g.writeNumberField("minTime", minT);
          g.writeNumberField("maxTime", maxT);
          g.writeNumberField("numLabelPairs", byPair.size());
          g.writeEndObject();
          topList(g, "seriesCountByMetricName", byMetric, top);
          topList(g, "labelValueCountByLabelName", valueCounts, top);
          topList(g, "memoryInBytesByLabelName", valueBytes, top);
          topList(g, "seriesCountByLabelValuePair", byPair, top);
          topList(g, "newSeriesCountByMetricName", newByMetric, top);
          g.writeObjectFieldStart("compaction");
          g.writeNumberField("buckets", stats.buckets());
          g.writeNumberField("openBuckets", stats.openBuckets());
          g.writeNumberField("compactedBuckets", stats.coarseBuckets());
          g.writeNumberField("compactions", stats.compactions());
          g.writeNumberField("bucketsMerged", stats.compactedBuckets());
          g.writeNumberField("bytesWritten", stats.compactionBytesWritten());
          g.writeNumberField("millis", stats.compactionMillis());
          g.writeNumberField("abandoned", stats.compactionsAbandoned());
          g.writeNumberField("failures", stats.compactionFailures());
          g.writeEndObject();
          if (buckets != null) {
            g.writeArrayFieldStart("buckets");
            for (Engine.BucketInfo b : buckets) {
              g.writeStartObject();
              g.writeNumberField("start", b.bucket().startMillis());
              g.writeNumberField("durationSeconds", b.bucket().durationMillis() / 1000);
              g.writeBooleanField("open", b.open());
              g.writeNumberField("series", b.seriesCount());
              g.writeNumberField("bytes", b.bytes());
              g.writeEndObject();
            }
            g.writeEndArray();
          }
          g.writeEndObject();
        });
  }

  private static void topList(JsonGenerator g, String field, Map<String, Long> counts, int limit)
      throws IOException {
    List<Map.Entry<String, Long>> entries = new ArrayList<>(counts.entrySet());
    entries.sort(
        Comparator.<Map.Entry<String, Long>>comparingLong(Map.Entry::getValue)
            .reversed()
            .thenComparing(Map.Entry::getKey));
    g.writeArrayFieldStart(field);
    for (int i = 0; i < Math.min(limit, entries.size()); i++) {
      g.writeStartObject();
      g.writeStringField("name", entries.get(i).getKey());
      g.writeNumberField("value", entries.get(i).getValue());
      g.writeEndObject();
    }
    g.writeEndArray();
  }

  /** {@code {"groups":[]}}: Tidemark evaluates no rules. */
  Answer rules() {
    return Answer.of(
        json -> {
          json.g.writeStartObject();
          json.g.writeArrayFieldStart("groups");
          json.g.writeEndArray();
          json.g.writeEndObject();
        });
  }

  Answer alerts() {
    return Answer.of(
        json -> {
          json.g.writeStartObject();
          json.g.writeArrayFieldStart("alerts");
          json.g.writeEndArray();
          json.g.writeEndObject();
        });
  }

  Answer targets() {
    return Answer.of(
        json -> {
          JsonGenerator g = json.g;
          g.writeStartObject();
          g.writeArrayFieldStart("activeTargets");
          g.writeEndArray();
          g.writeArrayFieldStart("droppedTargets");
          g.writeEndArray();
          g.writeObjectFieldStart("droppedTargetCounts");
          g.writeEndObject();
          g.writeEndObject();
        });
  }
}
