package dev.tidemark.tsdb.codec;

import static dev.tidemark.tsdb.codec.RecordCodecTestSupport.corruptOrDecodes;
import static dev.tidemark.tsdb.codec.RecordCodecTestSupport.hex;
import static dev.tidemark.tsdb.codec.RecordCodecTestSupport.seed;
import static dev.tidemark.tsdb.codec.RecordCodecTestSupport.seedMsg;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * BucketList value golden vectors and properties.
 *
 * <p>Golden vector, derived by hand from docs/format.md: FixedElementArray of (size code u8,
 * time_bucket u32 LE), sorted by time_bucket then code. Buckets: 1 h @ 28421880 (0x01B1AEF8,
 * 2024-01-15T10:00Z), 2 h @ 28421880, 1 h @ 28421940 (0x01B1AF34, 11:00Z).
 */
class BucketListValueTest {

  static final TimeBucket H10 = new TimeBucket(1, 28_421_880);
  static final TimeBucket H10_2H = new TimeBucket(2, 28_421_880);
  static final TimeBucket H11 = new TimeBucket(1, 28_421_940);
  static final String GOLDEN = "01 f8 ae b1 01 02 f8 ae b1 01 01 34 af b1 01";

  @Test
  void golden() {
    // Given unsorted and with a duplicate: encode sorts and dedups.
    assertThat(hex(BucketListValue.encode(List.of(H11, H10, H10_2H, H10)))).isEqualTo(GOLDEN);
    assertThat(BucketListValue.decode(hex(GOLDEN))).containsExactly(H10, H10_2H, H11);
  }

  @Test
  void empty() {
    assertThat(BucketListValue.encode(List.of())).isEmpty();
    assertThat(BucketListValue.decode(new byte[0])).isEmpty();
  }

  @Test
  void unsignedStartsSortAfterSignedOnes() {
    TimeBucket high = new TimeBucket(1, (int) 4_294_967_280L); // 0xFFFFFFF0: year 10136
    byte[] v = BucketListValue.encode(List.of(high, H10));
    assertThat(hex(v)).isEqualTo("01 f8 ae b1 01 01 f0 ff ff ff");
    assertThat(BucketListValue.decode(v)).containsExactly(H10, high);
  }

  @Test
  void truncationsAreCorruptUnlessWholeElements() {
    byte[] v = hex(GOLDEN);
    for (int len = 0; len < v.length; len++) {
      byte[] t = Arrays.copyOf(v, len);
      if (len % 5 == 0) {
        assertThat(BucketListValue.decode(t))
            .containsExactlyElementsOf(List.of(H10, H10_2H, H11).subList(0, len / 5));
      } else {
        assertThatThrownBy(() -> BucketListValue.decode(t))
            .as("cut to %d", len)
            .isInstanceOf(CorruptRecordException.class)
            .hasMessageContaining("multiple");
      }
    }
  }

  @Test
  void invalidElementsAreCorrupt() {
    for (String bad :
        List.of(
            "00 f8 ae b1 01", // size code 0
            "10 f8 ae b1 01", // size code 16
            "02 34 af b1 01", // 2 h bucket at an odd hour
            "01 f9 ae b1 01", // not on an hour
            "01 34 af b1 01 01 f8 ae b1 01", // descending
            "01 f8 ae b1 01 01 f8 ae b1 01", // duplicate
            "02 f8 ae b1 01 01 f8 ae b1 01")) { // same start, codes descending
      assertThatThrownBy(() -> BucketListValue.decode(hex(bad)))
          .as(bad)
          .isInstanceOf(CorruptRecordException.class);
    }
  }

  @Test
  void roundTripProperty() {
    long seed = seed();
    SplittableRandom r = new SplittableRandom(seed);
    for (int i = 0; i < 2_000; i++) {
      List<TimeBucket> in = new ArrayList<>();
      int n = r.nextInt(40);
      for (int j = 0; j < n; j++) {
        in.add(
            r.nextInt(5) == 0 && !in.isEmpty()
                ? in.get(r.nextInt(in.size()))
                : KeysTest.randomBucket(r));
      }
      byte[] v = BucketListValue.encode(in);
      List<TimeBucket> expected = new ArrayList<>(new TreeSet<>(in));
      assertThat(v).as(seedMsg(seed, i)).hasSize(expected.size() * 5);
      assertThat(BucketListValue.decode(v))
          .as(seedMsg(seed, i))
          .containsExactlyElementsOf(expected);
    }
  }

  @Test
  void randomBytesAreCorruptOrDecode() {
    long seed = seed();
    SplittableRandom r = new SplittableRandom(seed);
    for (int i = 0; i < 10_000; i++) {
      byte[] v = new byte[r.nextInt(21)];
      r.nextBytes(v);
      int iter = i;
      corruptOrDecodes(() -> seedMsg(seed, iter) + " " + hex(v), () -> BucketListValue.decode(v));
    }
  }
}
