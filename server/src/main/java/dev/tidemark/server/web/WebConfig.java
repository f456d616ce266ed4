package dev.tidemark.server.web;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * A web configuration file in Prometheus' format (exporter-toolkit's {@code web-config.yml}, what
 * Prometheus' {@code --web.config.file} reads), read and checked whole: the certificate, key and CA
 * files it names are loaded here, so a file that reads is a file that serves. Immutable.
 *
 * <pre>
 * tls_server_config:
 *   cert_file: server.crt          # PEM, leaf first; relative paths are relative to this file
 *   key_file: server.key           # PEM, unencrypted (PKCS #8 or PKCS #1)
 *   client_auth_type: RequireAndVerifyClientCert   # default NoClientCert
 *   client_ca_file: ca.crt
 *   min_version: TLS12             # TLS10..TLS13; default TLS12; max_version too
 * basic_auth_users:
 *   alice: $2y$10$...              # bcrypt hash (htpasswd -nBC 10 alice)
 * </pre>
 *
 * <p>As in exporter-toolkit: a {@code tls_server_config} with no key set means no TLS; {@code
 * client_ca_file} without a client auth type is an error; {@code RequireClientCert} is the old name
 * of {@code RequireAnyClientCert}; every bcrypt hash must parse. Unlike it, a verifying client auth
 * type needs {@code client_ca_file} (Go would fall back to the system's roots), and the keys
 * Tidemark does not implement ({@code http_server_config}, {@code cipher_suites}, inline {@code
 * cert}, ...) are refused by name rather than ignored.
 */
public final class WebConfig {

  /** TLS versions by their names in the file. */
  static final Map<String, String> VERSIONS =
      Map.of("TLS10", "TLSv1", "TLS11", "TLSv1.1", "TLS12", "TLSv1.2", "TLS13", "TLSv1.3");

  /** The client auth types, as exporter-toolkit names them. */
  public enum ClientAuth {
    NO_CLIENT_CERT("NoClientCert", false, false),
    REQUEST_CLIENT_CERT("RequestClientCert", false, false),
    REQUIRE_ANY_CLIENT_CERT("RequireAnyClientCert", true, false),
    VERIFY_CLIENT_CERT_IF_GIVEN("VerifyClientCertIfGiven", false, true),
    REQUIRE_AND_VERIFY_CLIENT_CERT("RequireAndVerifyClientCert", true, true);

    final String text;
    final boolean required;
    final boolean verified;

    ClientAuth(String text, boolean required, boolean verified) {
      this.text = text;
      this.required = required;
      this.verified = verified;
    }

    static ClientAuth of(String text, Path file) {
      if (text == null || text.isEmpty()) {
        return NO_CLIENT_CERT;
      }
      if (text.equals("RequireClientCert")) {
        return REQUIRE_ANY_CLIENT_CERT;
      }
      for (ClientAuth a : values()) {
        if (a.text.equals(text)) {
          return a;
        }
      }
      throw new WebConfigException(
          "web config file "
              + file
              + ": invalid client_auth_type '"
              + text
              + "' (NoClientCert, RequestClientCert, RequireAnyClientCert, VerifyClientCertIfGiven"
              + " or RequireAndVerifyClientCert)");
    }
  }

  /**
   * The TLS part.
   *
   * @param chain the server's certificate chain, leaf first
   * @param key the leaf's private key
   * @param clientAuth what is asked of clients
   * @param clientCas the roots client certificates are verified against (empty unless verified)
   * @param protocols the JSSE protocol names from min_version to max_version
   */
  public record Tls(
      List<X509Certificate> chain,
      PrivateKey key,
      ClientAuth clientAuth,
      List<X509Certificate> clientCas,
      List<String> protocols) {}

  private static final Set<String> TOP = Set.of("tls_server_config", "basic_auth_users");
  private static final Set<String> TLS_KEYS =
      Set.of(
          "cert_file",
          "key_file",
          "client_auth_type",
          "client_ca_file",
          "min_version",
          "max_version");
  private static final Pattern BCRYPT = Pattern.compile("\\$2[aby]\\$(\\d\\d)\\$[./A-Za-z0-9]{53}");

  private final Path file;
  private final Tls tls;
  private final Map<String, String> users;

  private WebConfig(Path file, Tls tls, Map<String, String> users) {
    this.file = file;
    this.tls = tls;
    this.users = Map.copyOf(users);
  }

  /** No TLS, no users: what a server without {@code --web-config-file} serves. */
  public static WebConfig none() {
    return new WebConfig(null, null, Map.of());
  }

  /** The file this was read from, or null for {@link #none()}. */
  public Path file() {
    return file;
  }

  /** The TLS settings, or null: plain HTTP and gRPC. */
  public Tls tls() {
    return tls;
  }

  /** User name to bcrypt hash; empty: no authentication. */
  public Map<String, String> users() {
    return users;
  }

  /** Whether TLS is on. */
  public boolean hasTls() {
    return tls != null;
  }

  /** Whether requests must carry a user's password. */
  public boolean hasAuth() {
    return !users.isEmpty();
  }

  /**
   * Reads and checks {@code file} and every file it names.
   *
   * @throws WebConfigException naming the file, the key and the problem
   */
  public static WebConfig read(Path file) {
    String text;
    try {
      text = Files.readString(file);
    } catch (NoSuchFileException e) {
      throw new WebConfigException("web config file " + file + " does not exist");
    } catch (IOException e) {
      throw new WebConfigException("cannot read web config file " + file + ": " + e.getMessage());
    }
    JsonNode root;
    try {
      root = new ObjectMapper(new YAMLFactory()).readTree(text);
    } catch (JsonProcessingException e) {
      throw new WebConfigException(
          "web config file "
              + file
              + " is not valid YAML: "
              + e.getOriginalMessage()
              + (e.getLocation() == null ? "" : " (line " + e.getLocation().getLineNr() + ")"));
    }
    if (root == null || root.isMissingNode() || root.isNull()) {
      return new WebConfig(file, null, Map.of());
    }
    if (!root.isObject()) {
      throw new WebConfigException(
          "web config file " + file + " must be a mapping (tls_server_config, basic_auth_users)");
    }
    checkKeys(root, TOP, file, "");
    Path dir = file.toAbsolutePath().getParent();
    Tls tls = tls(root.get("tls_server_config"), dir, file);
    Map<String, String> users = users(root.get("basic_auth_users"), file);
    return new WebConfig(file, tls, users);
  }

  private static Tls tls(JsonNode node, Path dir, Path file) {
    if (node == null || node.isNull()) {
      return null;
    }
    if (!node.isObject()) {
      throw new WebConfigException(
          "web config file " + file + ": tls_server_config must be a mapping");
    }
    checkKeys(node, TLS_KEYS, file, "tls_server_config.");
    String certFile = string(node, "cert_file", file);
    String keyFile = string(node, "key_file", file);
    String authType = string(node, "client_auth_type", file);
    String caFile = string(node, "client_ca_file", file);
    if (certFile.isEmpty() && keyFile.isEmpty() && authType.isEmpty() && caFile.isEmpty()) {
      return null; // exporter-toolkit's errNoTLSConfig: served without TLS
    }
    if (certFile.isEmpty()) {
      throw new WebConfigException("web config file " + file + ": missing cert_file");
    }
    if (keyFile.isEmpty()) {
      throw new WebConfigException("web config file " + file + ": missing key_file");
    }
    ClientAuth auth = ClientAuth.of(authType, file);
    if (!caFile.isEmpty() && auth == ClientAuth.NO_CLIENT_CERT) {
      throw new WebConfigException(
          "web config file "
              + file
              + ": client_ca_file is set without a client_auth_type (Client CA's have been"
              + " configured without a Client Auth Policy)");
    }
    if (caFile.isEmpty() && auth.verified) {
      throw new WebConfigException(
          "web config file "
              + file
              + ": client_auth_type "
              + auth.text
              + " needs client_ca_file, the CA client certificates are verified against");
    }
    Path cert = dir.resolve(certFile);
    Path key = dir.resolve(keyFile);
    List<X509Certificate> chain = Pem.certificates(cert, "cert_file");
    PrivateKey privateKey = Pem.privateKey(key, "key_file");
    Pem.checkPair(privateKey, chain.get(0), cert, key);
    List<X509Certificate> cas =
        caFile.isEmpty() ? List.of() : Pem.certificates(dir.resolve(caFile), "client_ca_file");
    List<String> protocols =
        protocols(string(node, "min_version", file), string(node, "max_version", file), file);
    return new Tls(List.copyOf(chain), privateKey, auth, List.copyOf(cas), protocols);
  }

  private static List<String> protocols(String min, String max, Path file) {
    List<String> order = List.of("TLS10", "TLS11", "TLS12", "TLS13");
    int lo = version(min.isEmpty() ? "TLS12" : min, "min_version", order, file);
    int hi = version(max.isEmpty() ? "TLS13" : max, "max_version", order, file);
    if (lo > hi) {
      throw new WebConfigException(
          "web config file " + file + ": min_version " + min + " is above max_version " + max);
    }
    return order.subList(lo, hi + 1).stream().map(VERSIONS::get).toList();
  }

  private static int version(String v, String key, List<String> order, Path file) {
    int i = order.indexOf(v.toUpperCase(Locale.ROOT));
    if (i < 0) {
      throw new WebConfigException(
          "web config file "
              + file
              + ": invalid "
              + key
              + " '"
              + v
              + "' (TLS10, TLS11, TLS12, TLS13)");
    }
    return i;
  }

  private static Map<String, String> users(JsonNode node, Path file) {
    Map<String, String> out = new LinkedHashMap<>();
    if (node == null || node.isNull()) {
      return out;
    }
    if (!node.isObject()) {
      throw new WebConfigException(
          "web config file " + file + ": basic_auth_users must map user names to bcrypt hashes");
    }
    for (Iterator<Map.Entry<String, JsonNode>> it = node.fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> e = it.next();
      String hash = e.getValue().isTextual() ? e.getValue().asText() : "";
      var m = BCRYPT.matcher(hash);
      if (!m.matches() || Integer.parseInt(m.group(1)) < 4 || Integer.parseInt(m.group(1)) > 31) {
        throw new WebConfigException(
            "web config file "
                + file
                + ": the password of user '"
                + e.getKey()
                + "' in basic_auth_users is not a bcrypt hash ($2y$10$ and 53 characters, as"
                + " 'htpasswd -nBC 10 "
                + e.getKey()
                + "' writes it)");
      }
      out.put(e.getKey(), hash);
    }
    return out;
  }

  private static String string(JsonNode node, String key, Path file) {
    JsonNode v = node.get(key);
    if (v == null || v.isNull()) {
      return "";
    }
    if (!v.isValueNode()) {
      throw new WebConfigException("web config file " + file + ": " + key + " must be a string");
    }
    return v.asText().strip();
  }

  private static void checkKeys(JsonNode node, Set<String> known, Path file, String prefix) {
    for (Iterator<String> it = node.fieldNames(); it.hasNext(); ) {
      String k = it.next();
      if (!known.contains(k)) {
        throw new WebConfigException(
            "web config file "
                + file
                + ": "
                + prefix
                + k
                + " is not supported by Tidemark (it reads "
                + String.join(", ", known.stream().sorted().toList())
                + ")");
      }
    }
  }
}
