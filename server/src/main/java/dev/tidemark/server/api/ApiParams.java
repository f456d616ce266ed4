package dev.tidemark.server.api;

import dev.tidemark.promql.parser.ParseException;
import dev.tidemark.promql.parser.PromqlParser;
import dev.tidemark.tsdb.model.PromText;
import dev.tidemark.tsdb.query.LabelMatcher;
import java.time.OffsetDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.eclipse.jetty.util.Fields;

/**
 * A request's parameters (URL query and, for POST, the form body) and their parsing as Prometheus'
 * API parses them ({@code parseTime}, {@code parseDuration}, {@code parseLimitParam}, {@code
 * parseMatchersParam}), with its error messages. Immutable.
 */
final class ApiParams {

  /** Prometheus' {@code MinTime}: the start of an open time range, in Unix milliseconds. */
  static final long MIN_TIME = (Long.MIN_VALUE / 1000 + 62135596801L) * 1000;

  /** Prometheus' {@code MaxTime}: the end of an open time range, in Unix milliseconds. */
  static final long MAX_TIME = (Long.MAX_VALUE / 1000 - 62135596801L) * 1000 + 999;

  /** {@code MinTime.Format(time.RFC3339Nano)}, accepted as a time (Go cannot parse it). */
  static final String MIN_TIME_FORMATTED = "-292273086-05-16T16:47:06Z";

  /** {@code MaxTime.Format(time.RFC3339Nano)}. */
  static final String MAX_TIME_FORMATTED = "292277025-08-18T07:12:54.999999999Z";

  /** A float as Go's {@code ParseFloat} reads the forms clients send (no hex, Inf or NaN). */
  private static final Pattern DECIMAL =
      Pattern.compile("[+-]?(\\d+\\.?\\d*|\\.\\d+)([eE][+-]?\\d+)?");

  private static final Pattern PROM_DURATION =
      Pattern.compile(
          "(?:(\\d+)y)?(?:(\\d+)w)?(?:(\\d+)d)?(?:(\\d+)h)?(?:(\\d+)m)?(?:(\\d+)s)?(?:(\\d+)ms)?");

  private final Fields fields;

  ApiParams(Fields fields) {
    this.fields = fields;
  }

  /** The first value of {@code name}, or {@code ""} as Go's {@code FormValue}. */
  String get(String name) {
    Fields.Field f = fields.get(name);
    return f == null ? "" : f.getValue();
  }

  /** Every value of {@code name}, in order. */
  List<String> getAll(String name) {
    Fields.Field f = fields.get(name);
    return f == null ? List.of() : f.getValues();
  }

  /** {@code parseTimeParam}: {@code defaultMillis} when absent or empty. */
  long time(String name, long defaultMillis) {
    String v = get(name);
    if (v.isEmpty()) {
      return defaultMillis;
    }
    try {
      return parseTime(v);
    } catch (IllegalArgumentException e) {
      throw ApiError.invalidParam(name, "invalid time value for '" + name + "': " + e.getMessage());
    }
  }

  /** A required time ({@code start}, {@code end} of a range query). */
  long requiredTime(String name) {
    try {
      return parseTime(get(name));
    } catch (IllegalArgumentException e) {
      throw ApiError.invalidParam(name, e.getMessage());
    }
  }

  /** A duration in milliseconds ({@code step}, {@code timeout}); absent or empty is a bad value. */
  long durationMillis(String name) {
    try {
      return parseDurationMillis(get(name));
    } catch (IllegalArgumentException e) {
      throw ApiError.invalidParam(name, e.getMessage());
    }
  }

  /** {@code parseLimitParam}: 0 (no limit) when absent. */
  int limit() {
    String s = get("limit");
    if (s.isEmpty()) {
      return 0;
    }
    int limit;
    try {
      limit = Integer.parseInt(s);
    } catch (NumberFormatException e) {
      throw ApiError.invalidParam(
          "limit",
          "strconv.Atoi: parsing "
              + PromText.quote(s)
              + ": "
              + (s.matches("[+-]?\\d+") ? "value out of range" : "invalid syntax"));
    }
    if (limit < 0) {
      throw ApiError.invalidParam("limit", "limit must be non-negative");
    }
    return limit;
  }

  /**
   * The {@code match[]} selectors, each parsed by the PromQL parser and required to have a matcher
   * that does not match the empty string ({@code parseMatchersParam}).
   *
   * @throws ApiError bad_data with the parser's message
   */
  List<List<LabelMatcher>> matcherSets() {
    List<List<LabelMatcher>> sets = new ArrayList<>();
    for (String s : getAll("match[]")) {
      List<LabelMatcher> ms;
      try {
        ms = PromqlParser.parseMetricSelector(s);
      } catch (ParseException e) {
        throw ApiError.badData(e.getMessage());
      }
      boolean nonEmpty = false;
      for (LabelMatcher m : ms) {
        if (!m.matches("")) {
          nonEmpty = true;
          break;
        }
      }
      if (!nonEmpty) {
        throw ApiError.badData("match[] must contain at least one non-empty matcher");
      }
      sets.add(ms);
    }
    return sets;
  }

  /**
   * Prometheus' {@code parseTime}: Unix seconds with a fraction rounded to milliseconds, or RFC
   * 3339, or the formatted {@code MinTime}/{@code MaxTime}.
   *
   * @throws IllegalArgumentException {@code cannot parse "x" to a valid timestamp}
   */
  static long parseTime(String s) {
    if (DECIMAL.matcher(s).matches()) {
      double d = Double.parseDouble(s);
      if (d * 1000 >= MIN_TIME && d * 1000 <= MAX_TIME) {
        // As Go: whole seconds, then the fraction rounded to milliseconds.
        double whole = d < 0 ? Math.ceil(d) : Math.floor(d);
        return (long) whole * 1000 + Math.round((d - whole) * 1000);
      }
    }
    if (s.equals(MIN_TIME_FORMATTED)) {
      return MIN_TIME;
    }
    if (s.equals(MAX_TIME_FORMATTED)) {
      return MAX_TIME;
    }
    try {
      OffsetDateTime t = OffsetDateTime.parse(s, DateTimeFormatter.ISO_OFFSET_DATE_TIME);
      if (s.indexOf('T') == 10) {
        return t.toInstant().toEpochMilli();
      }
    } catch (DateTimeParseException | ArithmeticException e) {
      // fall through
    }
    throw new IllegalArgumentException(
        "cannot parse " + PromText.quote(s) + " to a valid timestamp");
  }

  /**
   * Prometheus' {@code parseDuration}: seconds as a float, or a Prometheus duration ({@code 5m},
   * {@code 1h30m}), truncated to milliseconds.
   *
   * @throws IllegalArgumentException {@code cannot parse "x" to a valid duration}
   */
  static long parseDurationMillis(String s) {
    if (DECIMAL.matcher(s).matches()) {
      double seconds = Double.parseDouble(s);
      double nanos = seconds * 1e9;
      if (nanos > Long.MAX_VALUE || nanos < Long.MIN_VALUE) {
        throw new IllegalArgumentException(
            "cannot parse " + PromText.quote(s) + " to a valid duration. It overflows int64");
      }
      return (long) nanos / 1_000_000;
    }
    Matcher m = PROM_DURATION.matcher(s);
    if (!s.isEmpty() && !s.equals("0") && m.matches()) {
      long[] unit = {
        365L * 24 * 3600_000, 7L * 24 * 3600_000, 24L * 3600_000, 3600_000L, 60_000L, 1000L, 1L
      };
      long total = 0;
      boolean any = false;
      try {
        for (int g = 1; g <= 7; g++) {
          String v = m.group(g);
          if (v != null) {
            any = true;
            total = Math.addExact(total, Math.multiplyExact(Long.parseLong(v), unit[g - 1]));
          }
        }
      } catch (ArithmeticException | NumberFormatException e) {
        throw new IllegalArgumentException(
            "cannot parse " + PromText.quote(s) + " to a valid duration");
      }
      if (any) {
        return total;
      }
    }
    if (s.equals("0")) {
      return 0;
    }
    throw new IllegalArgumentException(
        "cannot parse " + PromText.quote(s) + " to a valid duration");
  }
}
