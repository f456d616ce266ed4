package dev.tidemark.promql.parser;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import dev.tidemark.promql.engine.KnownFailures;
import dev.tidemark.promql.engine.PromqlConformanceRunner;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

/**
 * Every {@code eval} expression of the PromQL conformance scripts (the folder of {@link
 * PromqlConformanceRunner#defaultFolder()}, see {@code docs/promql-conformance.md}): each must
 * parse unless the script expects a failure, and print → parse → print must be a fixed point. An
 * eval that expects a failure with a message and does not parse must fail with that message.
 *
 * <p>The script language is Prometheus' {@code promql/promqltest/test.go}; the eval and expect line
 * patterns below are its {@code patEvalInstant}, {@code patEvalRange} and {@code patExpect}.
 *
 * <p>With the runner's options the parser accepts every experimental syntax that Prometheus 3.14
 * gates behind flags (duration expressions, {@code fill*} binop modifiers, {@code anchored}/{@code
 * smoothed}), so {@link #PARSER_GATED} is empty: an eval listed in {@link KnownFailures#RESOURCE}
 * under a category there may fail to parse with "… experimental and not enabled" and with no other
 * error, for a syntax the parser may lack in a later version of the scripts; every other eval must
 * parse.
 */
class ConformanceScriptsTest {

  private static final Pattern EVAL_INSTANT =
      Pattern.compile(
          "^eval(?:_(fail|warn|ordered|info))?\\s+instant\\s+(?:at\\s+(.+?))?\\s+(.+)$");
  private static final Pattern EVAL_RANGE =
      Pattern.compile(
          "^eval(?:_(fail|warn|info))?\\s+range\\s+from\\s+(.+)\\s+to\\s+(.+)\\s+step\\s+(.+?)\\s+(.+)$");
  private static final Pattern EXPECT =
      Pattern.compile(
          "^expect\\s+(ordered|fail|warn|no_warn|info|no_info)(?:\\s+(regex|msg):(.+))?$");

  /**
   * The number of evals the scripts hold: Prometheus 3.14's 16 files, 1,729 eval lines at the start
   * of a line and one indented ({@code start_timestamps.test:169}), which its runner trims.
   */
  private static final int EXPECTED_EVALS = 1730;

  private static final Set<KnownFailures.Category> PARSER_GATED =
      EnumSet.noneOf(KnownFailures.Category.class);

  private static final Pattern NOT_ENABLED = Pattern.compile("experimental and not enabled$");

  record Eval(
      String file,
      int line,
      String expr,
      boolean expectFail,
      String failMsg,
      String failRegex,
      boolean gated) {
    @Override
    public String toString() {
      return file + ":" + line + " " + expr;
    }
  }

  static Path scriptDir() {
    return PromqlConformanceRunner.defaultFolder();
  }

  static List<Eval> evals() throws IOException {
    Path dir = scriptDir();
    // A missing folder fails, it is not skipped: the build must not go green without the scripts.
    if (!Files.isDirectory(dir)) {
      throw new IllegalStateException("conformance scripts not found at " + dir);
    }
    List<Path> files;
    try (Stream<Path> s = Files.list(dir)) {
      files = s.filter(p -> p.toString().endsWith(".test")).sorted().toList();
    }
    Set<String> gated = new HashSet<>();
    if (System.getProperty(PromqlConformanceRunner.FOLDER_PROPERTY) == null) {
      KnownFailures.load()
          .forEach(
              (where, entry) -> {
                if (PARSER_GATED.contains(entry.category())) {
                  gated.add(where);
                }
              });
    }
    List<Eval> out = new ArrayList<>();
    for (Path f : files) {
      String[] lines = Files.readString(f, StandardCharsets.UTF_8).split("\n", -1);
      for (int i = 0; i < lines.length; i++) {
        String l = lines[i].trim();
        String first = l.split("\\s+", 2)[0].toLowerCase(java.util.Locale.ROOT);
        if (!first.startsWith("eval")) {
          continue;
        }
        Matcher m = EVAL_INSTANT.matcher(l);
        String modifier;
        String expr;
        if (m.matches()) {
          modifier = m.group(1);
          expr = m.group(3);
        } else {
          m = EVAL_RANGE.matcher(l);
          if (!m.matches()) {
            throw new AssertionError(f.getFileName() + ":" + (i + 1) + ": bad eval line: " + l);
          }
          modifier = m.group(1);
          expr = m.group(5);
        }
        boolean expectFail = "fail".equals(modifier);
        String msg = null;
        String regex = null;
        for (int j = i + 1; j < lines.length; j++) {
          String body = lines[j].trim();
          if (body.isEmpty() || body.startsWith("#")) {
            break;
          }
          Matcher e = EXPECT.matcher(body);
          if (e.matches() && e.group(1).equals("fail")) {
            expectFail = true;
            if ("msg".equals(e.group(2))) {
              msg = e.group(3).trim();
            } else if ("regex".equals(e.group(2))) {
              regex = e.group(3).trim();
            }
          }
        }
        String file = f.getFileName().toString();
        out.add(
            new Eval(
                file, i + 1, expr, expectFail, msg, regex, gated.contains(file + ":" + (i + 1))));
      }
    }
    return out;
  }

  @TestFactory
  Stream<DynamicTest> everyEvalParsesAndRoundTrips() throws IOException {
    return evals().stream().map(e -> DynamicTest.dynamicTest(e.toString(), () -> check(e)));
  }

  private static void check(Eval e) {
    Expr parsed;
    try {
      parsed = PromqlParser.parseExpr(e.expr(), PromqlConformanceRunner.PARSER_OPTIONS);
    } catch (ParseException ex) {
      if (!e.expectFail() && e.gated()) {
        assertThat(ex.getMessage()).as("parse error of gated %s", e).containsPattern(NOT_ENABLED);
        return;
      }
      if (!e.expectFail()) {
        fail("%s does not parse: %s", e, ex.getMessage());
      }
      if (e.failMsg() != null) {
        assertThat(ex.getMessage()).isEqualTo(e.failMsg());
      }
      if (e.failRegex() != null) {
        assertThat(Pattern.compile(e.failRegex()).matcher(ex.getMessage()).find()).isTrue();
      }
      return;
    }
    String printed = parsed.toString();
    Expr reparsed = PromqlParser.parseExpr(printed, PromqlConformanceRunner.PARSER_OPTIONS);
    assertThat(reparsed.toString()).as("print of parse of %s", printed).isEqualTo(printed);
    assertThat(reparsed.type()).isEqualTo(parsed.type());
  }

  @Test
  void countsEvalsThatParseAndRoundTrip() throws IOException {
    List<Eval> all = evals();
    int parsed = 0;
    int roundTripped = 0;
    int expectedFailures = 0;
    int gated = 0;
    List<String> problems = new ArrayList<>();
    for (Eval e : all) {
      try {
        Expr p = PromqlParser.parseExpr(e.expr(), PromqlConformanceRunner.PARSER_OPTIONS);
        parsed++;
        String s = p.toString();
        if (PromqlParser.parseExpr(s, PromqlConformanceRunner.PARSER_OPTIONS)
            .toString()
            .equals(s)) {
          roundTripped++;
        } else {
          problems.add(e + " does not round-trip");
        }
      } catch (ParseException ex) {
        if (e.expectFail()) {
          expectedFailures++;
        } else if (e.gated() && NOT_ENABLED.matcher(ex.getMessage()).find()) {
          gated++;
        } else {
          problems.add(e + ": " + ex.getMessage());
        }
      }
    }
    System.out.printf(
        "conformance evals: %d, parsed: %d, round-tripped: %d, parse failures expected by the"
            + " script: %d, experimental syntax not enabled: %d%n",
        all.size(), parsed, roundTripped, expectedFailures, gated);
    assertThat(problems).isEmpty();
    assertThat(all).hasSize(EXPECTED_EVALS);
    assertThat(parsed + expectedFailures + gated).isEqualTo(all.size());
  }
}
