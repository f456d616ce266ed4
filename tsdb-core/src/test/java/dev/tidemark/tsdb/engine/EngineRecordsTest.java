package dev.tidemark.tsdb.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.tidemark.tsdb.codec.CorruptRecordException;
import dev.tidemark.tsdb.codec.TimeBucket;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Golden vectors of the engine records (docs/format.md, "Engine records"), both directions. The
 * hex was derived by hand from the layout in docs/format.md (timestamps and doubles packed with
 * Python's struct module, little-endian) and then confirmed by the code.
 */
class EngineRecordsTest {
  private static byte[] hex(String s) {
    return HexFormat.ofDelimiter(" ").parseHex(s);
  }

  private static final TimeBucket BUCKET = new TimeBucket(1, 0x01b1aef8);

  @Test
  void headLogGolden() {
    String key = "01 61 01 b1 ae f8 00 00 00 00 00 00 00 05";
    String value = "01 07 00 00 00 98 87 90 0c 8d 01 00 00 00 00 00 00 00 00 f8 3f"
        + " 07 00 00 00 30 c2 90 0c 8d 01 00 00 02 00 00 00 00 00 f0 7f";
    assertThat(BUCKET.startMillis()).isEqualTo(1705312800000L);
    HeadLogBuffer buf = new HeadLogBuffer();
    buf.add(7, 1705312815000L, Double.doubleToRawLongBits(1.5));
    buf.add(7, 1705312830000L, 0x7ff0000000000002L);
    assertThat(buf.take()).isEqualTo(hex(value));
    assertThat(buf.isEmpty()).isTrue();

    List<String> decoded = new ArrayList<>();
    HeadLogBuffer.decode(hex(value), (id, t, bits) -> decoded.add(id + "@" + t + "=" + Long.toHexString(bits)));
    assertThat(decoded).containsExactly("7@1705312815000=3ff8000000000000", "7@1705312830000=7ff0000000000002");

    assertThat(Engine.headLogKey(BUCKET, 5)).isEqualTo(hex(key));
  }

  @Test
  void headLogRefusesCorruptValues() {
    assertThatThrownBy(() -> HeadLogBuffer.decode(new byte[0], (a, b, c) -> {}))
        .isInstanceOf(CorruptRecordException.class);
    assertThatThrownBy(() -> HeadLogBuffer.decode(hex("02"), (a, b, c) -> {}))
        .isInstanceOf(CorruptRecordException.class)
        .hasMessageContaining("format 0x2");
    byte[] good = hex("01 07 00 00 00 98 87 90 0c 8d 01 00 00 00 00 00 00 00 00 f8 3f");
    for (int len = 2; len < good.length; len++) {
      byte[] cut = java.util.Arrays.copyOf(good, len);
      assertThatThrownBy(() -> HeadLogBuffer.decode(cut, (a, b, c) -> {}))
          .isInstanceOf(CorruptRecordException.class);
    }
  }

  @Test
  void schemaGolden() {
    SchemaRecord r = new SchemaRecord(1, 1, 1);
    assertThat(r.encode()).isEqualTo(hex("01 00 01 01"));
    assertThat(SchemaRecord.decode(hex("01 00 01 01"))).isEqualTo(r);
    assertThatThrownBy(() -> SchemaRecord.decode(hex("01 00 01"))).isInstanceOf(CorruptRecordException.class);
  }
}
