package dev.tidemark.tsdb.kv;

import java.util.Arrays;

/** Helpers for unsigned-byte key ranges. */
public final class KeyRanges {
  private KeyRanges() {}

  /**
   * The smallest key greater than every key that starts with {@code prefix}, or null if there is
   * none (the prefix is empty or all {@code 0xFF}).
   */
  public static byte[] prefixEnd(byte[] prefix) {
    for (int i = prefix.length - 1; i >= 0; i--) {
      if (prefix[i] != (byte) 0xFF) {
        byte[] end = Arrays.copyOf(prefix, i + 1);
        end[i]++;
        return end;
      }
    }
    return null;
  }
}
