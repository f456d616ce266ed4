package dev.tidemark.server;

import dev.tidemark.server.api.PromqlFeatures;
import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The {@code --enable-feature} names, as Prometheus 3.14 reads them ({@code setFeatureListOptions}
 * in its {@code cmd/prometheus/main.go}): every name Prometheus knows is accepted, and each says in
 * the log what it does here, at start. What Tidemark has is turned on and logged at INFO with
 * Prometheus' own line; what it has always on (duration expressions) gets Prometheus' no-op
 * warning; a PromQL feature the engine lacks, and a Prometheus feature of a part Tidemark does not
 * have (scraping, rules, its TSDB, its UI), is accepted with a WARNING saying it has no effect; an
 * unknown name gets Prometheus' {@code Unknown option for --enable-feature} warning. None stops the
 * start, as none stops Prometheus'.
 *
 * <p>Immutable.
 */
final class Features {

  /** One line for the log: its level and text. */
  record LogLine(Level level, String text) {}

  /** What a known name does here. */
  private enum Effect {
    /** Turns on what Prometheus turns on; Prometheus' INFO line. */
    ENABLED,
    /** Always on here as in Prometheus 3.14; Prometheus' no-op WARNING. */
    ALWAYS_ON,
    /** A PromQL feature the engine does not have yet; a WARNING. */
    NOT_IMPLEMENTED,
    /** A feature of a part of Prometheus Tidemark does not have; a WARNING. */
    NOT_APPLICABLE
  }

  private record Known(Effect effect, String text) {}

  static final String EXPERIMENTAL_FUNCTIONS = "promql-experimental-functions";
  static final String BINOP_FILL_MODIFIERS = "promql-binop-fill-modifiers";
  static final String DELAYED_NAME_REMOVAL = "promql-delayed-name-removal";
  static final String EXTENDED_RANGE_SELECTORS = "promql-extended-range-selectors";
  static final String TYPE_AND_UNIT_LABELS = "type-and-unit-labels";

  private static final String NO_EFFECT =
      "This option for --enable-feature names a Prometheus feature Tidemark does not have: it is"
          + " accepted and has no effect.";

  private static final Map<String, Known> KNOWN = known();

  private static Map<String, Known> known() {
    Map<String, Known> m = new LinkedHashMap<>();
    m.put(
        EXPERIMENTAL_FUNCTIONS,
        new Known(Effect.ENABLED, "Experimental PromQL functions enabled."));
    m.put(
        BINOP_FILL_MODIFIERS,
        new Known(Effect.ENABLED, "Experimental PromQL binary operator fill modifiers enabled."));
    m.put(
        DELAYED_NAME_REMOVAL,
        new Known(Effect.ENABLED, "Experimental PromQL delayed name removal enabled."));
    m.put(
        "promql-duration-expr",
        new Known(
            Effect.ALWAYS_ON,
            "This option for --enable-feature is now permanently enabled and therefore a no-op."));
    m.put(
        EXTENDED_RANGE_SELECTORS,
        new Known(Effect.ENABLED, "Experimental PromQL extended range selectors enabled."));
    m.put(
        "use-start-timestamps",
        new Known(
            Effect.NOT_IMPLEMENTED,
            "Start timestamps in the PromQL engine are not implemented by Tidemark: the store"
                + " keeps no start timestamps, so rate(), increase(), irate() and resets() cannot"
                + " use them; the option is accepted and has no effect."));
    m.put(
        TYPE_AND_UNIT_LABELS,
        new Known(Effect.ENABLED, "Experimental type and unit labels enabled"));
    m.put(
        "promql-per-step-stats",
        new Known(
            Effect.NOT_IMPLEMENTED,
            "Per-step query statistics are not implemented by Tidemark: the option is accepted"
                + " and has no effect."));
    for (String name :
        List.of(
            "exemplar-storage",
            "memory-snapshot-on-shutdown",
            "extra-scrape-metrics",
            "metadata-wal-records",
            "auto-reload-config",
            "concurrent-rule-eval",
            "native-histograms",
            "ooo-native-histograms",
            "created-timestamp-zero-ingestion",
            "xor2-encoding",
            "histograms-st-encoding",
            "st-synthesis",
            "st-storage",
            "delayed-compaction",
            "old-ui",
            "otlp-deltatocumulative",
            "otlp-native-delta-ingestion",
            "use-uncached-io",
            "fast-startup",
            "search-api")) {
      m.put(name, new Known(Effect.NOT_APPLICABLE, NO_EFFECT));
    }
    return Map.copyOf(m);
  }

  /** No feature enabled. */
  static final Features NONE = of(List.of());

  private final List<String> given;
  private final Set<String> names;

  private Features(List<String> given) {
    this.given = List.copyOf(given);
    this.names = new LinkedHashSet<>(given);
  }

  /** The features named in {@code given}, in order, repeats and unknown names included. */
  static Features of(List<String> given) {
    return new Features(given);
  }

  /** Whether {@code name} was given. */
  boolean has(String name) {
    return names.contains(name);
  }

  /**
   * The query API's PromQL features; {@code experimentalFunctions} is the older {@code
   * --query-experimental-functions}, an alias of {@code promql-experimental-functions}.
   */
  PromqlFeatures promql(boolean experimentalFunctions) {
    return new PromqlFeatures(
        experimentalFunctions || has(EXPERIMENTAL_FUNCTIONS),
        has(BINOP_FILL_MODIFIERS),
        has(DELAYED_NAME_REMOVAL),
        has(EXTENDED_RANGE_SELECTORS),
        has(TYPE_AND_UNIT_LABELS));
  }

  /**
   * What the start logs about these features, one line a name given (once each), in order. The
   * warnings carry the name as Prometheus' structured {@code option=} attribute does.
   */
  List<LogLine> logLines() {
    List<LogLine> out = new ArrayList<>();
    for (String name : names) {
      Known k = KNOWN.get(name);
      if (k == null) {
        out.add(new LogLine(Level.WARNING, "Unknown option for --enable-feature option=" + name));
      } else if (k.effect() == Effect.ENABLED) {
        out.add(new LogLine(Level.INFO, k.text()));
      } else {
        out.add(new LogLine(Level.WARNING, k.text() + " option=" + name));
      }
    }
    return out;
  }

  /** The names as given, for {@code /api/v1/status/flags}: joined with {@code ,}, as Prometheus. */
  String flagValue() {
    return String.join(",", given);
  }

  @Override
  public String toString() {
    return given.toString();
  }
}
