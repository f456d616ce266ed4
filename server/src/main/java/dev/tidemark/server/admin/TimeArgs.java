package dev.tidemark.server.admin;

import dev.tidemark.server.text.ConfigValues;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.regex.Pattern;

/**
 * Times on the admin command line, as epoch milliseconds: RFC 3339 ({@code 2026-11-22T03:00:00Z},
 * {@code 2026-11-22T04:00:00.5+01:00}), a number of milliseconds ({@code 1700000000000}), {@code
 * now}, or relative to now ({@code -1h}, {@code now-30m}, {@code +5m}, {@code now+1d}; durations as
 * in the configuration: {@code 15d}, {@code 1h30m}, {@code 500ms}). Stateless; "now" is the instant
 * passed in.
 */
public final class TimeArgs {

  private static final Pattern MILLIS = Pattern.compile("-?\\d+");

  /** How times are printed: RFC 3339 in UTC with milliseconds. */
  private static final DateTimeFormatter PRINT =
      DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSS'Z'").withZone(ZoneOffset.UTC);

  private TimeArgs() {}

  /**
   * Parses {@code text} as above.
   *
   * @throws IllegalArgumentException saying what is accepted
   */
  public static long parse(String text, Instant now) {
    String s = text.strip();
    if (s.isEmpty()) {
      throw bad(text, null);
    }
    if (MILLIS.matcher(s).matches()) {
      try {
        return Long.parseLong(s);
      } catch (NumberFormatException e) {
        throw bad(text, "number out of range");
      }
    }
    String rel = s;
    if (rel.startsWith("now")) {
      rel = rel.substring(3).strip();
      if (rel.isEmpty()) {
        return now.toEpochMilli();
      }
    }
    if (rel.startsWith("-") || rel.startsWith("+")) {
      Duration d;
      try {
        d = ConfigValues.parseDuration(rel.substring(1));
      } catch (IllegalArgumentException e) {
        throw bad(text, e.getMessage());
      }
      try {
        long ms = d.toMillis();
        return rel.charAt(0) == '-'
            ? Math.subtractExact(now.toEpochMilli(), ms)
            : Math.addExact(now.toEpochMilli(), ms);
      } catch (ArithmeticException e) {
        throw bad(text, "out of range");
      }
    }
    try {
      return OffsetDateTime.parse(s, DateTimeFormatter.ISO_OFFSET_DATE_TIME)
          .toInstant()
          .toEpochMilli();
    } catch (DateTimeParseException | ArithmeticException e) {
      throw bad(text, null);
    }
  }

  /** {@code 2026-11-22T03:00:00.000Z}. */
  public static String format(long epochMillis) {
    return PRINT.format(Instant.ofEpochMilli(epochMillis));
  }

  private static IllegalArgumentException bad(String text, String why) {
    return new IllegalArgumentException(
        "invalid time '"
            + text
            + "'"
            + (why == null ? "" : " (" + why + ")")
            + ": expected RFC 3339 (2026-11-22T03:00:00Z), milliseconds since the epoch,"
            + " 'now', or relative to now (-1h, now-30m, +5m)");
  }
}
