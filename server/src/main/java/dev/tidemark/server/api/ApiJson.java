package dev.tidemark.server.api;

import com.fasterxml.jackson.core.JsonEncoding;
import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.io.NumberOutput;
import dev.tidemark.promql.engine.Value;
import dev.tidemark.tsdb.model.Labels;
import dev.tidemark.tsdb.model.PromText;
import java.io.IOException;
import java.io.OutputStream;
import java.util.List;

/**
 * Writes the API's JSON as it is produced, through Jackson's streaming generator: a result is
 * serialised straight from the engine's value to the response, never held a second time as a tree
 * or a string. Shapes as Prometheus' {@code docs/querying/api.md}. One per response; not
 * thread-safe.
 */
final class ApiJson implements AutoCloseable {

  /** Prometheus caps each kind of annotation at 10 lines in an answer ({@code AsStrings}). */
  static final int MAX_ANNOTATIONS = 10;

  /**
   * Deepest JSON this writes: {@code parse_query}'s tree of a query as deep as the parser allows
   * takes two levels per node at most (a call's object and its {@code args} array), above Jackson's
   * default of 1,000.
   */
  static final int MAX_NESTING_DEPTH = 2 * dev.tidemark.promql.parser.PromqlParser.MAX_DEPTH + 16;

  private static final JsonFactory FACTORY =
      JsonFactory.builder()
          .disable(com.fasterxml.jackson.core.StreamWriteFeature.AUTO_CLOSE_TARGET)
          .streamWriteConstraints(
              com.fasterxml.jackson.core.StreamWriteConstraints.builder()
                  .maxNestingDepth(MAX_NESTING_DEPTH)
                  .build())
          .build();

  final JsonGenerator g;
  private final char[] ts = new char[32];
  private final StringBuilder tsText = new StringBuilder(32);

  ApiJson(OutputStream out) throws IOException {
    g = FACTORY.createGenerator(out, JsonEncoding.UTF8);
  }

  /** {@code {"status":"success","data":} — the caller writes the data next. */
  void beginSuccess() throws IOException {
    g.writeStartObject();
    g.writeStringField("status", "success");
    g.writeFieldName("data");
  }

  /** Closes a success answer with its {@code warnings} and {@code infos} (omitted when empty). */
  void endSuccess(List<String> warnings, List<String> infos) throws IOException {
    annotations("warnings", warnings, "warning");
    annotations("infos", infos, "info");
    g.writeEndObject();
  }

  private void annotations(String field, List<String> list, String kind) throws IOException {
    if (list.isEmpty()) {
      return;
    }
    g.writeArrayFieldStart(field);
    int n = Math.min(list.size(), MAX_ANNOTATIONS);
    for (int i = 0; i < n; i++) {
      g.writeString(list.get(i));
    }
    if (list.size() > n) {
      g.writeString((list.size() - n) + " more " + kind + " annotations omitted");
    }
    g.writeEndArray();
  }

  /** {@code {"status":"error","errorType":…,"error":…}}. */
  void error(ApiError e) throws IOException {
    g.writeStartObject();
    g.writeStringField("status", "error");
    g.writeStringField("errorType", e.type.apiName);
    g.writeStringField("error", e.getMessage());
    g.writeEndObject();
  }

  /** {@code {"resultType":…,"result":…}} of a query, {@code limit} series at most (0: all). */
  void queryData(Value value, int limit, StatsWriter stats) throws IOException {
    g.writeStartObject();
    g.writeStringField("resultType", value.resultType());
    g.writeFieldName("result");
    if (value instanceof Value.Scalar s) {
      point(s.timestampMillis(), s.value());
    } else if (value instanceof Value.StringValue s) {
      g.writeStartArray();
      timestamp(s.timestampMillis());
      g.writeString(s.value());
      g.writeEndArray();
    } else if (value instanceof Value.Vector v) {
      g.writeStartArray();
      int n = limited(v.samples().size(), limit);
      for (int i = 0; i < n; i++) {
        Value.Sample s = v.samples().get(i);
        g.writeStartObject();
        g.writeFieldName("metric");
        labels(s.labels());
        g.writeFieldName("value");
        point(s.timestampMillis(), s.value());
        g.writeEndObject();
      }
      g.writeEndArray();
    } else {
      Value.Matrix m = (Value.Matrix) value;
      g.writeStartArray();
      int n = limited(m.series().size(), limit);
      for (int i = 0; i < n; i++) {
        Value.Series s = m.series().get(i);
        g.writeStartObject();
        g.writeFieldName("metric");
        labels(s.labels());
        g.writeArrayFieldStart("values");
        long[] t = s.timestamps();
        double[] v = s.values();
        for (int k = 0; k < t.length; k++) {
          point(t[k], v[k]);
        }
        g.writeEndArray();
        g.writeEndObject();
      }
      g.writeEndArray();
    }
    if (stats != null) {
      g.writeFieldName("stats");
      stats.write(g);
    }
    g.writeEndObject();
  }

  /** Writes the {@code stats} object of a query answer. */
  interface StatsWriter {
    void write(JsonGenerator g) throws IOException;
  }

  static int limited(int size, int limit) {
    return limit > 0 ? Math.min(size, limit) : size;
  }

  /** {@code [1435781451.781, "1"]}. */
  void point(long millis, double value) throws IOException {
    g.writeStartArray();
    timestamp(millis);
    g.writeString(value(value));
    g.writeEndArray();
  }

  /**
   * A sample value's text, {@link PromText#formatSampleValue(double)}, with the digits from
   * Jackson's Schubfach ({@link NumberOutput#toString(double, boolean)}), the shortest and closest
   * on any JDK: a tenth of the time PromText's exact fallback takes on JDK 17 for the 16 and 17
   * digit values that computed samples mostly have. Asked for only where the value needs them (not
   * for integers).
   */
  static String value(double v) {
    return PromText.formatSampleValue(v, ApiJson::schubfach);
  }

  private static String schubfach(double v) {
    return NumberOutput.toString(v, true);
  }

  /** Seconds with the millisecond fraction, as a JSON number written as Prometheus writes it. */
  void timestamp(long millis) throws IOException {
    tsText.setLength(0);
    PromText.appendTimestamp(tsText, millis);
    int n = tsText.length();
    tsText.getChars(0, n, ts, 0);
    g.writeRawValue(ts, 0, n);
  }

  /** A label set as a JSON object, names in the set's order. */
  void labels(Labels l) throws IOException {
    g.writeStartObject();
    for (int i = 0; i < l.size(); i++) {
      g.writeStringField(l.name(i), l.value(i));
    }
    g.writeEndObject();
  }

  void strings(List<String> values) throws IOException {
    g.writeStartArray();
    for (String v : values) {
      g.writeString(v);
    }
    g.writeEndArray();
  }

  @Override
  public void close() throws IOException {
    g.close();
  }
}
