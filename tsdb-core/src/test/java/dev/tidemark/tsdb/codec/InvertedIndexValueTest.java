package dev.tidemark.tsdb.codec;

import static dev.tidemark.tsdb.codec.RecordCodecTestSupport.corruptOrDecodes;
import static dev.tidemark.tsdb.codec.RecordCodecTestSupport.hex;
import static dev.tidemark.tsdb.codec.RecordCodecTestSupport.seed;
import static dev.tidemark.tsdb.codec.RecordCodecTestSupport.seedMsg;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.roaringbitmap.RoaringBitmap;

/**
 * InvertedIndex value (portable RoaringBitmap) golden vectors, corruption and properties.
 *
 * <p>Golden vectors, derived by hand from the RoaringFormatSpec layout summarized in docs/format.md
 * (cookie, container count, (key, cardinality-1) pairs, offsets, containers; all little-endian) and
 * checked against what RoaringBitmap 1.6 writes after {@code runOptimize()}.
 */
class InvertedIndexValueTest {

  /** Cookie 12346 (0x303A, no run containers), 0 containers. */
  static final String EMPTY = "3a 30 00 00 00 00 00 00";

  /** {0, 1, 2, 5}: one array container (4 values are smaller as an array than as 2 runs). */
  static final String ARRAY =
      "3a 30 00 00" // cookie 12346
          + " 01 00 00 00" // 1 container
          + " 00 00 03 00" // key 0, cardinality-1 = 3
          + " 10 00 00 00" // offset of container 0: 16
          + " 00 00 01 00 02 00 05 00"; // values 0 1 2 5

  /**
   * [0, 100): one run container; with runs and fewer than 4 containers there is no offset header.
   */
  static final String RUN =
      "3b 30 00 00" // cookie 12347 | (containers-1 = 0) << 16
          + " 01" // run-container bitset: container 0 is a run container
          + " 00 00 63 00" // key 0, cardinality-1 = 99
          + " 01 00 00 00 63 00"; // 1 run: start 0, length-1 = 99

  /** {3, 65545 (= 1 << 16 | 9)}: two array containers. */
  static final String TWO_CONTAINERS =
      "3a 30 00 00 02 00 00 00" // cookie, 2 containers
          + " 00 00 00 00 01 00 00 00" // (key 0, card-1 0), (key 1, card-1 0)
          + " 18 00 00 00 1a 00 00 00" // offsets 24, 26
          + " 03 00 09 00"; // 3 | 9

  /** {2^32 - 1}: series ids are u32; this one is -1 as a Java int. */
  static final String MAX_ID = "3a 30 00 00 01 00 00 00 ff ff 00 00 10 00 00 00 ff ff";

  @Test
  void isEmptyReadsTheHeaderAloneAndAgreesWithDecode() {
    long seed = seed();
    SplittableRandom r = new SplittableRandom(seed);
    for (int i = 0; i < 500; i++) {
      RoaringBitmap bm = new RoaringBitmap();
      int n = i % 5 == 0 ? 0 : r.nextInt(1, 3000);
      for (int k = 0; k < n; k++) {
        bm.add(r.nextInt(0, i % 2 == 0 ? 100_000 : 5_000)); // sparse and run-friendly
      }
      byte[] v = InvertedIndexValue.encode(bm);
      assertThat(InvertedIndexValue.isEmpty(v))
          .as(seedMsg(seed, i))
          .isEqualTo(InvertedIndexValue.decode(v).isEmpty());
    }
    byte[] empty = InvertedIndexValue.encode(new RoaringBitmap());
    assertThat(InvertedIndexValue.isEmpty(empty)).isTrue();
    assertThatThrownBy(() -> InvertedIndexValue.isEmpty(Arrays.copyOf(empty, 5)))
        .isInstanceOf(CorruptRecordException.class);
    assertThatThrownBy(() -> InvertedIndexValue.isEmpty(new byte[] {1, 2, 3, 4, 0, 0, 0, 0}))
        .isInstanceOf(CorruptRecordException.class);
  }

  @Test
  void golden() {
    assertGolden(new RoaringBitmap(), EMPTY);
    assertGolden(RoaringBitmap.bitmapOf(0, 1, 2, 5), ARRAY);
    RoaringBitmap run = new RoaringBitmap();
    run.add(0L, 100L);
    assertGolden(run, RUN);
    assertGolden(RoaringBitmap.bitmapOf(3, 65_545), TWO_CONTAINERS);
    assertGolden(RoaringBitmap.bitmapOf(-1), MAX_ID);
  }

  private static void assertGolden(RoaringBitmap b, String golden) {
    assertThat(hex(InvertedIndexValue.encode(b.clone()))).isEqualTo(golden);
    assertThat(InvertedIndexValue.decode(hex(golden))).isEqualTo(b);
  }

  @Test
  void encodeRunOptimizes() {
    RoaringBitmap b = new RoaringBitmap();
    for (int i = 0; i < 100_000; i++) {
      b.add(i);
    }
    int plain = b.serializedSizeInBytes();
    byte[] v = InvertedIndexValue.encode(b);
    assertThat(v.length).isLessThan(plain).isLessThan(100);
    assertThat(InvertedIndexValue.decode(v).getCardinality()).isEqualTo(100_000);
  }

  @Test
  void everyTruncationAndExtensionIsCorrupt() {
    for (String golden :
        List.of(EMPTY, ARRAY, RUN, TWO_CONTAINERS, MAX_ID, hex(bigBitmapBytes()))) {
      byte[] v = hex(golden);
      for (int len = 0; len < v.length; len++) {
        byte[] t = Arrays.copyOf(v, len);
        assertThatThrownBy(() -> InvertedIndexValue.decode(t))
            .as("cut to %d", len)
            .isInstanceOf(CorruptRecordException.class);
      }
      assertThatThrownBy(() -> InvertedIndexValue.decode(Arrays.copyOf(v, v.length + 1)))
          .isInstanceOf(CorruptRecordException.class);
    }
  }

  @Test
  void flippedBytesAreCorruptOrDecode() {
    for (String golden :
        List.of(EMPTY, ARRAY, RUN, TWO_CONTAINERS, MAX_ID, hex(bigBitmapBytes()))) {
      byte[] v = hex(golden);
      int corrupt = 0;
      int tries = 0;
      for (int i = 0;
          i < v.length;
          i += i < 256 ? 1 : 97) { // the big one: header densely, data sampled
        for (int mask : new int[] {0x01, 0x80, 0xFF, 0x10}) {
          byte[] m = v.clone();
          m[i] ^= (byte) mask;
          int at = i;
          tries++;
          if (corruptOrDecodes(
              () -> "flip " + mask + " at " + at + " of " + golden,
              () -> InvertedIndexValue.decode(m))) {
            corrupt++;
          }
        }
      }
      assertThat(corrupt).as(golden).isPositive();
      if (golden.equals(EMPTY)) {
        assertThat(corrupt).as("every flip of the empty bitmap is detected").isEqualTo(tries);
      }
    }
  }

  @Test
  void specificCorruptions() {
    assertCorrupt("", "truncated");
    assertCorrupt("3a 30 00", "truncated");
    assertCorrupt("39 30 00 00 00 00 00 00", "cookie"); // 12345: unknown cookie
    assertCorrupt("00 00 00 00", "cookie");
    // Absurd container counts, with and without run containers.
    assertCorrupt("3a 30 00 00 ff ff ff 7f", "exceeds 65536");
    assertCorrupt("3a 30 00 00 ff ff ff ff", "exceeds 65536");
    assertCorrupt("3a 30 00 00 01 00 01 00", "exceeds 65536"); // 65537
    assertCorrupt("3a 30 00 00 00 00 01 00", "truncated"); // 65536 declared, nothing follows
    assertCorrupt("3b 30 ff ff", "truncated"); // runs, 65536 containers declared
    // An array container declaring 4096 values with none present, a bitmap container (4097) short.
    assertCorrupt("3a 30 00 00 01 00 00 00 00 00 ff 0f 10 00 00 00", "truncated");
    assertCorrupt("3a 30 00 00 01 00 00 00 00 00 00 10 10 00 00 00 ff ff", "truncated");
    // A run container declaring 65535 runs.
    assertCorrupt("3b 30 00 00 01 00 00 63 00 ff ff 00 00", "truncated");
    // Wrong offset.
    assertCorrupt(
        "3a 30 00 00 01 00 00 00 00 00 03 00 11 00 00 00 00 00 01 00 02 00 05 00", "offset");
    // Keys descending / duplicate.
    assertCorrupt(
        "3a 30 00 00 02 00 00 00 01 00 00 00 00 00 00 00 18 00 00 00 1a 00 00 00 03 00 09 00",
        "keys");
    assertCorrupt(
        "3a 30 00 00 02 00 00 00 01 00 00 00 01 00 00 00 18 00 00 00 1a 00 00 00 03 00 09 00",
        "keys");
    // Array values not ascending / duplicated.
    assertCorrupt(
        "3a 30 00 00 01 00 00 00 00 00 03 00 10 00 00 00 00 00 02 00 01 00 05 00", "ascending");
    assertCorrupt(
        "3a 30 00 00 01 00 00 00 00 00 03 00 10 00 00 00 00 00 01 00 01 00 05 00", "ascending");
    // Runs: cardinality mismatch, overlap, past 0xFFFF.
    assertCorrupt("3b 30 00 00 01 00 00 64 00 01 00 00 00 63 00", "declares");
    assertCorrupt("3b 30 00 00 01 00 00 09 00 02 00 00 00 04 00 04 00 04 00", "overlaps");
    assertCorrupt("3b 30 00 00 01 00 00 01 00 01 00 ff ff 01 00", "overflows");
    // Bitmap container whose popcount differs from the declared cardinality.
    byte[] big = bigBitmapBytes();
    int bitmapAt = indexOfBitmapContainer(big);
    byte[] wrongPop = big.clone();
    wrongPop[bitmapAt + 100] ^= 0x01;
    assertThatThrownBy(() -> InvertedIndexValue.decode(wrongPop))
        .isInstanceOf(CorruptRecordException.class)
        .hasMessageContaining("bitmap container");
  }

  @Test
  void randomBytesAndMutationsAreCorruptOrDecode() {
    long seed = seed();
    SplittableRandom r = new SplittableRandom(seed);
    for (int i = 0; i < 10_000; i++) {
      byte[] v;
      if (r.nextBoolean()) {
        v = new byte[r.nextInt(64)];
        r.nextBytes(v);
        if (v.length >= 4 && r.nextBoolean()) {
          v[0] = (byte) (0x3A + r.nextInt(2));
          v[1] = 0x30;
        }
      } else {
        v = InvertedIndexValue.encode(randomBitmap(r, 2_000));
        for (int f = 1 + r.nextInt(3); f > 0 && v.length > 0; f--) {
          v[r.nextInt(v.length)] ^= (byte) (1 + r.nextInt(255));
        }
      }
      byte[] m = v;
      int iter = i;
      corruptOrDecodes(
          () -> seedMsg(seed, iter) + " " + hex(m), () -> InvertedIndexValue.decode(m));
    }
  }

  @Test
  void roundTripProperty() {
    long seed = seed();
    SplittableRandom r = new SplittableRandom(seed);
    for (int i = 0; i < 1_000; i++) {
      RoaringBitmap b = randomBitmap(r, i % 100 == 0 ? 1_000_000 : 5_000);
      RoaringBitmap expected = b.clone();
      byte[] v = InvertedIndexValue.encode(b);
      assertThat(b).as(seedMsg(seed, i)).isEqualTo(expected); // runOptimize keeps the contents
      assertThat(v).as(seedMsg(seed, i)).hasSize(b.serializedSizeInBytes());
      assertThat(InvertedIndexValue.decode(v)).as(seedMsg(seed, i)).isEqualTo(expected);
    }
  }

  @Test
  void largeBitmapRoundTrips() {
    RoaringBitmap b = new RoaringBitmap();
    b.add(0L, 3_000_000L); // runs
    for (int i = 0; i < 300_000; i += 3) {
      b.add(5_000_000 + i); // bitmap containers
    }
    for (int i = 0; i < 70_000; i++) {
      b.add(0x8000_0000 + i * 65_536); // one array container per key, high ids
    }
    RoaringBitmap expected = b.clone();
    byte[] v = InvertedIndexValue.encode(b);
    assertThat(InvertedIndexValue.decode(v)).isEqualTo(expected);
  }

  static RoaringBitmap randomBitmap(SplittableRandom r, int maxValues) {
    RoaringBitmap b = new RoaringBitmap();
    switch (r.nextInt(5)) {
      case 0 -> {} // empty
      case 1 -> { // sparse anywhere in u32
        for (int j = r.nextInt(maxValues); j > 0; j--) {
          b.add(r.nextInt());
        }
      }
      case 2 -> { // dense near 0, as per-bucket series ids are
        int n = r.nextInt(maxValues + 1);
        for (int j = 0; j < n; j++) {
          if (r.nextInt(4) != 0) {
            b.add(j);
          }
        }
      }
      case 3 -> { // runs
        for (int j = r.nextInt(20); j > 0; j--) {
          long start = r.nextLong(1L << 32);
          b.add(start, Math.min(1L << 32, start + 1 + r.nextInt(maxValues)));
        }
      }
      default -> { // dense bitmap container
        for (int j = 0; j < Math.min(maxValues, 20_000); j++) {
          b.add(r.nextInt(65_536));
        }
      }
    }
    return b;
  }

  /** A bitmap with a bitmap container (5000 even values), a run and 5 single-value containers. */
  private static byte[] bigBitmapBytes() {
    RoaringBitmap b = new RoaringBitmap();
    for (int i = 0; i < 10_000; i += 2) {
      b.add(i);
    }
    b.add(70_000L, 70_100L);
    for (int k = 0; k < 5; k++) {
      b.add(200_000 + k * 65_536);
    }
    return InvertedIndexValue.encode(b);
  }

  /**
   * Offset of the first container of {@link #bigBitmapBytes()}: it has runs and 7 containers, so
   * offsets.
   */
  private static int indexOfBitmapContainer(byte[] v) {
    int size = ((v[2] & 0xFF) | (v[3] & 0xFF) << 8) + 1;
    int offsetsAt = 4 + (size + 7) / 8 + 4 * size;
    return Bytes.getIntLe(v, offsetsAt);
  }

  private static void assertCorrupt(String hexValue, String messagePart) {
    assertThatThrownBy(() -> InvertedIndexValue.decode(hex(hexValue)))
        .as(hexValue)
        .isInstanceOf(CorruptRecordException.class)
        .hasMessageContaining(messagePart);
  }
}
