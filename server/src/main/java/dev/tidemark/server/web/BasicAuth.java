package dev.tidemark.server.web;

import at.favre.lib.crypto.bcrypt.BCrypt;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * HTTP basic authentication against the bcrypt hashes of a web configuration file's {@code
 * basic_auth_users}, as Prometheus' exporter-toolkit checks them: an unknown user is checked
 * against a fixed hash all the same (its answer takes as long as a wrong password's, so user names
 * cannot be found by timing); one bcrypt comparison runs at a time (a flood of wrong passwords
 * costs one core, not all); and the outcome of each (user, hash, password) is remembered, so a
 * client that sends the same header with every request (an OTLP exporter every few seconds) costs
 * one comparison, not one per request. The cache keys are SHA-256 digests: no password is kept. The
 * users can be replaced while serving ({@link #users(Map)}); a changed hash misses the cache.
 * Thread-safe.
 */
public final class BasicAuth {

  /** exporter-toolkit's hash for unknown users (cost 10), compared so that they take as long. */
  private static final byte[] UNKNOWN_USER_HASH =
      "$2y$10$QOauhQNbBCuQDKes6eFzPeMqBSjb7Mr5DUmpZ/VcEd00UAV/LDeSi"
          .getBytes(StandardCharsets.US_ASCII);

  /** Outcomes remembered, as exporter-toolkit's cache. */
  static final int CACHE_SIZE = 100;

  private volatile Map<String, String> users;

  private final Map<String, Boolean> cache =
      new LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Boolean> eldest) {
          return size() > CACHE_SIZE;
        }
      };

  private final Object bcryptLock = new Object();

  /**
   * @param users user name to bcrypt hash (checked by {@link WebConfig}); empty: every request
   *     passes
   */
  public BasicAuth(Map<String, String> users) {
    this.users = Map.copyOf(users);
  }

  /** Checks requests against {@code users} from now on. */
  public void users(Map<String, String> users) {
    this.users = Map.copyOf(users);
  }

  /** Whether requests must carry a user's password now. */
  public boolean enabled() {
    return !users.isEmpty();
  }

  /**
   * Whether an {@code Authorization} header value (null when absent) lets the request in: always
   * when no users are configured, else {@code Basic base64(user:password)} of a configured user.
   */
  public boolean allows(String authorization) {
    Map<String, String> u = users;
    if (u.isEmpty()) {
      return true;
    }
    if (authorization == null) {
      return false;
    }
    String a = authorization.strip();
    if (a.length() < 6 || !a.regionMatches(true, 0, "basic ", 0, 6)) {
      return false;
    }
    String decoded;
    try {
      decoded =
          new String(Base64.getDecoder().decode(a.substring(6).strip()), StandardCharsets.UTF_8);
    } catch (IllegalArgumentException e) {
      return false;
    }
    int colon = decoded.indexOf(':');
    if (colon < 0) {
      return false;
    }
    String user = decoded.substring(0, colon);
    String password = decoded.substring(colon + 1);
    String hash = u.get(user);
    byte[] hashBytes = hash == null ? UNKNOWN_USER_HASH : hash.getBytes(StandardCharsets.US_ASCII);
    String key = digest(user, hashBytes, password);
    Boolean known;
    synchronized (cache) {
      known = cache.get(key);
    }
    if (known == null) {
      boolean ok;
      synchronized (bcryptLock) {
        ok = matches(password, hashBytes);
      }
      known = hash != null && ok;
      synchronized (cache) {
        cache.put(key, known);
      }
    }
    return known;
  }

  private static boolean matches(String password, byte[] hash) {
    try {
      return BCrypt.verifyer().verify(password.getBytes(StandardCharsets.UTF_8), hash).verified;
    } catch (IllegalArgumentException tooLong) { // over bcrypt's 72 bytes: Go refuses it too
      return false;
    }
  }

  private static String digest(String user, byte[] hash, String password) {
    try {
      MessageDigest md = MessageDigest.getInstance("SHA-256");
      md.update(user.getBytes(StandardCharsets.UTF_8));
      md.update((byte) 0);
      md.update(hash);
      md.update((byte) 0);
      md.update(password.getBytes(StandardCharsets.UTF_8));
      return HexFormat.of().formatHex(md.digest());
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("the JDK has no SHA-256", e);
    }
  }
}
