package dev.tidemark.server.api;

import dev.tidemark.promql.parser.ParseException;
import dev.tidemark.promql.parser.PromqlParser;
import dev.tidemark.tsdb.append.SampleBatch;
import dev.tidemark.tsdb.model.Labels;
import dev.tidemark.tsdb.model.PromText;
import dev.tidemark.tsdb.query.LabelMatcher;
import dev.tidemark.tsdb.query.Querier;
import dev.tidemark.tsdb.query.QueryAbortedException;
import dev.tidemark.tsdb.query.QueryContext;
import dev.tidemark.tsdb.query.SampleIterator;
import dev.tidemark.tsdb.query.Series;
import dev.tidemark.tsdb.query.SeriesSet;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.server.FormFields;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.Fields;

/**
 * {@code /federate}, as Prometheus serves it ({@code web/federate.go}), so that a Prometheus can
 * scrape series from Tidemark: for the union of the {@code match[]} selectors (GET, or a POST
 * form), each series' newest sample in the lookback window before now ({@code
 * --query.lookback-delta}, 5 minutes), unless it is a staleness marker, in the text exposition
 * format 0.0.4 with its timestamp; the series grouped by metric name, one {@code # TYPE name
 * untyped} a name; labels with empty values left out, and {@code instance=""} added to a series
 * without an {@code instance} label (Prometheus' rule, so that a scraper with {@code honor_labels:
 * true} does not put its own target's instance on it). Names and label names that the text format
 * cannot carry unquoted have their other characters replaced by {@code _}, as Prometheus' default
 * escaping. No {@code match[]} gives an empty answer; a bad selector gets 400 with the parser's
 * message as a line of text; the read stops at the query timeout (503).
 */
final class Federation {
  static final String PATH = "/federate";

  private final Querier querier;
  private final Clock clock;
  private final long lookbackMillis;
  private final long timeoutMillis;

  Federation(Querier querier, Clock clock, QueryConfig config) {
    this.querier = querier;
    this.clock = clock;
    this.lookbackMillis = config.lookbackDelta().toMillis();
    this.timeoutMillis = config.timeout().toMillis();
  }

  void handle(Request request, Response response, Callback callback) {
    String method = request.getMethod();
    if (!method.equals("GET") && !method.equals("POST")) {
      response.getHeaders().put(HttpHeader.ALLOW, "GET, POST");
      text(response, callback, 405, "Method Not Allowed");
      return;
    }
    long arrived = System.nanoTime();
    List<String> selectors = new ArrayList<>();
    try {
      for (Fields.Field f : Request.extractQueryParameters(request, StandardCharsets.UTF_8)) {
        if (f.getName().equals("match[]")) {
          selectors.addAll(f.getValues());
        }
      }
      String type = request.getHeaders().get(HttpHeader.CONTENT_TYPE);
      if (method.equals("POST")
          && type != null
          && type.toLowerCase(java.util.Locale.ROOT)
              .startsWith("application/x-www-form-urlencoded")) {
        Fields form =
            FormFields.getFields(
                request, PrometheusApi.MAX_FORM_FIELDS, PrometheusApi.MAX_FORM_BYTES);
        Fields.Field f = form.get("match[]");
        if (f != null) {
          selectors.addAll(f.getValues());
        }
      }
    } catch (RuntimeException e) {
      text(response, callback, 400, "error parsing form values: " + e.getMessage());
      return;
    }
    List<List<LabelMatcher>> sets = new ArrayList<>();
    for (String s : selectors) {
      try {
        sets.add(PromqlParser.parseMetricSelector(s));
      } catch (ParseException e) {
        text(response, callback, 400, e.getMessage());
        return;
      }
    }
    String body;
    try {
      body = render(newest(sets, QueryContext.withDeadline(arrived + timeoutMillis * 1_000_000)));
    } catch (QueryAbortedException e) {
      text(response, callback, 503, "federation timed out");
      return;
    }
    response.setStatus(200);
    response.getHeaders().put(HttpHeader.CONTENT_TYPE, "text/plain; version=0.0.4; charset=utf-8");
    response.write(true, ByteBuffer.wrap(body.getBytes(StandardCharsets.UTF_8)), callback);
  }

  /** One series' newest sample. */
  record Sample(Labels labels, long timestampMillis, double value) {}

  /** The newest sample in the window of every series of the union, sorted by metric name. */
  List<Sample> newest(List<List<LabelMatcher>> sets, QueryContext ctx) {
    long maxT = clock.millis();
    long minT = maxT - lookbackMillis;
    Map<Labels, Sample> found = new HashMap<>();
    long[] out = new long[2];
    SampleIterator reuse = null;
    for (List<LabelMatcher> set : sets) {
      SeriesSet series = querier.select(minT, maxT, set, ctx);
      while (series.next()) {
        Series s = series.at();
        ctx.check();
        if (found.containsKey(s.labels())) {
          continue;
        }
        reuse = s.iterator(reuse);
        if (!reuse.newestIn(minT, maxT, out) || out[1] == SampleBatch.STALE_NAN_BITS) {
          continue; // the text formats have no staleness marker: the series is left out
        }
        found.put(s.labels(), new Sample(s.labels(), out[0], Double.longBitsToDouble(out[1])));
      }
    }
    List<Sample> sorted = new ArrayList<>(found.values());
    sorted.sort(
        Comparator.comparing((Sample s) -> String.valueOf(s.labels().get(Labels.METRIC_NAME)))
            .thenComparing(Sample::labels));
    return sorted;
  }

  /** The text exposition format 0.0.4 of {@code samples}. */
  static String render(List<Sample> samples) {
    StringBuilder b = new StringBuilder(64 * samples.size() + 16);
    String family = null;
    for (Sample s : samples) {
      Labels l = s.labels();
      String name = l.get(Labels.METRIC_NAME);
      if (name == null || name.isEmpty()) {
        continue; // nameless: Prometheus leaves it out too
      }
      name = escapeName(name);
      if (!name.equals(family)) {
        b.append("# TYPE ").append(name).append(" untyped\n");
        family = name;
      }
      b.append(name).append('{');
      boolean first = true;
      boolean instance = false;
      for (int i = 0; i < l.size(); i++) {
        String n = l.name(i);
        String v = l.value(i);
        if (n.equals(Labels.METRIC_NAME) || v.isEmpty()) {
          continue;
        }
        instance |= n.equals("instance");
        first = label(b, first, escapeName(n), v);
      }
      if (!instance) {
        label(b, first, "instance", "");
      }
      b.append("} ").append(PromText.formatExposition(s.value()));
      b.append(' ').append(s.timestampMillis()).append('\n');
    }
    return b.toString();
  }

  static boolean label(StringBuilder b, boolean first, String name, String value) {
    if (!first) {
      b.append(',');
    }
    b.append(name).append("=\"");
    for (int i = 0; i < value.length(); i++) {
      char c = value.charAt(i);
      switch (c) {
        case '\\' -> b.append("\\\\");
        case '"' -> b.append("\\\"");
        case '\n' -> b.append("\\n");
        default -> b.append(c);
      }
    }
    b.append('"');
    return false;
  }

  /**
   * {@code name} as the text format 0.0.4 carries it: unchanged when it is a legacy name ({@code
   * [a-zA-Z_:][a-zA-Z0-9_:]*}), else every other character as {@code _} (Prometheus' "underscores"
   * escaping).
   */
  static String escapeName(String name) {
    boolean legal = !name.isEmpty();
    for (int i = 0; i < name.length() && legal; i++) {
      legal = legalChar(name.charAt(i), i);
    }
    if (legal) {
      return name;
    }
    StringBuilder b = new StringBuilder(name.length());
    int i = 0;
    for (int cp : name.codePoints().toArray()) {
      b.append(cp < 128 && legalChar((char) cp, i) ? (char) cp : '_');
      i++;
    }
    return b.toString();
  }

  private static boolean legalChar(char c, int i) {
    return (c >= 'a' && c <= 'z')
        || (c >= 'A' && c <= 'Z')
        || c == '_'
        || c == ':'
        || (i > 0 && c >= '0' && c <= '9');
  }

  /**
   * Answers {@code status} with {@code message} as one line of plain text, as Go's {@code
   * http.Error} writes it (the endpoints outside the JSON API: federation, remote read).
   */
  static void text(Response response, Callback callback, int status, String message) {
    response.setStatus(status);
    response.getHeaders().put(HttpHeader.CONTENT_TYPE, "text/plain; charset=utf-8");
    response.getHeaders().put("X-Content-Type-Options", "nosniff");
    response.write(
        true, ByteBuffer.wrap((message + "\n").getBytes(StandardCharsets.UTF_8)), callback);
  }
}
