package dev.tidemark.promql.engine;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * The conformance evals that fail today, one line each in the test resource {@value #RESOURCE}:
 * {@code file:line category short reason}. {@code #} starts a comment line; blank lines are
 * ignored. The list is a ratchet ({@code PromqlConformanceTest}): an eval that fails and is not on
 * it fails the build, and so does an eval on it that passes, so the list only shrinks as the engine
 * catches up with Prometheus. Evals set apart for native histograms never belong on it.
 */
public final class KnownFailures {

  /** Where the list lives on the test class path. */
  public static final String RESOURCE = "/conformance/known-failures.txt";

  /**
   * Why an eval fails. Experimental categories are Prometheus features behind feature flags in 3.14
   * that the scripts enable; the others are defects of the engine's stable PromQL.
   */
  public enum Category {
    DURATION_EXPRESSIONS(
        "duration-expressions", true, "arithmetic in ranges and offsets: [5m * 2], offset -(1h)"),
    FILL_MODIFIERS("fill-modifiers", true, "fill / fill_left / fill_right binop modifiers"),
    ANCHORED_SMOOTHED("anchored-smoothed", true, "anchored / smoothed range selectors"),
    INFO_FUNCTION("info-function", true, "the info() function"),
    TYPE_AND_UNIT_LABELS("type-and-unit-labels", true, "__type__ / __unit__ labels"),
    EXPERIMENTAL_FUNCTIONS(
        "experimental-functions",
        true,
        "min_of, max_of, ts_of_*_over_time, histogram_quantiles, start_timestamp, ..."),
    START_TIMESTAMPS("start-timestamps", true, "samples' start timestamps (@st lines)"),
    ANNOTATIONS("annotations", false, "warning / info annotations: presence, text, position"),
    HISTOGRAM_FRACTION("histogram-fraction", false, "histogram_fraction over classic le buckets"),
    STEP_IN_INSTANT_QUERY("step-in-instant-query", false, "step() in an instant query"),
    INVALID_UTF8("invalid-utf8", false, "the error text for an invalid UTF-8 label value"),
    STABLE_OTHER("stable-other", false, "other defects of stable PromQL");

    public final String id;
    public final boolean experimental;
    public final String description;

    Category(String id, boolean experimental, String description) {
      this.id = id;
      this.experimental = experimental;
      this.description = description;
    }

    static Category of(String id) {
      for (Category c : values()) {
        if (c.id.equals(id)) {
          return c;
        }
      }
      return null;
    }
  }

  /** One listed eval. */
  public record Entry(String where, Category category, String reason, int listLine) {}

  private KnownFailures() {}

  /** The list by {@code file:line}, in list order. */
  public static Map<String, Entry> load() throws IOException {
    try (InputStream in =
        Objects.requireNonNull(
            KnownFailures.class.getResourceAsStream(RESOURCE), RESOURCE + " not on class path")) {
      return parse(new String(in.readAllBytes(), StandardCharsets.UTF_8));
    }
  }

  /**
   * Parses the list.
   *
   * @throws IllegalArgumentException naming the line for a malformed line, an unknown category, a
   *     missing reason, or an eval listed twice
   */
  static Map<String, Entry> parse(String text) {
    Map<String, Entry> out = new LinkedHashMap<>();
    String[] lines = text.split("\n", -1);
    for (int i = 0; i < lines.length; i++) {
      String l = lines[i].trim();
      if (l.isEmpty() || l.startsWith("#")) {
        continue;
      }
      String[] parts = l.split("\\s+", 3);
      if (parts.length < 3 || !parts[0].matches("[^:\\s]+\\.test:[1-9]\\d*")) {
        throw new IllegalArgumentException(
            RESOURCE + ":" + (i + 1) + ": expected 'file:line category reason', was: " + l);
      }
      Category c = Category.of(parts[1]);
      if (c == null) {
        throw new IllegalArgumentException(
            RESOURCE + ":" + (i + 1) + ": unknown category " + parts[1]);
      }
      if (out.put(parts[0], new Entry(parts[0], c, parts[2], i + 1)) != null) {
        throw new IllegalArgumentException(
            RESOURCE + ":" + (i + 1) + ": " + parts[0] + " is listed twice");
      }
    }
    return out;
  }
}
