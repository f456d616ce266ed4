package dev.tidemark.server.web;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.security.Signature;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * PEM files as Prometheus' web configuration names them ({@code cert_file}, {@code key_file},
 * {@code client_ca_file}): certificates ({@code BEGIN CERTIFICATE}, a chain leaf first) and an
 * unencrypted private key, PKCS #8 ({@code BEGIN PRIVATE KEY}: RSA, EC or Ed25519, what {@code
 * openssl genpkey} and {@code openssl req -newkey} write) or PKCS #1 ({@code BEGIN RSA PRIVATE
 * KEY}). An SEC 1 EC key ({@code BEGIN EC PRIVATE KEY}) or an encrypted one is refused with the
 * {@code openssl} command that converts it. Every failure is a {@link WebConfigException} naming
 * the file. Stateless.
 */
final class Pem {

  private static final Pattern BLOCK =
      Pattern.compile("-----BEGIN ([A-Z0-9 ]+)-----([^-]*)-----END \\1-----");

  private Pem() {}

  /** Every certificate of {@code file}, in order; at least one. */
  static List<X509Certificate> certificates(Path file, String key) {
    List<X509Certificate> out = new ArrayList<>();
    try {
      CertificateFactory cf = CertificateFactory.getInstance("X.509");
      for (Block b : blocks(file, key)) {
        if (b.type.equals("CERTIFICATE")) {
          out.add((X509Certificate) cf.generateCertificate(new ByteArrayInputStream(b.der)));
        }
      }
    } catch (CertificateException e) {
      throw new WebConfigException(
          key + " " + file + ": not a valid certificate: " + e.getMessage());
    }
    if (out.isEmpty()) {
      throw new WebConfigException(
          key + " " + file + ": no certificate in it (expected -----BEGIN CERTIFICATE-----)");
    }
    return out;
  }

  /** The private key of {@code file}. */
  static PrivateKey privateKey(Path file, String key) {
    for (Block b : blocks(file, key)) {
      switch (b.type) {
        case "PRIVATE KEY":
          return pkcs8(b.der, file, key);
        case "RSA PRIVATE KEY":
          return pkcs8(rsaPkcs1ToPkcs8(b.der), file, key);
        case "EC PRIVATE KEY":
          throw new WebConfigException(
              key
                  + " "
                  + file
                  + ": an SEC 1 EC key; convert it to PKCS #8 with 'openssl pkcs8 -topk8 -nocrypt"
                  + " -in "
                  + file.getFileName()
                  + "'");
        case "ENCRYPTED PRIVATE KEY":
          throw new WebConfigException(
              key + " " + file + ": the key is encrypted; give it unencrypted (as Prometheus)");
        default:
          // parameters, certificates: skip
      }
    }
    throw new WebConfigException(
        key + " " + file + ": no private key in it (expected -----BEGIN PRIVATE KEY-----)");
  }

  /** Throws unless {@code key} signs what {@code cert}'s public key verifies (Go's check). */
  static void checkPair(PrivateKey key, X509Certificate cert, Path certFile, Path keyFile) {
    String alg =
        switch (key.getAlgorithm()) {
          case "RSA" -> "SHA256withRSA";
          case "EC" -> "SHA256withECDSA";
          default -> key.getAlgorithm(); // Ed25519, Ed448
        };
    byte[] challenge = new byte[32];
    new SecureRandom().nextBytes(challenge);
    boolean ok;
    try {
      Signature s = Signature.getInstance(alg);
      s.initSign(key);
      s.update(challenge);
      byte[] sig = s.sign();
      Signature v = Signature.getInstance(alg);
      v.initVerify(cert.getPublicKey());
      v.update(challenge);
      ok = v.verify(sig);
    } catch (GeneralSecurityException e) {
      ok = false;
    }
    if (!ok) {
      throw new WebConfigException(
          "key_file " + keyFile + " does not match the certificate of cert_file " + certFile);
    }
  }

  private static PrivateKey pkcs8(byte[] der, Path file, String key) {
    for (String alg : List.of("RSA", "EC", "Ed25519", "Ed448")) {
      try {
        return KeyFactory.getInstance(alg).generatePrivate(new PKCS8EncodedKeySpec(der));
      } catch (GeneralSecurityException notThisOne) {
        // try the next algorithm
      }
    }
    throw new WebConfigException(
        key + " " + file + ": not an RSA, EC or Ed25519 private key this server can read");
  }

  /**
   * A PKCS #1 {@code RSAPrivateKey} wrapped as PKCS #8: {@code SEQUENCE { INTEGER 0, SEQUENCE {
   * rsaEncryption, NULL }, OCTET STRING pkcs1 }}.
   */
  static byte[] rsaPkcs1ToPkcs8(byte[] pkcs1) {
    byte[] algorithm = {
      0x30,
      0x0d,
      0x06,
      0x09,
      0x2a,
      (byte) 0x86,
      0x48,
      (byte) 0x86,
      (byte) 0xf7,
      0x0d,
      0x01,
      0x01,
      0x01,
      0x05,
      0x00
    };
    byte[] version = {0x02, 0x01, 0x00};
    byte[] octets = tlv(0x04, pkcs1);
    byte[] body = new byte[version.length + algorithm.length + octets.length];
    System.arraycopy(version, 0, body, 0, version.length);
    System.arraycopy(algorithm, 0, body, version.length, algorithm.length);
    System.arraycopy(octets, 0, body, version.length + algorithm.length, octets.length);
    return tlv(0x30, body);
  }

  private static byte[] tlv(int tag, byte[] value) {
    int n = value.length;
    byte[] len;
    if (n < 0x80) {
      len = new byte[] {(byte) n};
    } else if (n < 0x100) {
      len = new byte[] {(byte) 0x81, (byte) n};
    } else if (n < 0x10000) {
      len = new byte[] {(byte) 0x82, (byte) (n >> 8), (byte) n};
    } else {
      len = new byte[] {(byte) 0x83, (byte) (n >> 16), (byte) (n >> 8), (byte) n};
    }
    byte[] out = new byte[1 + len.length + n];
    out[0] = (byte) tag;
    System.arraycopy(len, 0, out, 1, len.length);
    System.arraycopy(value, 0, out, 1 + len.length, n);
    return out;
  }

  private record Block(String type, byte[] der) {}

  private static List<Block> blocks(Path file, String key) {
    String text;
    try {
      text = Files.readString(file, StandardCharsets.US_ASCII);
    } catch (NoSuchFileException e) {
      throw new WebConfigException(key + " " + file + " does not exist");
    } catch (IOException e) {
      throw new WebConfigException("cannot read " + key + " " + file + ": " + e.getMessage());
    }
    List<Block> out = new ArrayList<>();
    Matcher m = BLOCK.matcher(text);
    while (m.find()) {
      String body = m.group(2);
      if (body.contains("Proc-Type:")) { // RFC 1421 headers: an OpenSSL-encrypted key
        throw new WebConfigException(
            key + " " + file + ": the key is encrypted; give it unencrypted (as Prometheus)");
      }
      try {
        out.add(new Block(m.group(1), Base64.getMimeDecoder().decode(body)));
      } catch (IllegalArgumentException e) {
        throw new WebConfigException(key + " " + file + ": bad base64 in a PEM block");
      }
    }
    if (out.isEmpty()) {
      throw new WebConfigException(
          key + " " + file + ": not a PEM file (no -----BEGIN ...----- block)");
    }
    return out;
  }
}
