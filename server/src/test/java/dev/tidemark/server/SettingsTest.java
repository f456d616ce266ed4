package dev.tidemark.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.tidemark.server.api.QueryConfig;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * The declarations of {@link Settings#ALL} against what users read: the README's settings table,
 * {@code --help}, and the defaults the server really starts from.
 */
class SettingsTest {

  /** The header of the README's settings table, in section "Configuration". */
  static final String README_TABLE_HEADER = "| option | default | what it sets |";

  /** A Markdown code span: {@code `15d`}. */
  private static final Pattern CODE_SPAN = Pattern.compile("`([^`]*)`");

  /**
   * The README's table has one row per declared setting, in the declared order, each saying exactly
   * the declaration's option, shown default and description. On a mismatch the message holds the
   * table to paste.
   */
  @Test
  void readmeTableIsTheDeclaredSettings() throws IOException {
    List<String> expected = Settings.ALL.stream().map(SettingsTest::readmeRow).toList();
    List<String> actual = readmeTableRows(Files.readAllLines(readme()));
    assertThat(actual)
        .as(
            "the settings table of README.md (section Configuration) must list exactly the settings"
                + " of Settings.ALL, in that order; the table to paste:%n%s%n%s%n%s%n",
            README_TABLE_HEADER, "|---|---|---|", String.join("\n", expected))
        .containsExactlyElementsOf(expected);
  }

  /**
   * A row as the README writes it: {@code | `--retention` | `15d` | how long data is kept ... |}.
   */
  static String readmeRow(Setting<?> s) {
    return "| `" + s.option() + "` | " + s.shownDefault() + " | " + s.description() + " |";
  }

  /** The rows of the settings table (not the header nor the separator), as written. */
  static List<String> readmeTableRows(List<String> readme) {
    int header = readme.indexOf(README_TABLE_HEADER);
    assertThat(header).as("README.md has a line '%s'", README_TABLE_HEADER).isNotNegative();
    assertThat(readme.get(header + 1)).matches("\\|(-+\\|){3}");
    List<String> rows = new ArrayList<>();
    for (int i = header + 2; i < readme.size() && readme.get(i).startsWith("|"); i++) {
      rows.add(readme.get(i).strip());
    }
    return rows;
  }

  @Test
  void readmeTableParserReadsRowsUntilTheTableEnds() {
    List<String> text =
        List.of(
            "intro",
            README_TABLE_HEADER,
            "|---|---|---|",
            "| `--a` | `1` | first |",
            "| `--[no-]b` | `false` | second |",
            "",
            "| other | table |");
    assertThat(readmeTableRows(text))
        .containsExactly("| `--a` | `1` | first |", "| `--[no-]b` | `false` | second |");
  }

  /** README.md of the repository: the test runs in the module's folder, so look upwards. */
  private static Path readme() {
    for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
      if (Files.isRegularFile(dir.resolve("README.md"))
          && Files.isDirectory(dir.resolve("server"))) {
        return dir.resolve("README.md");
      }
    }
    throw new AssertionError("no README.md above " + Path.of("").toAbsolutePath());
  }

  @Test
  void helpListsEverySettingWithItsLabelDescriptionAndDefault() {
    for (String[] command : List.of(new String[] {"--help"}, new String[] {"serve", "--help"})) {
      StringWriter out = new StringWriter();
      assertThat(Main.run(new PrintWriter(out), new PrintWriter(new StringWriter()), command))
          .isZero();
      String help = out.toString();
      // picocli wraps long descriptions: compare with every run of white space made one space
      String flat = help.replaceAll("\\s+", " ");
      List<Integer> positions = new ArrayList<>();
      for (Setting<?> s : Settings.ALL) {
        String option = s.isFlag() ? s.option() : s.option() + "=" + s.valueLabel();
        assertThat(flat).as(String.join(" ", command)).contains(" " + option + " ");
        assertThat(flat).contains(Main.ServeOptions.helpText(s).replace("%%", "%"));
        assertThat(flat).containsIgnoringCase(Setting.plain(s.description()));
        assertThat(flat).contains("Default: " + Setting.plain(s.shownDefault()));
        positions.add(flat.indexOf(" " + option + " "));
      }
      assertThat(positions).as("declared order").isSorted();
      assertThat(help).contains("--config=FILE", "--listen-all", "--version");
    }
  }

  /**
   * What the README and {@code --help} show as a default is what the server starts from: the code
   * span of the shown default parses (with the setting's own parser) to the default value, and a
   * default shown without a code span ({@code none}) is an empty one.
   */
  @Test
  void shownDefaultsAreTheRealDefaults() {
    for (Setting<?> s : Settings.ALL) {
      Matcher literal = CODE_SPAN.matcher(s.shownDefault());
      Object value = s.defaultValue();
      if (s.hasComputedDefault()) {
        assertThat(literal.find()).as(s + ": a computed default is explained in words").isTrue();
        continue;
      }
      if (!s.shownDefault().startsWith(Setting.NONE)) {
        assertThat(literal.matches())
            .as(s + ": a literal default is shown alone, was " + s.shownDefault())
            .isTrue();
        assertThat(comparable(s.parse(literal.group(1), "test")))
            .as(s.name())
            .isEqualTo(comparable(value));
      } else {
        assertThat(
                value == null
                    || "".equals(value)
                    || value instanceof Collection<?> c && c.isEmpty()
                    || value instanceof Map<?, ?> m && m.isEmpty())
            .as(s + ": shown as none, default " + value)
            .isTrue();
      }
    }
  }

  /** Values as the config compares them: {@code ./data} is the folder {@code data}. */
  private static Object comparable(Object value) {
    return value instanceof Path p ? p.normalize() : value;
  }

  /**
   * Setting every shown literal default through the file/command-line path gives the config a new
   * builder starts from; and the query API's defaults are {@link QueryConfig#DEFAULTS}.
   */
  @Test
  void shownDefaultsGivenAsSettingsChangeNothing() {
    ServerConfig.Builder b = ServerConfig.builder();
    for (Setting<?> s : Settings.ALL) {
      Matcher literal = CODE_SPAN.matcher(s.shownDefault());
      if (!s.hasComputedDefault() && literal.matches()) {
        // ./data is shown for the folder data, which the config keeps as given
        b.set(
            s.name(), s.defaultValue() instanceof Path p ? p.toString() : literal.group(1), "test");
      }
    }
    assertThat(b.build().toString()).isEqualTo(ServerConfig.defaults().toString());
    assertThat(ServerConfig.defaults().queryConfig()).isEqualTo(QueryConfig.DEFAULTS);
  }

  /** Every constant of a choice's enumeration is named in its description or default. */
  @Test
  void descriptionsNameEveryChoice() {
    for (Setting<?> s : Settings.ALL) {
      String text = squash(s.description() + " " + s.shownDefault());
      for (String choice : s.choices()) {
        assertThat(text).as(s + " names " + choice).contains(squash(choice));
      }
    }
  }

  private static String squash(String s) {
    return s.replaceAll("[-_]", "").toLowerCase(Locale.ROOT);
  }

  @Test
  void namesAreUniqueAndValuesLabelled() {
    List<String> names = Settings.names();
    assertThat(names).doesNotHaveDuplicates().isEqualTo(ServerConfig.settingNames());
    assertThat(names).doesNotContain("config", "listen-all"); // command-line only, not settings
    assertThat(
            Settings.ALL.stream()
                .filter(s -> !s.isFlag())
                .map(Setting::valueLabel)
                .collect(Collectors.toList()))
        .allMatch(l -> l.matches("[A-Z][A-Z=,.]*"));
  }
}
