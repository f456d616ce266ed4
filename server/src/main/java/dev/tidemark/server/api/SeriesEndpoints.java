package dev.tidemark.server.api;

import dev.tidemark.promql.engine.QueryControl;
import dev.tidemark.tsdb.model.Labels;
import dev.tidemark.tsdb.model.PromText;
import dev.tidemark.tsdb.query.LabelMatcher;
import dev.tidemark.tsdb.query.Querier;
import dev.tidemark.tsdb.query.QueryAbortedException;
import dev.tidemark.tsdb.query.QueryContext;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;

/**
 * {@code /api/v1/series}, {@code /api/v1/labels} and {@code /api/v1/label/<name>/values}: the index
 * read through the {@link Querier} at bucket granularity (no samples read), several {@code match[]}
 * selectors answered as their union, sorted, cut at {@code limit} with Prometheus' warning.
 *
 * <p>Each read has the query timeout (shortened by a {@code timeout} parameter, as for queries),
 * counted from the request's arrival, and stops when its client goes away; the querier is asked for
 * {@code limit + 1} entries per selector, so a limited lookup stops early and still knows whether
 * it cut the answer.
 */
final class SeriesEndpoints {

  static final String TRUNCATED = "results truncated due to limit";

  private final Querier querier;
  private final QueryConfig config;

  SeriesEndpoints(Querier querier, QueryConfig config) {
    this.querier = querier;
    this.config = config;
  }

  /** The checked parameters of one request, parsed before it waits for a slot. */
  record Plan(
      List<List<LabelMatcher>> matcherSets,
      long start,
      long end,
      int limit,
      String name,
      long timeoutMillis) {

    /** What to ask the querier for: one more than shown, to know whether the answer was cut. */
    int readLimit() {
      return limit > 0 && limit < Integer.MAX_VALUE ? limit + 1 : 0;
    }
  }

  Plan planSeries(ApiParams p) {
    if (p.getAll("match[]").isEmpty()) {
      throw ApiError.badData("no match[] parameter provided");
    }
    int limit = p.limit();
    long start = p.time("start", ApiParams.MIN_TIME);
    long end = p.time("end", ApiParams.MAX_TIME);
    List<List<LabelMatcher>> sets;
    try {
      sets = p.matcherSets();
    } catch (ApiError e) {
      throw ApiError.invalidParam("match[]", e.getMessage());
    }
    return new Plan(sets, start, end, limit, null, QueryEndpoints.timeoutMillis(p, config));
  }

  Plan planLabels(ApiParams p, String name) {
    int limit = p.limit();
    long start = p.time("start", ApiParams.MIN_TIME);
    long end = p.time("end", ApiParams.MAX_TIME);
    List<List<LabelMatcher>> sets = p.matcherSets();
    return new Plan(sets, start, end, limit, name, QueryEndpoints.timeoutMillis(p, config));
  }

  /**
   * The series of {@code plan}; {@code arrivedNanos} is when the request arrived (its deadline runs
   * from then), {@code control} cancels the read when the client goes away.
   */
  Answer series(Plan plan, long arrivedNanos, QueryControl control) {
    QueryContext ctx = QueryEndpoints.readContext(arrivedNanos, plan.timeoutMillis(), control);
    TreeSet<Labels> all = new TreeSet<>();
    try {
      for (List<LabelMatcher> ms : plan.matcherSets()) {
        if (plan.start() <= plan.end()) {
          all.addAll(querier.series(plan.start(), plan.end(), ms, plan.readLimit(), ctx));
        }
      }
    } catch (QueryAbortedException e) {
      throw QueryEndpoints.aborted(e, "series lookup");
    }
    List<Labels> out = new ArrayList<>(all);
    List<String> warnings = truncate(out, plan.limit());
    return Answer.of(
        json -> {
          json.g.writeStartArray();
          for (Labels l : out) {
            json.labels(l);
          }
          json.g.writeEndArray();
        },
        warnings,
        List.of());
  }

  /** The label names of {@code plan} (as {@link #series}). */
  Answer labelNames(Plan plan, long arrivedNanos, QueryControl control) {
    QueryContext ctx = QueryEndpoints.readContext(arrivedNanos, plan.timeoutMillis(), control);
    try {
      return strings(
          union(
              plan, ms -> querier.labelNames(plan.start(), plan.end(), ms, plan.readLimit(), ctx)),
          plan.limit());
    } catch (QueryAbortedException e) {
      throw QueryEndpoints.aborted(e, "label names lookup");
    }
  }

  /** The values of label {@code plan.name()} (as {@link #series}). */
  Answer labelValues(Plan plan, long arrivedNanos, QueryControl control) {
    QueryContext ctx = QueryEndpoints.readContext(arrivedNanos, plan.timeoutMillis(), control);
    try {
      return strings(
          union(
              plan,
              ms ->
                  querier.labelValues(
                      plan.name(), plan.start(), plan.end(), ms, plan.readLimit(), ctx)),
          plan.limit());
    } catch (QueryAbortedException e) {
      throw QueryEndpoints.aborted(e, "label values lookup");
    }
  }

  /**
   * The union of the sorted names {@code read} gives for each matcher set (or for none), in UTF-8
   * order; one set's answer is used as it is.
   */
  private static List<String> union(
      Plan plan, java.util.function.Function<List<LabelMatcher>, List<String>> read) {
    if (plan.start() > plan.end()) {
      return new ArrayList<>();
    }
    List<List<LabelMatcher>> sets =
        plan.matcherSets().isEmpty() ? List.of(List.of()) : plan.matcherSets();
    if (sets.size() == 1) {
      return new ArrayList<>(read.apply(sets.get(0)));
    }
    TreeSet<String> all = new TreeSet<>(Labels.UTF8_ORDER);
    for (List<LabelMatcher> ms : sets) {
      all.addAll(read.apply(ms));
    }
    return new ArrayList<>(all);
  }

  private static Answer strings(List<String> values, int limit) {
    List<String> warnings = truncate(values, limit);
    return Answer.of(json -> json.strings(values), warnings, List.of());
  }

  private static <T> List<String> truncate(List<T> list, int limit) {
    if (limit > 0 && list.size() > limit) {
      list.subList(limit, list.size()).clear();
      return List.of(TRUNCATED);
    }
    return List.of();
  }

  /**
   * The label name of a {@code /label/<name>/values} path: Prometheus' {@code U__} escaping undone
   * ({@code U__http_2e_method} → {@code http.method}), then checked to be a valid UTF-8 name.
   */
  static String labelName(String raw) {
    String name = raw.startsWith("U__") ? unescape(raw) : raw;
    if (name.isEmpty()) {
      throw ApiError.badData("invalid label name: " + PromText.quote(name));
    }
    return name;
  }

  /** {@code model.UnescapeName} with value-encoding escaping; the input itself when malformed. */
  static String unescape(String s) {
    StringBuilder b = new StringBuilder();
    String body = s.substring(3);
    for (int i = 0; i < body.length(); i++) {
      char c = body.charAt(i);
      if (c != '_') {
        b.append(c);
        continue;
      }
      if (i + 1 < body.length() && body.charAt(i + 1) == '_') {
        b.append('_');
        i++;
        continue;
      }
      int close = body.indexOf('_', i + 1);
      if (close < 0) {
        return s;
      }
      String hex = body.substring(i + 1, close);
      int cp;
      try {
        cp = Integer.parseInt(hex, 16);
      } catch (NumberFormatException e) {
        return s;
      }
      if (hex.isEmpty() || !Character.isValidCodePoint(cp)) {
        return s;
      }
      b.appendCodePoint(cp);
      i = close;
    }
    return b.toString();
  }
}
