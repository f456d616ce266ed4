package dev.tidemark.it;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A test CA with a server certificate for {@code 127.0.0.1} and {@code localhost} and a client
 * certificate, as PEM files in a folder, made by the JDK's {@code keytool} (2-day validity, RSA
 * 2048): {@code ca.crt}, {@code server.crt}, {@code server.key}, {@code client.crt}, {@code
 * client.key}. keytool cannot write a private key as PEM, so each key is read back from its PKCS
 * #12 store and written as PKCS #8 ({@code BEGIN PRIVATE KEY}), what {@code openssl genpkey}
 * writes.
 */
final class TestCerts {
  private static final String PASS = "changeit";

  final Path ca;
  final Path serverCert;
  final Path serverKey;
  final Path clientCert;
  final Path clientKey;

  private TestCerts(Path dir) {
    ca = dir.resolve("ca.crt");
    serverCert = dir.resolve("server.crt");
    serverKey = dir.resolve("server.key");
    clientCert = dir.resolve("client.crt");
    clientKey = dir.resolve("client.key");
  }

  /** Makes the CA and both certificates in {@code dir}. */
  static TestCerts make(Path dir) throws IOException, InterruptedException {
    Files.createDirectories(dir);
    TestCerts c = new TestCerts(dir);
    keytool(
        dir,
        "-genkeypair",
        "-alias",
        "ca",
        "-keystore",
        "ca.p12",
        "-dname",
        "CN=Tidemark test CA",
        "-ext",
        "bc:c=ca:true",
        "-ext",
        "ku:c=keyCertSign,cRLSign");
    keytool(dir, "-exportcert", "-rfc", "-alias", "ca", "-keystore", "ca.p12", "-file", "ca.crt");
    c.leaf(dir, "server", "CN=127.0.0.1", "SAN=ip:127.0.0.1,dns:localhost", "EKU=serverAuth");
    c.leaf(dir, "client", "CN=tidemark-test-client", null, "EKU=clientAuth");
    return c;
  }

  private void leaf(Path dir, String name, String dname, String san, String eku)
      throws IOException, InterruptedException {
    String store = name + ".p12";
    keytool(dir, "-genkeypair", "-alias", name, "-keystore", store, "-dname", dname);
    keytool(dir, "-certreq", "-alias", name, "-keystore", store, "-file", name + ".csr");
    List<String> gencert =
        new ArrayList<>(
            List.of(
                "-gencert",
                "-rfc",
                "-alias",
                "ca",
                "-keystore",
                "ca.p12",
                "-infile",
                name + ".csr",
                "-outfile",
                name + ".crt",
                "-ext",
                eku,
                "-ext",
                "ku:c=digitalSignature,keyEncipherment"));
    if (san != null) {
      gencert.add("-ext");
      gencert.add(san);
    }
    keytool(dir, gencert.toArray(new String[0]));
    try (InputStream in = Files.newInputStream(dir.resolve(store))) {
      KeyStore ks = KeyStore.getInstance("PKCS12");
      ks.load(in, PASS.toCharArray());
      PrivateKey key = (PrivateKey) ks.getKey(name, PASS.toCharArray());
      Files.writeString(
          dir.resolve(name + ".key"),
          "-----BEGIN PRIVATE KEY-----\n"
              + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII))
                  .encodeToString(key.getEncoded())
              + "\n-----END PRIVATE KEY-----\n");
    } catch (GeneralSecurityException e) {
      throw new IOException("cannot read the key of " + store, e);
    }
  }

  private static void keytool(Path dir, String... args) throws IOException, InterruptedException {
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "keytool").toString());
    cmd.addAll(List.of(args));
    if (List.of(args).contains("-genkeypair")) {
      cmd.addAll(List.of("-keyalg", "RSA", "-keysize", "2048"));
    }
    if (List.of(args).contains("-genkeypair") || List.of(args).contains("-gencert")) {
      cmd.addAll(List.of("-validity", "2"));
    }
    cmd.addAll(List.of("-storepass", PASS, "-storetype", "PKCS12", "-noprompt"));
    Process p = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
      throw new IOException("keytool " + String.join(" ", args) + " failed: " + out);
    }
  }
}
