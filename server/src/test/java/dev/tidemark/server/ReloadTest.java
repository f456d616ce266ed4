package dev.tidemark.server;

import static org.assertj.core.api.Assertions.assertThat;

import at.favre.lib.crypto.bcrypt.BCrypt;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A reload ({@link TidemarkServer#reload()}, {@code POST /-/reload}) of a server started from a
 * config file and a web config file: what changes, what is kept, and a bad file refused whole.
 */
class ReloadTest {
  @TempDir Path dir;

  private final HttpClient http =
      HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
  private TidemarkServer server;

  @AfterEach
  void stop() {
    if (server != null) {
      server.close();
    }
  }

  private static String hash(String password) {
    return BCrypt.with(BCrypt.Version.VERSION_2Y).hashToString(4, password.toCharArray());
  }

  private HttpResponse<String> send(String method, String path, String user, String password)
      throws Exception {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.httpPort() + path))
            .method(method, HttpRequest.BodyPublishers.noBody());
    if (user != null) {
      b.header(
          "Authorization",
          "Basic "
              + Base64.getEncoder()
                  .encodeToString((user + ":" + password).getBytes(StandardCharsets.UTF_8)));
    }
    return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void reloadAppliesUsersAndRetentionAndRefusesABadFileKeepingTheRunningConfig() throws Exception {
    Path yml = dir.resolve("tidemark.yml");
    Path web = dir.resolve("web.yml");
    Files.writeString(yml, "retention: 2d\nshutdown-timeout: 5s\n");
    Files.writeString(web, "basic_auth_users:\n  alice: " + hash("a-pass") + "\n");
    Map<String, Object> flags = new LinkedHashMap<>();
    flags.put("data-dir", dir.resolve("data").toString());
    for (String port :
        new String[] {"otlp-grpc-port", "otlp-http-port", "http-port", "admin-port"}) {
      flags.put(port, "0");
    }
    flags.put("web-config-file", web.toString());
    flags.put("web-enable-lifecycle", "true");
    server = TidemarkServer.start(ServerConfig.load(yml, flags, Map.of()));

    assertThat(send("GET", "/api/v1/status/flags", null, null).statusCode()).isEqualTo(401);
    assertThat(send("GET", "/api/v1/status/flags", "alice", "a-pass").body())
        .contains("\"retention\":\"2d\"");
    assertThat(send("GET", "/metrics", "alice", "a-pass").body())
        .contains("tidemark_config_last_reload_successful 1.0");

    // new users, new retention, and a setting that needs a restart
    Files.writeString(yml, "retention: 3d\nshutdown-timeout: 5s\nmax-future-skew: 1m\n");
    Files.writeString(web, "basic_auth_users:\n  bob: " + hash("b-pass") + "\n");
    assertThat(send("GET", "/-/reload", "alice", "a-pass").statusCode()).isEqualTo(405);
    HttpResponse<String> reloaded = send("POST", "/-/reload", "alice", "a-pass");
    assertThat(reloaded.statusCode()).as(reloaded.body()).isEqualTo(200);
    assertThat(send("GET", "/-/ready", "alice", "a-pass").statusCode()).isEqualTo(401);
    assertThat(send("GET", "/-/ready", "bob", "b-pass").statusCode()).isEqualTo(200);
    assertThat(server.engine().retention()).isEqualTo(Duration.ofDays(3));
    String shown = send("GET", "/api/v1/status/flags", "bob", "b-pass").body();
    assertThat(shown).contains("\"retention\":\"3d\"").contains("\"max-future-skew\":\"10m\"");
    assertThat(send("GET", "/api/v1/status/config", "bob", "b-pass").body())
        .contains("retention: \\\"3d\\\"")
        .contains("max-future-skew: \\\"10m\\\"");
    assertThat(server.config().engineConfig().maxFutureSkew()).isEqualTo(Duration.ofMinutes(10));

    // a bad value: refused whole, the error answered, the running config kept
    Files.writeString(yml, "retention: 4d\nshutdown-timeout: banana\n");
    Files.writeString(web, "basic_auth_users:\n  carol: " + hash("c-pass") + "\n");
    HttpResponse<String> refused = send("POST", "/-/reload", "bob", "b-pass");
    assertThat(refused.statusCode()).isEqualTo(500);
    assertThat(refused.body()).startsWith("failed to reload config: ").contains("shutdown-timeout");
    assertThat(send("GET", "/-/ready", "bob", "b-pass").statusCode()).isEqualTo(200);
    assertThat(send("GET", "/-/ready", "carol", "c-pass").statusCode()).isEqualTo(401);
    assertThat(server.engine().retention()).isEqualTo(Duration.ofDays(3));
    assertThat(send("GET", "/metrics", "bob", "b-pass").body())
        .contains("tidemark_config_last_reload_successful 0.0");
    assertThat(send("GET", "/api/v1/status/runtimeinfo", "bob", "b-pass").body())
        .contains("\"reloadConfigSuccess\":false");

    // a bad web config file (a hash that is not bcrypt) is refused the same way
    Files.writeString(yml, "retention: 4d\nshutdown-timeout: 5s\n");
    Files.writeString(web, "basic_auth_users:\n  carol: plaintext\n");
    assertThat(server.reload()).contains("carol").contains("not a bcrypt hash");
    assertThat(server.engine().retention()).isEqualTo(Duration.ofDays(3));

    // fixed: applied, and the gauge says so
    Files.writeString(web, "basic_auth_users:\n  carol: " + hash("c-pass") + "\n");
    assertThat(server.reload()).isNull();
    assertThat(server.engine().retention()).isEqualTo(Duration.ofDays(4));
    assertThat(send("GET", "/metrics", "carol", "c-pass").body())
        .contains("tidemark_config_last_reload_successful 1.0");
  }
}
