package dev.tidemark.tsdb.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.dynatrace.hash4j.hashing.HashValue128;
import com.dynatrace.hash4j.hashing.Hashing;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.SplittableRandom;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The fingerprint is XXH3-128 over the canonical bytes however the label set is built (it is hashed
 * from a per-thread buffer, ASCII copied directly, the rest through the UTF-8 encoder), and a
 * builder given its labels in order (no sort) builds the same set as one given them shuffled.
 */
class LabelsFingerprintTest {

  private static final String[] ALPHABET = {
    "a", "b", "z", "_", "0", "é", "ß", "€", "日本", "\uD83D\uDE00", "\u007F", "\u0080", "\uFFFD"
  };

  @ParameterizedTest
  @ValueSource(longs = {1L, 2L, 3L, 42L})
  void fingerprintIsXxh3OfTheCanonicalBytes(long seed) {
    SplittableRandom rnd = new SplittableRandom(seed);
    for (int i = 0; i < 2_000; i++) {
      TreeMap<String, String> pairs = new TreeMap<>(Labels.UTF8_ORDER);
      int n = rnd.nextInt(12);
      for (int k = 0; k < n; k++) {
        pairs.put(randomString(rnd), randomString(rnd));
      }
      List<String> names = new ArrayList<>(pairs.keySet());
      Labels.Builder inOrder = Labels.builder(names.size());
      for (String name : names) {
        inOrder.add(name, pairs.get(name));
      }
      Collections.shuffle(names, new java.util.Random(rnd.nextLong()));
      Labels.Builder shuffled = Labels.builder();
      for (String name : names) {
        shuffled.add(name, pairs.get(name));
      }
      Labels a = inOrder.build();
      Labels b = shuffled.build();
      HashValue128 h = Hashing.xxh3_128().hashBytesTo128Bits(a.canonicalBytes());
      assertThat(a.fingerprintHigh()).isEqualTo(h.getMostSignificantBits());
      assertThat(a.fingerprintLow()).isEqualTo(h.getLeastSignificantBits());
      assertThat(b).isEqualTo(a);
      assertThat(b.fingerprintHigh()).isEqualTo(a.fingerprintHigh());
      assertThat(b.toString()).isEqualTo(a.toString());
    }
  }

  @Test
  void longLabelSetsGrowTheBuffer() {
    String big = "x".repeat(100_000);
    Labels l = Labels.of("__name__", big, "v", "é".repeat(50_000));
    HashValue128 h = Hashing.xxh3_128().hashBytesTo128Bits(l.canonicalBytes());
    assertThat(l.fingerprintLow()).isEqualTo(h.getLeastSignificantBits());
    assertThat(Labels.of("a", "b").fingerprintLow())
        .isEqualTo(
            Hashing.xxh3_128()
                .hashBytesTo128Bits(Labels.of("a", "b").canonicalBytes())
                .getLeastSignificantBits());
  }

  @Test
  void duplicateNamesAreStillRefused() {
    assertThatThrownBy(() -> Labels.builder(2).add("a", "1").add("a", "2").build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("duplicate label name a");
  }

  private static String randomString(SplittableRandom rnd) {
    int n = 1 + rnd.nextInt(6);
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < n; i++) {
      sb.append(ALPHABET[rnd.nextInt(rnd.nextInt(4) == 0 ? ALPHABET.length : 5)]);
    }
    return sb.toString();
  }
}
