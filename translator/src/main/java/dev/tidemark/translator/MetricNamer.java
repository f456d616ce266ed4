package dev.tidemark.translator;

import dev.tidemark.tsdb.model.PromText;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Builds Prometheus metric names from OTLP names, units and types, exactly as Prometheus'
 * otlptranslator does (contract §1; the conformance cases in the test resources come from it).
 *
 * <p>Design note: the escaping algorithm tokenises the name on every character outside {@code
 * [A-Za-z0-9:]} (including {@code _}), appends unit tokens unless the token already occurs
 * <em>anywhere</em> in the name, and then moves {@code total}/{@code ratio} to the end. The quirks
 * of the reference are reproduced on purpose (§1.2 [QUIRK]): {@code per_second} is always appended
 * because it never equals a single token, and {@code TiBy} maps to {@code tibibytes}.
 *
 * <p>Immutable and thread-safe. Allocates; callers on the hot path cache results.
 */
public final class MetricNamer {

  /** The metric type as far as naming cares. */
  public enum Kind {
    GAUGE,
    MONOTONIC_COUNTER,
    NON_MONOTONIC_COUNTER,
    HISTOGRAM,
    EXPONENTIAL_HISTOGRAM,
    SUMMARY,
    UNKNOWN
  }

  /** Main units (contract Table 1.3a, T1 {@code unitMap}). */
  static final Map<String, String> UNITS =
      Map.ofEntries(
          Map.entry("d", "days"),
          Map.entry("h", "hours"),
          Map.entry("min", "minutes"),
          Map.entry("s", "seconds"),
          Map.entry("ms", "milliseconds"),
          Map.entry("us", "microseconds"),
          Map.entry("ns", "nanoseconds"),
          Map.entry("By", "bytes"),
          Map.entry("KiBy", "kibibytes"),
          Map.entry("MiBy", "mebibytes"),
          Map.entry("GiBy", "gibibytes"),
          Map.entry("TiBy", "tibibytes"),
          Map.entry("KBy", "kilobytes"),
          Map.entry("MBy", "megabytes"),
          Map.entry("GBy", "gigabytes"),
          Map.entry("TBy", "terabytes"),
          Map.entry("m", "meters"),
          Map.entry("V", "volts"),
          Map.entry("A", "amperes"),
          Map.entry("J", "joules"),
          Map.entry("W", "watts"),
          Map.entry("g", "grams"),
          Map.entry("Cel", "celsius"),
          Map.entry("Hz", "hertz"),
          Map.entry("1", ""),
          Map.entry("%", "percent"));

  /** "Per" units (contract Table 1.3b, T1 {@code perUnitMap}). */
  static final Map<String, String> PER_UNITS =
      Map.of(
          "s", "second", "m", "minute", "h", "hour", "d", "day", "w", "week", "mo", "month", "y",
          "year");

  private final String namespace;
  private final TranslationStrategy strategy;

  public MetricNamer(String namespace, TranslationStrategy strategy) {
    this.namespace = namespace == null ? "" : namespace;
    this.strategy = Objects.requireNonNull(strategy, "strategy");
  }

  public TranslationStrategy strategy() {
    return strategy;
  }

  /**
   * The Prometheus metric family name (before {@code _bucket}/{@code _sum}/{@code _count}).
   *
   * @throws InvalidNameException if escaping leaves nothing usable (reference wording)
   */
  public String build(String name, String unit, Kind kind) throws InvalidNameException {
    unit = unit == null ? "" : unit;
    String result;
    if (!strategy.shouldEscape()) {
      result = buildUtf8(name, unit, kind);
      if (result.isEmpty()) {
        throw new InvalidNameException("metric name is empty");
      }
      return result;
    }
    if (strategy.shouldAddSuffixes()) {
      result = normalizeName(name, unit, kind);
    } else {
      String metricName = joinFields(name, true);
      if (!namespace.isEmpty()) {
        result = joinFields(namespace, true) + "_" + metricName;
      } else {
        result = startsWithDigit(metricName) ? "_" + metricName : metricName;
      }
    }
    if (result.isEmpty()) {
      throw new InvalidNameException(
          "normalization for metric " + PromText.quote(name) + " resulted in empty name");
    }
    if (result.equals(name)) {
      return result;
    }
    if (onlyUnderscores(result)) {
      throw new InvalidNameException(
          "normalization for metric "
              + PromText.quote(name)
              + " resulted in invalid name "
              + PromText.quote(result));
    }
    return result;
  }

  /**
   * The UNIT metadata: unit words without type suffixes ({@code By/s} → {@code bytes_per_second}).
   */
  public String unitName(String unit) {
    return unitName(unit, !strategy.shouldEscape());
  }

  /** T1 {@code UnitNamer.Build}. */
  public static String unitName(String unit, boolean utf8Allowed) {
    String[] parts = unitSuffixes(unit == null ? "" : unit);
    String main = parts[0];
    String per = parts[1];
    if (!utf8Allowed) {
      main = cleanUpUnit(main);
      per = cleanUpUnit(per);
    }
    String u;
    if (!main.isEmpty() && !per.isEmpty()) {
      u = main + "_" + per;
    } else if (!main.isEmpty()) {
      u = main;
    } else {
      u = per;
    }
    if (u.startsWith("_")) {
      u = u.substring(1);
    }
    if (u.endsWith("_")) {
      u = u.substring(0, u.length() - 1);
    }
    return u;
  }

  private String normalizeName(String name, String unit, Kind kind) {
    List<String> tokens = fields(name, false);
    String[] suffixes = unitSuffixes(unit);
    addUnitTokens(tokens, cleanUpUnit(suffixes[0]), cleanUpUnit(suffixes[1]));
    if (kind == Kind.MONOTONIC_COUNTER) {
      tokens.removeIf("total"::equals);
      tokens.add("total");
    }
    if (unit.equals("1") && kind == Kind.GAUGE) {
      tokens.removeIf("ratio"::equals);
      tokens.add("ratio");
    }
    if (!namespace.isEmpty()) {
      tokens.add(0, namespace);
    }
    String joined = String.join("_", tokens);
    return startsWithDigit(joined) ? "_" + joined : joined;
  }

  private static void addUnitTokens(List<String> tokens, String main, String per) {
    if (tokens.contains(main)) {
      main = "";
    }
    if (per.equals("per_")) {
      per = "";
    } else {
      if (per.endsWith("_")) {
        per = per.substring(0, per.length() - 1);
      }
      if (tokens.contains(per)) {
        per = "";
      }
    }
    if (!per.isEmpty() && main.endsWith("_")) {
      main = main.substring(0, main.length() - 1);
    }
    if (!main.isEmpty()) {
      tokens.add(main);
    }
    if (!per.isEmpty()) {
      tokens.add(per);
    }
  }

  private String buildUtf8(String inputName, String unit, Kind kind) {
    String name = namespace.isEmpty() ? inputName : namespace + "_" + inputName;
    if (!strategy.shouldAddSuffixes()) {
      return name;
    }
    // The reference appends these on the way out (Go defers, last registered runs first):
    // unit, then per unit, then _total, then _ratio.
    boolean ratio = unit.equals("1") && kind == Kind.GAUGE;
    boolean total = kind == Kind.MONOTONIC_COUNTER;
    if (ratio) {
      name = trimSuffixAndDelimiter(name, "ratio");
    }
    if (total) {
      name = trimSuffixAndDelimiter(name, "total");
    }
    String[] suffixes = unitSuffixes(unit);
    String main = suffixes[0];
    String per = suffixes[1];
    if (!per.isEmpty()) {
      name = trimSuffixAndDelimiter(name, per);
    }
    if (!main.isEmpty() && !name.endsWith(main)) {
      name = name + "_" + main;
    }
    if (!per.isEmpty()) {
      name = name + "_" + per;
    }
    if (total) {
      name = name + "_total";
    }
    if (ratio) {
      name = name + "_ratio";
    }
    return name;
  }

  private static String trimSuffixAndDelimiter(String name, String suffix) {
    if (name.endsWith(suffix) && name.length() > suffix.length() + 1) {
      return name.substring(0, name.length() - suffix.length() - 1);
    }
    return name;
  }

  /** [main, per] with the unit tables applied, before cleaning; per is prefixed {@code per_}. */
  static String[] unitSuffixes(String unit) {
    int slash = unit.indexOf('/');
    String mainOtel = (slash < 0 ? unit : unit.substring(0, slash)).strip();
    String main = "";
    if (!mainOtel.isEmpty() && !containsBrace(mainOtel)) {
      main = UNITS.getOrDefault(mainOtel, mainOtel);
    }
    String per = "";
    if (slash >= 0 && slash + 1 < unit.length()) {
      String perOtel = unit.substring(slash + 1).strip();
      if (!perOtel.isEmpty() && !containsBrace(perOtel)) {
        per = PER_UNITS.getOrDefault(perOtel, perOtel);
      }
      if (!per.isEmpty()) {
        per = "per_" + per;
      }
    }
    return new String[] {main, per};
  }

  private static boolean containsBrace(String s) {
    return s.indexOf('{') >= 0 || s.indexOf('}') >= 0;
  }

  /** Replace chars outside [A-Za-z0-9:] with _, collapse runs of _, strip one leading _. */
  static String cleanUpUnit(String unit) {
    StringBuilder sb = new StringBuilder(unit.length());
    for (int i = 0; i < unit.length(); ) {
      int cp = unit.codePointAt(i);
      i += Character.charCount(cp);
      char c = isValidCompliantChar(cp) ? (char) cp : '_';
      if (c == '_' && sb.length() > 0 && sb.charAt(sb.length() - 1) == '_') {
        continue;
      }
      sb.append(c);
    }
    if (sb.length() > 0 && sb.charAt(0) == '_') {
      sb.deleteCharAt(0);
    }
    return sb.toString();
  }

  private static boolean isValidCompliantChar(int c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == ':';
  }

  /** Go strings.FieldsFunc: split on invalid code points, drop empty fields. */
  private static List<String> fields(String s, boolean underscoreValid) {
    List<String> out = new ArrayList<>();
    int start = -1;
    for (int i = 0; i < s.length(); ) {
      int cp = s.codePointAt(i);
      boolean valid = isValidCompliantChar(cp) || (underscoreValid && cp == '_');
      if (valid) {
        if (start < 0) {
          start = i;
        }
      } else if (start >= 0) {
        out.add(s.substring(start, i));
        start = -1;
      }
      i += Character.charCount(cp);
    }
    if (start >= 0) {
      out.add(s.substring(start));
    }
    return out;
  }

  private static String joinFields(String s, boolean underscoreValid) {
    return String.join("_", fields(s, underscoreValid));
  }

  private static boolean startsWithDigit(String s) {
    return !s.isEmpty() && s.charAt(0) >= '0' && s.charAt(0) <= '9';
  }

  static boolean onlyUnderscores(String s) {
    for (int i = 0; i < s.length(); i++) {
      if (s.charAt(i) != '_') {
        return false;
      }
    }
    return true;
  }
}
