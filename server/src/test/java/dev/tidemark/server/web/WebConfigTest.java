package dev.tidemark.server.web;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import at.favre.lib.crypto.bcrypt.BCrypt;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPairGenerator;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class WebConfigTest {
  @TempDir Path dir;

  private WebConfig read(String yaml) throws Exception {
    Path f = dir.resolve("web.yml");
    Files.writeString(f, yaml);
    return WebConfig.read(f);
  }

  private void refused(String yaml, String... words) {
    assertThatThrownBy(() -> read(yaml))
        .isInstanceOf(WebConfigException.class)
        .hasMessageContainingAll(words);
  }

  @Test
  void tlsWithCertificatesRelativeToTheFile() throws Exception {
    SelfSigned.make(dir, "rsa", "RSA");
    SelfSigned.make(dir, "ec", "EC");
    WebConfig w =
        read(
            "tls_server_config:\n  cert_file: rsa.crt\n  key_file: rsa.key\n  max_version: TLS12\n");
    assertThat(w.hasTls()).isTrue();
    assertThat(w.tls().protocols()).containsExactly("TLSv1.2");
    assertThat(w.tls().clientAuth()).isEqualTo(WebConfig.ClientAuth.NO_CLIENT_CERT);
    assertThat(
            read("tls_server_config:\n  cert_file: ec.crt\n  key_file: ec.key\n").tls().protocols())
        .containsExactly("TLSv1.2", "TLSv1.3");
    refused("tls_server_config:\n  cert_file: rsa.crt\n  key_file: ec.key\n", "does not match");
    refused("tls_server_config:\n  cert_file: rsa.crt\n", "missing key_file");
    refused(
        "tls_server_config:\n  cert_file: nosuch.crt\n  key_file: rsa.key\n",
        "nosuch.crt",
        "does not exist");
    refused("tls_server_config:\n  cert_file: rsa.key\n  key_file: rsa.key\n", "no certificate");
    refused(
        "tls_server_config:\n  cert_file: rsa.crt\n  key_file: rsa.key\n  client_ca_file: rsa.crt\n",
        "client_ca_file is set without a client_auth_type");
    refused(
        "tls_server_config:\n  cert_file: rsa.crt\n  key_file: rsa.key\n"
            + "  client_auth_type: RequireAndVerifyClientCert\n",
        "needs client_ca_file");
    refused(
        "tls_server_config:\n  cert_file: rsa.crt\n  key_file: rsa.key\n  client_auth_type: Maybe\n",
        "invalid client_auth_type 'Maybe'");
    refused(
        "tls_server_config:\n  cert_file: rsa.crt\n  key_file: rsa.key\n  min_version: TLS14\n",
        "invalid min_version 'TLS14'");
    refused(
        "tls_server_config:\n  cert_file: rsa.crt\n  key_file: rsa.key\n  cipher_suites: [x]\n",
        "tls_server_config.cipher_suites is not supported");
    // exporter-toolkit's old name, and an empty TLS section is no TLS
    assertThat(
            read("tls_server_config:\n  cert_file: rsa.crt\n  key_file: rsa.key\n"
                    + "  client_auth_type: RequireClientCert\n")
                .tls()
                .clientAuth())
        .isEqualTo(WebConfig.ClientAuth.REQUIRE_ANY_CLIENT_CERT);
    assertThat(read("tls_server_config: {}\n").hasTls()).isFalse();
  }

  @Test
  void usersNeedBcryptHashes() throws Exception {
    String h = BCrypt.with(BCrypt.Version.VERSION_2Y).hashToString(4, "pw".toCharArray());
    WebConfig w = read("basic_auth_users:\n  alice: " + h + "\n");
    assertThat(w.users()).containsExactly(Map.entry("alice", h));
    refused("basic_auth_users:\n  alice: pw\n", "user 'alice'", "not a bcrypt hash");
    refused("http_server_config: {http2: false}\n", "http_server_config is not supported");
    refused("- a\n", "must be a mapping");
    assertThat(read("").hasAuth()).isFalse();
    assertThatThrownBy(() -> WebConfig.read(dir.resolve("none.yml")))
        .hasMessageContaining("does not exist");
  }

  @Test
  void basicAuthChecksPasswordsAndUsersCanBeReplaced() {
    String h2y = BCrypt.with(BCrypt.Version.VERSION_2Y).hashToString(4, "secret".toCharArray());
    String h2a = BCrypt.with(BCrypt.Version.VERSION_2A).hashToString(4, "other".toCharArray());
    BasicAuth auth = new BasicAuth(Map.of());
    assertThat(auth.allows(null)).isTrue(); // no users: open
    auth.users(Map.of("alice", h2y, "bob", h2a));
    assertThat(auth.allows(basic("alice", "secret"))).isTrue();
    assertThat(auth.allows(basic("alice", "secret"))).isTrue(); // from the cache
    assertThat(auth.allows(basic("bob", "other"))).isTrue();
    assertThat(auth.allows(basic("alice", "other"))).isFalse();
    assertThat(auth.allows(basic("carol", "secret"))).isFalse();
    assertThat(auth.allows(null)).isFalse();
    assertThat(auth.allows("Bearer secret")).isFalse();
    assertThat(auth.allows("Basic !!!")).isFalse();
    assertThat(auth.allows("basic " + b64("alice:secret"))).isTrue(); // the scheme's case
    auth.users(Map.of("bob", h2a));
    assertThat(auth.allows(basic("alice", "secret"))).as("a removed user, cached before").isFalse();
  }

  @Test
  void rsaPkcs1KeysAreWrappedAsPkcs8() throws Exception {
    KeyPairGenerator g = KeyPairGenerator.getInstance("RSA");
    g.initialize(2048);
    byte[] pkcs8 = g.generateKeyPair().getPrivate().getEncoded();
    // a 2048-bit key's PKCS #8 header is 26 bytes: SEQUENCE, version, rsaEncryption, OCTET STRING
    byte[] pkcs1 = Arrays.copyOfRange(pkcs8, 26, pkcs8.length);
    assertThat(Pem.rsaPkcs1ToPkcs8(pkcs1)).isEqualTo(pkcs8);
    Path key = dir.resolve("rsa1.key");
    Files.writeString(key, SelfSigned.pem("RSA PRIVATE KEY", pkcs1));
    assertThat(Pem.privateKey(key, "key_file").getEncoded()).isEqualTo(pkcs8);
    Files.writeString(key, SelfSigned.pem("EC PRIVATE KEY", pkcs1));
    assertThatThrownBy(() -> Pem.privateKey(key, "key_file")).hasMessageContaining("openssl pkcs8");
  }

  @Test
  void turningTlsOnOrOffIsNotAReload() throws Exception {
    SelfSigned.make(dir, "rsa", "RSA");
    WebConfig tls = read("tls_server_config:\n  cert_file: rsa.crt\n  key_file: rsa.key\n");
    WebSecurity plain = new WebSecurity(WebConfig.none());
    assertThat(plain.reloadProblem(tls)).contains("now has tls_server_config", "restart");
    WebSecurity secured = new WebSecurity(tls);
    assertThat(secured.reloadProblem(WebConfig.none())).contains("no longer has tls_server_config");
    assertThatThrownBy(() -> secured.apply(WebConfig.none()))
        .isInstanceOf(IllegalArgumentException.class);
    assertThat(secured.reloadProblem(tls)).isNull();
    secured.apply(tls);
    assertThat(secured.tls().current()).isSameAs(tls.tls());
    assertThat(List.of(secured.config())).containsExactly(tls);
  }

  private static String basic(String user, String password) {
    return "Basic " + b64(user + ":" + password);
  }

  private static String b64(String s) {
    return Base64.getEncoder().encodeToString(s.getBytes(StandardCharsets.UTF_8));
  }
}
