package dev.tidemark.tsdb.model;

import com.dynatrace.hash4j.hashing.HashValue128;
import com.dynatrace.hash4j.hashing.Hasher128;
import com.dynatrace.hash4j.hashing.Hashing;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.Map;

/**
 * An immutable label set: the identity of a series.
 *
 * <p>Labels are sorted by name in the unsigned byte order of their UTF-8 encoding (which is Unicode
 * code point order), names are unique and non-empty, values are non-empty ({@code name=""} means
 * "no such label", as in Prometheus: the builder drops such pairs). The metric name is the label
 * {@value #METRIC_NAME}, stored like any other.
 *
 * <p>The <em>canonical bytes</em> are, for each label in order, {@code name 0xFF value 0xFF} (0xFF
 * never occurs in UTF-8). The <em>fingerprint</em> is XXH3-128 with seed 0 over the canonical bytes
 * ({@code docs/format.md}, SeriesDictionary). It is computed once, when the set is built. Strings
 * with unpaired surrogates cannot be encoded as UTF-8 and are refused.
 *
 * <p>Thread-safe: instances are immutable, but for {@link #storageHint()}, a slot outside the
 * value. {@link #hashCode()} is derived from the fingerprint.
 */
public final class Labels implements Comparable<Labels> {

  /** The label that holds the metric name. */
  public static final String METRIC_NAME = "__name__";

  /** Compares strings by Unicode code point, i.e. by the unsigned bytes of their UTF-8 form. */
  public static final Comparator<String> UTF8_ORDER = Labels::compareUtf8;

  private static final Hasher128 XXH3_128 = Hashing.xxh3_128();

  /**
   * Per thread, a buffer for the canonical bytes of the label set being built, so that building one
   * allocates nothing to hash it (recovery builds a million at a time). Declared before {@link
   * #EMPTY}, which is built with it.
   */
  private static final ThreadLocal<byte[]> CANONICAL_SCRATCH =
      ThreadLocal.withInitial(() -> new byte[256]);

  private static final Labels EMPTY = new Labels(new String[0]);

  /** name0, value0, name1, value1, ... sorted by name. */
  private final String[] pairs;

  private final long fingerprintHigh;
  private final long fingerprintLow;
  private final String metricName;

  /** See {@link #storageHint()}. Plain: whoever reads it validates it. */
  private Object storageHint;

  private Labels(String[] pairs) {
    this.pairs = pairs;
    String name = null;
    for (int i = 0; i < pairs.length; i += 2) {
      if (pairs[i].equals(METRIC_NAME)) {
        name = pairs[i + 1];
        break;
      }
    }
    this.metricName = name;
    HashValue128 h = fingerprint(pairs);
    this.fingerprintHigh = h.getMostSignificantBits();
    this.fingerprintLow = h.getLeastSignificantBits();
  }

  /** The empty label set. */
  public static Labels empty() {
    return EMPTY;
  }

  /**
   * Builds a label set from alternating names and values, in any order.
   *
   * @throws IllegalArgumentException on an odd count, a null or empty name, a duplicate name or a
   *     string that is not valid UTF-16
   */
  public static Labels of(String... namesAndValues) {
    if (namesAndValues.length % 2 != 0) {
      throw new IllegalArgumentException(
          "names and values must come in pairs, got " + namesAndValues.length + " strings");
    }
    Builder b = builder();
    for (int i = 0; i < namesAndValues.length; i += 2) {
      b.add(namesAndValues[i], namesAndValues[i + 1]);
    }
    return b.build();
  }

  /** Builds a label set from a map; see {@link #of(String...)} for the rules. */
  public static Labels fromMap(Map<String, String> map) {
    Builder b = builder();
    map.forEach(b::add);
    return b.build();
  }

  /** A new, empty builder. */
  public static Builder builder() {
    return new Builder(8);
  }

  /** A builder with room for {@code expectedLabels} labels before it grows. */
  public static Builder builder(int expectedLabels) {
    return new Builder(Math.max(expectedLabels, 1));
  }

  /** A builder that starts with these labels. */
  public Builder toBuilder() {
    Builder b = new Builder(pairs.length / 2 + 1);
    for (int i = 0; i < pairs.length; i += 2) {
      b.add(pairs[i], pairs[i + 1]);
    }
    return b;
  }

  /** Number of labels. */
  public int size() {
    return pairs.length / 2;
  }

  /** The name of the {@code i}-th label in sorted order. */
  public String name(int i) {
    return pairs[2 * i];
  }

  /** The value of the {@code i}-th label in sorted order. */
  public String value(int i) {
    return pairs[2 * i + 1];
  }

  /** The value of the label called {@code name}, or null if the set has no such label. */
  public String get(String name) {
    int lo = 0;
    int hi = size() - 1;
    while (lo <= hi) {
      int mid = (lo + hi) >>> 1;
      int c = compareUtf8(pairs[2 * mid], name);
      if (c < 0) {
        lo = mid + 1;
      } else if (c > 0) {
        hi = mid - 1;
      } else {
        return pairs[2 * mid + 1];
      }
    }
    return null;
  }

  /** The metric name ({@value #METRIC_NAME}), or null if absent. */
  public String metricName() {
    return metricName;
  }

  /** High 64 bits of the XXH3-128 fingerprint. */
  public long fingerprintHigh() {
    return fingerprintHigh;
  }

  /** Low 64 bits of the XXH3-128 fingerprint. */
  public long fingerprintLow() {
    return fingerprintLow;
  }

  /** A fresh copy of the canonical bytes ({@code name 0xFF value 0xFF} per label). */
  public byte[] canonicalBytes() {
    return canonicalBytes(pairs);
  }

  /** XXH3-128 of the canonical bytes, written into {@link #CANONICAL_SCRATCH}. */
  private static HashValue128 fingerprint(String[] pairs) {
    int n = writeCanonical(pairs);
    return XXH3_128.hashBytesTo128Bits(CANONICAL_SCRATCH.get(), 0, n);
  }

  private static byte[] canonicalBytes(String[] pairs) {
    int n = writeCanonical(pairs);
    return Arrays.copyOf(CANONICAL_SCRATCH.get(), n);
  }

  /**
   * Writes the canonical bytes (each name and value in UTF-8, each followed by 0xFF) into this
   * thread's {@link #CANONICAL_SCRATCH}, growing it as needed; returns their length. ASCII is
   * copied char by char, anything else goes through the general encoder.
   */
  private static int writeCanonical(String[] pairs) {
    byte[] buf = CANONICAL_SCRATCH.get();
    int p = 0;
    for (String s : pairs) {
      int n = s.length();
      buf = room(buf, p + n + 1);
      int ascii = 0;
      while (ascii < n) {
        char c = s.charAt(ascii);
        if (c >= 0x80) {
          break;
        }
        buf[p + ascii] = (byte) c;
        ascii++;
      }
      if (ascii == n) {
        p += n;
      } else {
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        buf = room(buf, p + b.length + 1);
        System.arraycopy(b, 0, buf, p, b.length);
        p += b.length;
      }
      buf[p++] = (byte) 0xFF;
    }
    return p;
  }

  /**
   * {@code buf}, or a larger copy (then this thread's scratch) if it holds fewer than {@code n}.
   */
  private static byte[] room(byte[] buf, int n) {
    if (n <= buf.length) {
      return buf;
    }
    byte[] bigger = Arrays.copyOf(buf, Math.max(2 * buf.length, n));
    CANONICAL_SCRATCH.set(bigger);
    return bigger;
  }

  @Override
  public boolean equals(Object o) {
    if (this == o) {
      return true;
    }
    if (!(o instanceof Labels)) {
      return false;
    }
    Labels other = (Labels) o;
    return fingerprintLow == other.fingerprintLow
        && fingerprintHigh == other.fingerprintHigh
        && Arrays.equals(pairs, other.pairs);
  }

  @Override
  public int hashCode() {
    return (int) (fingerprintLow ^ (fingerprintLow >>> 32));
  }

  /**
   * Where the storage that last appended this label set keeps its series, or null: a reference the
   * storage hangs here so that the next append of the same instance finds the series without a hash
   * lookup, as Prometheus' appender hands a series reference back to its caller. It is not part of
   * the label set's value (not in {@link #equals}, {@link #hashCode} or the canonical bytes), it is
   * shared by every user of this instance, and it is only a hint: the storage checks that the
   * object is its own and still current before trusting it, and looks the series up otherwise.
   * Callers that keep their label sets (the translator caches one per stream) profit; others lose
   * nothing.
   */
  public Object storageHint() {
    return storageHint;
  }

  /** Sets {@link #storageHint()}. */
  public void storageHint(Object hint) {
    this.storageHint = hint;
  }

  /** Orders label sets label by label (name, then value, in UTF-8 order), shorter sets first. */
  @Override
  public int compareTo(Labels o) {
    int n = Math.min(pairs.length, o.pairs.length);
    for (int i = 0; i < n; i++) {
      int c = compareUtf8(pairs[i], o.pairs[i]);
      if (c != 0) {
        return c;
      }
    }
    return Integer.compare(pairs.length, o.pairs.length);
  }

  /** Prometheus notation, {@link PromText#formatSeries}: {@code name{a="1", b="2"}}. */
  @Override
  public String toString() {
    return PromText.formatSeries(this);
  }

  /**
   * Compares two strings as the unsigned bytes of their UTF-8 encodings would compare, without
   * encoding them (code point order; differs from {@link String#compareTo} only for surrogates).
   */
  public static int compareUtf8(String a, String b) {
    if (a == b) {
      return 0;
    }
    int n = Math.min(a.length(), b.length());
    for (int i = 0; i < n; i++) {
      char ca = a.charAt(i);
      char cb = b.charAt(i);
      if (ca != cb) {
        if (ca >= 0xD800 && cb >= 0xD800) {
          // Move surrogates (D800-DFFF) above E000-FFFF so that UTF-16 order becomes code point
          // order.
          ca += ca >= 0xE000 ? (char) -0x800 : (char) 0x2000;
          cb += cb >= 0xE000 ? (char) -0x800 : (char) 0x2000;
        }
        return ca - cb;
      }
    }
    return a.length() - b.length();
  }

  /**
   * Refuses unpaired surrogates; the message names {@code what + whatSuffix} (joined only on
   * failure: this runs for every label built).
   */
  private static void checkWellFormed(String s, String what, String whatSuffix) {
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (Character.isHighSurrogate(c)) {
        if (i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
          i++;
          continue;
        }
        throw new IllegalArgumentException(
            what
                + (whatSuffix == null ? "" : whatSuffix)
                + " has an unpaired surrogate at index "
                + i);
      }
      if (Character.isLowSurrogate(c)) {
        throw new IllegalArgumentException(
            what
                + (whatSuffix == null ? "" : whatSuffix)
                + " has an unpaired surrogate at index "
                + i);
      }
    }
  }

  /**
   * Collects labels in any order. Pairs with an empty value are dropped (Prometheus: an empty value
   * is an absent label). Not thread-safe; reusable after {@link #reset()}.
   */
  public static final class Builder {
    private final ArrayList<String> names;
    private final ArrayList<String> values;

    private Builder(int expectedLabels) {
      names = new ArrayList<>(expectedLabels);
      values = new ArrayList<>(expectedLabels);
    }

    /**
     * Adds a label; a null or empty value is ignored.
     *
     * @throws IllegalArgumentException if the name is null or empty, or either string is not
     *     well-formed UTF-16
     */
    public Builder add(String name, String value) {
      if (name == null || name.isEmpty()) {
        throw new IllegalArgumentException(
            "label name must not be empty (value was " + value + ")");
      }
      if (value == null || value.isEmpty()) {
        return this;
      }
      checkWellFormed(name, "label name", null);
      checkWellFormed(value, "value of label ", name);
      names.add(name);
      values.add(value);
      return this;
    }

    /** Replaces the value of {@code name} (or removes it, for an empty value). */
    public Builder set(String name, String value) {
      remove(name);
      return add(name, value);
    }

    /** Removes the label called {@code name}, if present. */
    public Builder remove(String name) {
      for (int i = names.size() - 1; i >= 0; i--) {
        if (names.get(i).equals(name)) {
          names.remove(i);
          values.remove(i);
        }
      }
      return this;
    }

    /** Forgets every label added so far. */
    public Builder reset() {
      names.clear();
      values.clear();
      return this;
    }

    /**
     * The label set.
     *
     * @throws IllegalArgumentException if a name was added twice
     */
    public Labels build() {
      int n = names.size();
      if (n == 0) {
        return EMPTY;
      }
      String[] pairs = new String[2 * n];
      if (ascending()) { // the usual case (a decoded record, a sorted source): no sort
        for (int i = 0; i < n; i++) {
          pairs[2 * i] = names.get(i);
          pairs[2 * i + 1] = values.get(i);
        }
        return new Labels(pairs);
      }
      Integer[] order = new Integer[n];
      for (int i = 0; i < n; i++) {
        order[i] = i;
      }
      Arrays.sort(order, (x, y) -> compareUtf8(names.get(x), names.get(y)));
      for (int i = 0; i < n; i++) {
        pairs[2 * i] = names.get(order[i]);
        pairs[2 * i + 1] = values.get(order[i]);
        if (i > 0 && pairs[2 * i].equals(pairs[2 * i - 2])) {
          throw new IllegalArgumentException("duplicate label name " + pairs[2 * i]);
        }
      }
      return new Labels(pairs);
    }

    /** Whether the names are strictly ascending (so neither unsorted nor duplicated). */
    private boolean ascending() {
      for (int i = 1; i < names.size(); i++) {
        if (compareUtf8(names.get(i - 1), names.get(i)) >= 0) {
          return false;
        }
      }
      return true;
    }
  }
}
