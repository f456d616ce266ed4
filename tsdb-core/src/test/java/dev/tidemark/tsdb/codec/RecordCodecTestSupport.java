package dev.tidemark.tsdb.codec;

import static org.assertj.core.api.Assertions.fail;

import java.util.SplittableRandom;
import java.util.function.Supplier;

/**
 * Helpers shared by the key and value codec tests: hex, the seed, random strings, and corruption
 * checks.
 */
final class RecordCodecTestSupport {

  /** Default seed; override with {@code -Dtidemark.seed=<long>} to reproduce a failure. */
  static final long DEFAULT_SEED = 0x7146_3a2b_0001L;

  private RecordCodecTestSupport() {}

  static long seed() {
    return Long.getLong("tidemark.seed", DEFAULT_SEED);
  }

  /** Message prefix that names the seed, for assertion descriptions. */
  static String seedMsg(long seed, int iteration) {
    return "seed=" + seed + " (rerun with -Dtidemark.seed=" + seed + "), iteration " + iteration;
  }

  /** Parses hex with optional spaces: {@code "01 10"}. */
  static byte[] hex(String s) {
    String h = s.replace(" ", "").replace("\n", "");
    if (h.length() % 2 != 0) {
      throw new IllegalArgumentException("odd hex: " + s);
    }
    byte[] out = new byte[h.length() / 2];
    for (int i = 0; i < out.length; i++) {
      out[i] = (byte) Integer.parseInt(h.substring(2 * i, 2 * i + 2), 16);
    }
    return out;
  }

  /** Lower-case hex with a space between bytes. */
  static String hex(byte[] b) {
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < b.length; i++) {
      if (i > 0) {
        sb.append(' ');
      }
      sb.append(String.format("%02x", b[i] & 0xFF));
    }
    return sb.toString();
  }

  /**
   * Runs {@code decode}; it may succeed, or throw {@link CorruptRecordException}, but nothing else
   * (no index, underflow, negative-size or other runtime exception).
   *
   * @return true if it threw CorruptRecordException
   */
  static boolean corruptOrDecodes(Supplier<String> context, Supplier<?> decode) {
    try {
      decode.get();
      return false;
    } catch (CorruptRecordException e) {
      if (e.getMessage() == null || e.getMessage().isBlank()) {
        fail(context.get() + ": CorruptRecordException without a message", e);
      }
      return true;
    } catch (RuntimeException | Error e) {
      fail(context.get() + ": expected CorruptRecordException or success, got " + e, e);
      return false;
    }
  }

  /**
   * A random string of up to {@code maxLen} code points from a mix of ranges, including U+0000,
   * U+0001 and supplementary characters.
   */
  static String randomString(SplittableRandom r, int maxLen) {
    int n = r.nextInt(maxLen + 1);
    StringBuilder sb = new StringBuilder(n * 2);
    for (int i = 0; i < n; i++) {
      sb.appendCodePoint(randomCodePoint(r));
    }
    return sb.toString();
  }

  static String randomNonEmptyString(SplittableRandom r, int maxLen) {
    String s;
    do {
      s = randomString(r, maxLen);
    } while (s.isEmpty());
    return s;
  }

  static int randomCodePoint(SplittableRandom r) {
    switch (r.nextInt(8)) {
      case 0:
        return r.nextInt(3); // U+0000, U+0001, U+0002: the escape-sensitive bytes
      case 1:
      case 2:
        return 0x20 + r.nextInt(0x5F); // printable ASCII
      case 3:
        return 0x80 + r.nextInt(0x780); // two-byte UTF-8
      case 4:
        {
          int cp = 0x800 + r.nextInt(0x10000 - 0x800 - 0x800); // three-byte, skip surrogates
          return cp >= 0xD800 ? cp + 0x800 : cp;
        }
      case 5:
        return 0x10000 + r.nextInt(0x100000); // supplementary: surrogate pairs in Java
      case 6:
        return new int[] {'a', 'b', 0xFF, 0xFFFF, 0x10FFFF, 0x7F, 0x80, 0xE000}[r.nextInt(8)];
      default:
        return 'a' + r.nextInt(3); // small alphabet: many shared prefixes
    }
  }
}
