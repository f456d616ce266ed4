package dev.tidemark.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.grpc.ManagedChannel;
import io.opentelemetry.proto.collector.metrics.v1.MetricsServiceGrpc;
import io.opentelemetry.proto.metrics.v1.Metric;
import io.opentelemetry.proto.metrics.v1.NumberDataPoint;
import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.logging.Level;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.openqa.selenium.By;
import org.openqa.selenium.Dimension;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.Keys;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.TakesScreenshot;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.logging.LogEntry;
import org.openqa.selenium.logging.LogType;
import org.openqa.selenium.logging.LoggingPreferences;
import org.openqa.selenium.support.ui.ExpectedConditions;
import org.openqa.selenium.support.ui.WebDriverWait;

/**
 * The web UI at {@code /} in Debian's headless chromium (driven by its chromedriver through
 * Selenium), against the real server jar fed over OTLP/gRPC: a query typed with the editor's
 * completion of metric names from the API, its series in the graph's legend and in the table, a
 * shared link with two panels that reproduces them, an inline parse error, the cardinality page
 * showing the counts {@code /api/v1/status/tsdb} answers, the explore and status pages. The page
 * must log no error (a request to another origin, which the page's Content-Security-Policy refuses,
 * would be one). Each page's screenshot is written to {@code target/ui-screenshots/} ({@code
 * docs/ui/} keeps copies).
 *
 * <p>Needs {@code /usr/bin/chromium} and {@code /usr/bin/chromedriver} (Debian's {@code chromium}
 * and {@code chromium-driver}, which {@code .ci/run} installs).
 */
@ExtendWith(ServerLogs.class)
class WebUiIT {
  static final ObjectMapper JSON = new ObjectMapper();
  static final Path CHROMIUM = Path.of("/usr/bin/chromium");
  static final Path CHROMEDRIVER = Path.of("/usr/bin/chromedriver");
  static final Path SCREENSHOTS = Path.of("target", "ui-screenshots");
  static final long STEP_MS = 15_000;
  static final int POINTS = 120; // 30 minutes
  static final List<String> ROUTES = List.of("/cart", "/checkout", "/search");

  @TempDir static Path dir;
  static ServerProcess server;
  static WebDriver browser;
  static WebDriverWait wait;

  @BeforeAll
  static void start() throws Exception {
    assertThat(CHROMIUM)
        .as("Debian's chromium (apt-get install chromium chromium-driver; .ci/run does)")
        .isExecutable();
    assertThat(CHROMEDRIVER).as("Debian's chromium-driver").isExecutable();
    server = ServerProcess.start(dir.resolve("data"));
    long end = (System.currentTimeMillis() - 30_000) / 1000 * 1000;
    long start = end - (POINTS - 1) * STEP_MS;
    List<Metric> metrics = new ArrayList<>();
    for (int r = 0; r < ROUTES.size(); r++) {
      List<NumberDataPoint> pts = new ArrayList<>();
      for (int i = 0; i < POINTS; i++) {
        pts.add(Otlp.point(start + i * STEP_MS, (r + 1) * 3.0 * i, "route", ROUTES.get(r)));
      }
      metrics.add(
          Otlp.counter("ui.requests", pts.toArray(NumberDataPoint[]::new)).toBuilder()
              .setDescription("Requests served by the shop")
              .setUnit("{request}")
              .build());
    }
    for (String queue : List.of("orders", "mails")) {
      List<NumberDataPoint> pts = new ArrayList<>();
      for (int i = 0; i < POINTS; i++) {
        pts.add(Otlp.point(start + i * STEP_MS, 10 + 5 * Math.sin(i / 10.0), "queue", queue));
      }
      metrics.add(
          Otlp.gauge("ui.queue.depth", pts.toArray(NumberDataPoint[]::new)).toBuilder()
              .setDescription("Messages waiting")
              .build());
    }
    ManagedChannel ch = Otlp.channel(server.grpcPort());
    try {
      MetricsServiceGrpc.newBlockingStub(ch)
          .withDeadlineAfter(60, TimeUnit.SECONDS)
          .export(Otlp.request("shop", "host-1", metrics));
    } finally {
      ch.shutdownNow();
    }
    ChromeDriverService service =
        new ChromeDriverService.Builder()
            .usingDriverExecutable(CHROMEDRIVER.toFile())
            .usingAnyFreePort()
            .withLogOutput(Files.newOutputStream(dir.resolve("chromedriver.log")))
            .build();
    ChromeOptions options = new ChromeOptions();
    options.setBinary(CHROMIUM.toFile());
    options.addArguments(
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--no-first-run",
        "--disable-dev-shm-usage",
        "--window-size=1280,900");
    LoggingPreferences logs = new LoggingPreferences();
    logs.enable(LogType.BROWSER, Level.ALL);
    options.setCapability("goog:loggingPrefs", logs);
    browser = new ChromeDriver(service, options); // quit() stops the service too
    browser.manage().window().setSize(new Dimension(1280, 900));
    wait = new WebDriverWait(browser, Duration.ofSeconds(30));
    Files.createDirectories(SCREENSHOTS);
  }

  @AfterAll
  static void stop() throws Exception {
    try {
      if (browser != null) {
        browser.quit();
      }
    } finally {
      if (server != null) {
        server.stop();
      }
    }
  }

  /**
   * Every test leaves the page without an error in its console but the 400 of a bad query, which
   * the browser logs (a request the page's Content-Security-Policy refused would be one).
   */
  @AfterEach
  void noErrorsLogged() {
    List<String> errors = new ArrayList<>();
    for (LogEntry e : browser.manage().logs().get(LogType.BROWSER)) {
      if (e.getLevel().intValue() >= Level.SEVERE.intValue()
          && !(e.getMessage().contains("/api/v1/query?query=")
              && e.getMessage().contains("status of 400"))) {
        errors.add(e.getMessage());
      }
    }
    assertThat(errors).as("errors the page logged").isEmpty();
  }

  private String url(String fragment) {
    return server.apiUrl("/" + fragment);
  }

  private void screenshot(String name) throws Exception {
    File f = ((TakesScreenshot) browser).getScreenshotAs(OutputType.FILE);
    Files.copy(f.toPath(), SCREENSHOTS.resolve(name + ".png"), StandardCopyOption.REPLACE_EXISTING);
  }

  private List<WebElement> legendSeries(WebElement panel) {
    // uPlot's legend: one row for the time axis, then one per series
    List<WebElement> rows = panel.findElements(By.cssSelector(".u-legend .u-series"));
    return rows.isEmpty() ? rows : rows.subList(1, rows.size());
  }

  private List<WebElement> panels() {
    return browser.findElements(By.cssSelector("section.panel"));
  }

  private int tableRows(WebElement panel) {
    return panel.findElements(By.cssSelector("[data-testid=result-table] tbody tr")).size();
  }

  private String editorText(WebElement panel) {
    return panel.findElement(By.cssSelector(".cm-content")).getText();
  }

  @Test
  void aQueryTypedWithCompletionIsGraphedAndTabulatedAndItsLinkReproducesTheView()
      throws Exception {
    browser.get("about:blank");
    browser.get(url(""));
    WebElement editor =
        wait.until(ExpectedConditions.elementToBeClickable(By.cssSelector(".cm-content")));
    editor.click();
    editor.sendKeys("ui_req");
    WebElement option =
        wait.until(
            ExpectedConditions.visibilityOfElementLocated(
                By.xpath(
                    "//div[contains(@class,'cm-tooltip-autocomplete')]//li[contains(.,"
                        + " 'ui_requests_total')]")));
    assertThat(option.getText()).contains("ui_requests_total");
    editor.sendKeys(Keys.ENTER); // accepts the completion
    wait.until(d -> editorText(panels().get(0)).equals("ui_requests_total"));
    editor.sendKeys(Keys.ENTER); // runs the query
    WebElement panel = panels().get(0);
    wait.until(d -> legendSeries(panel).size() == ROUTES.size());
    assertThat(legendSeries(panel))
        .extracting(WebElement::getText)
        .anySatisfy(t -> assertThat(t).contains("route=\"/checkout\""));
    screenshot("query-graph");

    panel.findElement(By.cssSelector("button[data-tab=table]")).click();
    wait.until(d -> tableRows(panel) == ROUTES.size());
    assertThat(panel.findElement(By.cssSelector("[data-testid=result-table]")).getText())
        .contains("ui_requests_total{", "route=\"/search\"");

    // a second panel, then the page's own URL opened afresh
    browser.findElement(By.cssSelector("button.add-panel")).click();
    WebElement second = panels().get(1);
    WebElement editor2 = second.findElement(By.cssSelector(".cm-content"));
    editor2.click();
    editor2.sendKeys("sum by (queue) (ui_queue_depth)");
    second.findElement(By.cssSelector("button.execute")).click();
    wait.until(d -> legendSeries(second).size() == 2);
    String link = browser.getCurrentUrl();
    assertThat(link).contains("g0.expr=ui_requests_total", "g0.tab=table", "g1.expr=");

    browser.get("about:blank");
    browser.get(link);
    wait.until(d -> panels().size() == 2 && tableRows(panels().get(0)) == ROUTES.size());
    wait.until(d -> legendSeries(panels().get(1)).size() == 2);
    assertThat(editorText(panels().get(0))).isEqualTo("ui_requests_total");
    assertThat(editorText(panels().get(1))).isEqualTo("sum by (queue) (ui_queue_depth)");
  }

  @Test
  void aLinkWithAStackedGraphAndAParseErrorShowsBoth() throws Exception {
    browser.get(
        url(
            "#/query?g0.expr=rate(ui_requests_total%5B5m%5D)&g0.tab=graph&g0.range=30m"
                + "&g0.stacked=1&g1.expr=ui_requests_total%20%2B&g1.tab=table"
                + "&g2.expr=sum(ui_requests_total&g2.tab=table"));
    wait.until(d -> panels().size() == 3 && legendSeries(panels().get(0)).size() == 3);
    assertThat(panels().get(0).findElement(By.cssSelector("input.stacked")).isSelected()).isTrue();
    WebElement bad = panels().get(1);
    wait.until(
        d ->
            !bad.findElements(By.cssSelector(".cm-lintRange-error, .cm-lintPoint-error"))
                .isEmpty());
    wait.until(d -> !bad.findElements(By.cssSelector(".error")).isEmpty());
    assertThat(bad.findElement(By.cssSelector(".error")).getText()).startsWith("bad_data:");
    // the editor's parser accepts what the server refuses: the server's position is underlined
    WebElement unclosed = panels().get(2);
    wait.until(d -> !unclosed.findElements(By.cssSelector(".cm-lintRange-error")).isEmpty());
    assertThat(unclosed.findElement(By.cssSelector(".error")).getText())
        .contains("unclosed left parenthesis");
    // hovering over the plot shows each series' value in the legend
    WebElement over = panels().get(0).findElement(By.cssSelector(".u-over"));
    new org.openqa.selenium.interactions.Actions(browser)
        .moveToElement(over, over.getSize().width / 4, 10)
        .perform();
    wait.until(
        d ->
            legendSeries(panels().get(0)).stream()
                .allMatch(e -> e.getText().matches("(?s).*\\d.*")));
    screenshot("query-stacked");
  }

  @Test
  void theCardinalityPageShowsTheCountsTheApiAnswers() throws Exception {
    JsonNode tsdb = JSON.readTree(server.apiGet("/api/v1/status/tsdb?limit=20")).get("data");
    long headSeries = tsdb.get("headStats").get("numSeries").asLong();
    assertThat(headSeries).isGreaterThanOrEqualTo(5);
    browser.get(url("#/cardinality?limit=20"));
    WebElement count =
        wait.until(
            ExpectedConditions.visibilityOfElementLocated(
                By.cssSelector("[data-testid=head-series]")));
    assertThat(count.getText()).isEqualTo(Long.toString(headSeries));
    WebElement byMetric = browser.findElement(By.id("series-by-metric"));
    for (JsonNode e : tsdb.get("seriesCountByMetricName")) {
      assertThat(byMetric.getText())
          .contains(e.get("name").asText() + " " + e.get("value").asText());
    }
    assertThat(byMetric.getText()).contains("ui_requests_total 3", "ui_queue_depth 2");
    assertThat(browser.findElement(By.id("series-by-pair")).getText()).contains("route=/cart 1");
    // Churn as the API counts it: the series new in the newest hour bucket (none when the test's
    // 30 minutes of data began in the hour before, since every series is then in both hours).
    String churn = browser.findElement(By.id("churn")).getText();
    JsonNode fresh = tsdb.get("newSeriesCountByMetricName");
    if (fresh.isEmpty()) {
      assertThat(churn).endsWith("None.");
    }
    for (JsonNode e : fresh) {
      assertThat(churn).contains(e.get("name").asText() + " " + e.get("value").asText());
    }
    assertThat(browser.findElement(By.id("buckets")).getText()).contains("1h open");
    assertThat(browser.findElement(By.id("compaction")).getText()).contains("Compactions failed 0");
    screenshot("cardinality");
  }

  @Test
  void theExplorePageListsMetricsWithTheirMetadataAndLabels() throws Exception {
    browser.get(url("#/explore"));
    WebElement metrics =
        wait.until(
            ExpectedConditions.visibilityOfElementLocated(
                By.cssSelector("[data-testid=metrics-table]")));
    assertThat(metrics.getText())
        .contains("ui_requests_total counter", "Requests served by the shop");
    browser.findElement(By.linkText("ui_requests_total")).click();
    WebElement detail =
        wait.until(ExpectedConditions.visibilityOfElementLocated(By.cssSelector(".detail table")));
    assertThat(detail.getText()).contains("route", "/cart, /checkout, /search");
    screenshot("explore");
    browser.findElement(By.linkText("Graph it")).click();
    wait.until(d -> panels().size() == 1 && legendSeries(panels().get(0)).size() == 3);
  }

  @Test
  void theStatusPageShowsBuildFlagsAndIngestCounters() throws Exception {
    browser.get(url("#/status"));
    WebElement flags =
        wait.until(ExpectedConditions.visibilityOfElementLocated(By.cssSelector("#flags table")));
    assertThat(flags.getText()).contains("--http-port " + server.apiPort());
    WebElement ingest =
        wait.until(ExpectedConditions.visibilityOfElementLocated(By.cssSelector("#ingest table")));
    assertThat(ingest.getText()).contains("tidemark_otlp_data_points_accepted_total");
    assertThat(browser.findElement(By.id("build")).getText()).contains("tidemark");
    ((JavascriptExecutor) browser).executeScript("window.scrollTo(0, 0)");
    screenshot("status");
  }
}
