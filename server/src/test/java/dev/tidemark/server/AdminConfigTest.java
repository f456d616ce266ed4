package dev.tidemark.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The admin settings: --admin-port, --admin-token, TIDEMARK_ADMIN_TOKEN, YAML. */
class AdminConfigTest {
  @TempDir Path dir;

  @Test
  void defaults() {
    ServerConfig c = ServerConfig.load(null, Map.of(), Map.of());
    assertThat(c.adminPort()).isEqualTo(9091);
    assertThat(c.adminToken()).isNull();
    assertThat(c.toString()).contains("adminPort=9091", "adminToken=none");
  }

  @Test
  void tokenFromEnvironmentFileAndFlagFlagWinning() throws IOException {
    Path yml = dir.resolve("t.yml");
    Files.writeString(yml, "admin-token: from-file\nadmin-port: 9191\n");
    assertThat(ServerConfig.load(yml, Map.of(), Map.of()).adminToken()).isEqualTo("from-file");
    assertThat(ServerConfig.load(yml, Map.of(), Map.of()).adminPort()).isEqualTo(9191);
    assertThat(
            ServerConfig.load(yml, Map.of(), Map.of("TIDEMARK_ADMIN_TOKEN", "from-env"))
                .adminToken())
        .isEqualTo("from-env");
    assertThat(
            ServerConfig.load(
                    null,
                    Map.of("admin-token", "from-flag"),
                    Map.of("TIDEMARK_ADMIN_TOKEN", "from-env"))
                .adminToken())
        .isEqualTo("from-flag");
    assertThat(ServerConfig.load(null, Map.of(), Map.of("TIDEMARK_ADMIN_TOKEN", "")).adminToken())
        .isNull();
    assertThat(ServerConfig.load(null, Map.of("admin-token", "x"), Map.of()).toString())
        .contains("adminToken=set")
        .doesNotContain("=x,");
  }

  @Test
  void badTokensAndPortsAreRefusedWithoutEchoingTheToken() {
    assertThatThrownBy(
            () -> ServerConfig.load(null, Map.of("admin-token", "has space secret"), Map.of()))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("admin-token")
        .hasMessageContaining("printable ASCII")
        .hasMessageNotContaining("secret");
    assertThatThrownBy(() -> ServerConfig.load(null, Map.of("admin-token", ""), Map.of()))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("must not be empty");
    assertThatThrownBy(() -> ServerConfig.load(null, Map.of("admin-port", "9090"), Map.of()))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("admin-port")
        .hasMessageContaining("http-port");
    assertThatThrownBy(() -> Main.parseConfig("--admin-port", "70000"))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("admin-port");
  }
}
