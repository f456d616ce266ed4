package dev.tidemark.it;

import static org.assertj.core.api.Assertions.assertThat;

import at.favre.lib.crypto.bcrypt.BCrypt;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.exporter.otlp.http.metrics.OtlpHttpMetricExporter;
import io.opentelemetry.exporter.otlp.metrics.OtlpGrpcMetricExporter;
import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.metrics.InstrumentType;
import io.opentelemetry.sdk.metrics.SdkMeterProvider;
import io.opentelemetry.sdk.metrics.data.AggregationTemporality;
import io.opentelemetry.sdk.metrics.export.CollectionRegistration;
import io.opentelemetry.sdk.metrics.export.MetricExporter;
import io.opentelemetry.sdk.metrics.export.MetricReader;
import io.opentelemetry.sdk.resources.Resource;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code --web-config-file} (Prometheus' web configuration format) with real clients: curl over TLS
 * with and without basic auth credentials and client certificates, the OpenTelemetry Java SDK's
 * OTLP/gRPC and OTLP/HTTP exporters over TLS with an {@code Authorization} header, and a real
 * Prometheus that scrapes Tidemark's {@code /metrics} and remote-writes to it, both with {@code
 * basic_auth} and {@code tls_config}. Certificates come from {@link TestCerts} (keytool).
 */
class WebConfigIT {
  private static final ObjectMapper JSON = new ObjectMapper();

  @TempDir Path tmp;

  static String bcrypt(String password) {
    return BCrypt.with(BCrypt.Version.VERSION_2Y).hashToString(4, password.toCharArray());
  }

  static String basic(String user, String password) {
    return "Basic "
        + Base64.getEncoder()
            .encodeToString((user + ":" + password).getBytes(StandardCharsets.UTF_8));
  }

  /** Runs curl with {@code args}; its output is the body then the status code on a last line. */
  static Curl curl(String... args) throws IOException, InterruptedException {
    List<String> cmd =
        new ArrayList<>(List.of("curl", "-sS", "--max-time", "20", "-w", "\n%{http_code}"));
    cmd.addAll(List.of(args));
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    p.waitFor(30, TimeUnit.SECONDS);
    int nl = out.lastIndexOf('\n');
    return new Curl(p.exitValue(), out.substring(0, Math.max(0, nl)), out.substring(nl + 1));
  }

  record Curl(int exit, String body, String status) {}

  @Test
  void tlsAndBasicAuthForCurlTheOtelSdkAndPrometheus() throws Exception {
    TestCerts certs = TestCerts.make(tmp.resolve("certs"));
    Path web = tmp.resolve("web.yml");
    Files.writeString(
        web,
        "tls_server_config:\n"
            + "  cert_file: certs/server.crt\n" // relative to this file, as in Prometheus
            + "  key_file: certs/server.key\n"
            + "basic_auth_users:\n"
            + "  otel: "
            + bcrypt("otel-secret")
            + "\n"
            + "  prom: "
            + bcrypt("prom-secret")
            + "\n");
    try (ServerProcess tm =
        ServerProcess.start(tmp.resolve("data"), "--web-config-file", web.toString())) {
      assertThat(tm.log()).contains("basic authentication (2 user(s))", "TLS (TLSv1.2, TLSv1.3");
      String api = "https://127.0.0.1:" + tm.apiPort();
      String ca = certs.ca.toString();

      // curl: the right password is let in, a wrong or missing one gets 401 and the challenge
      Curl ok = curl("--cacert", ca, "-u", "prom:prom-secret", api + "/-/ready");
      assertThat(ok.status()).as(ok.body()).isEqualTo("200");
      Curl none = curl("--cacert", ca, "-i", api + "/api/v1/labels");
      assertThat(none.status()).isEqualTo("401");
      assertThat(none.body())
          .containsIgnoringCase("www-authenticate: Basic")
          .contains("Unauthorized");
      assertThat(curl("--cacert", ca, "-u", "prom:wrong", api + "/metrics").status())
          .isEqualTo("401");
      assertThat(curl("--cacert", ca, "-u", "nobody:prom-secret", api + "/metrics").status())
          .isEqualTo("401");
      // plain HTTP to a TLS port is no request; TLS 1.1 is below the default min_version
      assertThat(
              curl("-u", "prom:prom-secret", "http://127.0.0.1:" + tm.apiPort() + "/-/ready")
                  .status())
          .isNotEqualTo("200");
      assertThat(
              curl(
                      "--cacert",
                      ca,
                      "--tlsv1.1",
                      "--tls-max",
                      "1.1",
                      "-u",
                      "prom:prom-secret",
                      api + "/-/ready")
                  .exit())
          .isNotZero();
      // OTLP/HTTP on its own port: the same TLS and users
      Curl otlpNoAuth =
          curl(
              "--cacert",
              ca,
              "-H",
              "Content-Type: application/json",
              "-d",
              "{}",
              "https://127.0.0.1:" + tm.otlpHttpPort() + "/v1/metrics");
      assertThat(otlpNoAuth.status()).isEqualTo("401");

      // the OpenTelemetry SDK over TLS with an Authorization header, gRPC and HTTP
      byte[] caPem = Files.readAllBytes(certs.ca);
      String auth = basic("otel", "otel-secret");
      assertThat(
              export(
                  OtlpGrpcMetricExporter.builder()
                      .setEndpoint("https://127.0.0.1:" + tm.grpcPort())
                      .setTrustedCertificates(caPem)
                      .addHeader("Authorization", auth)
                      .setTimeout(Duration.ofSeconds(20))
                      .build(),
                  "grpc"))
          .as("gRPC export with the password")
          .isTrue();
      assertThat(
              export(
                  OtlpHttpMetricExporter.builder()
                      .setEndpoint("https://127.0.0.1:" + tm.otlpHttpPort() + "/v1/metrics")
                      .setTrustedCertificates(caPem)
                      .addHeader("Authorization", auth)
                      .setTimeout(Duration.ofSeconds(20))
                      .build(),
                  "http"))
          .as("HTTP export with the password")
          .isTrue();
      assertThat(
              export(
                  OtlpGrpcMetricExporter.builder()
                      .setEndpoint("https://127.0.0.1:" + tm.grpcPort())
                      .setTrustedCertificates(caPem)
                      .addHeader("Authorization", basic("otel", "wrong"))
                      .setTimeout(Duration.ofSeconds(20))
                      .build(),
                  "refused"))
          .as("gRPC export with a wrong password")
          .isFalse();
      Curl query =
          curl(
              "--cacert",
              ca,
              "-u",
              "prom:prom-secret",
              "-G",
              api + "/api/v1/query",
              "--data-urlencode",
              "query=sort(tls_checks_total)");
      assertThat(query.status()).as(query.body()).isEqualTo("200");
      JsonNode result = JSON.readTree(query.body()).path("data").path("result");
      assertThat(result).hasSize(2);
      assertThat(result.toString())
          .contains("\"via\":\"grpc\"", "\"via\":\"http\"")
          .doesNotContain("refused");

      // a real Prometheus scrapes /metrics and remote-writes what it scraped, both over TLS with
      // basic_auth
      String tlsAuth =
          "    basic_auth: {username: prom, password: prom-secret}\n"
              + "    tls_config: {ca_file: "
              + ca
              + "}\n";
      String config =
          "global: {scrape_interval: 1s}\n"
              + "scrape_configs:\n"
              + "  - job_name: tidemark\n"
              + "    scheme: https\n"
              + tlsAuth
              + "    static_configs: [{targets: ['127.0.0.1:"
              + tm.apiPort()
              + "']}]\n"
              + "remote_write:\n"
              + "  - url: "
              + api
              + "/api/v1/write\n"
              + tlsAuth
              + "    queue_config: {batch_send_deadline: 1s}\n";
      try (PrometheusProcess prom = PrometheusProcess.start(tmp, config)) {
        JsonNode up =
            prom.queryUntil(
                "up{job=\"tidemark\"}",
                r -> r.size() == 1 && r.get(0).path("value").get(1).asText().equals("1"));
        assertThat(up).as(prom.log()).isNotNull();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        String written = "";
        while (System.nanoTime() < deadline) {
          Curl c =
              curl(
                  "--cacert",
                  ca,
                  "-u",
                  "prom:prom-secret",
                  "-G",
                  api + "/api/v1/query",
                  "--data-urlencode",
                  "query=up{job=\"tidemark\"}");
          written = c.body();
          if (JSON.readTree(written).path("data").path("result").size() == 1) {
            break;
          }
          Thread.sleep(250);
        }
        assertThat(
                JSON.readTree(written)
                    .path("data")
                    .path("result")
                    .path(0)
                    .path("value")
                    .path(1)
                    .asText())
            .as("up{job=tidemark} remote-written into Tidemark: %s\n%s", written, prom.log())
            .isEqualTo("1");
      }
    }
  }

  @Test
  void clientCertificatesAreRequiredAndVerified() throws Exception {
    TestCerts certs = TestCerts.make(tmp.resolve("certs"));
    Path web = tmp.resolve("web.yml");
    Files.writeString(
        web,
        "tls_server_config:\n"
            + "  cert_file: "
            + certs.serverCert
            + "\n"
            + "  key_file: "
            + certs.serverKey
            + "\n"
            + "  client_auth_type: RequireAndVerifyClientCert\n"
            + "  client_ca_file: "
            + certs.ca
            + "\n"
            + "  min_version: TLS13\n");
    try (ServerProcess tm =
        ServerProcess.start(tmp.resolve("data"), "--web-config-file", web.toString())) {
      String api = "https://127.0.0.1:" + tm.apiPort() + "/-/ready";
      String ca = certs.ca.toString();
      assertThat(curl("--cacert", ca, api).exit()).as("no client certificate").isNotZero();
      Curl withCert =
          curl(
              "--cacert",
              ca,
              "--cert",
              certs.clientCert.toString(),
              "--key",
              certs.clientKey.toString(),
              api);
      assertThat(withCert.status()).as(withCert.body()).isEqualTo("200");
      assertThat(
              curl(
                      "--cacert",
                      ca,
                      "--cert",
                      certs.clientCert.toString(),
                      "--key",
                      certs.clientKey.toString(),
                      "--tls-max",
                      "1.2",
                      api)
                  .exit())
          .as("TLS 1.2 below min_version TLS13")
          .isNotZero();
      byte[] caPem = Files.readAllBytes(certs.ca);
      assertThat(
              export(
                  OtlpGrpcMetricExporter.builder()
                      .setEndpoint("https://127.0.0.1:" + tm.grpcPort())
                      .setTrustedCertificates(caPem)
                      .setClientTls(
                          Files.readAllBytes(certs.clientKey), Files.readAllBytes(certs.clientCert))
                      .setTimeout(Duration.ofSeconds(20))
                      .build(),
                  "mtls"))
          .as("gRPC export with a client certificate")
          .isTrue();
      assertThat(
              export(
                  OtlpGrpcMetricExporter.builder()
                      .setEndpoint("https://127.0.0.1:" + tm.grpcPort())
                      .setTrustedCertificates(caPem)
                      .setTimeout(Duration.ofSeconds(10))
                      .build(),
                  "no-cert"))
          .as("gRPC export without a client certificate")
          .isFalse();
    }
  }

  @Test
  void sighupAndReloadSwapUsersAndCertificatesAndRefuseABadFileWithJsonLogs() throws Exception {
    TestCerts first = TestCerts.make(tmp.resolve("first"));
    TestCerts second = TestCerts.make(tmp.resolve("second")); // another CA
    Path web = tmp.resolve("web.yml");
    String tls = "tls_server_config:\n  cert_file: %s\n  key_file: %s\n";
    Files.writeString(
        web,
        String.format(tls, first.serverCert, first.serverKey)
            + "basic_auth_users:\n  alice: "
            + bcrypt("a-pass")
            + "\n");
    try (ServerProcess tm =
        ServerProcess.start(
            tmp.resolve("data"),
            "--web-config-file",
            web.toString(),
            "--web-enable-lifecycle",
            "--log-format",
            "json")) {
      String ready = "https://127.0.0.1:" + tm.apiPort() + "/-/ready";
      assertThat(curl("--cacert", first.ca.toString(), "-u", "alice:a-pass", ready).status())
          .isEqualTo("200");

      // SIGHUP: a new user and a certificate of another CA, for the next handshake
      Files.writeString(
          web,
          String.format(tls, second.serverCert, second.serverKey)
              + "basic_auth_users:\n  bob: "
              + bcrypt("b-pass")
              + "\n");
      if (tm.log().contains("SIGHUP is ignored and does not reload the configuration")) {
        // This test runs under nohup (the server inherits SIGHUP ignored, and the JVM keeps it
        // so, saying so in the log): the same reload through POST /-/reload.
        Curl reload =
            curl(
                "--cacert",
                first.ca.toString(),
                "-u",
                "alice:a-pass",
                "-X",
                "POST",
                "https://127.0.0.1:" + tm.apiPort() + "/-/reload");
        assertThat(reload.status()).isEqualTo("200");
      } else {
        Process kill = new ProcessBuilder("kill", "-HUP", Long.toString(tm.pid())).start();
        assertThat(kill.waitFor()).isZero();
      }
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
      while (!tm.log().contains("configuration reloaded") && System.nanoTime() < deadline) {
        Thread.sleep(100);
      }
      assertThat(tm.isAlive()).as("SIGHUP does not stop the server").isTrue();
      assertThat(tm.log()).contains("configuration reloaded");
      assertThat(curl("--cacert", second.ca.toString(), "-u", "bob:b-pass", ready).status())
          .isEqualTo("200");
      assertThat(curl("--cacert", second.ca.toString(), "-u", "alice:a-pass", ready).status())
          .isEqualTo("401");
      assertThat(curl("--cacert", first.ca.toString(), "-u", "bob:b-pass", ready).exit())
          .as("the old CA no longer verifies the server")
          .isNotZero();

      // POST /-/reload with a bad file: 500 with the error, everything kept
      Files.writeString(web, "basic_auth_users:\n  carol: not-a-hash\n");
      String base = "https://127.0.0.1:" + tm.apiPort();
      String ca = second.ca.toString();
      Curl refused = curl("--cacert", ca, "-u", "bob:b-pass", "-X", "POST", base + "/-/reload");
      assertThat(refused.status()).isEqualTo("500");
      assertThat(refused.body()).startsWith("failed to reload config: ").contains("carol");
      assertThat(curl("--cacert", ca, "-u", "bob:b-pass", ready).status()).isEqualTo("200");
      assertThat(curl("--cacert", ca, "-u", "bob:b-pass", base + "/metrics").body())
          .contains("tidemark_config_last_reload_successful 0");
      // and every log line is one JSON object
      for (String line : tm.log().split("\n")) {
        JsonNode n = JSON.readTree(line);
        assertThat(n.path("time").asText()).as(line).isNotEmpty();
        assertThat(n.path("level").asText()).as(line).isIn("DEBUG", "INFO", "WARN", "ERROR");
        assertThat(n.path("msg").isTextual()).as(line).isTrue();
      }
    }
  }

  /**
   * One counter point {@code tls_checks_total{via=...}} collected by the SDK and handed to {@code
   * exporter}; whether the export succeeded (the exporter's own result: a reader's flush reports
   * success whatever its exporter answered).
   */
  static boolean export(MetricExporter exporter, String via) {
    CollectionRegistration[] registration = {CollectionRegistration.noop()};
    MetricReader reader =
        new MetricReader() {
          @Override
          public void register(CollectionRegistration r) {
            registration[0] = r;
          }

          @Override
          public AggregationTemporality getAggregationTemporality(InstrumentType type) {
            return AggregationTemporality.CUMULATIVE;
          }

          @Override
          public CompletableResultCode forceFlush() {
            return CompletableResultCode.ofSuccess();
          }

          @Override
          public CompletableResultCode shutdown() {
            return CompletableResultCode.ofSuccess();
          }
        };
    SdkMeterProvider provider =
        SdkMeterProvider.builder()
            .setResource(Resource.create(Attributes.builder().put("service.name", "tls").build()))
            .registerMetricReader(reader)
            .build();
    try {
      provider
          .get("it")
          .counterBuilder("tls.checks")
          .build()
          .add(3, Attributes.builder().put("via", via).build());
      return exporter
          .export(registration[0].collectAllMetrics())
          .join(30, TimeUnit.SECONDS)
          .isSuccess();
    } finally {
      exporter.shutdown().join(10, TimeUnit.SECONDS);
      provider.shutdown().join(10, TimeUnit.SECONDS);
    }
  }
}
