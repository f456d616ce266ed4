package dev.tidemark.server.text;

import java.time.Duration;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Parsers for the human-written values of the configuration: durations ({@code 15d}, {@code 30m},
 * {@code 1h30m}, {@code 500ms}) and sizes ({@code 4MiB}, {@code 512MB}, {@code 1073741824}). Each
 * returns the value or throws {@link IllegalArgumentException} saying what was expected; the caller
 * adds the setting's name and the value. Stateless.
 *
 * <p>The server's settings, the admin command line ({@code --timeout}, relative times) and the
 * admin API ({@code set-retention}) all write durations this way; this package sits below both
 * {@code dev.tidemark.server} and {@code dev.tidemark.server.admin} so that neither depends on the
 * other for it.
 */
public final class ConfigValues {

  /** Prometheus' duration units: one or more {@code <integer><unit>} terms, largest unit first. */
  private static final Pattern DURATION_TERM = Pattern.compile("(\\d+)(ms|y|w|d|h|m|s)");

  private static final Pattern SIZE =
      Pattern.compile("(\\d+(?:\\.\\d+)?)\\s*([a-z]*)", Pattern.CASE_INSENSITIVE);

  public static final String DURATION_HELP = "a duration such as 15d, 30m, 10s, 1h30m or 500ms";
  public static final String SIZE_HELP =
      "a size such as 4MiB, 512MB, 2GiB or a number of bytes (KB, MB, GB, TB are powers of 1000;"
          + " KiB, MiB, GiB, TiB powers of 1024)";

  private ConfigValues() {}

  /**
   * Parses a duration written as Prometheus writes them: {@code y} (365 days), {@code w}, {@code
   * d}, {@code h}, {@code m}, {@code s}, {@code ms}, combinable from the largest unit down ({@code
   * 1h30m}). A bare {@code 0} is zero.
   */
  public static Duration parseDuration(String text) {
    String s = text.strip();
    if (s.equals("0")) {
      return Duration.ZERO;
    }
    Matcher m = DURATION_TERM.matcher(s);
    int pos = 0;
    int lastRank = Integer.MAX_VALUE;
    Duration total = Duration.ZERO;
    while (pos < s.length()) {
      if (!m.find(pos) || m.start() != pos) {
        throw new IllegalArgumentException("expected " + DURATION_HELP);
      }
      String unit = m.group(2);
      int rank = rank(unit);
      if (rank >= lastRank) {
        throw new IllegalArgumentException(
            "expected " + DURATION_HELP + " (units largest first, each once)");
      }
      lastRank = rank;
      long n;
      try {
        n = Long.parseLong(m.group(1));
        total = total.plus(unitDuration(unit).multipliedBy(n));
      } catch (ArithmeticException | NumberFormatException e) {
        throw new IllegalArgumentException("duration is too large");
      }
      pos = m.end();
    }
    if (pos == 0) {
      throw new IllegalArgumentException("expected " + DURATION_HELP);
    }
    return total;
  }

  private static int rank(String unit) {
    switch (unit) {
      case "y":
        return 6;
      case "w":
        return 5;
      case "d":
        return 4;
      case "h":
        return 3;
      case "m":
        return 2;
      case "s":
        return 1;
      default:
        return 0; // ms
    }
  }

  private static Duration unitDuration(String unit) {
    switch (unit) {
      case "y":
        return Duration.ofDays(365);
      case "w":
        return Duration.ofDays(7);
      case "d":
        return Duration.ofDays(1);
      case "h":
        return Duration.ofHours(1);
      case "m":
        return Duration.ofMinutes(1);
      case "s":
        return Duration.ofSeconds(1);
      default:
        return Duration.ofMillis(1);
    }
  }

  /**
   * Parses a size in bytes: a number with an optional unit, case-insensitive: {@code B}, {@code
   * KB}/{@code MB}/{@code GB}/{@code TB} (powers of 1000), {@code KiB}/{@code MiB}/{@code
   * GiB}/{@code TiB} (powers of 1024). A fraction is allowed with a unit ({@code 1.5GiB}); the
   * result must be a whole number of bytes.
   */
  public static long parseSize(String text) {
    Matcher m = SIZE.matcher(text.strip());
    if (!m.matches()) {
      throw new IllegalArgumentException("expected " + SIZE_HELP);
    }
    long multiplier;
    switch (m.group(2).toLowerCase(Locale.ROOT)) {
      case "":
      case "b":
        multiplier = 1;
        break;
      case "kb":
        multiplier = 1_000L;
        break;
      case "mb":
        multiplier = 1_000_000L;
        break;
      case "gb":
        multiplier = 1_000_000_000L;
        break;
      case "tb":
        multiplier = 1_000_000_000_000L;
        break;
      case "kib":
        multiplier = 1L << 10;
        break;
      case "mib":
        multiplier = 1L << 20;
        break;
      case "gib":
        multiplier = 1L << 30;
        break;
      case "tib":
        multiplier = 1L << 40;
        break;
      default:
        throw new IllegalArgumentException(
            "unknown unit '" + m.group(2) + "': expected " + SIZE_HELP);
    }
    java.math.BigDecimal bytes =
        new java.math.BigDecimal(m.group(1)).multiply(java.math.BigDecimal.valueOf(multiplier));
    try {
      return bytes.longValueExact();
    } catch (ArithmeticException e) {
      throw new IllegalArgumentException(
          bytes.signum() != 0 && bytes.stripTrailingZeros().scale() > 0
              ? "not a whole number of bytes"
              : "size is too large");
    }
  }

  /** Formats a size with the largest binary unit that divides it: {@code 4MiB}, {@code 1000B}. */
  public static String formatSize(long bytes) {
    String[] units = {"TiB", "GiB", "MiB", "KiB"};
    int[] shifts = {40, 30, 20, 10};
    for (int i = 0; i < units.length; i++) {
      long unit = 1L << shifts[i];
      if (bytes != 0 && bytes % unit == 0) {
        return (bytes / unit) + units[i];
      }
    }
    return bytes + "B";
  }
}
