package dev.tidemark.server.api;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.tidemark.tsdb.append.AppendResult;
import dev.tidemark.tsdb.append.Appender;
import dev.tidemark.tsdb.append.RejectReason;
import dev.tidemark.tsdb.append.SampleBatch;
import dev.tidemark.tsdb.model.Labels;
import dev.tidemark.tsdb.model.MetricMetadata;
import dev.tidemark.tsdb.model.PromText;
import dev.tidemark.tsdb.query.LabelMatcher;
import dev.tidemark.tsdb.query.Querier;
import dev.tidemark.tsdb.query.QueryContext;
import dev.tidemark.tsdb.query.SampleIterator;
import dev.tidemark.tsdb.query.Series;
import dev.tidemark.tsdb.query.SeriesSet;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.FormFields;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.Fields;

/**
 * Bulk export and import for moving series between servers, in VictoriaMetrics' forms:
 *
 * <ul>
 *   <li>{@code GET|POST /api/v1/export?match[]=...&start=...&end=...}: every sample of the matched
 *       series in the range (all time by default), one JSON object a series and line, {@code
 *       {"metric":{"__name__":"up","job":"a"},"values":[1,0],"timestamps":[1700000000000,...]}}
 *       (milliseconds; NaN and infinities as the strings {@code "NaN"}, {@code "+Inf"}, {@code
 *       "-Inf"}); {@code format=prometheus} writes the text exposition format instead, a line a
 *       sample with its timestamp. Staleness markers are left out: neither form carries them.
 *   <li>{@code POST /api/v1/import}: those JSON lines; {@code POST /api/v1/import/prometheus}: the
 *       text exposition format (comments skipped, a sample without a timestamp taken at now).
 *       Written through the {@link Appender} in batches; 204 when every sample was stored, else 400
 *       naming how many were refused and why (the others are stored), as remote write answers. A
 *       body over the size limit gets 413, a line that does not parse 400 naming the line (the
 *       lines before it are stored).
 * </ul>
 *
 * <p>Both stream: the export writes each series as it is read, the import appends every {@link
 * #BATCH_SAMPLES} samples, so neither holds the whole transfer in memory. Thread-safe.
 */
final class BulkTransfer {

  /** Samples appended at once by an import. */
  static final int BATCH_SAMPLES = 10_000;

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final JsonFactory FACTORY = new JsonFactory();

  private final Querier querier;
  private final Appender appender;
  private final Clock clock;
  private final long maxBodyBytes;

  BulkTransfer(Querier querier, Appender appender, Clock clock, long maxBodyBytes) {
    this.querier = querier;
    this.appender = appender;
    this.clock = clock;
    this.maxBodyBytes = maxBodyBytes;
  }

  // ---- export

  void export(Request request, Response response, Callback callback) throws IOException {
    String method = request.getMethod();
    if (!method.equals("GET") && !method.equals("POST")) {
      response.getHeaders().put(HttpHeader.ALLOW, "GET, POST");
      Federation.text(response, callback, 405, "Method Not Allowed");
      return;
    }
    ApiParams p;
    List<List<LabelMatcher>> sets;
    long start;
    long end;
    boolean text;
    try {
      Fields fields = new Fields(true);
      List<Fields> sources = new ArrayList<>();
      sources.add(Request.extractQueryParameters(request, StandardCharsets.UTF_8));
      if (method.equals("POST")) {
        sources.add(
            FormFields.getFields(
                request, PrometheusApi.MAX_FORM_FIELDS, PrometheusApi.MAX_FORM_BYTES));
      }
      for (Fields source : sources) {
        for (Fields.Field f : source) {
          String name = f.getName().equals("match") ? "match[]" : f.getName(); // VM's name too
          for (String v : f.getValues()) {
            fields.add(name, v);
          }
        }
      }
      p = new ApiParams(fields);
      sets = p.matcherSets();
      if (sets.isEmpty()) {
        throw ApiError.badData("missing match[] selector: give one, e.g. match[]={__name__!=\"\"}");
      }
      start = p.time("start", ApiParams.MIN_TIME);
      end = p.time("end", ApiParams.MAX_TIME);
      String format = p.get("format");
      if (!format.isEmpty() && !format.equals("prometheus") && !format.equals("json")) {
        throw ApiError.badData("unknown format " + PromText.quote(format) + ": json or prometheus");
      }
      text = format.equals("prometheus");
    } catch (ApiError e) {
      Federation.text(response, callback, 400, e.getMessage());
      return;
    } catch (RuntimeException e) {
      Federation.text(response, callback, 400, "error parsing form values: " + e.getMessage());
      return;
    }
    response.setStatus(200);
    response
        .getHeaders()
        .put(
            HttpHeader.CONTENT_TYPE,
            text ? "text/plain; version=0.0.4; charset=utf-8" : "application/stream+json");
    try (OutputStream out = Content.Sink.asOutputStream(response)) {
      Set<Labels> seen = new HashSet<>();
      SampleIterator reuse = null;
      List<Long> ts = new ArrayList<>();
      List<Long> bits = new ArrayList<>();
      StringBuilder line = new StringBuilder(256);
      for (List<LabelMatcher> set : sets) {
        SeriesSet series = querier.select(start, end, set, QueryContext.NONE);
        while (series.next()) {
          Series s = series.at();
          if (!seen.add(s.labels())) {
            continue;
          }
          ts.clear();
          bits.clear();
          reuse = s.iterator(reuse);
          while (reuse.next()) {
            long t = reuse.timestampMillis();
            if (t < start || t > end || reuse.valueBits() == SampleBatch.STALE_NAN_BITS) {
              continue;
            }
            ts.add(t);
            bits.add(reuse.valueBits());
          }
          if (ts.isEmpty()) {
            continue;
          }
          if (text) {
            writeText(out, line, s.labels(), ts, bits);
          } else {
            writeJson(out, s.labels(), ts, bits);
          }
        }
      }
    }
    callback.succeeded();
  }

  private static void writeJson(OutputStream out, Labels labels, List<Long> ts, List<Long> bits)
      throws IOException {
    JsonGenerator g = FACTORY.createGenerator(out);
    g.disable(JsonGenerator.Feature.AUTO_CLOSE_TARGET);
    g.writeStartObject();
    g.writeObjectFieldStart("metric");
    for (int i = 0; i < labels.size(); i++) {
      g.writeStringField(labels.name(i), labels.value(i));
    }
    g.writeEndObject();
    g.writeArrayFieldStart("values");
    for (long b : bits) {
      double v = Double.longBitsToDouble(b);
      if (Double.isFinite(v)) {
        g.writeNumber(v);
      } else {
        g.writeString(Double.isNaN(v) ? "NaN" : v > 0 ? "+Inf" : "-Inf");
      }
    }
    g.writeEndArray();
    g.writeArrayFieldStart("timestamps");
    for (long t : ts) {
      g.writeNumber(t);
    }
    g.writeEndArray();
    g.writeEndObject();
    g.flush();
    out.write('\n');
  }

  private static void writeText(
      OutputStream out, StringBuilder line, Labels labels, List<Long> ts, List<Long> bits)
      throws IOException {
    String name = labels.get(Labels.METRIC_NAME);
    if (name == null || name.isEmpty()) {
      return; // the text format needs a name
    }
    line.setLength(0);
    line.append(Federation.escapeName(name)).append('{');
    boolean first = true;
    for (int i = 0; i < labels.size(); i++) {
      if (!labels.name(i).equals(Labels.METRIC_NAME)) {
        first =
            Federation.label(line, first, Federation.escapeName(labels.name(i)), labels.value(i));
      }
    }
    line.append("} ");
    String series = line.toString();
    StringBuilder b = new StringBuilder(64 * ts.size());
    for (int i = 0; i < ts.size(); i++) {
      b.append(series)
          .append(PromText.formatExposition(Double.longBitsToDouble(bits.get(i))))
          .append(' ')
          .append(ts.get(i))
          .append('\n');
    }
    out.write(b.toString().getBytes(StandardCharsets.UTF_8));
  }

  // ---- import

  /**
   * {@code POST /api/v1/import} ({@code prometheus} false: JSON lines) or {@code
   * /api/v1/import/prometheus} (true: the text format).
   */
  void importLines(boolean prometheus, Request request, Response response, Callback callback)
      throws IOException {
    if (!request.getMethod().equals("POST") && !request.getMethod().equals("PUT")) {
      response.getHeaders().put(HttpHeader.ALLOW, "POST, PUT");
      Federation.text(response, callback, 405, "Method Not Allowed");
      return;
    }
    long declared = request.getLength();
    if (declared > maxBodyBytes) {
      Federation.text(response, callback, 413, tooLarge());
      return;
    }
    Importer in = new Importer();
    long now = clock.millis();
    try (InputStream body = new LimitedStream(Content.Source.asInputStream(request), maxBodyBytes);
        BufferedReader r =
            new BufferedReader(new InputStreamReader(body, StandardCharsets.UTF_8), 1 << 16)) {
      String l;
      int n = 0;
      while ((l = r.readLine()) != null) {
        n++;
        if (l.isBlank()) {
          continue;
        }
        try {
          if (prometheus) {
            in.textLine(l, now);
          } else {
            in.jsonLine(l);
          }
        } catch (IllegalArgumentException e) {
          in.flush();
          Federation.text(
              response,
              callback,
              400,
              "cannot parse line " + n + ": " + e.getMessage() + in.refusals(" (before it: ", ")"));
          return;
        }
      }
    } catch (LimitedStream.TooLarge e) {
      in.flush();
      Federation.text(response, callback, 413, tooLarge());
      return;
    }
    in.flush();
    if (in.refused == 0) {
      response.setStatus(204);
      callback.succeeded();
    } else {
      Federation.text(response, callback, 400, in.refusals("", ""));
    }
  }

  private String tooLarge() {
    return "request body larger than " + maxBodyBytes + " bytes (otlp-http-max-body-size)";
  }

  /** Appends parsed samples in batches and counts what the engine refused. */
  private final class Importer {
    final SampleBatch batch = new SampleBatch(BATCH_SAMPLES);
    final Map<RejectReason, Integer> reasons = new EnumMap<>(RejectReason.class);
    long stored;
    long refused;

    void add(Labels labels, long t, double v) {
      batch.addPoint(labels, MetricMetadata.UNKNOWN, t, v);
      if (batch.size() >= BATCH_SAMPLES) {
        flush();
      }
    }

    void flush() {
      if (batch.size() == 0) {
        return;
      }
      AppendResult result = appender.append(batch);
      for (int p = 0; p < result.pointCount(); p++) {
        RejectReason why = result.pointReason(p);
        if (why == null) {
          stored++;
        } else {
          refused++;
          reasons.merge(why, 1, Integer::sum);
        }
      }
      batch.clear();
    }

    String refusals(String before, String after) {
      if (refused == 0) {
        return "";
      }
      StringBuilder b = new StringBuilder(before);
      b.append(refused).append(" samples refused, ").append(stored).append(" stored:");
      reasons.forEach(
          (k, v) -> b.append(' ').append(k.name().toLowerCase(Locale.ROOT)).append(' ').append(v));
      return b.append(after).toString();
    }

    /** {@code {"metric":{...},"values":[...],"timestamps":[...]}}. */
    void jsonLine(String line) {
      JsonNode n;
      try {
        n = JSON.readTree(line);
      } catch (IOException e) {
        throw new IllegalArgumentException("not JSON: " + e.getMessage());
      }
      JsonNode metric = n.path("metric");
      JsonNode values = n.path("values");
      JsonNode times = n.path("timestamps");
      if (!metric.isObject() || !values.isArray() || !times.isArray()) {
        throw new IllegalArgumentException(
            "expected {\"metric\":{...},\"values\":[...],\"timestamps\":[...]}");
      }
      if (values.size() != times.size()) {
        throw new IllegalArgumentException(
            values.size() + " values but " + times.size() + " timestamps");
      }
      Labels.Builder lb = Labels.builder(metric.size());
      for (Iterator<Map.Entry<String, JsonNode>> it = metric.fields(); it.hasNext(); ) {
        Map.Entry<String, JsonNode> e = it.next();
        lb.add(e.getKey(), e.getValue().asText());
      }
      Labels labels = lb.build();
      for (int i = 0; i < values.size(); i++) {
        JsonNode t = times.get(i);
        if (!t.canConvertToLong()) {
          throw new IllegalArgumentException("timestamp " + t + " is not milliseconds");
        }
        add(labels, t.asLong(), value(values.get(i)));
      }
    }

    private double value(JsonNode v) {
      if (v.isNumber()) {
        return v.asDouble();
      }
      if (v.isTextual()) {
        return parseFloat(v.asText());
      }
      throw new IllegalArgumentException("value " + v + " is not a number");
    }

    /** {@code name{a="b",...} value [timestamp]}; comments and {@code # TYPE} lines skipped. */
    void textLine(String line, long now) {
      TextSample t = parseTextLine(line, now);
      if (t != null) {
        add(t.labels(), t.timestampMillis(), t.value());
      }
    }
  }

  /** One sample of a text-format line. */
  record TextSample(Labels labels, long timestampMillis, double value) {}

  /**
   * One line of the text exposition format, {@code name{a="b",...} value [timestamp]} (label values
   * with Go's escapes {@code \\}, {@code \"}, {@code \n}), or null for a comment.
   *
   * @throws IllegalArgumentException saying what is wrong with the line
   */
  static TextSample parseTextLine(String line, long now) {
    String l = line.strip();
    if (l.startsWith("#")) {
      return null;
    }
    int i = 0;
    while (i < l.length() && l.charAt(i) != '{' && !Character.isWhitespace(l.charAt(i))) {
      i++;
    }
    String name = l.substring(0, i);
    if (name.isEmpty()) {
      throw new IllegalArgumentException("no metric name");
    }
    Labels.Builder lb = Labels.builder();
    lb.add(Labels.METRIC_NAME, name);
    if (i < l.length() && l.charAt(i) == '{') {
      i++;
      while (true) {
        while (i < l.length() && (l.charAt(i) == ',' || l.charAt(i) == ' ')) {
          i++;
        }
        if (i < l.length() && l.charAt(i) == '}') {
          i++;
          break;
        }
        int eq = l.indexOf('=', i);
        if (eq < 0 || eq + 1 >= l.length() || l.charAt(eq + 1) != '"') {
          throw new IllegalArgumentException("expected label=\"value\" at column " + (i + 1));
        }
        String label = l.substring(i, eq).strip();
        StringBuilder v = new StringBuilder();
        int j = eq + 2;
        for (; j < l.length() && l.charAt(j) != '"'; j++) {
          char c = l.charAt(j);
          if (c == '\\' && j + 1 < l.length()) {
            char e = l.charAt(++j);
            v.append(e == 'n' ? '\n' : e);
          } else {
            v.append(c);
          }
        }
        if (j >= l.length()) {
          throw new IllegalArgumentException("unterminated label value of " + label);
        }
        lb.add(label, v.toString());
        i = j + 1;
      }
    }
    String[] rest = l.substring(i).strip().split("\\s+");
    if (rest.length < 1 || rest[0].isEmpty() || rest.length > 2) {
      throw new IllegalArgumentException("expected a value and an optional timestamp");
    }
    long t;
    try {
      t = rest.length == 2 ? Long.parseLong(rest[1]) : now;
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("timestamp " + rest[1] + " is not milliseconds");
    }
    return new TextSample(lb.build(), t, parseFloat(rest[0]));
  }

  /** A float as Go's {@code ParseFloat} reads the exposition's values (NaN, +Inf, -Inf). */
  static double parseFloat(String s) {
    switch (s) {
      case "NaN":
        return Double.NaN;
      case "+Inf":
      case "Inf":
        return Double.POSITIVE_INFINITY;
      case "-Inf":
        return Double.NEGATIVE_INFINITY;
      default:
        try {
          return Double.parseDouble(s);
        } catch (NumberFormatException e) {
          throw new IllegalArgumentException("value " + PromText.quote(s) + " is not a number");
        }
    }
  }

  /** An input stream that throws {@link TooLarge} past {@code max} bytes. */
  private static final class LimitedStream extends java.io.FilterInputStream {
    static final class TooLarge extends IOException {
      private static final long serialVersionUID = 1L;
    }

    private long left;

    LimitedStream(InputStream in, long max) {
      super(in);
      this.left = max;
    }

    @Override
    public int read() throws IOException {
      int b = super.read();
      if (b >= 0 && --left < 0) {
        throw new TooLarge();
      }
      return b;
    }

    @Override
    public int read(byte[] buf, int off, int len) throws IOException {
      int n = super.read(buf, off, len);
      if (n > 0 && (left -= n) < 0) {
        throw new TooLarge();
      }
      return n;
    }
  }
}
