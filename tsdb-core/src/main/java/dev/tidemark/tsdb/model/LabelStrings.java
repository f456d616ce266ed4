package dev.tidemark.tsdb.model;

import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * One instance for equal label strings of new series: receivers pass each name and value of a
 * series they see for the first time through {@link #share} before building its {@link Labels}.
 * Decoders make a new {@code String} for every series, so without it a million series of a hundred
 * metrics per host kept a million copies of {@code "idle"}, {@code "eth0"} and {@code "3"}: about
 * 85 bytes per series at a million active series (docs/architecture.md, "Memory at a million active
 * series").
 *
 * <p>A lossy, direct-mapped table of {@value #SLOTS} strings indexed by the string's hash: a string
 * found in its slot is returned, else it takes the slot. Values that recur (modes, devices, status
 * codes, hosts while their series are created) stay; values seen once only pass through. Memory is
 * bounded by the table (strings longer than {@value #MAX_LENGTH} chars are never kept). Thread-safe
 * and lock-free: a race can only miss a sharing.
 */
public final class LabelStrings {
  static final int SLOTS = 1 << 16;
  static final int MAX_LENGTH = 256;

  private static final AtomicReferenceArray<String> TABLE = new AtomicReferenceArray<>(SLOTS);

  private LabelStrings() {}

  /**
   * An instance equal to {@code s}: one seen before if the table still holds it, else {@code s}.
   */
  public static String share(String s) {
    if (s.length() > MAX_LENGTH) {
      return s;
    }
    int h = s.hashCode();
    int slot = (h ^ (h >>> 16)) & (SLOTS - 1);
    String had = TABLE.get(slot);
    if (had != null && had.equals(s)) {
      return had;
    }
    TABLE.set(slot, s);
    return s;
  }
}
