package dev.tidemark.promql.engine;

import dev.tidemark.promql.parser.AggregateExpr;
import dev.tidemark.promql.parser.AtModifier;
import dev.tidemark.promql.parser.BinaryExpr;
import dev.tidemark.promql.parser.Call;
import dev.tidemark.promql.parser.Expr;
import dev.tidemark.promql.parser.MatrixSelector;
import dev.tidemark.promql.parser.ParenExpr;
import dev.tidemark.promql.parser.ParserOptions;
import dev.tidemark.promql.parser.PromqlParser;
import dev.tidemark.promql.parser.SubqueryExpr;
import dev.tidemark.promql.parser.UnaryExpr;
import dev.tidemark.promql.parser.VectorSelector;
import dev.tidemark.tsdb.append.AppendResult;
import dev.tidemark.tsdb.append.SampleBatch;
import dev.tidemark.tsdb.engine.Engine;
import dev.tidemark.tsdb.engine.EngineConfig;
import dev.tidemark.tsdb.kv.InMemoryKvStore;
import dev.tidemark.tsdb.model.Labels;
import dev.tidemark.tsdb.model.MetricMetadata;
import dev.tidemark.tsdb.time.ManualClock;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Runs Prometheus' PromQL test-script language ({@code promql/promqltest/test.go}; the language and
 * the runner's extra checks are in {@code docs/promql-conformance.md}) against Tidemark: each
 * {@code load} block is written through the real {@link Engine} (an in-memory store per {@code
 * clear} segment), each {@code eval} goes through {@link PromqlEngine} over the engine's {@code
 * Querier}. Like the reference runner it reruns every instant eval as a range query around its time
 * and with {@code @} pinned to each selector at several other evaluation times.
 *
 * <p>{@code main} takes an optional folder (default: system property {@code
 * tidemark.promql.conformance}, else {@code src/test/resources/conformance/promql} from the working
 * directory, the module folder) and exits 1 when an eval fails.
 */
public final class PromqlConformanceRunner {

  static final Pattern EVAL_INSTANT =
      Pattern.compile(
          "^eval(?:_(fail|warn|ordered|info))?\\s+instant\\s+(?:at\\s+(.+?))?\\s+(.+)$");
  static final Pattern EVAL_RANGE =
      Pattern.compile(
          "^eval(?:_(fail|warn|info))?\\s+range\\s+from\\s+(.+)\\s+to\\s+(.+)\\s+step\\s+(.+?)\\s+(.+)$");
  static final Pattern EXPECT =
      Pattern.compile(
          "^expect\\s+(ordered|fail|warn|no_warn|info|no_info)(?:\\s+(regex|msg):\\s?(.+))?$");
  static final Pattern EXPECT_RANGE_VECTOR =
      Pattern.compile(
          "^expect\\s+range\\s+vector\\s+from\\s+(\\S+)\\s+to\\s+(\\S+)\\s+step\\s+(\\S+)$");
  static final Pattern EXPECT_STRING =
      Pattern.compile("^expect\\s+string\\s+(\"(?:[^\"\\\\]|\\\\.)*\"|`[^`]*`)$");
  static final Pattern CONTEXT_FUNCS = Pattern.compile("(start|end|range|step)\\(\\)");
  static final Set<String> AT_UNSAFE =
      Set.of(
          "days_in_month",
          "day_of_month",
          "day_of_week",
          "day_of_year",
          "hour",
          "minute",
          "month",
          "year",
          "predict_linear",
          "time",
          "timestamp",
          "start_timestamp",
          "start",
          "end",
          "range",
          "step");

  /** The system property naming another folder of scripts. */
  public static final String FOLDER_PROPERTY = "tidemark.promql.conformance";

  /** The system property that makes the report list passed and set-apart evals too. */
  public static final String VERBOSE_PROPERTY = "tidemark.promql.conformance.verbose";

  /** What became of one eval. */
  public enum Status {
    /** Evaluated through the engine; every check passed. */
    PASSED,
    /** Evaluated through the engine (or not parseable as a script command); a check failed. */
    FAILED,
    /**
     * Not evaluated: its data or its expected result holds a native-histogram sample, which the
     * engine does not store yet (issue #25).
     */
    NATIVE_HISTOGRAMS
  }

  /**
   * The outcome of one eval.
   *
   * @param line the 1-based line of the {@code eval} command
   * @param detail for FAILED the runner's diagnostic, for NATIVE_HISTOGRAMS which histogram data it
   *     involves, for PASSED empty
   */
  public record EvalResult(String file, int line, String expr, Status status, String detail) {
    /** {@code file:line}, the key of the known-failures list. */
    public String where() {
      return file + ":" + line;
    }

    @Override
    public String toString() {
      return where() + " " + expr + (detail.isEmpty() ? "" : ": " + detail);
    }
  }

  /** The outcomes of one file's evals, in file order. */
  public record FileResult(String file, List<EvalResult> evals) {
    public long count(Status s) {
      return evals.stream().filter(e -> e.status() == s).count();
    }

    public List<EvalResult> failures() {
      return evals.stream().filter(e -> e.status() == Status.FAILED).toList();
    }
  }

  /**
   * The parser features the scripts assume (Prometheus' test engine turns every feature flag on),
   * as far as this parser has them.
   */
  public static final ParserOptions PARSER_OPTIONS = ParserOptions.TEST_ENGINE;

  /**
   * The engine settings of Prometheus' test engine ({@code promqltest.NewTestEngine}): 5m lookback,
   * 10,000 samples, 100 s timeout, 1m subquery step and delayed name removal, which the scripts'
   * expectations assume (the server runs without it unless the feature is enabled).
   */
  private final PromqlEngine promql =
      new PromqlEngine(
          new EngineOptions(
                  Duration.ofMinutes(5), 10_000, Duration.ofSeconds(100), Duration.ofMinutes(1))
              .withDelayedNameRemoval(true),
          PARSER_OPTIONS);

  public static Path defaultFolder() {
    String p = System.getProperty(FOLDER_PROPERTY);
    if (p != null && !p.isBlank()) {
      return Path.of(p);
    }
    return Path.of(System.getProperty("user.dir"))
        .resolve("src/test/resources/conformance/promql")
        .normalize();
  }

  public List<FileResult> runFolder(Path dir) throws IOException {
    List<Path> files;
    try (Stream<Path> s = Files.list(dir)) {
      files = s.filter(p -> p.toString().endsWith(".test")).sorted().toList();
    }
    List<FileResult> out = new ArrayList<>();
    for (Path f : files) {
      out.add(runFile(f));
    }
    return out;
  }

  // ------------------------------------------------------------------ the script

  static final class EvalCmd {
    int line;
    String expr;
    boolean range;
    long start;
    long end;
    long step;
    boolean fail;
    String failMsg;
    String failRegex;
    boolean ordered;
    Boolean warn; // true: expect warn, false: expect no_warn
    Boolean info;
    List<String[]> warnMsgs = new ArrayList<>();
    List<String[]> infoMsgs = new ArrayList<>();
    boolean expectScalar;
    double scalar;
    String expectString;
    boolean rangeVector;
    long rvStart;
    long rvEnd;
    long rvStep;
    final Map<Labels, List<Object>> expected = new LinkedHashMap<>(); // null: omitted
    final Map<Labels, Integer> position = new HashMap<>();
  }

  FileResult runFile(Path file) throws IOException {
    String[] raw = Files.readString(file, StandardCharsets.UTF_8).split("\n", -1);
    String[] lines = new String[raw.length];
    for (int i = 0; i < raw.length; i++) {
      String t = raw[i].trim();
      lines[i] = t.startsWith("#") ? "" : t;
    }
    List<EvalResult> evals = new ArrayList<>();
    Store store = new Store();
    String name = file.getFileName().toString();
    try {
      for (int i = 0; i < lines.length; i++) {
        String l = lines[i];
        if (l.isEmpty()) {
          continue;
        }
        String first = l.split("\\s+", 2)[0].toLowerCase(Locale.ROOT);
        int j = i + 1;
        List<String> body = new ArrayList<>();
        while (j < lines.length && !lines[j].isEmpty()) {
          body.add(lines[j]);
          j++;
        }
        if (first.equals("clear")) {
          store.close();
          store = new Store();
          j = i + 1;
        } else if (first.equals("load") || first.equals("load_with_nhcb")) {
          String[] parts = l.split("\\s+");
          if (parts.length != 2) {
            throw new IllegalArgumentException(
                name + ":" + (i + 1) + ": invalid load command: " + l);
          }
          LoadBlock block;
          try {
            block = LoadBlock.parse(body, parseDuration(parts[1]), first.equals("load_with_nhcb"));
          } catch (RuntimeException e) {
            throw new IllegalArgumentException(name + ":" + (i + 1) + ": " + e.getMessage(), e);
          }
          store.load(block);
        } else if (first.startsWith("eval")) {
          evals.add(runEval(name, i + 1, l, body, store));
        } else {
          throw new IllegalArgumentException(name + ":" + (i + 1) + ": unknown command " + l);
        }
        i = j - 1;
      }
    } finally {
      store.close();
    }
    return new FileResult(name, evals);
  }

  private EvalResult runEval(String file, int line, String l, List<String> body, Store store) {
    EvalCmd cmd;
    try {
      cmd = parseEval(l, body, line);
    } catch (RuntimeException e) {
      return new EvalResult(file, line, l, Status.FAILED, "cannot read the eval: " + e);
    }
    String histograms = histogramInvolvement(cmd, store);
    if (histograms != null) {
      return new EvalResult(file, line, cmd.expr, Status.NATIVE_HISTOGRAMS, histograms);
    }
    String err;
    try {
      err = run(cmd, store);
    } catch (RuntimeException e) {
      err = e.toString();
    }
    return err == null
        ? new EvalResult(file, line, cmd.expr, Status.PASSED, "")
        : new EvalResult(file, line, cmd.expr, Status.FAILED, err);
  }

  /**
   * Why this eval involves native histograms, or null when it does not: an expected result holds a
   * histogram, or a selector of the expression can select a series with histogram samples loaded
   * (those of {@code load_with_nhcb} included). An expression the parser cannot read is judged by
   * its text: it involves histograms when it names a histogram series' metric.
   */
  static String histogramInvolvement(EvalCmd c, Store store) {
    for (Map.Entry<Labels, List<Object>> e : c.expected.entrySet()) {
      for (Object v : e.getValue()) {
        if (v instanceof ScriptHistogram) {
          return "expects a histogram for " + e.getKey();
        }
      }
    }
    if (store.histograms.isEmpty()) {
      return null;
    }
    Expr parsed;
    try {
      parsed = PromqlParser.parseExpr(c.expr, PARSER_OPTIONS);
    } catch (RuntimeException e) {
      for (Labels h : store.histograms.keySet()) {
        String metric = h.get(Labels.METRIC_NAME);
        if (metric != null
            && Pattern.compile("(?<![\\w:])" + Pattern.quote(metric) + "(?![\\w:])")
                .matcher(c.expr)
                .find()) {
          return "names the histogram series " + h;
        }
      }
      return null;
    }
    List<VectorSelector> selectors = new ArrayList<>();
    collectSelectors(parsed, selectors);
    for (VectorSelector vs : selectors) {
      for (Labels h : store.histograms.keySet()) {
        if (vs.matchers().stream().allMatch(m -> m.matches(h.get(m.name())))) {
          return "selects the histogram series " + h;
        }
      }
    }
    return null;
  }

  static void collectSelectors(Expr e, List<VectorSelector> out) {
    if (e instanceof VectorSelector vs) {
      out.add(vs);
    } else if (e instanceof MatrixSelector ms) {
      out.add(ms.selector());
    } else if (e instanceof SubqueryExpr sq) {
      collectSelectors(sq.expr(), out);
    } else if (e instanceof ParenExpr p) {
      collectSelectors(p.expr(), out);
    } else if (e instanceof UnaryExpr u) {
      collectSelectors(u.expr(), out);
    } else if (e instanceof BinaryExpr b) {
      collectSelectors(b.lhs(), out);
      collectSelectors(b.rhs(), out);
    } else if (e instanceof AggregateExpr a) {
      if (a.param() != null) {
        collectSelectors(a.param(), out);
      }
      collectSelectors(a.expr(), out);
    } else if (e instanceof Call c) {
      for (Expr x : c.args()) {
        collectSelectors(x, out);
      }
    }
  }

  /**
   * One segment's store: the real engine over an in-memory KV store, which takes the float samples.
   * Native-histogram samples and start timestamps are kept here as read, for the evals that need
   * them: the engine stores neither yet.
   */
  static final class Store {
    final ManualClock clock = new ManualClock(0);
    final Engine engine =
        Engine.open(
            new InMemoryKvStore(),
            EngineConfig.builder()
                .clock(clock)
                .retention(Duration.ofDays(365 * 200))
                .maxFutureSkew(Duration.ofDays(365 * 200))
                .outOfOrderWindow(Duration.ofDays(365 * 200))
                .build());
    final Map<Labels, java.util.TreeMap<Long, ScriptHistogram>> histograms = new HashMap<>();
    final Map<Labels, java.util.TreeMap<Long, Long>> startTimestamps = new HashMap<>();
    long newest = 0;

    void load(LoadBlock block) {
      SampleBatch batch = new SampleBatch();
      block.samples.forEach(
          (labels, samples) ->
              samples.forEach(
                  (t, v) -> {
                    if (v instanceof ScriptHistogram h) {
                      histograms.computeIfAbsent(labels, k -> new java.util.TreeMap<>()).put(t, h);
                    } else {
                      batch.addPoint(labels, MetricMetadata.UNKNOWN, t, (Double) v);
                    }
                  }));
      block.startTimestamps.forEach(
          (labels, sts) ->
              startTimestamps.computeIfAbsent(labels, k -> new java.util.TreeMap<>()).putAll(sts));
      if (batch.size() == 0) {
        return;
      }
      for (int i = 0; i < batch.size(); i++) {
        newest = Math.max(newest, batch.timestampMillis(i));
      }
      clock.set(Math.max(clock.millis(), newest));
      AppendResult r = engine.append(batch);
      if (r.rejectedPoints() > 0) {
        throw new IllegalStateException("engine rejected " + r.rejectedPoints() + " points: " + r);
      }
    }

    void close() {
      engine.close();
    }
  }

  // ------------------------------------------------------------------ parsing

  static long parseDuration(String s) {
    s = s.trim();
    if (s.equals("0")) {
      return 0;
    }
    boolean neg = s.startsWith("-");
    if (neg) {
      s = s.substring(1);
    }
    if (s.matches("\\d+")) {
      return (neg ? -1 : 1) * Long.parseLong(s) * 1000;
    }
    Matcher m = Pattern.compile("(\\d+)(ms|y|w|d|h|m|s)").matcher(s);
    long total = 0;
    int pos = 0;
    while (m.find()) {
      if (m.start() != pos) {
        throw new IllegalArgumentException("bad duration " + s);
      }
      long v = Long.parseLong(m.group(1));
      total +=
          v
              * switch (m.group(2)) {
                case "ms" -> 1L;
                case "s" -> 1000L;
                case "m" -> 60_000L;
                case "h" -> 3_600_000L;
                case "d" -> 86_400_000L;
                case "w" -> 7 * 86_400_000L;
                case "y" -> 365 * 86_400_000L;
                default -> throw new IllegalArgumentException(s);
              };
      pos = m.end();
    }
    if (pos != s.length() || pos == 0) {
      throw new IllegalArgumentException("bad duration " + s);
    }
    return neg ? -total : total;
  }

  /** Splits {@code metric{a="b"} rest} into the label set and the rest of the line. */
  static Object[] parseSeries(String line) {
    int i = 0;
    int n = line.length();
    Labels.Builder b = Labels.builder();
    while (i < n
        && (Character.isLetterOrDigit(line.charAt(i))
            || line.charAt(i) == '_'
            || line.charAt(i) == ':')) {
      i++;
    }
    if (i > 0) {
      b.add(Labels.METRIC_NAME, line.substring(0, i));
    }
    if (i < n && line.charAt(i) == '{') {
      i++;
      while (true) {
        while (i < n
            && (line.charAt(i) == ' ' || line.charAt(i) == ',' || line.charAt(i) == '\t')) {
          i++;
        }
        if (line.charAt(i) == '}') {
          i++;
          break;
        }
        String lname;
        if (line.charAt(i) == '"' || line.charAt(i) == '\'') {
          int[] end = new int[1];
          lname = unquote(line, i, end);
          i = end[0];
        } else {
          int s = i;
          while (i < n
              && (Character.isLetterOrDigit(line.charAt(i))
                  || line.charAt(i) == '_'
                  || line.charAt(i) == ':')) {
            i++;
          }
          lname = line.substring(s, i);
        }
        while (i < n && line.charAt(i) == ' ') {
          i++;
        }
        if (line.charAt(i) != '=') {
          // a quoted metric name alone: {"my.metric"}
          b.set(Labels.METRIC_NAME, lname);
          continue;
        }
        i++;
        while (i < n && line.charAt(i) == ' ') {
          i++;
        }
        int[] end = new int[1];
        String v = unquote(line, i, end);
        i = end[0];
        b.set(lname, v);
      }
    }
    return new Object[] {b.build(), line.substring(i).trim()};
  }

  static String unquote(String s, int i, int[] end) {
    char q = s.charAt(i);
    StringBuilder sb = new StringBuilder();
    i++;
    while (s.charAt(i) != q) {
      char c = s.charAt(i);
      if (c == '\\') {
        char d = s.charAt(i + 1);
        i += 2;
        switch (d) {
          case 'n' -> sb.append('\n');
          case 't' -> sb.append('\t');
          case 'r' -> sb.append('\r');
          case '\\' -> sb.append('\\');
          case '"' -> sb.append('"');
          case '\'' -> sb.append('\'');
          case 'x' -> {
            sb.append((char) Integer.parseInt(s.substring(i, i + 2), 16));
            i += 2;
          }
          case 'u' -> {
            sb.append((char) Integer.parseInt(s.substring(i, i + 4), 16));
            i += 4;
          }
          default -> sb.append(d);
        }
        continue;
      }
      sb.append(c);
      i++;
    }
    end[0] = i + 1;
    return sb.toString();
  }

  static final Pattern SERIES_ITEM =
      Pattern.compile("^([+-]?[^+\\-x]+?|[+-]?\\d+(?:\\.\\d*)?e[+-]?\\d+)([+-])(.+)x(\\d+)$");
  static final Pattern REPEAT_ITEM = Pattern.compile("^(.+)x(\\d+)$");

  /**
   * Expands the value notation of a load or expected-result line: {@code null} entries are omitted
   * slots, {@link Double} floats (the staleness marker as {@link SampleBatch#STALE_NAN_BITS}),
   * {@link ScriptHistogram} native histograms ({@code {{…}}}, {@code {{…}}xn}, {@code
   * {{A}}+{{B}}xn}, {@code {{A}}-{{B}}xn}).
   */
  static List<Object> parseValues(String items) {
    List<Object> out = new ArrayList<>();
    int i = 0;
    int n = items.length();
    while (true) {
      while (i < n && Character.isWhitespace(items.charAt(i))) {
        i++;
      }
      if (i >= n) {
        return out;
      }
      if (items.startsWith("{{", i)) {
        i = parseHistogramItem(items, i, out);
        continue;
      }
      int e = i;
      while (e < n && !Character.isWhitespace(items.charAt(e))) {
        e++;
      }
      String tok = items.substring(i, e);
      i = e;
      if (tok.contains("{{")) {
        throw new IllegalArgumentException("bad series item " + tok);
      }
      parseFloatItem(tok, out);
    }
  }

  static final Pattern TIMES = Pattern.compile("x(\\d+)");

  /** Parses the histogram item starting at {@code i}; returns the index after it. */
  private static int parseHistogramItem(String items, int i, List<Object> out) {
    int close = items.indexOf("}}", i);
    if (close < 0) {
      throw new IllegalArgumentException("unclosed histogram literal: " + items.substring(i));
    }
    ScriptHistogram h = ScriptHistogram.parse(items.substring(i, close + 2));
    int j = close + 2;
    Matcher times = TIMES.matcher(items).region(j, items.length());
    if (times.lookingAt()) {
      int k = Integer.parseInt(times.group(1));
      for (int r = 0; r <= k; r++) {
        out.add(h);
      }
      return times.end();
    }
    if (j + 2 < items.length()
        && (items.charAt(j) == '+' || items.charAt(j) == '-')
        && items.startsWith("{{", j + 1)) {
      int close2 = items.indexOf("}}", j + 1);
      if (close2 < 0) {
        throw new IllegalArgumentException("unclosed histogram literal: " + items.substring(j));
      }
      ScriptHistogram step = ScriptHistogram.parse(items.substring(j + 1, close2 + 2));
      times = TIMES.matcher(items).region(close2 + 2, items.length());
      if (!times.lookingAt()) {
        throw new IllegalArgumentException(
            "a histogram series needs its count: " + items.substring(i));
      }
      out.addAll(
          ScriptHistogram.series(
              h, step, items.charAt(j) == '+', Integer.parseInt(times.group(1))));
      return times.end();
    }
    if (j < items.length() && !Character.isWhitespace(items.charAt(j))) {
      throw new IllegalArgumentException("bad histogram item: " + items.substring(i));
    }
    out.add(h);
    return j;
  }

  private static void parseFloatItem(String tok, List<Object> out) {
    if (tok.equals("_")) {
      out.add(null);
      return;
    }
    if (tok.startsWith("_x")) {
      int k = Integer.parseInt(tok.substring(2));
      for (int i = 0; i < k; i++) {
        out.add(null);
      }
      return;
    }
    if (tok.equals("stale")) {
      out.add(Double.longBitsToDouble(SampleBatch.STALE_NAN_BITS));
      return;
    }
    Matcher r = REPEAT_ITEM.matcher(tok);
    if (r.matches() && isNumber(r.group(1))) {
      double a = number(r.group(1));
      int k = Integer.parseInt(r.group(2));
      for (int i = 0; i <= k; i++) {
        out.add(a);
      }
      return;
    }
    Matcher m = SERIES_ITEM.matcher(tok);
    if (m.matches() && isNumber(m.group(1)) && isNumber(m.group(3))) {
      double a = number(m.group(1));
      double b = number(m.group(3));
      if (m.group(2).equals("-")) {
        b = -b;
      }
      int k = Integer.parseInt(m.group(4));
      double v = a;
      out.add(v);
      for (int i = 0; i < k; i++) {
        v += b;
        out.add(v);
      }
      return;
    }
    out.add(number(tok));
  }

  static boolean isNumber(String s) {
    try {
      number(s);
      return true;
    } catch (RuntimeException e) {
      return false;
    }
  }

  static double number(String s) {
    try {
      return GoFloats.parse(s);
    } catch (NumberFormatException e) {
      // A duration counts in seconds; like a number it may carry a sign ("+1m" in @st lines).
      return parseDuration(s.startsWith("+") ? s.substring(1) : s) / 1000.0;
    }
  }

  /**
   * One {@code load} / {@code load_with_nhcb} block: per series its samples by timestamp (a {@link
   * Double} or a {@link ScriptHistogram}) and the start timestamps of its {@code @st} line. As in
   * Prometheus' runner, a series written twice in a block keeps its later line.
   */
  static final class LoadBlock {
    final Map<Labels, java.util.TreeMap<Long, Object>> samples = new LinkedHashMap<>();
    final Map<Labels, java.util.TreeMap<Long, Long>> startTimestamps = new LinkedHashMap<>();

    /**
     * Reads the block's lines. An {@code @st} line ({@code metric{…}@st <offsets>}) must directly
     * precede the sample line of the same series; its i-th item is the offset of the i-th sample's
     * start timestamp from that sample's timestamp.
     */
    static LoadBlock parse(List<String> lines, long interval, boolean withNhcb) {
      LoadBlock block = new LoadBlock();
      Labels pendingSt = null;
      List<Object> pendingOffsets = null;
      for (String line : lines) {
        Object[] p = parseSeries(line);
        Labels l = (Labels) p[0];
        String rest = (String) p[1];
        if (rest.startsWith("@st")) {
          if (pendingSt != null) {
            throw new IllegalArgumentException("@st line not followed by its samples: " + line);
          }
          pendingSt = l;
          pendingOffsets = parseValues(rest.substring(3));
          continue;
        }
        List<Object> vals = parseValues(rest);
        java.util.TreeMap<Long, Object> series = new java.util.TreeMap<>();
        java.util.TreeMap<Long, Long> sts = new java.util.TreeMap<>();
        if (pendingSt != null && !pendingSt.equals(l)) {
          throw new IllegalArgumentException(
              "@st line of " + pendingSt + " followed by samples of " + l);
        }
        if (pendingOffsets != null && pendingOffsets.size() != vals.size()) {
          throw new IllegalArgumentException(
              "@st line of "
                  + l
                  + " has "
                  + pendingOffsets.size()
                  + " items for "
                  + vals.size()
                  + " samples");
        }
        for (int i = 0; i < vals.size(); i++) {
          Object v = vals.get(i);
          if (v == null) {
            continue;
          }
          long t = i * interval;
          series.put(t, v);
          if (pendingOffsets != null && pendingOffsets.get(i) instanceof Double off) {
            sts.put(t, t + Math.round(off * 1000));
          } else if (pendingOffsets != null && pendingOffsets.get(i) != null) {
            throw new IllegalArgumentException("a start timestamp is a duration: " + line);
          }
        }
        block.samples.put(l, series);
        if (pendingSt != null) {
          block.startTimestamps.put(l, sts);
        } else {
          block.startTimestamps.remove(l);
        }
        pendingSt = null;
        pendingOffsets = null;
      }
      if (pendingSt != null) {
        throw new IllegalArgumentException("@st line of " + pendingSt + " ends the block");
      }
      if (withNhcb) {
        block.addCustomBucketHistograms();
      }
      return block;
    }

    /**
     * {@code load_with_nhcb}: every classic histogram of the block ({@code x_bucket} series with a
     * numeric {@code le}, {@code x_count}, {@code x_sum}) also becomes a native histogram with
     * custom buckets named {@code x}, labels without {@code le}, one per timestamp of its float
     * samples, as Prometheus' runner converts them.
     */
    void addCustomBucketHistograms() {
      Map<Labels, java.util.TreeMap<Long, double[]>> parts = new LinkedHashMap<>();
      Map<Labels, java.util.TreeMap<Long, java.util.TreeMap<Double, Double>>> cumulative =
          new LinkedHashMap<>();
      samples.forEach(
          (l, series) -> {
            String name = l.get(Labels.METRIC_NAME);
            if (name == null) {
              return;
            }
            int kind;
            String base;
            double le = 0;
            if (name.endsWith("_bucket")) {
              kind = 0;
              base = name.substring(0, name.length() - "_bucket".length());
              String leText = l.get("le");
              if (leText == null) {
                throw new IllegalArgumentException("expected bucket label in metric " + l);
              }
              try {
                le = GoFloats.parse(leText);
              } catch (NumberFormatException e) {
                return;
              }
              if (Double.isNaN(le)) {
                return;
              }
            } else if (name.endsWith("_count")) {
              kind = 1;
              base = name.substring(0, name.length() - "_count".length());
            } else if (name.endsWith("_sum")) {
              kind = 2;
              base = name.substring(0, name.length() - "_sum".length());
            } else {
              return;
            }
            Labels.Builder b = Labels.builder();
            for (int i = 0; i < l.size(); i++) {
              if (!l.name(i).equals("le") && !l.name(i).equals(Labels.METRIC_NAME)) {
                b.add(l.name(i), l.value(i));
              }
            }
            b.add(Labels.METRIC_NAME, base);
            Labels target = b.build();
            final double bound = le;
            series.forEach(
                (t, v) -> {
                  if (!(v instanceof Double f)) {
                    return;
                  }
                  double[] cs =
                      parts
                          .computeIfAbsent(target, k -> new java.util.TreeMap<>())
                          .computeIfAbsent(t, k -> new double[] {Double.NaN, Double.NaN});
                  java.util.TreeMap<Double, Double> bs =
                      cumulative
                          .computeIfAbsent(target, k -> new java.util.TreeMap<>())
                          .computeIfAbsent(t, k -> new java.util.TreeMap<>());
                  switch (kind) {
                    case 0 -> bs.put(bound, f);
                    case 1 -> cs[0] = f;
                    default -> cs[1] = f;
                  }
                });
          });
      parts.forEach(
          (l, byTime) -> {
            java.util.TreeMap<Long, Object> series = new java.util.TreeMap<>();
            byTime.forEach(
                (t, cs) ->
                    series.put(
                        t,
                        ScriptHistogram.customBuckets(
                            cumulative.get(l).get(t), cs[0], cs[1], l + " at " + t + "ms")));
            samples.put(l, series);
          });
    }
  }

  EvalCmd parseEval(String l, List<String> body, int line) {
    EvalCmd c = new EvalCmd();
    c.line = line;
    Matcher m = EVAL_INSTANT.matcher(l);
    String mod;
    if (m.matches()) {
      mod = m.group(1);
      c.start = parseDuration(m.group(2));
      c.end = c.start;
      c.expr = m.group(3);
    } else {
      m = EVAL_RANGE.matcher(l);
      if (!m.matches()) {
        throw new IllegalArgumentException("bad eval line: " + l);
      }
      mod = m.group(1);
      c.range = true;
      c.start = parseDuration(m.group(2));
      c.end = parseDuration(m.group(3));
      c.step = parseDuration(m.group(4));
      c.expr = m.group(5);
    }
    if (mod != null) {
      switch (mod) {
        case "fail" -> c.fail = true;
        case "warn" -> c.warn = true;
        case "info" -> c.info = true;
        case "ordered" -> c.ordered = true;
        default -> throw new IllegalArgumentException(mod);
      }
    }
    int pos = 0;
    for (String b : body) {
      Matcher e = EXPECT.matcher(b);
      if (e.matches()) {
        String kind = e.group(1);
        String[] msg = e.group(2) == null ? null : new String[] {e.group(2), e.group(3).trim()};
        switch (kind) {
          case "fail" -> {
            c.fail = true;
            if (msg != null && msg[0].equals("msg")) {
              c.failMsg = msg[1];
            } else if (msg != null) {
              c.failRegex = msg[1];
            }
          }
          case "ordered" -> c.ordered = true;
          case "warn" -> {
            c.warn = true;
            if (msg != null) {
              c.warnMsgs.add(msg);
            }
          }
          case "no_warn" -> c.warn = false;
          case "info" -> {
            c.info = true;
            if (msg != null) {
              c.infoMsgs.add(msg);
            }
          }
          case "no_info" -> c.info = false;
          default -> throw new IllegalArgumentException(kind);
        }
        continue;
      }
      Matcher rv = EXPECT_RANGE_VECTOR.matcher(b);
      if (rv.matches()) {
        c.rangeVector = true;
        c.rvStart = parseDuration(rv.group(1));
        c.rvEnd = parseDuration(rv.group(2));
        c.rvStep = parseDuration(rv.group(3));
        continue;
      }
      Matcher es = EXPECT_STRING.matcher(b);
      if (es.matches()) {
        String q = es.group(1);
        c.expectString =
            q.startsWith("`") ? q.substring(1, q.length() - 1) : unquote(q, 0, new int[1]);
        continue;
      }
      if (b.startsWith("expect")) {
        throw new IllegalArgumentException("bad expect line: " + b);
      }
      Double scalar = scalarLine(b);
      if (scalar != null) {
        c.expectScalar = true;
        c.scalar = scalar;
        continue;
      }
      Object[] p = parseSeries(b);
      Labels labels = (Labels) p[0];
      List<Object> vals = parseValues((String) p[1]);
      if (!c.range && !c.rangeVector && vals.size() != 1) {
        throw new IllegalArgumentException("expected exactly one value for an instant eval: " + b);
      }
      c.expected.put(labels, vals);
      c.position.put(labels, ++pos);
    }
    return c;
  }

  static Double scalarLine(String b) {
    try {
      return (double) Long.decode(b);
    } catch (NumberFormatException e) {
      // not an integer
    }
    try {
      return GoFloats.parse(b);
    } catch (NumberFormatException e) {
      return null;
    }
  }

  // ------------------------------------------------------------------ running

  /** Runs one eval; null when it passes, else why not. */
  String run(EvalCmd c, Store store) {
    if (c.range) {
      return runQuery(c, store, c.expr, c.start, c.end, c.step, true);
    }
    List<String> exprs = new ArrayList<>();
    List<Long> times = new ArrayList<>();
    exprs.add(c.expr);
    times.add(c.start);
    String at = atModifierCase(c.expr, c.start);
    if (at != null) {
      long t = c.start;
      long[] extra =
          t == 0 ? new long[] {-1000, 0, 1000} : new long[] {-10 * t, 0, t / 5, t, 10 * t};
      for (long e : extra) {
        exprs.add(at);
        times.add(e);
      }
    }
    for (int k = 0; k < exprs.size(); k++) {
      String err = runInstant(c, store, exprs.get(k), times.get(k));
      if (err != null) {
        return (k > 0 ? "[with @, at " + times.get(k) + "ms: " + exprs.get(k) + "] " : "") + err;
      }
    }
    return null;
  }

  /**
   * Prometheus' atModifierTestCases: the expression with {@code @ t} on every outermost selector.
   */
  static String atModifierCase(String expr, long t) {
    Expr e;
    try {
      e = PromqlParser.parseExpr(expr, PARSER_OPTIONS);
    } catch (RuntimeException ex) {
      return null;
    }
    boolean[] unsafe = {false};
    Expr r = pin(e, AtModifier.timestamp(t), unsafe);
    if (unsafe[0]) {
      return null;
    }
    return r.toString();
  }

  static Expr pin(Expr e, AtModifier at, boolean[] unsafe) {
    if (e instanceof VectorSelector vs) {
      if (vs.at() == null || vs.at().kind() != AtModifier.Kind.TIMESTAMP) {
        return new VectorSelector(
            vs.name(),
            vs.matchers(),
            vs.offset(),
            at,
            vs.positionRange(),
            vs.offsetExpr(),
            vs.extendedRange());
      }
      return vs;
    } else if (e instanceof MatrixSelector ms) {
      return new MatrixSelector(
          (VectorSelector) pin(ms.selector(), at, unsafe),
          ms.range(),
          ms.positionRange(),
          ms.rangeExpr());
    } else if (e instanceof SubqueryExpr sq) {
      unsafe[0] |= containsUnsafe(sq.expr());
      if (sq.at() == null || sq.at().kind() != AtModifier.Kind.TIMESTAMP) {
        return sq.withAt(at);
      }
      return sq;
    } else if (e instanceof ParenExpr p) {
      return new ParenExpr(pin(p.expr(), at, unsafe), p.positionRange());
    } else if (e instanceof UnaryExpr u) {
      return new UnaryExpr(u.negate(), pin(u.expr(), at, unsafe), u.start());
    } else if (e instanceof BinaryExpr b) {
      return new BinaryExpr(
          b.op(), pin(b.lhs(), at, unsafe), pin(b.rhs(), at, unsafe), b.matching(), b.returnBool());
    } else if (e instanceof AggregateExpr a) {
      return new AggregateExpr(
          a.op(),
          a.param() == null ? null : pin(a.param(), at, unsafe),
          pin(a.expr(), at, unsafe),
          a.grouping(),
          a.without(),
          a.positionRange());
    } else if (e instanceof Call c) {
      unsafe[0] |= AT_UNSAFE.contains(c.function().name());
      List<Expr> args = new ArrayList<>();
      for (Expr x : c.args()) {
        args.add(pin(x, at, unsafe));
      }
      return new Call(c.function(), args, c.positionRange());
    }
    return e;
  }

  static boolean containsUnsafe(Expr e) {
    if (e instanceof Call c) {
      if (AT_UNSAFE.contains(c.function().name())) {
        return true;
      }
      for (Expr x : c.args()) {
        if (containsUnsafe(x)) {
          return true;
        }
      }
      return false;
    } else if (e instanceof ParenExpr p) {
      return containsUnsafe(p.expr());
    } else if (e instanceof UnaryExpr u) {
      return containsUnsafe(u.expr());
    } else if (e instanceof BinaryExpr b) {
      return containsUnsafe(b.lhs()) || containsUnsafe(b.rhs());
    } else if (e instanceof AggregateExpr a) {
      return (a.param() != null && containsUnsafe(a.param())) || containsUnsafe(a.expr());
    } else if (e instanceof SubqueryExpr s) {
      return containsUnsafe(s.expr());
    } else if (e instanceof MatrixSelector m) {
      return false;
    }
    return false;
  }

  String runInstant(EvalCmd c, Store store, String expr, long t) {
    QueryResult res;
    try {
      res = promql.instantQuery(store.engine, expr, t);
    } catch (QueryException e) {
      if (c.fail) {
        return checkFailure(c, e);
      }
      return "error evaluating query: " + e.getMessage();
    }
    if (c.fail) {
      return "expected error evaluating query but got none";
    }
    // Results first, annotations last: a failure names the result if both are wrong.
    String annotationErr = checkAnnotations(c, res.annotations());
    String err = compare(c, res.value(), t, t, 1);
    if (err != null) {
      return err;
    }
    if (c.ordered
        || c.rangeVector
        || c.expectString != null
        || CONTEXT_FUNCS.matcher(expr).find()) {
      return annotationErr;
    }
    QueryResult rr;
    try {
      rr = promql.rangeQuery(store.engine, expr, t - 60_000, t + 60_000, 60_000);
    } catch (QueryException e) {
      return "error evaluating query in range mode: " + e.getMessage();
    }
    Value.Matrix mat = (Value.Matrix) rr.value();
    String sorted = assertSorted(mat);
    if (sorted != null) {
      return sorted;
    }
    List<Value.Sample> vec = new ArrayList<>();
    for (Value.Series s : mat.series()) {
      for (int i = 0; i < s.size(); i++) {
        if (s.timestamps()[i] == t) {
          vec.add(new Value.Sample(s.labels(), t, s.values()[i]));
          break;
        }
      }
    }
    Value v;
    if (res.value() instanceof Value.Scalar) {
      if (vec.isEmpty()) {
        return "range mode: no scalar value at the evaluation time";
      }
      v = new Value.Scalar(t, vec.get(0).value());
    } else {
      v = new Value.Vector(vec);
    }
    err = compare(c, v, t, t, 1);
    return err != null ? "range mode: " + err : annotationErr;
  }

  String runQuery(
      EvalCmd c, Store store, String expr, long start, long end, long step, boolean range) {
    QueryResult res;
    try {
      res = promql.rangeQuery(store.engine, expr, start, end, step);
    } catch (QueryException e) {
      if (c.fail) {
        return checkFailure(c, e);
      }
      return "error evaluating query: " + e.getMessage();
    }
    if (c.fail) {
      return "expected error evaluating query but got none";
    }
    String err = compare(c, res.value(), start, end, step);
    return err != null ? err : checkAnnotations(c, res.annotations());
  }

  static String checkFailure(EvalCmd c, QueryException e) {
    String msg = e.getMessage();
    if (c.failMsg != null && !c.failMsg.equals(msg)) {
      return "expected error " + quote(c.failMsg) + " but got " + quote(msg);
    }
    if (c.failRegex != null && !Pattern.compile(c.failRegex).matcher(msg).find()) {
      return "expected error matching " + quote(c.failRegex) + " but got " + quote(msg);
    }
    return null;
  }

  static String quote(String s) {
    return "\"" + s + "\"";
  }

  static String checkAnnotations(EvalCmd c, Annotations a) {
    String err = checkAnnoType("warn", c.warn, c.warnMsgs, a.warnings());
    return err != null ? err : checkAnnoType("info", c.info, c.infoMsgs, a.infos());
  }

  static String checkAnnoType(String kind, Boolean expect, List<String[]> msgs, List<String> got) {
    if (expect == null) {
      return null;
    }
    if (!expect) {
      return got.isEmpty() ? null : "unexpected " + kind + " annotations: " + got;
    }
    if (got.isEmpty()) {
      return "expected " + kind + " annotations but none were found";
    }
    for (String g : got) {
      boolean ok = msgs.isEmpty();
      for (String[] m : msgs) {
        ok |= m[0].equals("msg") ? m[1].equals(g) : Pattern.compile(m[1]).matcher(g).find();
      }
      if (!ok) {
        return "unexpected " + kind + " annotation " + quote(g) + ", expected one of the messages";
      }
    }
    return null;
  }

  static String assertSorted(Value.Matrix m) {
    List<Value.Series> s = m.series();
    for (int i = 0; i + 1 < s.size(); i++) {
      if (s.get(i).labels().compareTo(s.get(i + 1).labels()) > 0) {
        return "matrix results should always be sorted by labels";
      }
    }
    return null;
  }

  static boolean almostEqual(double a, double b) {
    long ab = Double.doubleToRawLongBits(a);
    long bb = Double.doubleToRawLongBits(b);
    boolean as = ab == SampleBatch.STALE_NAN_BITS;
    boolean bs = bb == SampleBatch.STALE_NAN_BITS;
    if (as || bs) {
      return as && bs;
    }
    if (a == b || (Double.isNaN(a) && Double.isNaN(b))) {
      return true;
    }
    double absSum = Math.abs(a) + Math.abs(b);
    double diff = Math.abs(a - b);
    if (a == 0 || b == 0 || absSum < Double.MIN_NORMAL) {
      return diff < 1e-6 * Double.MIN_NORMAL;
    }
    return diff / Math.min(absSum, Double.MAX_VALUE) < 1e-6;
  }

  String compare(EvalCmd c, Value v, long start, long end, long step) {
    if (v instanceof Value.Matrix m) {
      if (c.ordered) {
        return "expected ordered result, but query returned a matrix";
      }
      if (c.expectScalar) {
        return "expected scalar result, but got matrix";
      }
      String sorted = assertSorted(m);
      if (sorted != null) {
        return sorted;
      }
      long s0 = c.rangeVector ? c.rvStart : start;
      long st = c.rangeVector ? c.rvStep : step;
      long e0 = c.rangeVector ? c.rvEnd : end;
      java.util.Set<Labels> seen = new java.util.HashSet<>();
      for (Value.Series s : m.series()) {
        List<Object> exp = c.expected.get(s.labels());
        if (exp == null) {
          return "unexpected metric " + s.labels() + " in result, has " + describe(s);
        }
        seen.add(s.labels());
        List<long[]> et = new ArrayList<>();
        List<Double> ev = new ArrayList<>();
        for (int i = 0; i < exp.size(); i++) {
          long ts = s0 + i * st;
          if (ts > e0) {
            return "expected "
                + exp.size()
                + " points for "
                + s.labels()
                + ", but query time range cannot return this many points";
          }
          if (exp.get(i) instanceof ScriptHistogram h) {
            return "expected histogram " + h + " at t=" + ts + " for " + s.labels();
          }
          if (exp.get(i) instanceof Double d) {
            et.add(new long[] {ts});
            ev.add(d);
          }
        }
        if (et.size() != s.size()) {
          return "expected "
              + et.size()
              + " float points for "
              + s.labels()
              + ", but got "
              + describe(s);
        }
        for (int i = 0; i < et.size(); i++) {
          if (et.get(i)[0] != s.timestamps()[i]) {
            return "expected timestamp "
                + et.get(i)[0]
                + " at index "
                + i
                + " for "
                + s.labels()
                + ", got "
                + describe(s);
          }
          if (!almostEqual(ev.get(i), s.values()[i])) {
            return "expected "
                + ev.get(i)
                + " at t="
                + et.get(i)[0]
                + " for "
                + s.labels()
                + ", got "
                + describe(s);
          }
        }
      }
      for (Labels l : c.expected.keySet()) {
        if (!seen.contains(l)) {
          return "expected metric " + l + " not found";
        }
      }
      return null;
    }
    if (v instanceof Value.Vector vec) {
      if (c.expectScalar) {
        return "expected scalar result, but got vector " + vec.samples();
      }
      java.util.Set<Labels> seen = new java.util.HashSet<>();
      for (int p = 0; p < vec.samples().size(); p++) {
        Value.Sample s = vec.samples().get(p);
        List<Object> exp = c.expected.get(s.labels());
        if (exp == null) {
          return "unexpected metric " + s.labels() + " in result, has value " + s.value();
        }
        if (c.ordered && c.position.get(s.labels()) != p + 1) {
          return "expected metric "
              + s.labels()
              + " at position "
              + c.position.get(s.labels())
              + " but was at "
              + (p + 1);
        }
        if (exp.isEmpty() || !(exp.get(0) instanceof Double d) || !almostEqual(d, s.value())) {
          return "expected "
              + (exp.isEmpty() ? "nothing" : exp.get(0))
              + " for "
              + s.labels()
              + " but got "
              + s.value();
        }
        seen.add(s.labels());
      }
      for (Labels l : c.expected.keySet()) {
        if (!seen.contains(l)) {
          return "expected metric " + l + " with " + c.expected.get(l) + " not found";
        }
      }
      return null;
    }
    if (v instanceof Value.Scalar s) {
      if (!c.expectScalar) {
        return "expected vector or matrix result, but got scalar " + s.value();
      }
      if (!almostEqual(c.scalar, s.value())) {
        return "expected scalar " + c.scalar + " but got " + s.value();
      }
      return null;
    }
    Value.StringValue sv = (Value.StringValue) v;
    if (!sv.value().equals(c.expectString)) {
      return "expected string \"" + c.expectString + "\" but got \"" + sv.value() + "\"";
    }
    return null;
  }

  static String describe(Value.Series s) {
    StringBuilder sb = new StringBuilder("[");
    for (int i = 0; i < s.size(); i++) {
      if (i > 0) {
        sb.append(' ');
      }
      sb.append(s.values()[i]).append(" @").append(s.timestamps()[i]);
    }
    return sb.append(']').toString();
  }

  /**
   * Prints every failure with its diagnostic, then per file and in total the evals that passed,
   * failed, and were set apart for native histograms; returns the number of failed evals.
   */
  public static int report(List<FileResult> results, java.io.PrintStream out) {
    boolean verbose = Boolean.getBoolean(VERBOSE_PROPERTY);
    for (FileResult r : results) {
      for (EvalResult e : r.evals()) {
        if (e.status() == Status.FAILED) {
          out.println("FAIL " + e);
        } else if (verbose) {
          out.println((e.status() == Status.PASSED ? "PASS " : "HIST ") + e);
        }
      }
    }
    long[] total = new long[3];
    out.printf("%-26s %6s %6s %10s%n", "file", "passed", "failed", "histograms");
    for (FileResult r : results) {
      long[] c = {
        r.count(Status.PASSED), r.count(Status.FAILED), r.count(Status.NATIVE_HISTOGRAMS)
      };
      out.printf("%-26s %6d %6d %10d%n", r.file(), c[0], c[1], c[2]);
      for (int i = 0; i < 3; i++) {
        total[i] += c[i];
      }
    }
    out.printf(
        "%-26s %6d %6d %10d   (%d evals)%n",
        "total", total[0], total[1], total[2], total[0] + total[1] + total[2]);
    return (int) total[1];
  }

  public static void main(String[] args) throws IOException {
    Path dir = args.length > 0 ? Path.of(args[0]) : defaultFolder();
    int failed = report(new PromqlConformanceRunner().runFolder(dir), System.out);
    System.exit(failed == 0 ? 0 : 1);
  }
}
