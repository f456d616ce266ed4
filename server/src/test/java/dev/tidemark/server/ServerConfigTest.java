package dev.tidemark.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.tidemark.promql.parser.ParserOptions;
import dev.tidemark.receiver.ReceiverConfig;
import dev.tidemark.rocksdb.RocksDbConfig;
import dev.tidemark.server.api.PromqlFeatures;
import dev.tidemark.server.api.QueryConfig;
import dev.tidemark.server.text.ConfigValues;
import dev.tidemark.translator.TranslationStrategy;
import dev.tidemark.translator.TranslatorConfig;
import dev.tidemark.tsdb.engine.EngineConfig;
import dev.tidemark.tsdb.model.PromText;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.lang.System.Logger.Level;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class ServerConfigTest {

  @TempDir Path dir;

  @Test
  void defaults() {
    ServerConfig c = Main.parseConfig();
    assertThat(c.dataDir()).isEqualTo(Path.of("data"));
    assertThat(c.listenAddress()).isEqualTo("127.0.0.1");
    assertThat(c.otlpGrpcPort()).isEqualTo(4317);
    assertThat(c.otlpHttpPort()).isEqualTo(4318);
    assertThat(c.httpPort()).isEqualTo(9090);
    assertThat(c.engineConfig().retention()).isEqualTo(Duration.ofDays(15));
    assertThat(c.engineConfig().outOfOrderWindow()).isEqualTo(Duration.ofMinutes(30));
    assertThat(c.engineConfig().maxFutureSkew()).isEqualTo(Duration.ofMinutes(10));
    assertThat(c.engineConfig().fsync()).isFalse();
    assertThat(c.engineConfig().maxHeadBytes())
        .isEqualTo(ServerConfig.defaultMaxHeadBytes())
        .isLessThanOrEqualTo(EngineConfig.DEFAULT_MAX_HEAD_BYTES);
    assertThat(c.rocksDbConfig().blockCacheBytes()).isEqualTo(256L << 20);
    assertThat(c.rocksDbConfig().fsyncOnWrite()).isFalse();
    assertThat(c.receiverConfig().maxGrpcMessageBytes()).isEqualTo(4 << 20);
    assertThat(c.receiverConfig().maxHttpBodyBytes()).isEqualTo(64L << 20);
    assertThat(c.receiverConfig()).isEqualTo(ReceiverConfig.defaults());
    assertThat(c.shutdownTimeout()).isEqualTo(Duration.ofSeconds(30));
    TranslatorConfig t = c.translatorConfig();
    assertThat(t.translationStrategy())
        .isEqualTo(TranslationStrategy.UNDERSCORE_ESCAPING_WITH_SUFFIXES);
    assertThat(t.promoteScopeMetadata()).isTrue();
    assertThat(t.deltaMode()).isEqualTo(TranslatorConfig.DeltaMode.ACCUMULATE);
    assertThat(t.maxFutureSkew()).isEqualTo(Duration.ofMinutes(10));
    // the same through `tidemark serve` and through the builder
    assertThat(Main.parseConfig("serve").toString()).isEqualTo(c.toString());
    assertThat(ServerConfig.defaults().toString()).isEqualTo(c.toString());
  }

  @Test
  void everyFlagMapsToItsSetting() {
    ServerConfig c =
        Main.parseConfig(
            "--data-dir",
            "/var/lib/tidemark",
            "--listen-all",
            "--otlp-grpc-port",
            "14317",
            "--otlp-http-port",
            "14318",
            "--http-port",
            "19090",
            "--retention",
            "30d",
            "--out-of-order-window",
            "1h30m",
            "--max-future-skew",
            "90s",
            "--fsync",
            "--head-memory-limit",
            "512MB",
            "--block-cache-size",
            "1GiB",
            "--otlp-grpc-max-message-size",
            "16MiB",
            "--otlp-http-max-body-size",
            "100MB",
            "--otlp-max-in-flight-size",
            "1GiB",
            "--otlp-retry-after",
            "5s",
            "--shutdown-timeout",
            "10s",
            "--translation-strategy",
            "NoUTF8EscapingWithSuffixes",
            "--metric-namespace",
            "acme",
            "--promote-all-resource-attributes",
            "--ignore-resource-attributes",
            "host.id, process.pid",
            "--keep-identifying-resource-attributes",
            "--no-promote-scope-metadata",
            "--external-labels",
            "region=eu,env=prod",
            "--exponential-histogram-mode",
            "count-sum-only",
            "--exponential-histogram-scale",
            "3",
            "--exponential-histogram-max-buckets",
            "80",
            "--delta-mode",
            "reject",
            "--delta-max-stale",
            "10m",
            "--delta-max-streams",
            "5000",
            "--start-time-mode",
            "inject_zero",
            "--zero-timestamp-policy",
            "use-receive-time",
            "--le-format",
            "OPENMETRICS");
    assertThat(c.dataDir()).isEqualTo(Path.of("/var/lib/tidemark"));
    assertThat(c.listenAddress()).isEqualTo("0.0.0.0");
    assertThat(c.otlpGrpcPort()).isEqualTo(14317);
    assertThat(c.otlpHttpPort()).isEqualTo(14318);
    assertThat(c.httpPort()).isEqualTo(19090);
    EngineConfig e = c.engineConfig();
    assertThat(e.retention()).isEqualTo(Duration.ofDays(30));
    assertThat(e.outOfOrderWindow()).isEqualTo(Duration.ofMinutes(90));
    assertThat(e.maxFutureSkew()).isEqualTo(Duration.ofSeconds(90));
    assertThat(e.fsync()).isTrue();
    assertThat(e.maxHeadBytes()).isEqualTo(512_000_000L);
    assertThat(c.rocksDbConfig().blockCacheBytes()).isEqualTo(1L << 30);
    assertThat(c.receiverConfig())
        .isEqualTo(new ReceiverConfig(16 << 20, 100_000_000L, 1L << 30, Duration.ofSeconds(5)));
    assertThat(c.shutdownTimeout()).isEqualTo(Duration.ofSeconds(10));
    TranslatorConfig t = c.translatorConfig();
    assertThat(t.translationStrategy())
        .isEqualTo(TranslationStrategy.NO_UTF8_ESCAPING_WITH_SUFFIXES);
    assertThat(t.namespace()).isEqualTo("acme");
    assertThat(t.promoteAllResourceAttributes()).isTrue();
    assertThat(t.ignoreResourceAttributes()).containsExactly("host.id", "process.pid");
    assertThat(t.keepIdentifyingResourceAttributes()).isTrue();
    assertThat(t.promoteScopeMetadata()).isFalse();
    assertThat(t.externalLabels())
        .containsExactly(Map.entry("region", "eu"), Map.entry("env", "prod"));
    assertThat(t.exponentialHistogramMode())
        .isEqualTo(TranslatorConfig.ExponentialHistogramMode.COUNT_SUM_ONLY);
    assertThat(t.exponentialHistogramScale()).isEqualTo(3);
    assertThat(t.exponentialHistogramMaxBuckets()).isEqualTo(80);
    assertThat(t.deltaMode()).isEqualTo(TranslatorConfig.DeltaMode.REJECT);
    assertThat(t.maxStale()).isEqualTo(Duration.ofMinutes(10));
    assertThat(t.maxStreams()).isEqualTo(5000);
    assertThat(t.startTimeMode()).isEqualTo(TranslatorConfig.StartTimeMode.INJECT_ZERO);
    assertThat(t.zeroTimestampPolicy())
        .isEqualTo(TranslatorConfig.ZeroTimestampPolicy.USE_RECEIVE_TIME);
    assertThat(t.leFormat()).isEqualTo(TranslatorConfig.LeFormat.OPENMETRICS);
    assertThat(t.maxFutureSkew()).isEqualTo(Duration.ofSeconds(90));
  }

  @Test
  void theTranslatorsStreamCacheFollowsTheHeapUnlessSet() {
    long heap = Runtime.getRuntime().maxMemory();
    int expected =
        heap == Long.MAX_VALUE
            ? ServerConfig.MAX_DEFAULT_SERIES_CACHE_SIZE
            : (int) Math.min(ServerConfig.MAX_DEFAULT_SERIES_CACHE_SIZE, heap / 4096);
    assertThat(Main.parseConfig().translatorConfig().seriesCacheSize()).isEqualTo(expected);
    assertThat(Main.parseConfig("--cached-streams", "5000").translatorConfig().seriesCacheSize())
        .isEqualTo(5000);
  }

  @Test
  void theActiveSeriesLimitFollowsTheHeapUnlessSet() {
    long heap = Runtime.getRuntime().maxMemory();
    long expected =
        heap == Long.MAX_VALUE
            ? ServerConfig.MAX_DEFAULT_ACTIVE_SERIES
            : Math.min(ServerConfig.MAX_DEFAULT_ACTIVE_SERIES, heap / 4096);
    assertThat(ServerConfig.MAX_DEFAULT_ACTIVE_SERIES).isEqualTo(2_097_152);
    assertThat(Main.parseConfig().engineConfig().maxActiveSeries()).isEqualTo(expected);
    assertThat(Main.parseConfig("--max-active-series", "1000").engineConfig().maxActiveSeries())
        .isEqualTo(1000);
    assertThat(Main.parseConfig("--max-active-series", "0").engineConfig().maxActiveSeries())
        .as("no limit")
        .isZero();
    assertThatThrownBy(() -> Main.parseConfig("--max-active-series", "-1"))
        .hasMessageContaining("max-active-series")
        .hasMessageContaining("-1");
  }

  @Test
  void everySettingHasAnOption() {
    ServerConfig.settingNames()
        .forEach(
            name ->
                assertThat(ServerConfig.builder().set(name, sampleValue(name), "test"))
                    .as(name)
                    .isNotNull());
    StringWriter help = new StringWriter();
    assertThat(Main.run(new PrintWriter(help), new PrintWriter(new StringWriter()), "--help"))
        .isZero();
    for (String name : ServerConfig.settingNames()) {
      assertThat(help.toString()).containsAnyOf("--" + name + "=", "--[no-]" + name);
    }
    assertThat(help.toString()).contains("--listen-all", "--config", "--version", "Default: 15d");
  }

  private static Object sampleValue(String name) {
    switch (name) {
      case "data-dir":
        return "d";
      case "listen-address":
        return "127.0.0.1";
      case "translation-strategy":
        return "NoTranslation";
      case "exponential-histogram-mode":
        return "drop";
      case "delta-mode":
        return "reject";
      case "start-time-mode":
        return "ignore";
      case "zero-timestamp-policy":
        return "reject";
      case "le-format":
        return "go";
      case "log-format":
        return "json";
      case "metric-namespace":
      case "promote-resource-attributes":
      case "ignore-resource-attributes":
        return "a";
      case "external-labels":
        return "a=b";
      default:
        if (name.endsWith("-port")) {
          return 1234;
        }
        if (name.endsWith("-size") || name.endsWith("-limit")) {
          return "1MiB";
        }
        if (name.startsWith("promote")
            || name.startsWith("keep")
            || name.equals("fsync")
            || name.equals("query-experimental-functions")
            || name.equals("web-enable-admin-api")
            || name.equals("web-enable-lifecycle")) {
          return true;
        }
        if (name.contains("scale")
            || name.contains("buckets")
            || name.contains("streams")
            || name.endsWith("-samples")
            || name.endsWith("-series")
            || name.startsWith("query-max-")) {
          return 4;
        }
        return "2h";
    }
  }

  @Test
  void yamlFileWithFlagsWinning() throws IOException {
    Path yml = dir.resolve("tidemark.yml");
    Files.writeString(
        yml,
        String.join(
            "\n",
            "# comments are fine",
            "data-dir: /srv/tidemark",
            "retention: 90d",
            "otlp-grpc-port: 5317",
            "fsync: true",
            "head-memory-limit: 2GiB",
            "promote-resource-attributes: [service.version, deployment.environment]",
            "external-labels:",
            "  cluster: c1",
            "translation-strategy: UnderscoreEscapingWithoutSuffixes",
            ""));
    ServerConfig fromFile = Main.parseConfig("--config", yml.toString());
    assertThat(fromFile.dataDir()).isEqualTo(Path.of("/srv/tidemark"));
    assertThat(fromFile.engineConfig().retention()).isEqualTo(Duration.ofDays(90));
    assertThat(fromFile.otlpGrpcPort()).isEqualTo(5317);
    assertThat(fromFile.engineConfig().fsync()).isTrue();
    assertThat(fromFile.engineConfig().maxHeadBytes()).isEqualTo(2L << 30);
    assertThat(fromFile.translatorConfig().promoteResourceAttributes())
        .containsExactly("service.version", "deployment.environment");
    assertThat(fromFile.translatorConfig().externalLabels())
        .containsExactly(Map.entry("cluster", "c1"));
    assertThat(fromFile.translatorConfig().translationStrategy())
        .isEqualTo(TranslationStrategy.UNDERSCORE_ESCAPING_WITHOUT_SUFFIXES);
    assertThat(fromFile.otlpHttpPort()).isEqualTo(4318); // not in the file: the default

    ServerConfig flagsWin =
        Main.parseConfig(
            "serve",
            "--config",
            yml.toString(),
            "--retention",
            "7d",
            "--no-fsync",
            "--otlp-grpc-port",
            "6317",
            "--promote-resource-attributes",
            "k8s.pod.name");
    assertThat(flagsWin.engineConfig().retention()).isEqualTo(Duration.ofDays(7));
    assertThat(flagsWin.engineConfig().fsync()).isFalse();
    assertThat(flagsWin.otlpGrpcPort()).isEqualTo(6317);
    assertThat(flagsWin.translatorConfig().promoteResourceAttributes())
        .containsExactly("k8s.pod.name");
    assertThat(flagsWin.dataDir()).isEqualTo(Path.of("/srv/tidemark")); // from the file
  }

  @Test
  void enableFeatureTakesPrometheusNamesRepeatedCommaSeparatedOrFromTheFile() throws IOException {
    ServerConfig none = ServerConfig.defaults();
    assertThat(none.queryConfig().promql()).isEqualTo(PromqlFeatures.DEFAULTS);
    assertThat(none.queryConfig().promql().parserOptions())
        .isEqualTo(ParserOptions.PROMETHEUS_DEFAULTS); // duration expressions on, as in 3.14
    assertThat(none.settingValues()).containsEntry("enable-feature", "");
    assertThat(none.features().logLines()).isEmpty();

    ServerConfig cli =
        Main.parseConfig(
            "--enable-feature=promql-experimental-functions,promql-delayed-name-removal",
            "--enable-feature",
            "promql-binop-fill-modifiers");
    assertThat(cli.queryConfig().promql()).isEqualTo(new PromqlFeatures(true, true, true));
    assertThat(cli.settingValues())
        .containsEntry(
            "enable-feature",
            "promql-experimental-functions,promql-delayed-name-removal,promql-binop-fill-modifiers");
    assertThat(cli.features().logLines())
        .containsExactly(
            new Features.LogLine(Level.INFO, "Experimental PromQL functions enabled."),
            new Features.LogLine(Level.INFO, "Experimental PromQL delayed name removal enabled."),
            new Features.LogLine(
                Level.INFO, "Experimental PromQL binary operator fill modifiers enabled."));
    // one name at a time
    assertThat(Main.parseConfig("--enable-feature", "promql-delayed-name-removal").queryConfig())
        .extracting(q -> q.promql())
        .isEqualTo(new PromqlFeatures(false, false, true));
    // the older option is an alias of promql-experimental-functions
    assertThat(Main.parseConfig("--query-experimental-functions").queryConfig().promql())
        .isEqualTo(new PromqlFeatures(true, false, false));

    Path yml =
        Files.writeString(
            dir.resolve("features.yml"),
            "enable-feature: [promql-binop-fill-modifiers, \"use-start-timestamps,nosuch\"]\n");
    ServerConfig file = Main.parseConfig("--config", yml.toString());
    assertThat(file.queryConfig().promql()).isEqualTo(new PromqlFeatures(false, true, false));
    assertThat(file.settingValues())
        .containsEntry("enable-feature", "promql-binop-fill-modifiers,use-start-timestamps,nosuch");
    List<Features.LogLine> lines = file.features().logLines();
    assertThat(lines).hasSize(3);
    assertThat(lines.get(1).level()).isEqualTo(Level.WARNING);
    assertThat(lines.get(1).text())
        .startsWith("Start timestamps in the PromQL engine are not implemented by Tidemark")
        .endsWith(" option=use-start-timestamps");
    // an unknown name is Prometheus' warning, never a failure
    assertThat(lines.get(2))
        .isEqualTo(
            new Features.LogLine(
                Level.WARNING, "Unknown option for --enable-feature option=nosuch"));
    // the command line replaces the file's list, as for every setting
    assertThat(
            Main.parseConfig("--config", yml.toString(), "--enable-feature=promql-duration-expr")
                .features()
                .logLines())
        .containsExactly(
            new Features.LogLine(
                Level.WARNING,
                "This option for --enable-feature is now permanently enabled and therefore a"
                    + " no-op. option=promql-duration-expr"));
    Path text =
        Files.writeString(
            dir.resolve("features-text.yml"), "enable-feature: promql-experimental-functions\n");
    assertThat(Main.parseConfig("--config", text.toString()).queryConfig().promql())
        .isEqualTo(new PromqlFeatures(true, false, false));
    Path nested = Files.writeString(dir.resolve("features-bad.yml"), "enable-feature: [[a]]\n");
    assertThatThrownBy(() -> Main.parseConfig("--config", nested.toString()))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("invalid enable-feature")
        .hasMessageContaining("expected a list of names");
  }

  @Test
  void everyFeatureNamePrometheusKnowsIsAcceptedWithALineSayingWhatItDoesHere() {
    // Prometheus 3.14's --enable-feature help lists these (cmd/prometheus/main.go)
    List<String> prometheus =
        List.of(
            "concurrent-rule-eval",
            "created-timestamp-zero-ingestion",
            "delayed-compaction",
            "exemplar-storage",
            "extra-scrape-metrics",
            "histograms-st-encoding",
            "memory-snapshot-on-shutdown",
            "metadata-wal-records",
            "old-ui",
            "otlp-deltatocumulative",
            "otlp-native-delta-ingestion",
            "promql-binop-fill-modifiers",
            "promql-delayed-name-removal",
            "promql-experimental-functions",
            "promql-extended-range-selectors",
            "promql-per-step-stats",
            "search-api",
            "st-storage",
            "st-synthesis",
            "type-and-unit-labels",
            "use-start-timestamps",
            "use-uncached-io",
            "xor2-encoding");
    for (String name : prometheus) {
      List<Features.LogLine> lines = Features.of(List.of(name)).logLines();
      assertThat(lines).as(name).hasSize(1);
      assertThat(lines.get(0).text()).as(name).doesNotStartWith("Unknown option");
    }
    assertThat(Features.of(List.of("promql-extended-range-selectors")).logLines())
        .containsExactly(
            new Features.LogLine(
                Level.INFO, "Experimental PromQL extended range selectors enabled."));
    assertThat(
            Main.parseConfig("--enable-feature=promql-extended-range-selectors")
                .queryConfig()
                .promql()
                .parserOptions()
                .extendedRangeSelectors())
        .isTrue();
    assertThat(Features.of(List.of("type-and-unit-labels")).logLines())
        .containsExactly(
            new Features.LogLine(Level.INFO, "Experimental type and unit labels enabled"));
    assertThat(
            Main.parseConfig("--enable-feature=type-and-unit-labels")
                .translatorConfig()
                .typeAndUnitLabels())
        .isTrue();
    assertThat(
            Main.parseConfig("--enable-feature=type-and-unit-labels")
                .queryConfig()
                .promql()
                .typeAndUnitLabels())
        .isTrue();
    assertThat(ServerConfig.defaults().translatorConfig().typeAndUnitLabels()).isFalse();
    // a name given twice is logged once
    assertThat(Features.of(List.of("search-api", "search-api")).logLines()).hasSize(1);
  }

  @Test
  void emptyYamlFileMeansDefaults() throws IOException {
    Path yml = Files.writeString(dir.resolve("empty.yml"), "# nothing\n");
    assertThat(Main.parseConfig("--config", yml.toString()).toString())
        .isEqualTo(ServerConfig.defaults().toString());
  }

  @ParameterizedTest(name = "{0} {1}")
  @CsvSource(
      delimiter = '|',
      value = {
        "--retention | 15x | invalid retention '15x' (--retention): expected a duration such as 15d",
        "--retention | 30m | invalid retention '30m' (--retention): must be at least 1h",
        "--retention | 15 | invalid retention '15' (--retention): expected a duration",
        "--out-of-order-window | 1m30h | invalid out-of-order-window '1m30h' (--out-of-order-window): expected a duration",
        "--max-future-skew | -5m | invalid max-future-skew '-5m' (--max-future-skew)",
        "--head-memory-limit | 4 GB of RAM | invalid head-memory-limit '4 GB of RAM' (--head-memory-limit): expected a size such as 4MiB",
        "--block-cache-size | 12XB | invalid block-cache-size '12XB' (--block-cache-size): unknown unit 'XB'",
        "--otlp-grpc-max-message-size | 0 | invalid otlp-grpc-max-message-size '0' (--otlp-grpc-max-message-size): must be at least 1B",
        "--otlp-grpc-max-message-size | 3GiB | invalid otlp-grpc-max-message-size '3GiB' (--otlp-grpc-max-message-size): must be between 1B and 2GiB - 1B",
        "--otlp-http-max-body-size | 1.5B | invalid otlp-http-max-body-size '1.5B' (--otlp-http-max-body-size): not a whole number of bytes",
        "--otlp-grpc-port | 70000 | invalid otlp-grpc-port '70000' (--otlp-grpc-port): expected a port number between 0 and 65535",
        "--http-port | http | invalid http-port 'http' (--http-port): expected a port number",
        "--listen-address | 300.1.2.3 | invalid listen-address '300.1.2.3' (--listen-address): not an IP address or a known host name",
        "--translation-strategy | Underscores | invalid translation-strategy 'Underscores' (--translation-strategy): expected one of underscore-escaping-with-suffixes,",
        "--delta-mode | drop | invalid delta-mode 'drop' (--delta-mode): expected one of accumulate, reject",
        "--exponential-histogram-scale | 9 | invalid exponential-histogram-scale '9' (--exponential-histogram-scale): expected an integer between -4 and 8",
        "--external-labels | region | invalid external-labels 'region' (--external-labels): expected name=value pairs",
        "--external-labels | 1bad=x | invalid translator settings: externalLabels name is not a valid label name, was '1bad'",
        "--otlp-http-port | 4317 | otlp-grpc-port and otlp-http-port (--otlp-http-port) are both 4317",
      })
  void badFlagValueNamesTheSettingAndTheValue(String flag, String value, String message) {
    assertThatThrownBy(() -> Main.parseConfig(flag, value))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining(message.strip());
  }

  @Test
  void badYamlValuesAndUnknownKeys() throws IOException {
    Path yml = Files.writeString(dir.resolve("bad.yml"), "retention: 2 weeks\n");
    assertThatThrownBy(() -> Main.parseConfig("--config", yml.toString()))
        .isInstanceOf(ConfigException.class)
        .hasMessageStartingWith("invalid retention '2 weeks' (" + yml + "): expected a duration");

    Path typo = Files.writeString(dir.resolve("typo.yml"), "retension: 30d\n");
    assertThatThrownBy(() -> Main.parseConfig("--config", typo.toString()))
        .isInstanceOf(ConfigException.class)
        .hasMessageStartingWith(
            "unknown setting 'retension' in "
                + typo
                + " (did you mean 'retention'?); known settings: data-dir,");

    Path unknown = Files.writeString(dir.resolve("unknown.yml"), "storage:\n  path: /x\n");
    assertThatThrownBy(() -> Main.parseConfig("--config", unknown.toString()))
        .isInstanceOf(ConfigException.class)
        .hasMessageStartingWith("unknown setting 'storage' in " + unknown);

    Path port = Files.writeString(dir.resolve("port.yml"), "http-port: [9090]\n");
    assertThatThrownBy(() -> Main.parseConfig("--config", port.toString()))
        .isInstanceOf(ConfigException.class)
        .hasMessageStartingWith(
            "invalid http-port '[9090]' (" + port + "): expected a single value");

    Path notYaml = Files.writeString(dir.resolve("broken.yml"), "retention: [30d\n");
    assertThatThrownBy(() -> Main.parseConfig("--config", notYaml.toString()))
        .isInstanceOf(ConfigException.class)
        .hasMessageStartingWith("config file " + notYaml + " is not valid YAML");

    Path list = Files.writeString(dir.resolve("list.yml"), "- retention: 30d\n");
    assertThatThrownBy(() -> Main.parseConfig("--config", list.toString()))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("must be a mapping of setting names to values");

    assertThatThrownBy(() -> Main.parseConfig("--config", dir.resolve("missing.yml").toString()))
        .isInstanceOf(ConfigException.class)
        .hasMessage("config file " + dir.resolve("missing.yml") + " does not exist");
  }

  @Test
  void listenAllContradictingListenAddressIsRefused() {
    assertThat(Main.parseConfig("--listen-all", "--listen-address", "0.0.0.0").listenAddress())
        .isEqualTo("0.0.0.0");
    assertThatThrownBy(() -> Main.parseConfig("--listen-all", "--listen-address", "10.0.0.1"))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("--listen-all and --listen-address 10.0.0.1 contradict each other");
  }

  @Test
  void badValuesExitWithCode2AndOneLineWithoutStackTrace() {
    StringWriter err = new StringWriter();
    int code =
        Main.run(new PrintWriter(new StringWriter()), new PrintWriter(err), "--retention", "15x");
    assertThat(code).isEqualTo(Main.EXIT_USAGE);
    assertThat(err.toString())
        .startsWith("tidemark: invalid retention '15x' (--retention): expected a duration")
        .doesNotContain("Exception", "\tat ");
    assertThat(err.toString().lines()).hasSize(1);

    StringWriter err2 = new StringWriter();
    assertThat(
            Main.run(
                new PrintWriter(new StringWriter()), new PrintWriter(err2), "--retentoin", "1d"))
        .isEqualTo(Main.EXIT_USAGE);
    assertThat(err2.toString()).startsWith("tidemark: Unknown options: '--retentoin', '1d'");

    StringWriter err3 = new StringWriter();
    assertThat(
            Main.run(
                new PrintWriter(new StringWriter()),
                new PrintWriter(err3),
                "--retention",
                "1d",
                "serve"))
        .isEqualTo(Main.EXIT_USAGE);
    assertThat(err3.toString()).startsWith("tidemark: put the server options after 'serve'");
  }

  @Test
  void versionAndHelpExitZero() {
    StringWriter out = new StringWriter();
    assertThat(Main.run(new PrintWriter(out), new PrintWriter(new StringWriter()), "--version"))
        .isZero();
    assertThat(out.toString()).startsWith("tidemark ");
    StringWriter serveHelp = new StringWriter();
    assertThat(
            Main.run(
                new PrintWriter(serveHelp), new PrintWriter(new StringWriter()), "serve", "--help"))
        .isZero();
    assertThat(serveHelp.toString()).contains("Usage: tidemark serve", "--data-dir");
  }

  @Test
  void durationsAndSizes() {
    assertThat(ConfigValues.parseDuration("15d")).isEqualTo(Duration.ofDays(15));
    assertThat(ConfigValues.parseDuration("1h30m")).isEqualTo(Duration.ofMinutes(90));
    assertThat(ConfigValues.parseDuration("500ms")).isEqualTo(Duration.ofMillis(500));
    assertThat(ConfigValues.parseDuration("2w")).isEqualTo(Duration.ofDays(14));
    assertThat(ConfigValues.parseDuration("1y")).isEqualTo(Duration.ofDays(365));
    assertThat(ConfigValues.parseDuration("0")).isEqualTo(Duration.ZERO);
    for (String bad :
        List.of("", "d", "15", "1.5h", "1m1h", "1h1h", "-1s", "1 h", "99999999999999999999d")) {
      assertThatThrownBy(() -> ConfigValues.parseDuration(bad))
          .as(bad)
          .isInstanceOf(IllegalArgumentException.class);
    }
    assertThat(PromText.formatDuration(Duration.ofDays(15))).isEqualTo("15d");
    assertThat(PromText.formatDuration(Duration.ofMinutes(90))).isEqualTo("1h30m");

    assertThat(ConfigValues.parseSize("4MiB")).isEqualTo(4L << 20);
    assertThat(ConfigValues.parseSize("512MB")).isEqualTo(512_000_000L);
    assertThat(ConfigValues.parseSize("1.5GiB")).isEqualTo(3L << 29);
    assertThat(ConfigValues.parseSize("1024")).isEqualTo(1024);
    assertThat(ConfigValues.parseSize("64 kib")).isEqualTo(64L << 10);
    assertThat(ConfigValues.parseSize("2TB")).isEqualTo(2_000_000_000_000L);
    for (String bad : List.of("", "MiB", "-1MiB", "4 MiBs", "0.5B", "99999999TiB")) {
      assertThatThrownBy(() -> ConfigValues.parseSize(bad))
          .as(bad)
          .isInstanceOf(IllegalArgumentException.class);
    }
    assertThat(ConfigValues.formatSize(4L << 20)).isEqualTo("4MiB");
    assertThat(ConfigValues.formatSize(1000)).isEqualTo("1000B");
  }

  @Test
  void querySettingsFromFlagsAndFile() throws IOException {
    assertThat(Main.parseConfig().queryConfig()).isEqualTo(QueryConfig.DEFAULTS);
    assertThat(
            Main.parseConfig(
                    "--query-timeout",
                    "30s",
                    "--query-max-samples",
                    "1000",
                    "--query-max-concurrency",
                    "4",
                    "--query-max-queued",
                    "0",
                    "--query-lookback-delta",
                    "1m",
                    "--query-experimental-functions")
                .queryConfig())
        .isEqualTo(
            new QueryConfig(
                Duration.ofSeconds(30),
                1000,
                4,
                0,
                Duration.ofMinutes(1),
                true,
                QueryConfig.defaultMaxSamplesTotal()));
    Path yml =
        Files.writeString(
            dir.resolve("query.yml"),
            "query-timeout: 1m\nquery-max-samples: 5000000000\nquery-experimental-functions: true\n");
    QueryConfig q =
        Main.parseConfig("--config", yml.toString(), "--no-query-experimental-functions")
            .queryConfig();
    assertThat(q.timeout()).isEqualTo(Duration.ofMinutes(1));
    assertThat(q.maxSamples()).isEqualTo(5_000_000_000L);
    assertThat(q.experimentalFunctions()).isFalse();
    assertThat(q.maxConcurrency()).isEqualTo(QueryConfig.defaultQueryThreads());
    assertThat(ServerConfig.builder().queryMaxQueued(7).build().queryConfig().maxQueued())
        .isEqualTo(7);
  }

  @ParameterizedTest(name = "{0} {1}")
  @CsvSource(
      delimiter = '|',
      value = {
        "--query-timeout | 0s | invalid query-timeout '0s' (--query-timeout): must be positive",
        "--query-timeout | 2 | invalid query-timeout '2' (--query-timeout): expected a duration",
        "--query-max-samples | 0 | invalid query-max-samples '0' (--query-max-samples): expected an integer between 1 and 9223372036854775807",
        "--query-max-samples | 50M | invalid query-max-samples '50M' (--query-max-samples): expected an integer",
        "--query-max-concurrency | 0 | invalid query-max-concurrency '0' (--query-max-concurrency): expected an integer between 1 and 2147483647",
        "--query-max-queued | -1 | invalid query-max-queued '-1' (--query-max-queued): expected an integer between 0 and 2147483647",
        "--query-lookback-delta | 0 | invalid query-lookback-delta '0' (--query-lookback-delta): must be positive",
      })
  void badQuerySettingNamesTheSettingAndTheValue(String flag, String value, String message) {
    assertThatThrownBy(() -> Main.parseConfig(flag, value))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining(message.strip());
  }

  @Test
  void misspeltQuerySettingInAFileGetsASuggestion() throws IOException {
    Path yml = Files.writeString(dir.resolve("q.yml"), "query-timout: 1m\n");
    assertThatThrownBy(() -> Main.parseConfig("--config", yml.toString()))
        .isInstanceOf(ConfigException.class)
        .hasMessageStartingWith(
            "unknown setting 'query-timout' in " + yml + " (did you mean 'query-timeout'?)");
    assertThatThrownBy(() -> ServerConfig.builder().queryMaxConcurrency(0).build())
        .isInstanceOf(ConfigException.class)
        .hasMessage("invalid query settings: query max concurrency must be at least 1, was 0");
  }

  @Test
  void rocksDbDefaultsAreTheBackendsDefaults() {
    assertThat(ServerConfig.defaults().rocksDbConfig()).isEqualTo(RocksDbConfig.defaults());
  }
}
