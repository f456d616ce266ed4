package dev.tidemark.tsdb.codec;

import static dev.tidemark.tsdb.codec.RecordCodecTestSupport.hex;
import static dev.tidemark.tsdb.codec.RecordCodecTestSupport.seed;
import static dev.tidemark.tsdb.codec.RecordCodecTestSupport.seedMsg;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Arrays;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * SeriesDictionary value golden vectors and properties.
 *
 * <p>Golden vectors, derived by hand from docs/format.md: FixedElementArray of series_id u32 LE.
 * One id 7; a collision entry with ids 7 and 300 (0x12C); an id with the high bit set.
 */
class SeriesDictionaryValueTest {

  static final String ONE = "07 00 00 00";
  static final String COLLISION = "07 00 00 00 2c 01 00 00";

  @Test
  void golden() {
    assertThat(hex(SeriesDictionaryValue.encode(7))).isEqualTo(ONE);
    assertThat(SeriesDictionaryValue.decode(hex(ONE))).containsExactly(7);
    assertThat(hex(SeriesDictionaryValue.encode(7, 300))).isEqualTo(COLLISION);
    assertThat(SeriesDictionaryValue.decode(hex(COLLISION))).containsExactly(7, 300);
    assertThat(hex(SeriesDictionaryValue.encode(0xFFFF_FFFE))).isEqualTo("fe ff ff ff");
    assertThat(SeriesDictionaryValue.decode(hex("fe ff ff ff"))).containsExactly(0xFFFF_FFFE);
  }

  @Test
  void emptyIsRejected() {
    assertThatThrownBy(() -> SeriesDictionaryValue.encode())
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> SeriesDictionaryValue.decode(new byte[0]))
        .isInstanceOf(CorruptRecordException.class);
  }

  @Test
  void lengthNotAMultipleOfFourIsCorrupt() {
    byte[] v = hex(COLLISION);
    for (int len = 0; len <= v.length + 3; len++) {
      byte[] t = Arrays.copyOf(v, len);
      if (len > 0 && len % 4 == 0) {
        assertThat(SeriesDictionaryValue.decode(t)).hasSize(len / 4);
      } else {
        assertThatThrownBy(() -> SeriesDictionaryValue.decode(t))
            .as("length %d", len)
            .isInstanceOf(CorruptRecordException.class);
      }
    }
  }

  @Test
  void roundTripProperty() {
    long seed = seed();
    SplittableRandom r = new SplittableRandom(seed);
    for (int i = 0; i < 5_000; i++) {
      int[] ids = new int[1 + r.nextInt(r.nextInt(10) == 0 ? 1000 : 3)];
      for (int j = 0; j < ids.length; j++) {
        ids[j] = r.nextInt();
      }
      assertThat(SeriesDictionaryValue.decode(SeriesDictionaryValue.encode(ids)))
          .as(seedMsg(seed, i))
          .containsExactly(ids);
    }
  }
}
