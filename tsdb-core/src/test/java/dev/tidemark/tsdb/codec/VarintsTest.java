package dev.tidemark.tsdb.codec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HexFormat;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * {@link Varints}: sizes and bytes at the boundaries, round trips, and what each reader refuses.
 */
class VarintsTest {
  private static final long SEED = 0x5EED_1402L;

  private static byte[] hex(String s) {
    return HexFormat.of().parseHex(s.replace(" ", ""));
  }

  private static String encode(long v) {
    byte[] b = new byte[Varints.MAX_BYTES];
    int n = Varints.put(b, 0, v);
    assertThat(n).as("size of %s", Long.toUnsignedString(v)).isEqualTo(Varints.size(v));
    return HexFormat.ofDelimiter(" ").formatHex(b, 0, n);
  }

  // Bytes worked out by hand from the definition (7 bits a byte, low group first, high bit = more).
  @ParameterizedTest
  @CsvSource({
    "0, 00",
    "1, 01",
    "127, 7f",
    "128, 80 01",
    "300, ac 02",
    "16383, ff 7f",
    "16384, 80 80 01",
    "2147483647, ff ff ff ff 07",
    "4294967295, ff ff ff ff 0f",
    "1700000000000, 80 d0 95 ff bc 31",
    "9223372036854775807, ff ff ff ff ff ff ff ff 7f",
    "-9223372036854775808, 80 80 80 80 80 80 80 80 80 01",
    "-1, ff ff ff ff ff ff ff ff ff 01",
  })
  void boundaryBytes(long v, String bytes) {
    assertThat(encode(v)).isEqualTo(bytes);
    byte[] b = hex(bytes);
    long[] out = new long[1];
    assertThat(Varints.read(b, 0, b.length, out)).isEqualTo(b.length);
    assertThat(out[0]).isEqualTo(v);
    assertThat(Varints.readMinimal(b, 0, b.length, Varints.MAX_BYTES, out)).isEqualTo(b.length);
    assertThat(out[0]).isEqualTo(v);
  }

  @Test
  void sizeAtEveryGroupBoundary() {
    for (int k = 1; k < 64; k++) {
      long v = 1L << k;
      assertThat(Varints.size(v - 1)).as("2^%d - 1", k).isEqualTo((k + 6) / 7);
      assertThat(Varints.size(v)).as("2^%d", k).isEqualTo(k / 7 + 1);
    }
    assertThat(Varints.size(0)).isEqualTo(1);
    assertThat(Varints.size(-1)).isEqualTo(10);
  }

  @Test
  void randomRoundTripsAtAnOffset() {
    SplittableRandom rnd = new SplittableRandom(SEED);
    byte[] b = new byte[3 + Varints.MAX_BYTES + 2];
    long[] out = new long[1];
    for (int i = 0; i < 100_000; i++) {
      // Magnitudes spread over every length: a random number of random low bits.
      long v = rnd.nextLong() >>> rnd.nextInt(64);
      int end = Varints.put(b, 3, v);
      String seed = "seed " + SEED + ", value " + Long.toUnsignedString(v);
      assertThat(end - 3).as(seed).isEqualTo(Varints.size(v));
      assertThat(Varints.read(b, 3, end, out)).as(seed).isEqualTo(end);
      assertThat(out[0]).as(seed).isEqualTo(v);
      assertThat(Varints.readMinimal(b, 3, end, Varints.size(v), out)).as(seed).isEqualTo(end);
      assertThat(out[0]).as(seed).isEqualTo(v);
      // One byte short is truncated, for both readers, and the slot keeps its value.
      out[0] = 42;
      assertThat(Varints.read(b, 3, end - 1, out)).as(seed).isEqualTo(Varints.TRUNCATED);
      assertThat(Varints.readMinimal(b, 3, end - 1, 10, out)).as(seed).isEqualTo(Varints.TRUNCATED);
      assertThat(out[0]).isEqualTo(42);
    }
  }

  @Test
  void zigZagMapsSmallMagnitudesToSmallValues() {
    assertThat(Varints.encodeZigZag(0)).isEqualTo(0);
    assertThat(Varints.encodeZigZag(-1)).isEqualTo(1);
    assertThat(Varints.encodeZigZag(1)).isEqualTo(2);
    assertThat(Varints.encodeZigZag(-2)).isEqualTo(3);
    assertThat(Varints.encodeZigZag(Long.MAX_VALUE)).isEqualTo(-2L);
    assertThat(Varints.encodeZigZag(Long.MIN_VALUE)).isEqualTo(-1L);
    assertThat(Varints.encodeZigZag32(-1)).isEqualTo(1);
    assertThat(Varints.encodeZigZag32(Integer.MAX_VALUE)).isEqualTo(-2);
    assertThat(Varints.encodeZigZag32(Integer.MIN_VALUE)).isEqualTo(-1);
    SplittableRandom rnd = new SplittableRandom(SEED);
    for (int i = 0; i < 100_000; i++) {
      long v = rnd.nextLong() >> rnd.nextInt(64);
      assertThat(Varints.decodeZigZag(Varints.encodeZigZag(v)))
          .as("seed %d, %d", SEED, v)
          .isEqualTo(v);
      int w = (int) v;
      assertThat(Varints.decodeZigZag32(Varints.encodeZigZag32(w)))
          .as("seed %d, %d", SEED, w)
          .isEqualTo(w);
    }
  }

  // ---------------------------------------------------------------- malformed input

  @Test
  void protobufReaderAcceptsAnyFormUpToTenBytes() {
    long[] out = new long[1];
    byte[] nonMinimal = hex("80 00");
    assertThat(Varints.read(nonMinimal, 0, 2, out)).isEqualTo(2);
    assertThat(out[0]).isZero();
    // Bits past the 64th are dropped, as protobuf-java does.
    byte[] overflow = hex("ff ff ff ff ff ff ff ff ff 7f");
    assertThat(Varints.read(overflow, 0, 10, out)).isEqualTo(10);
    assertThat(out[0]).isEqualTo(-1L);
    byte[] eleven = hex("ff ff ff ff ff ff ff ff ff ff 01");
    assertThat(Varints.read(eleven, 0, 11, out)).isEqualTo(Varints.TOO_LONG);
    assertThat(Varints.read(new byte[0], 0, 0, out)).isEqualTo(Varints.TRUNCATED);
    // The limit is respected even where the array goes on.
    assertThat(Varints.read(hex("80 01"), 0, 1, out)).isEqualTo(Varints.TRUNCATED);
  }

  @ParameterizedTest
  @CsvSource({
    "'', 10, -1",
    "80, 10, -1",
    "80 00, 10, -3",
    "ff 00, 10, -3",
    "80 80 00, 10, -3",
    // A 10th byte may only hold bit 63.
    "ff ff ff ff ff ff ff ff ff 02, 10, -2",
    "ff ff ff ff ff ff ff ff ff 80, 10, -2",
    "80 80 80 80 80 80 80 80 80 00, 10, -3",
    // A count of at most 5 bytes, a non-negative long of at most 9.
    "ff ff ff ff 7f, 5, 5",
    "ff ff ff ff ff, 5, -2",
    "ff ff ff ff ff 01, 5, -2",
    "ff ff ff ff ff ff ff ff 7f, 9, 9",
    "ff ff ff ff ff ff ff ff ff 01, 9, -2",
    "ff ff ff ff, 5, -1",
    "01, 1, 1",
    "81 01, 1, -2",
  })
  void minimalReaderRefusals(String bytes, int maxBytes, int expected) {
    byte[] b = hex(bytes);
    long[] out = {42};
    int r = Varints.readMinimal(b, 0, b.length, maxBytes, out);
    assertThat(r).isEqualTo(expected);
    if (r < 0) {
      assertThat(out[0]).isEqualTo(42);
    }
  }

  @Test
  void minimalReaderChecksItsBound() {
    assertThatThrownBy(() -> Varints.readMinimal(new byte[1], 0, 1, 0, new long[1]))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("maxBytes must be 1..10, was 0");
    assertThatThrownBy(() -> Varints.readMinimal(new byte[1], 0, 1, 11, new long[1]))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("maxBytes must be 1..10, was 11");
  }

  @Test
  void everyTruncationOfEveryLengthIsTruncated() {
    long[] out = new long[1];
    byte[] b = new byte[Varints.MAX_BYTES];
    for (int k = 0; k < 64; k += 7) {
      long v = 1L << k | 1;
      int n = Varints.put(b, 0, v);
      for (int cut = 0; cut < n; cut++) {
        assertThat(Varints.read(b, 0, cut, out))
            .as("%d cut at %d", v, cut)
            .isEqualTo(Varints.TRUNCATED);
        assertThat(Varints.readMinimal(b, 0, cut, 10, out))
            .as("%d cut at %d", v, cut)
            .isEqualTo(Varints.TRUNCATED);
      }
    }
  }
}
