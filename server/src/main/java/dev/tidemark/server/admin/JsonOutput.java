package dev.tidemark.server.admin;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.io.SerializedString;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.Message;
import dev.tidemark.admin.v1.ApplyRetentionResponse;
import dev.tidemark.admin.v1.CompactResponse;
import dev.tidemark.admin.v1.CreateCheckpointResponse;
import dev.tidemark.admin.v1.DeleteSeriesResponse;
import dev.tidemark.admin.v1.FindSeriesResponse;
import dev.tidemark.admin.v1.FlushResponse;
import dev.tidemark.admin.v1.GetStatusResponse;
import dev.tidemark.admin.v1.Label;
import dev.tidemark.admin.v1.LabelNamesResponse;
import dev.tidemark.admin.v1.LabelValuesResponse;
import dev.tidemark.admin.v1.ListBucketsResponse;
import dev.tidemark.admin.v1.Sample;
import dev.tidemark.admin.v1.SeriesSamples;
import dev.tidemark.admin.v1.SetRetentionResponse;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.Writer;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * {@code tidemark admin --json}: every answer is its proto message as one indented JSON document
 * ({@link #toJson(Message)}: proto field names; unset optional fields left out; 64-bit integers as
 * numbers; raw value bits as {@code "0x..."}; non-finite doubles as strings; enums by name; labels
 * as one object), except {@code read}'s, which is JSON Lines written as the messages arrive ({@link
 * JsonLines}).
 */
final class JsonOutput implements AdminOutput {
  private static final ObjectMapper JSON =
      new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

  private final PrintWriter out;

  JsonOutput(PrintWriter out) {
    this.out = out;
  }

  private void print(Message m) throws IOException {
    out.println(JSON.writeValueAsString(toJson(m)));
  }

  @Override
  public void status(GetStatusResponse r) throws IOException {
    print(r);
  }

  @Override
  public void buckets(ListBucketsResponse r) throws IOException {
    print(r);
  }

  @Override
  public void labelNames(LabelNamesResponse r) throws IOException {
    print(r);
  }

  @Override
  public void labelValues(LabelValuesResponse r) throws IOException {
    print(r);
  }

  @Override
  public void series(FindSeriesResponse r) throws IOException {
    print(r);
  }

  @Override
  public SamplesOutput samples() throws IOException {
    return new JsonLines(out);
  }

  @Override
  public void deleted(DeleteSeriesResponse r) throws IOException {
    print(r);
  }

  @Override
  public void flushed(FlushResponse r) throws IOException {
    print(r);
  }

  @Override
  public void compacted(CompactResponse r) throws IOException {
    print(r);
  }

  @Override
  public void checkpointCreated(CreateCheckpointResponse r) throws IOException {
    print(r);
  }

  @Override
  public void retentionSet(SetRetentionResponse r) throws IOException {
    print(r);
  }

  @Override
  public void retentionApplied(ApplyRetentionResponse r) throws IOException {
    print(r);
  }

  private static final SerializedString LABELS = new SerializedString("labels");
  private static final SerializedString SAMPLES = new SerializedString("samples");
  private static final SerializedString TIMESTAMP_MS = new SerializedString("timestamp_ms");
  private static final SerializedString VALUE_BITS = new SerializedString("value_bits");
  private static final SerializedString VALUE = new SerializedString("value");
  private static final SerializedString STALE = new SerializedString("stale");
  private static final char[] HEX = "0123456789abcdef".toCharArray();

  /**
   * {@code read --json}: JSON Lines written with Jackson's streaming generator, one object per
   * series, {@code {"labels":{...},"samples":[...]}}, each sample field by field as {@link
   * #toJson(Message)} prints a {@link Sample}. {@link #flush()} does not close what is open: a
   * series cut off by an error is an unfinished line, never a complete-looking object.
   */
  static final class JsonLines implements SamplesOutput {
    private final JsonGenerator g;
    private final char[] bits = {'0', 'x', 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    private List<Label> current;

    JsonLines(Writer out) throws IOException {
      g = JSON.getFactory().createGenerator(out);
      g.disable(JsonGenerator.Feature.AUTO_CLOSE_TARGET);
      g.disable(JsonGenerator.Feature.AUTO_CLOSE_JSON_CONTENT);
      g.setRootValueSeparator(null); // the newline after each object separates them
    }

    @Override
    public void add(SeriesSamples s) throws IOException {
      if (!s.getLabelsList().equals(current)) {
        end();
        current = s.getLabelsList();
        g.writeStartObject();
        g.writeFieldName(LABELS);
        g.writeStartObject();
        for (Label l : current) {
          g.writeStringField(l.getName(), l.getValue());
        }
        g.writeEndObject();
        g.writeFieldName(SAMPLES);
        g.writeStartArray();
      }
      for (Sample sample : s.getSamplesList()) {
        g.writeStartObject();
        g.writeFieldName(TIMESTAMP_MS);
        g.writeNumber(sample.getTimestampMs());
        g.writeFieldName(VALUE_BITS);
        long b = sample.getValueBits();
        for (int i = 17; i >= 2; i--, b >>>= 4) {
          bits[i] = HEX[(int) b & 0xf]; // "0x%016x"
        }
        g.writeString(bits, 0, bits.length);
        g.writeFieldName(VALUE);
        double v = sample.getValue();
        if (Double.isFinite(v)) {
          g.writeNumber(v);
        } else {
          g.writeString(Double.isNaN(v) ? "NaN" : v > 0 ? "+Inf" : "-Inf");
        }
        g.writeFieldName(STALE);
        g.writeBoolean(sample.getStale());
        g.writeEndObject();
      }
    }

    @Override
    public void end() throws IOException {
      if (current != null) {
        g.writeEndArray();
        g.writeEndObject();
        g.writeRaw('\n');
        current = null;
      }
    }

    @Override
    public void flush() throws IOException {
      g.flush();
    }
  }

  /**
   * A proto message as JSON: proto field names; unset optional fields left out; 64-bit integers as
   * numbers; {@code fixed64} (raw value bits) as {@code "0x..."}; non-finite doubles as strings;
   * enums by name; repeated {@link Label}s as one object.
   */
  static ObjectNode toJson(Message m) {
    ObjectNode node = JSON.createObjectNode();
    for (FieldDescriptor f : m.getDescriptorForType().getFields()) {
      if (f.hasPresence() && !f.isRepeated() && !m.hasField(f)) {
        continue;
      }
      String key = f.getName();
      if (f.isRepeated()) {
        if (f.getJavaType() == FieldDescriptor.JavaType.MESSAGE
            && f.getMessageType().equals(Label.getDescriptor())) {
          List<Label> labels = new ArrayList<>();
          for (int i = 0; i < m.getRepeatedFieldCount(f); i++) {
            labels.add((Label) m.getRepeatedField(f, i));
          }
          node.set(key, labelsJson(labels));
          continue;
        }
        ArrayNode arr = node.putArray(key);
        for (int i = 0; i < m.getRepeatedFieldCount(f); i++) {
          arr.add(scalar(f, m.getRepeatedField(f, i)));
        }
      } else {
        node.set(key, scalar(f, m.getField(f)));
      }
    }
    return node;
  }

  static ObjectNode labelsJson(List<Label> labels) {
    ObjectNode o = JSON.createObjectNode();
    for (Label l : labels) {
      o.put(l.getName(), l.getValue());
    }
    return o;
  }

  private static JsonNode scalar(FieldDescriptor f, Object v) {
    return switch (f.getType()) {
      case MESSAGE -> toJson((Message) v);
      case FIXED64 ->
          JSON.getNodeFactory().textNode(String.format(Locale.ROOT, "0x%016x", (Long) v));
      case INT64, SINT64, SFIXED64 -> JSON.getNodeFactory().numberNode((Long) v);
      case UINT64 ->
          JSON.getNodeFactory()
              .numberNode(new java.math.BigInteger(Long.toUnsignedString((Long) v)));
      case INT32, SINT32, SFIXED32, UINT32, FIXED32 ->
          JSON.getNodeFactory().numberNode((Integer) v);
      case DOUBLE -> {
        double d = (Double) v;
        yield Double.isFinite(d)
            ? JSON.getNodeFactory().numberNode(d)
            : JSON.getNodeFactory().textNode(Double.isNaN(d) ? "NaN" : d > 0 ? "+Inf" : "-Inf");
      }
      case FLOAT -> JSON.getNodeFactory().numberNode((Float) v);
      case BOOL -> JSON.getNodeFactory().booleanNode((Boolean) v);
      case ENUM ->
          JSON.getNodeFactory()
              .textNode(((com.google.protobuf.Descriptors.EnumValueDescriptor) v).getName());
      case STRING -> JSON.getNodeFactory().textNode((String) v);
      case BYTES ->
          JSON.getNodeFactory().binaryNode(((com.google.protobuf.ByteString) v).toByteArray());
      default -> JSON.getNodeFactory().textNode(String.valueOf(v));
    };
  }
}
