package dev.tidemark.tsdb.codec;

import static dev.tidemark.tsdb.codec.RecordCodecTestSupport.hex;
import static dev.tidemark.tsdb.codec.RecordCodecTestSupport.randomString;
import static dev.tidemark.tsdb.codec.RecordCodecTestSupport.seed;
import static dev.tidemark.tsdb.codec.RecordCodecTestSupport.seedMsg;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** {@link ValueWriter} and {@link ValueReader}: little-endian layout, bounds, strict UTF-8. */
class ValueBuffersTest {

  @Test
  void littleEndianGolden() {
    // Derived by hand: u8 0xAB, u16 0x1234, u32 0xDEADBEEF, i64 0x0102030405060708, Utf8 "é" (c3
    // a9), absent optional.
    byte[] v =
        new ValueWriter(1 + 2 + 4 + 8 + 4 + 2)
            .putU8(0xAB)
            .putU16(0x1234)
            .putU32(0xDEADBEEF)
            .putI64(0x0102030405060708L)
            .putUtf8("é")
            .putOptionalNonEmptyUtf8("")
            .finish();
    assertThat(hex(v)).isEqualTo("ab 34 12 ef be ad de 08 07 06 05 04 03 02 01 02 00 c3 a9 00 00");
    ValueReader r = new ValueReader(v, "test");
    assertThat(r.u8()).isEqualTo(0xAB);
    assertThat(r.u16()).isEqualTo(0x1234);
    assertThat(r.u32()).isEqualTo(0xDEADBEEF);
    assertThat(r.i64()).isEqualTo(0x0102030405060708L);
    assertThat(r.utf8()).isEqualTo("é");
    assertThat(r.optionalNonEmptyUtf8()).isEmpty();
    r.expectEnd();
  }

  @Test
  void readerBoundsAreCorrupt() {
    assertThatThrownBy(() -> new ValueReader(new byte[0], "X value").u8())
        .isInstanceOf(CorruptRecordException.class)
        .hasMessageContaining("X value");
    assertThatThrownBy(() -> new ValueReader(new byte[1], "t").u16())
        .isInstanceOf(CorruptRecordException.class);
    assertThatThrownBy(() -> new ValueReader(new byte[3], "t").u32())
        .isInstanceOf(CorruptRecordException.class);
    assertThatThrownBy(() -> new ValueReader(new byte[7], "t").i64())
        .isInstanceOf(CorruptRecordException.class);
    assertThatThrownBy(() -> new ValueReader(hex("05 00 61 62"), "t").utf8())
        .isInstanceOf(CorruptRecordException.class);
    assertThatThrownBy(() -> new ValueReader(hex("ff ff"), "t").utf8())
        .isInstanceOf(CorruptRecordException.class);
    assertThatThrownBy(() -> new ValueReader(new byte[2], "t").skip(3))
        .isInstanceOf(CorruptRecordException.class);
    assertThatThrownBy(() -> new ValueReader(new byte[2], "t").bytes(-1))
        .isInstanceOf(CorruptRecordException.class);
    ValueReader r = new ValueReader(new byte[3], "t");
    r.u16();
    assertThatThrownBy(r::expectEnd)
        .isInstanceOf(CorruptRecordException.class)
        .hasMessageContaining("trailing");
    // A sub-range reader never reads past its limit, even with bytes after it.
    ValueReader sub = new ValueReader(hex("aa bb cc dd"), 1, 2, "t");
    assertThat(sub.u16()).isEqualTo(0xCCBB);
    assertThatThrownBy(sub::u8).isInstanceOf(CorruptRecordException.class);
  }

  @Test
  void strictUtf8() {
    for (String bad :
        new String[] {
          "c3",
          "c0 80",
          "c1 bf",
          "e0 80 80",
          "ed a0 80",
          "ed bf bf",
          "f4 90 80 80",
          "f8 88 80 80 80",
          "ff",
          "fe",
          "80",
          "61 80 62"
        }) {
      byte[] b = hex(bad);
      assertThatThrownBy(() -> ValueReader.decodeUtf8(b, 0, b.length, "t"))
          .as(bad)
          .isInstanceOf(CorruptRecordException.class)
          .hasMessageContaining("UTF-8");
    }
    assertThat(ValueReader.decodeUtf8(hex("f0 9f 98 80 f4 8f bf bf 00"), 0, 9, "t"))
        .isEqualTo("\uD83D\uDE00\uDBFF\uDFFF\u0000");
  }

  @Test
  void writerLimits() {
    assertThatThrownBy(() -> new ValueWriter(1).putU16(1))
        .isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(() -> new ValueWriter(2).putU16(0x10000))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> new ValueWriter(1).putU8(256))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> new ValueWriter(2).finish()).isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(() -> ValueWriter.utf8Length("\uDC00"))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> ValueWriter.utf8Length("a\uD800"))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> ValueWriter.utf8Length("\uD800a"))
        .isInstanceOf(IllegalArgumentException.class);
    String max = "\u00e9".repeat(32_767) + "a"; // 65535 bytes
    assertThat(ValueWriter.utf8Length(max)).isEqualTo(65_535);
    assertThat(new ValueWriter(65_537).putUtf8(max).finish()).hasSize(65_537);
    assertThatThrownBy(() -> new ValueWriter(65_538).putUtf8(max + "a"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("65536");
  }

  @Test
  void utf8MatchesTheJdk() {
    long seed = seed();
    SplittableRandom r = new SplittableRandom(seed);
    for (int i = 0; i < 20_000; i++) {
      String s = randomString(r, 30);
      byte[] jdk = s.getBytes(StandardCharsets.UTF_8);
      assertThat(ValueWriter.utf8Length(s)).as(seedMsg(seed, i)).isEqualTo(jdk.length);
      byte[] v = new ValueWriter(ValueWriter.sizeOfUtf8(s)).putUtf8(s).finish();
      ValueReader rd = new ValueReader(v, "t");
      assertThat(rd.u16()).as(seedMsg(seed, i)).isEqualTo(jdk.length);
      assertThat(rd.bytes(jdk.length)).as(seedMsg(seed, i)).isEqualTo(jdk);
      assertThat(new ValueReader(v, "t").utf8()).as(seedMsg(seed, i)).isEqualTo(s);
    }
  }
}
