package dev.tidemark.server.admin;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.tidemark.admin.v1.Label;
import dev.tidemark.admin.v1.Sample;
import dev.tidemark.admin.v1.SeriesSamples;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.io.Writer;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import org.junit.jupiter.api.Test;

/** {@code tidemark admin read} output, JSON Lines and table, written as the messages arrive. */
class AdminReadOutputTest {
  static final ObjectMapper JSON = new ObjectMapper();
  static final long STALE_BITS = 0x7ff0000000000002L;

  static Sample sample(long t, long bits) {
    return Sample.newBuilder()
        .setTimestampMs(t)
        .setValueBits(bits)
        .setValue(Double.longBitsToDouble(bits))
        .setStale(bits == STALE_BITS)
        .build();
  }

  static List<Label> labels(String... nameValues) {
    List<Label> l = new ArrayList<>();
    for (int i = 0; i < nameValues.length; i += 2) {
      l.add(Label.newBuilder().setName(nameValues[i]).setValue(nameValues[i + 1]).build());
    }
    return l;
  }

  static SeriesSamples message(List<Label> labels, List<Sample> samples) {
    return SeriesSamples.newBuilder().addAllLabels(labels).addAllSamples(samples).build();
  }

  /** Feeds the messages to the command's JSON Lines output as ReadCmd does. */
  static void writeJson(Iterator<SeriesSamples> messages, Writer out) throws IOException {
    write(messages, new JsonOutput.JsonLines(out));
  }

  static void writeTable(Iterator<SeriesSamples> messages, PrintWriter out) throws IOException {
    write(messages, new TextOutput.SampleTable(out));
  }

  static void write(Iterator<SeriesSamples> messages, SamplesOutput output) throws IOException {
    try {
      while (messages.hasNext()) {
        output.add(messages.next());
      }
      output.end();
    } finally {
      output.flush();
    }
  }

  /** A series as the command's JSON tree had it before it streamed: labels, then the samples. */
  static ObjectNode oldTree(List<Label> labels, List<Sample> samples) {
    ObjectNode series = JSON.createObjectNode();
    series.set("labels", JsonOutput.labelsJson(labels));
    ArrayNode array = series.putArray("samples");
    samples.forEach(s -> array.add(JsonOutput.toJson(s)));
    return series;
  }

  /** Every value kind the JSON has a case for: finite, NaN payloads, stale marker, infinities. */
  static final long[] BITS = {
    Double.doubleToRawLongBits(1.5),
    Double.doubleToRawLongBits(-0.0),
    Double.doubleToRawLongBits(1e-300),
    Double.doubleToRawLongBits(123456789.125),
    0x7ff8000000000123L,
    0x7ff8000000000000L,
    STALE_BITS,
    0xfff0000000000000L,
    0x7ff0000000000000L,
    Double.doubleToRawLongBits(Double.MAX_VALUE),
    Double.doubleToRawLongBits(Double.MIN_VALUE),
    1L,
  };

  @Test
  void jsonLinesOneObjectPerSeriesEachSampleAsTheProtoJson() throws Exception {
    List<Label> up = labels("__name__", "up", "job", "a\"b\n\\c", "ünïcode", "\u0001");
    List<Label> down = labels("__name__", "down");
    List<Sample> first = new ArrayList<>();
    List<Sample> second = new ArrayList<>();
    for (int i = 0; i < BITS.length; i++) {
      first.add(sample(1_000L * i, BITS[i]));
      second.add(sample(1_000_000L + i, BITS[BITS.length - 1 - i]));
    }
    // up comes in two messages (a long series is split): one object; then down.
    List<SeriesSamples> msgs =
        List.of(
            message(up, first.subList(0, 5)),
            message(up, first.subList(5, first.size())),
            message(down, second));
    StringWriter out = new StringWriter();
    writeJson(msgs.iterator(), out);

    String text = out.toString();
    assertThat(text).endsWith("\n");
    List<String> lines = text.lines().toList();
    assertThat(lines).hasSize(2);
    for (int k = 0; k < 2; k++) {
      List<Label> labels = k == 0 ? up : down;
      List<Sample> samples = k == 0 ? first : second;
      // Byte for byte what the tree the command built before gives, one line per series.
      assertThat(lines.get(k)).isEqualTo(JSON.writeValueAsString(oldTree(labels, samples)));
      JsonNode series = JSON.readTree(lines.get(k));
      assertThat(series.properties())
          .extracting(e -> e.getKey())
          .containsExactly("labels", "samples");
      assertThat(series.get("labels")).isEqualTo(JsonOutput.labelsJson(labels));
      assertThat(series.get("labels").get("__name__").asText()).isEqualTo(k == 0 ? "up" : "down");
      JsonNode got = series.get("samples");
      assertThat(got).hasSize(samples.size());
      for (int i = 0; i < samples.size(); i++) {
        Sample s = samples.get(i);
        JsonNode j = got.get(i);
        assertThat(j.properties())
            .extracting(e -> e.getKey())
            .containsExactly("timestamp_ms", "value_bits", "value", "stale");
        assertThat(j.get("timestamp_ms").asLong()).isEqualTo(s.getTimestampMs());
        assertThat(j.get("value_bits").asText())
            .isEqualTo(String.format("0x%016x", s.getValueBits()));
        assertThat(Long.parseUnsignedLong(j.get("value_bits").asText().substring(2), 16))
            .isEqualTo(s.getValueBits());
        assertThat(j.get("stale").asBoolean()).isEqualTo(s.getValueBits() == STALE_BITS);
        double v = s.getValue();
        if (Double.isNaN(v)) {
          assertThat(j.get("value").asText()).isEqualTo("NaN");
        } else if (Double.isInfinite(v)) {
          assertThat(j.get("value").asText()).isEqualTo(v > 0 ? "+Inf" : "-Inf");
        } else {
          assertThat(j.get("value").isNumber()).isTrue();
          assertThat(Double.doubleToRawLongBits(j.get("value").asDouble()))
              .isEqualTo(s.getValueBits());
        }
      }
    }
    // The labels' order and escapes survive.
    assertThat(lines.get(0))
        .startsWith("{\"labels\":{\"__name__\":\"up\",\"job\":\"a\\\"b\\n\\\\c\"");
  }

  @Test
  void noSeriesNoOutput() throws Exception {
    StringWriter json = new StringWriter();
    writeJson(List.<SeriesSamples>of().iterator(), json);
    assertThat(json.toString()).isEmpty();
    StringWriter table = new StringWriter();
    writeTable(List.<SeriesSamples>of().iterator(), new PrintWriter(table));
    assertThat(table.toString()).isEmpty();
  }

  /**
   * Series made on demand: when the k-th is asked for, the lines of (nearly) all before it have
   * been written (only the generator's buffer of a few KiB lags), so nothing is kept.
   */
  @Test
  void jsonLinesAreWrittenAsTheSeriesArrive() throws Exception {
    int n = 20_000;
    StringWriter out = new StringWriter();
    int[] linesSeen = new int[n];
    Iterator<SeriesSamples> lazy =
        new Iterator<>() {
          int k;
          int scanned;
          int newlines;

          @Override
          public boolean hasNext() {
            return k < n;
          }

          @Override
          public SeriesSamples next() {
            if (k >= n) {
              throw new NoSuchElementException();
            }
            StringBuffer written = out.getBuffer();
            for (; scanned < written.length(); scanned++) {
              if (written.charAt(scanned) == '\n') {
                newlines++;
              }
            }
            linesSeen[k] = newlines;
            List<Sample> samples = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
              samples.add(sample(k * 10L + i, BITS[(k + i) % BITS.length]));
            }
            SeriesSamples m = message(labels("__name__", "m", "k", Integer.toString(k)), samples);
            k++;
            return m;
          }
        };
    writeJson(lazy, out);

    for (int k = 0; k < n; k++) {
      assertThat(linesSeen[k]).as("lines written before series %d was read", k).isLessThan(k + 1);
      assertThat(linesSeen[k])
          .as("lines written before series %d was read", k)
          .isGreaterThan(k - 100);
    }
    List<String> lines = out.toString().lines().toList();
    assertThat(lines).hasSize(n);
    for (int k = 0; k < n; k++) {
      List<Sample> samples = new ArrayList<>();
      for (int i = 0; i < 3; i++) {
        samples.add(sample(k * 10L + i, BITS[(k + i) % BITS.length]));
      }
      assertThat(lines.get(k))
          .isEqualTo(
              JSON.writeValueAsString(
                  oldTree(labels("__name__", "m", "k", Integer.toString(k)), samples)));
      JsonNode series = JSON.readTree(lines.get(k));
      assertThat(series.get("labels").get("k").asText()).isEqualTo(Integer.toString(k));
      assertThat(series.get("samples")).hasSize(3);
    }
  }

  /** A call failing midway: what was written is flushed; the open series is not closed. */
  @Test
  void anErrorMidwayLeavesTheOpenSeriesUnfinished() {
    List<Label> a = labels("__name__", "a");
    List<Label> b = labels("__name__", "b");
    Iterator<SeriesSamples> failing =
        new Iterator<>() {
          int k;

          @Override
          public boolean hasNext() {
            if (k == 2) {
              throw new IllegalStateException("the call broke");
            }
            return true;
          }

          @Override
          public SeriesSamples next() {
            return message(k++ == 0 ? a : b, List.of(sample(k, Double.doubleToRawLongBits(k))));
          }
        };
    StringWriter out = new StringWriter();
    assertThatThrownBy(() -> writeJson(failing, out)).hasMessage("the call broke");
    List<String> lines = out.toString().lines().toList();
    assertThat(lines).hasSize(2);
    assertThat(lines.get(0)).startsWith("{\"labels\":{\"__name__\":\"a\"}").endsWith("]}");
    assertThat(lines.get(1)).startsWith("{\"labels\":{\"__name__\":\"b\"}").doesNotEndWith("]}");
    assertThatThrownBy(() -> JSON.readTree(lines.get(1))).as("unfinished").isNotNull();
    assertThat(out.toString()).doesNotEndWith("\n");
  }

  @Test
  void tableOneBlockPerSeries() throws Exception {
    List<Label> up = labels("__name__", "up", "job", "a");
    List<SeriesSamples> msgs =
        List.of(
            message(up, List.of(sample(0, Double.doubleToRawLongBits(1.5)))),
            message(up, List.of(sample(1000, STALE_BITS), sample(2000, 0x7ff8000000000123L))),
            message(labels("__name__", "x"), List.of(sample(3000, 0xfff0000000000000L))));
    StringWriter out = new StringWriter();
    writeTable(msgs.iterator(), new PrintWriter(out));
    assertThat(out.toString().lines())
        .containsExactly(
            "up{job=\"a\"}",
            "  1970-01-01T00:00:00.000Z  0  1.5",
            "  1970-01-01T00:00:01.000Z  1000  stale",
            "  1970-01-01T00:00:02.000Z  2000  NaN (0x7ff8000000000123)",
            "",
            "x{}",
            "  1970-01-01T00:00:03.000Z  3000  -Inf");
  }
}
