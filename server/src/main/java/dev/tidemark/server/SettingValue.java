package dev.tidemark.server;

import dev.tidemark.server.text.ConfigValues;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * One raw value of one setting, as a YAML file or the command line gave it (text, or a {@code List}
 * or {@code Map} from YAML), with the parsers the declarations in {@link Settings} choose from.
 * Every parser either returns the value or throws {@link ConfigException} naming the setting, the
 * value and where it came from: {@code invalid retention '30m' (--retention): must be at least 1h}.
 */
final class SettingValue {
  private final String name;
  private final Object value;
  private final String source;

  /**
   * @param name the setting's name
   * @param value text, a number or a boolean (YAML scalars), a {@code List} or a {@code Map}
   * @param source where the value came from, for messages: {@code --retention}, a file name
   */
  SettingValue(String name, Object value, String source) {
    this.name = name;
    this.value = value;
    this.source = source;
  }

  private ConfigException bad(String expected) {
    String shown =
        value instanceof List || value instanceof Map ? String.valueOf(value) : text(value);
    return new ConfigException(
        "invalid " + name + " '" + shown + "' (" + source + "): " + expected);
  }

  private static String text(Object v) {
    return v == null ? "" : String.valueOf(v);
  }

  String text() {
    if (value instanceof List || value instanceof Map) {
      throw bad("expected a single value");
    }
    return text(value);
  }

  /** A secret: messages never show the value. */
  String token() {
    if (value instanceof List || value instanceof Map) {
      throw new ConfigException("invalid " + name + " (" + source + "): expected a single value");
    }
    String t = text(value);
    String why = ServerConfig.Builder.tokenProblem(t);
    if (why != null) {
      throw new ConfigException("invalid " + name + " (" + source + "): " + why);
    }
    return t;
  }

  Path path() {
    String t = text().strip();
    if (t.isEmpty()) {
      throw bad("expected a folder path");
    }
    try {
      return Path.of(t);
    } catch (java.nio.file.InvalidPathException e) {
      throw bad("not a valid path: " + e.getReason());
    }
  }

  int port() {
    int p;
    try {
      p = Integer.parseInt(text().strip());
    } catch (NumberFormatException e) {
      throw bad("expected a port number between 0 and 65535");
    }
    if (p < 0 || p > 65535) {
      throw bad("expected a port number between 0 and 65535");
    }
    return p;
  }

  int integer(int min, int max) {
    int v;
    try {
      v = Integer.parseInt(text().strip());
    } catch (NumberFormatException e) {
      throw bad("expected an integer between " + min + " and " + max);
    }
    if (v < min || v > max) {
      throw bad("expected an integer between " + min + " and " + max);
    }
    return v;
  }

  long count(long min, long max) {
    long v;
    try {
      v = Long.parseLong(text().strip());
    } catch (NumberFormatException e) {
      throw bad("expected an integer between " + min + " and " + max);
    }
    if (v < min || v > max) {
      throw bad("expected an integer between " + min + " and " + max);
    }
    return v;
  }

  boolean bool() {
    String t = text().strip().toLowerCase(Locale.ROOT);
    if (t.equals("true")) {
      return true;
    }
    if (t.equals("false")) {
      return false;
    }
    throw bad("expected true or false");
  }

  Duration duration(Duration min, String minText) {
    Duration d;
    try {
      d = ConfigValues.parseDuration(text());
    } catch (IllegalArgumentException e) {
      throw bad(e.getMessage());
    }
    if (d.compareTo(min) < 0) {
      throw bad("must be " + minText);
    }
    return d;
  }

  long size(long min) {
    long v;
    try {
      v = ConfigValues.parseSize(text());
    } catch (IllegalArgumentException e) {
      throw bad(e.getMessage());
    }
    if (v < min) {
      throw bad("must be at least " + min + "B");
    }
    return v;
  }

  <E extends Enum<E>> E enumValue(Class<E> type) {
    String wanted = normalize(text());
    for (E e : type.getEnumConstants()) {
      if (normalize(e.name()).equals(wanted)) {
        return e;
      }
    }
    throw bad(
        "expected one of "
            + Arrays.stream(type.getEnumConstants())
                .map(e -> e.name().toLowerCase(Locale.ROOT).replace('_', '-'))
                .collect(Collectors.joining(", ")));
  }

  private static String normalize(String s) {
    return s.strip().replace("-", "").replace("_", "").toLowerCase(Locale.ROOT);
  }

  /** A list of durations ({@code 1h,8h} or a YAML list). */
  List<java.time.Duration> durations() {
    List<java.time.Duration> out = new ArrayList<>();
    for (String part : list()) {
      try {
        out.add(ConfigValues.parseDuration(part));
      } catch (IllegalArgumentException e) {
        throw bad(e.getMessage());
      }
    }
    return out;
  }

  List<String> list() {
    List<String> out = new ArrayList<>();
    if (value instanceof List) {
      for (Object o : (List<?>) value) {
        if (o instanceof List || o instanceof Map) {
          throw bad("expected a list of names");
        }
        out.add(text(o).strip());
      }
    } else {
      String t = text().strip();
      if (!t.isEmpty()) {
        for (String part : t.split(",", -1)) {
          out.add(part.strip());
        }
      }
    }
    return out;
  }

  /**
   * Names from a list whose items may each be comma-separated ({@code [a,b, c]}: a repeated option
   * or a YAML list), or from comma-separated text; empty items are dropped.
   */
  List<String> repeatedList() {
    List<String> out = new ArrayList<>();
    List<?> items = value instanceof List<?> l ? l : List.of(text());
    for (Object o : items) {
      if (o instanceof List || o instanceof Map) {
        throw bad("expected a list of names");
      }
      for (String part : text(o).split(",", -1)) {
        if (!part.isBlank()) {
          out.add(part.strip());
        }
      }
    }
    return out;
  }

  Map<String, String> map() {
    Map<String, String> out = new LinkedHashMap<>();
    if (value instanceof Map) {
      for (Map.Entry<?, ?> e : ((Map<?, ?>) value).entrySet()) {
        if (e.getValue() instanceof List || e.getValue() instanceof Map) {
          throw bad("expected label names mapped to string values");
        }
        out.put(text(e.getKey()), text(e.getValue()));
      }
      return out;
    }
    String t = text().strip();
    if (t.isEmpty()) {
      return out;
    }
    for (String pair : t.split(",", -1)) {
      int eq = pair.indexOf('=');
      if (eq <= 0) {
        throw bad("expected name=value pairs separated by commas");
      }
      out.put(pair.substring(0, eq).strip(), pair.substring(eq + 1).strip());
    }
    return out;
  }
}
