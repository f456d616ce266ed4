package dev.tidemark.server;

import dev.tidemark.server.text.ConfigValues;
import dev.tidemark.tsdb.model.PromText;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.function.BiConsumer;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.stream.Collectors;

/**
 * One server setting, declared once in {@link Settings#ALL}: everything the command line, the YAML
 * file, the messages, {@code --help} and the README's settings table say about it comes from here.
 *
 * <ul>
 *   <li>{@link #name()}: the YAML key, and with {@code --} the long option ({@code retention},
 *       {@code --retention});
 *   <li>{@link #valueLabel()}: what {@code --help} shows after the option ({@code DURATION}), or
 *       null for a boolean, which is a negatable flag ({@code --[no-]fsync});
 *   <li>{@link #description()}: one line saying what the setting does, in Markdown (code spans in
 *       backquotes, {@code **bold**}), as the README shows it; {@code --help} drops the markup;
 *   <li>the default: a typed value (usually a {@code DEFAULT_*} constant of the config it ends up
 *       in) that the {@link ServerConfig.Builder} starts from, and the text users see for it
 *       ({@link #shownDefault()}), derived from the value unless the declaration says it in words;
 *   <li>the parser: how a raw value becomes the typed value, with its range checks and messages
 *       ({@link SettingValue});
 *   <li>where the value goes: the {@link ServerConfig.Builder} keeps it under this declaration (its
 *       typed setters and {@link ServerConfig.Builder#build()} read and write it there, so the
 *       builder declares no field of its own), unless the declaration names a target ({@link
 *       Draft#sets}): the translator's settings go straight into its own builder.
 * </ul>
 *
 * <p>Declarations read as one chain: {@code Setting.duration("retention",
 * EngineConfig.MIN_RETENTION, EngineConfig.MIN_RETENTION_TEXT)
 * .byDefault(EngineConfig.DEFAULT_RETENTION).describedAs("how long data is kept (at least `1h`)")}.
 * Immutable once {@link Draft#describedAs} has built it.
 *
 * @param <T> the parsed value's type
 */
final class Setting<T> {

  /** What {@link #shownDefault()} says when the default is empty (no token, no labels). */
  static final String NONE = "none";

  private final String name;
  private final String valueLabel;
  private final String description;
  private final Function<SettingValue, T> parser;
  private final Function<T, String> format;
  private final Supplier<T> defaultValue;
  private final boolean computedDefault;
  private final String shownDefault;
  private final BiConsumer<ServerConfig.Builder, T> target;
  private final boolean nullable;
  private final List<String> choices;
  private final boolean repeatable;

  private Setting(Draft<T> d, String description) {
    this.name = d.name;
    this.valueLabel = d.valueLabel;
    this.description = Objects.requireNonNull(description, "description");
    this.parser = d.parser;
    this.format = d.format;
    this.defaultValue = Objects.requireNonNull(d.defaultValue, name + ": no default");
    this.computedDefault = d.computedDefault;
    this.target = d.target != null ? d.target : (b, v) -> b.put(this, v);
    this.nullable = !d.computedDefault && d.defaultValue.get() == null;
    this.choices = d.choices;
    this.repeatable = d.repeatable;
    this.shownDefault = d.shownDefault != null ? d.shownDefault : derivedShownDefault();
    if (description.isBlank() || description.contains("\n") || description.contains("|")) {
      throw new IllegalArgumentException(name + ": the description must be one line without '|'");
    }
  }

  private String derivedShownDefault() {
    String literal = format.apply(defaultValue.get());
    return literal == null || literal.isEmpty() ? NONE : "`" + literal + "`";
  }

  /** The YAML key and, with {@code --}, the long option. */
  String name() {
    return name;
  }

  /**
   * The option as {@code --help} and the README write it: {@code --retention}, {@code
   * --[no-]fsync}.
   */
  String option() {
    return isFlag() ? "--[no-]" + name : "--" + name;
  }

  /** {@code --help}'s label for the value ({@code DURATION}), or null for a flag. */
  String valueLabel() {
    return valueLabel;
  }

  /**
   * A boolean: given as {@code --name} / {@code --no-name} on the command line, without a value.
   */
  boolean isFlag() {
    return valueLabel == null;
  }

  /** One line, Markdown: what the setting does. */
  String description() {
    return description;
  }

  /**
   * The default as users see it, Markdown: {@code `15d`}, {@code none}, or words for a computed
   * one.
   */
  String shownDefault() {
    return shownDefault;
  }

  /** The default's value; for a computed default, its value in this JVM. */
  T defaultValue() {
    return defaultValue.get();
  }

  /** Whether the value may be null: only a setting whose default is null ({@code admin-token}). */
  boolean nullable() {
    return nullable;
  }

  /** Whether the default depends on the machine (the heap size), so no literal can show it. */
  boolean hasComputedDefault() {
    return computedDefault;
  }

  /**
   * For a choice among an enumeration's constants, their names ({@code accumulate}, {@code
   * reject}); else empty.
   */
  List<String> choices() {
    return choices;
  }

  /**
   * Whether the option may be given more than once on the command line, each time adding to the
   * list ({@code --enable-feature=a,b --enable-feature=c}); its raw value is then a {@code List}.
   */
  boolean repeatable() {
    return repeatable;
  }

  /** The value as text: a list joined with {@code ,}, as {@code --help} shows a default. */
  String format(T value) {
    return format.apply(value);
  }

  /** Parses {@code raw} (from {@code source}) with this setting's parser and range checks. */
  T parse(Object raw, String source) {
    return parser.apply(new SettingValue(name, raw, source));
  }

  /**
   * Parses {@code raw} and hands the value to the builder.
   *
   * @throws ConfigException for a bad value, naming this setting, the value and {@code source}
   */
  void apply(ServerConfig.Builder builder, Object raw, String source) {
    target.accept(builder, parse(raw, source));
  }

  /** Hands the default to the builder: a new builder starts from every setting's default. */
  void applyDefault(ServerConfig.Builder builder) {
    target.accept(builder, defaultValue.get());
  }

  @Override
  public String toString() {
    return option();
  }

  /**
   * Removes the Markdown of {@link #description()} and {@link #shownDefault()}, for {@code --help}.
   */
  static String plain(String markdown) {
    return markdown.replace("**", "").replace("`", "");
  }

  // ---- the kinds of value a setting can take: each a parser, a format and a usual label ----

  static Draft<String> text(String name, String label) {
    return new Draft<>(name, label, SettingValue::text, v -> v);
  }

  /** A secret: messages never repeat the value ({@link SettingValue#token()}). */
  static Draft<String> token(String name, String label) {
    // a secret is never shown, not even as a default
    return new Draft<>(name, label, SettingValue::token, v -> v == null ? "" : "(set)");
  }

  static Draft<Path> path(String name, String label) {
    return new Draft<>(name, label, SettingValue::path, Path::toString);
  }

  static Draft<Integer> port(String name) {
    return new Draft<>(name, "PORT", SettingValue::port, String::valueOf);
  }

  static Draft<Integer> integer(String name, int min, int max) {
    return new Draft<>(name, "N", v -> v.integer(min, max), String::valueOf);
  }

  static Draft<Long> count(String name, long min, long max) {
    return new Draft<>(name, "N", v -> v.count(min, max), String::valueOf);
  }

  static Draft<Boolean> flag(String name) {
    return new Draft<>(name, null, SettingValue::bool, String::valueOf);
  }

  /** A duration of at least {@code min}; below it the message says "must be {@code minText}". */
  static Draft<Duration> duration(String name, Duration min, String minText) {
    return new Draft<>(name, "DURATION", v -> v.duration(min, minText), PromText::formatDuration);
  }

  /** A size in bytes, at least 1 B. */
  static Draft<Long> size(String name) {
    return new Draft<>(name, "SIZE", v -> v.size(1), ConfigValues::formatSize);
  }

  /** A size in bytes, {@code 0} allowed (it turns the thing off). */
  static Draft<Long> sizeOrZero(String name) {
    return new Draft<>(name, "SIZE", v -> v.size(0), ConfigValues::formatSize);
  }

  /** Durations, comma-separated on the command line, a YAML list in the file ({@code 1h,8h}). */
  static Draft<List<Duration>> durationList(String name, String label) {
    return new Draft<>(
        name,
        label,
        v -> v.durations(),
        l -> l.stream().map(PromText::formatDuration).collect(Collectors.joining(",")));
  }

  /**
   * One of an enumeration's constants, written in lower case with {@code -} ({@code
   * count-sum-only}).
   */
  static <E extends Enum<E>> Draft<E> choice(String name, String label, Class<E> type) {
    Draft<E> d = new Draft<>(name, label, v -> v.enumValue(type), Setting::choiceName);
    d.choices = Arrays.stream(type.getEnumConstants()).map(Setting::choiceName).toList();
    return d;
  }

  /** A list of names: comma-separated on the command line, a YAML list in the file. */
  static Draft<List<String>> nameList(String name, String label) {
    return new Draft<>(name, label, SettingValue::list, v -> String.join(",", v));
  }

  /**
   * Names, comma-separated, on a command line that may repeat the option (each adds to the list),
   * or a YAML list (or comma-separated text) in the file: {@code --enable-feature}.
   */
  static Draft<List<String>> repeatedNames(String name, String label) {
    Draft<List<String>> d =
        new Draft<>(name, label, SettingValue::repeatedList, v -> String.join(",", v));
    d.repeatable = true;
    return d;
  }

  /** {@code name=value} pairs: comma-separated on the command line, a YAML mapping in the file. */
  static Draft<Map<String, String>> labels(String name, String label) {
    return new Draft<>(
        name,
        label,
        SettingValue::map,
        v ->
            v.entrySet().stream()
                .map(e -> e.getKey() + "=" + e.getValue())
                .collect(Collectors.joining(",")));
  }

  /**
   * How settings write an enumeration constant: {@code COUNT_SUM_ONLY} as {@code count-sum-only}.
   */
  static String choiceName(Enum<?> e) {
    return e.name().toLowerCase(Locale.ROOT).replace('_', '-');
  }

  /**
   * A declaration under construction: the kind (parser, format, label) is fixed by the factory
   * method; then {@link #byDefault}, optionally {@link #shown} and {@link #label}, {@link #sets},
   * and last {@link #describedAs}, which builds the {@link Setting}.
   */
  static final class Draft<T> {
    private final String name;
    private String valueLabel;
    private final Function<SettingValue, T> parser;
    private final Function<T, String> format;
    private Supplier<T> defaultValue;
    private boolean computedDefault;
    private String shownDefault;
    private BiConsumer<ServerConfig.Builder, T> target;
    private List<String> choices = List.of();
    private boolean repeatable;

    private Draft(
        String name,
        String valueLabel,
        Function<SettingValue, T> parser,
        Function<T, String> format) {
      if (!name.matches("[a-z][a-z0-9]*(-[a-z0-9]+)*")) {
        throw new IllegalArgumentException(
            "setting names are lower case words joined by '-', was '" + name + "'");
      }
      this.name = name;
      this.valueLabel = valueLabel;
      this.parser = parser;
      this.format = format;
    }

    /** The value label {@code --help} shows ({@code ATTR,...}) instead of the kind's usual one. */
    Draft<T> label(String label) {
      if (valueLabel == null) {
        throw new IllegalStateException(name + ": a flag takes no value, so it has no label");
      }
      valueLabel = Objects.requireNonNull(label);
      return this;
    }

    /** The default; null only for a setting whose absence means something ({@code admin-token}). */
    Draft<T> byDefault(T value) {
      defaultValue = () -> value;
      return this;
    }

    /**
     * A default that depends on the machine, computed for each new builder. Needs {@link #shown}.
     */
    Draft<T> computedDefault(Supplier<T> value) {
      defaultValue = Objects.requireNonNull(value);
      computedDefault = true;
      return this;
    }

    /** The default as users should read it (Markdown), when the value's own text would not do. */
    Draft<T> shown(String markdown) {
      shownDefault = Objects.requireNonNull(markdown);
      return this;
    }

    /**
     * Where the parsed value goes instead of the {@link ServerConfig.Builder}'s own store: a setter
     * of the builder of the component that owns the setting (the translator's).
     */
    Draft<T> sets(BiConsumer<ServerConfig.Builder, T> setter) {
      target = Objects.requireNonNull(setter);
      return this;
    }

    /** Finishes the declaration with its one-line, Markdown description. */
    Setting<T> describedAs(String description) {
      if (computedDefault && shownDefault == null) {
        throw new IllegalStateException(name + ": a computed default must say in words what it is");
      }
      return new Setting<>(this, description);
    }
  }
}
