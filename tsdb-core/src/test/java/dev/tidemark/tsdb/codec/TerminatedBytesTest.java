package dev.tidemark.tsdb.codec;

import static dev.tidemark.tsdb.codec.RecordCodecTestSupport.hex;
import static dev.tidemark.tsdb.codec.RecordCodecTestSupport.randomString;
import static dev.tidemark.tsdb.codec.RecordCodecTestSupport.seed;
import static dev.tidemark.tsdb.codec.RecordCodecTestSupport.seedMsg;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * Terminated bytes: golden vectors (derived by hand from docs/format.md: 00 → 01 01, 01 → 01 02,
 * then 00), order preservation and prefix-freedom.
 */
class TerminatedBytesTest {

  @Test
  void golden() {
    assertGolden("", "00");
    assertGolden("6a 6f 62", "6a 6f 62 00"); // "job"
    assertGolden("61 00 62 01", "61 01 01 62 01 02 00"); // "a\0b\1"
    assertGolden("00", "01 01 00");
    assertGolden("01", "01 02 00");
    assertGolden("02 ff", "02 ff 00");
  }

  private static void assertGolden(String raw, String encoded) {
    assertThat(hex(TerminatedBytes.encode(hex(raw)))).isEqualTo(encoded);
    assertThat(TerminatedBytes.decode(hex(encoded))).isEqualTo(hex(raw));
    assertThat(TerminatedBytes.encodedLength(hex(raw))).isEqualTo(hex(encoded).length);
  }

  @Test
  void invalidEncodingsAreCorrupt() {
    for (String bad : new String[] {"", "61", "01", "01 00", "01 03 00", "01 ff 00", "61 00 62"}) {
      assertThatThrownBy(() -> TerminatedBytes.decode(hex(bad)))
          .as(bad)
          .isInstanceOf(CorruptRecordException.class);
    }
  }

  @Test
  void roundTripOrderAndPrefixFreedom() {
    long seed = seed();
    SplittableRandom r = new SplittableRandom(seed);
    for (int i = 0; i < 50_000; i++) {
      byte[] a = randomBytes(r);
      byte[] b = r.nextInt(5) == 0 ? extend(a, r) : randomBytes(r);
      byte[] ea = TerminatedBytes.encode(a);
      byte[] eb = TerminatedBytes.encode(b);
      String msg = seedMsg(seed, i) + " " + hex(a) + " vs " + hex(b);
      assertThat(TerminatedBytes.decode(ea)).as(msg).isEqualTo(a);
      assertThat(TerminatedBytes.end(ea, 0, ea.length)).as(msg).isEqualTo(ea.length);
      assertThat(Integer.signum(Arrays.compareUnsigned(ea, eb)))
          .as(msg)
          .isEqualTo(Integer.signum(Arrays.compareUnsigned(a, b)));
      // Prefix-free: one encoding starts with another only if they are equal.
      boolean prefix = eb.length >= ea.length && Arrays.equals(eb, 0, ea.length, ea, 0, ea.length);
      assertThat(prefix).as(msg).isEqualTo(Arrays.equals(a, b));
    }
  }

  @Test
  void stringEncodingEqualsByteEncodingOfUtf8() {
    long seed = seed();
    SplittableRandom r = new SplittableRandom(seed);
    for (int i = 0; i < 20_000; i++) {
      String s = randomString(r, 20);
      byte[] utf8 = s.getBytes(StandardCharsets.UTF_8);
      byte[] viaString = new byte[TerminatedBytes.encodedLength(s)];
      int end = TerminatedBytes.encode(s, viaString, 0);
      assertThat(end).as(seedMsg(seed, i)).isEqualTo(viaString.length);
      assertThat(viaString)
          .as(seedMsg(seed, i) + " " + KeysTest.escape(s))
          .isEqualTo(TerminatedBytes.encode(utf8));
      assertThat(TerminatedBytes.decodeUtf8(viaString, 0, viaString.length, "test"))
          .as(seedMsg(seed, i))
          .isEqualTo(s);
    }
  }

  private static byte[] randomBytes(SplittableRandom r) {
    byte[] b = new byte[r.nextInt(8)];
    for (int i = 0; i < b.length; i++) {
      b[i] = (byte) (r.nextBoolean() ? r.nextInt(4) : r.nextInt(256)); // many 00, 01, 02
    }
    return b;
  }

  private static byte[] extend(byte[] a, SplittableRandom r) {
    byte[] b = Arrays.copyOf(a, a.length + 1 + r.nextInt(3));
    for (int i = a.length; i < b.length; i++) {
      b[i] = (byte) r.nextInt(3);
    }
    return b;
  }
}
