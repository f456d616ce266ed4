package dev.tidemark.server.web;

import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A self-signed certificate for 127.0.0.1 made by the JDK's keytool, written as {@code NAME.crt}
 * and {@code NAME.key} (PKCS #8 PEM, read back from keytool's PKCS #12 store, since keytool writes
 * no PEM key). integration-tests' {@code TestCerts} makes a CA-signed set the same way.
 */
final class SelfSigned {
  private SelfSigned() {}

  static void make(Path dir, String name, String keyalg) throws Exception {
    Path store = dir.resolve(name + ".p12");
    keytool(
        dir,
        "-genkeypair",
        "-alias",
        name,
        "-keyalg",
        keyalg,
        "-keystore",
        store.toString(),
        "-dname",
        "CN=127.0.0.1",
        "-ext",
        "SAN=ip:127.0.0.1",
        "-validity",
        "2");
    keytool(
        dir,
        "-exportcert",
        "-rfc",
        "-alias",
        name,
        "-keystore",
        store.toString(),
        "-file",
        dir.resolve(name + ".crt").toString());
    try (InputStream in = Files.newInputStream(store)) {
      KeyStore ks = KeyStore.getInstance("PKCS12");
      ks.load(in, "changeit".toCharArray());
      PrivateKey key = (PrivateKey) ks.getKey(name, "changeit".toCharArray());
      Files.writeString(dir.resolve(name + ".key"), pem("PRIVATE KEY", key.getEncoded()));
    }
  }

  static String pem(String type, byte[] der) {
    return "-----BEGIN "
        + type
        + "-----\n"
        + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII)).encodeToString(der)
        + "\n-----END "
        + type
        + "-----\n";
  }

  private static void keytool(Path dir, String... args) throws Exception {
    List<String> cmd = new java.util.ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "keytool").toString());
    cmd.addAll(List.of(args));
    cmd.addAll(List.of("-storepass", "changeit", "-storetype", "PKCS12", "-noprompt"));
    Process p = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
      throw new AssertionError("keytool " + String.join(" ", args) + " failed: " + out);
    }
  }
}
