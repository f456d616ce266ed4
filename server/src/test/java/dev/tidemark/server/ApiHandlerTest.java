package dev.tidemark.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.Histogram;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class ApiHandlerTest {

  private final AtomicBoolean ready = new AtomicBoolean();
  private final AtomicReference<String> writeRefusal = new AtomicReference<>();
  private final PrometheusRegistry registry = new PrometheusRegistry();
  private final HttpClient http =
      HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
  private Server server;
  private int port;

  @BeforeEach
  void start() throws Exception {
    server = new Server();
    ServerConnector c = new ServerConnector(server);
    c.setHost("127.0.0.1");
    c.setPort(0);
    server.addConnector(c);
    server.setHandler(new ApiHandler(registry, ready::get, writeRefusal::get, null));
    server.start();
    port = c.getLocalPort();
  }

  @AfterEach
  void stop() throws Exception {
    server.stop();
  }

  private HttpResponse<String> send(String method, String path, String accept) throws Exception {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
            .method(method, HttpRequest.BodyPublishers.noBody());
    if (accept != null) {
      b.header("Accept", accept);
    }
    return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void reloadIsForbiddenWithoutTheLifecycleApi() throws Exception {
    HttpResponse<String> r = send("POST", "/-/reload", null);
    assertThat(r.statusCode()).isEqualTo(403);
    assertThat(r.body()).startsWith("Lifecycle API is not enabled");
  }

  @Test
  void readyIs503UntilTheServerHasStartedAndAgainWhileItStops() throws Exception {
    HttpResponse<String> starting = send("GET", "/-/ready", null);
    assertThat(starting.statusCode()).isEqualTo(503);
    assertThat(starting.body()).isEqualTo("Tidemark is not ready.\n");
    assertThat(send("GET", "/-/healthy", null).statusCode()).isEqualTo(200);

    ready.set(true);
    assertThat(send("GET", "/-/ready", null).statusCode()).isEqualTo(200);
    ready.set(false);
    assertThat(send("GET", "/-/ready", null).statusCode()).isEqualTo(503);
  }

  @Test
  void readyIs503NamingTheReasonWhileEveryWriteIsRefused() throws Exception {
    ready.set(true);
    writeRefusal.set("the server's memory is nearly full (heap 93% after GC)");
    HttpResponse<String> refusing = send("GET", "/-/ready", null);
    assertThat(refusing.statusCode()).isEqualTo(503);
    assertThat(refusing.headers().firstValue("Content-Type")).hasValue("text/plain; charset=utf-8");
    assertThat(refusing.body())
        .isEqualTo(
            "Tidemark is not ready: writes are refused: the server's memory is nearly full"
                + " (heap 93% after GC)\n");
    assertThat(send("HEAD", "/-/ready", null).statusCode()).isEqualTo(503);
    HttpResponse<String> healthy = send("GET", "/-/healthy", null);
    assertThat(healthy.statusCode()).as("alive, only not taking writes").isEqualTo(200);
    assertThat(healthy.body()).isEqualTo("Tidemark is Healthy.\n");

    writeRefusal.set(null);
    HttpResponse<String> again = send("GET", "/-/ready", null);
    assertThat(again.statusCode()).isEqualTo(200);
    assertThat(again.body()).isEqualTo("Tidemark is Ready.\n");

    ready.set(false);
    writeRefusal.set("head memory is over its budget of 1 bytes");
    assertThat(send("GET", "/-/ready", null).body())
        .as("starting or stopping says so first")
        .isEqualTo("Tidemark is not ready.\n");
  }

  @Test
  void headAnswersWithoutBodyAndOtherMethodsGet405() throws Exception {
    HttpResponse<String> head = send("HEAD", "/-/healthy", null);
    assertThat(head.statusCode()).isEqualTo(200);
    assertThat(head.body()).isEmpty();
    assertThat(send("DELETE", "/metrics", null).statusCode()).isEqualTo(405);
    assertThat(send("GET", "/metrics/", null).statusCode()).isEqualTo(404);
  }

  @Test
  void theWebUiIsServedAtTheRootFromTheJarWithAPolicyThatKeepsItOnThisServer() throws Exception {
    HttpResponse<String> page = send("GET", "/", null);
    assertThat(page.statusCode()).isEqualTo(200);
    assertThat(page.headers().firstValue("Content-Type")).hasValue("text/html; charset=utf-8");
    assertThat(page.body()).contains("<script src=\"app.js\"></script>");
    assertThat(page.headers().firstValue("Content-Security-Policy"))
        .hasValueSatisfying(
            csp -> assertThat(csp).contains("default-src 'none'", "connect-src 'self'"));
    HttpResponse<String> js = send("GET", "/app.js", null);
    assertThat(js.statusCode()).isEqualTo(200);
    assertThat(js.headers().firstValue("Content-Type")).hasValue("text/javascript; charset=utf-8");
    assertThat(js.body())
        .as("no address but this server's")
        .isNotEmpty()
        .doesNotContain("https://");
    assertThat(send("GET", "/app.css", null).statusCode()).isEqualTo(200);
    assertThat(send("HEAD", "/", null).body()).isEmpty();
    assertThat(send("POST", "/", null).statusCode()).isEqualTo(405);
    assertThat(send("GET", "/app.map", null).statusCode()).isEqualTo(404);

    String etag = js.headers().firstValue("ETag").orElseThrow();
    HttpResponse<String> again =
        http.send(
            HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/app.js"))
                .header("If-None-Match", etag)
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(again.statusCode()).isEqualTo(304);
    assertThat(again.body()).isEmpty();
  }

  @Test
  void prometheusGraphLinksRedirectToTheQueryPage() throws Exception {
    HttpResponse<String> r = send("GET", "/graph?g0.expr=up&g0.tab=0", null);
    assertThat(r.statusCode()).isEqualTo(302);
    assertThat(r.headers().firstValue("Location")).hasValue("./#/query?g0.expr=up&g0.tab=0");
  }

  @Test
  void theQueryApiAnswers503UntilTheStoreIsOpen() throws Exception {
    HttpResponse<String> r = send("GET", "/api/v1/query?query=up", null);
    assertThat(r.statusCode()).isEqualTo(503);
    assertThat(r.body())
        .isEqualTo(
            "{\"status\":\"error\",\"errorType\":\"unavailable\",\"error\":\"Service Unavailable\"}");
  }

  @Test
  void metricsNegotiatesTheFormatAndDefaultsToPrometheusText() throws Exception {
    Counter.builder().name("things_total").help("Things.").register(registry).inc();
    HttpResponse<String> text = send("GET", "/metrics", null);
    assertThat(text.headers().firstValue("Content-Type").orElseThrow())
        .startsWith("text/plain; version=0.0.4");
    assertThat(text.body()).contains("# TYPE things_total counter\nthings_total 1.0\n");

    HttpResponse<String> om =
        send("GET", "/metrics", "application/openmetrics-text; version=1.0.0");
    assertThat(om.headers().firstValue("Content-Type").orElseThrow())
        .startsWith("application/openmetrics-text");
    assertThat(om.body()).endsWith("# EOF\n");
  }

  /**
   * {@code le} as Prometheus' Go client writes it ({@code expfmt}'s {@code writeFloat} in the text
   * format, {@code FormatOpenMetricsFloat} in OpenMetrics), not the Java client's {@code 1.0E-4}.
   */
  @Test
  void metricsWritesLeAsTheGoClientDoes() throws Exception {
    Histogram.builder()
        .name("waits_seconds")
        .help("Waits.")
        .classicUpperBounds(0.0001, 0.0005, 1, 2.5, 100000, 1e6)
        .labelNames("le_like")
        .register(registry)
        .labelValues("le=\"1.0\"")
        .observe(0.0002);
    String text = send("GET", "/metrics", null).body();
    assertThat(text)
        .contains(
            "waits_seconds_bucket{le_like=\"le=\\\"1.0\\\"\",le=\"0.0001\"} 0",
            "le=\"0.0005\"} 1",
            "le=\"1\"} 1",
            "le=\"2.5\"} 1",
            "le=\"100000\"} 1",
            "le=\"1e+06\"} 1",
            "le=\"+Inf\"} 1")
        .doesNotContain("le=\"1.0E-4\"", "le=\"1.0\"");
    String om = send("GET", "/metrics", "application/openmetrics-text; version=1.0.0").body();
    assertThat(om)
        .contains(
            "le=\"0.0001\"} 0",
            "le=\"0.0005\"} 1",
            "le=\"1.0\"} 1",
            "le=\"100000.0\"} 1",
            "le=\"1e+06\"} 1",
            "le=\"+Inf\"} 1")
        .doesNotContain("le=\"1.0E-4\"");
  }
}
