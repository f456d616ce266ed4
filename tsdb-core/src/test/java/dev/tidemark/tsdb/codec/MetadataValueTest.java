package dev.tidemark.tsdb.codec;

import static dev.tidemark.tsdb.codec.RecordCodecTestSupport.hex;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.tidemark.tsdb.model.FamilyMetadata;
import dev.tidemark.tsdb.model.PromType;
import org.junit.jupiter.api.Test;

/**
 * Metadata record golden vectors, both ways.
 *
 * <p>Golden vector, derived by hand from docs/format.md (Metadata, engine records): the histogram
 * family {@code rpc_seconds}, unit {@code seconds}, help {@code RPC latency.}. Key: version {@code
 * 01}, tag {@code 80} (type 0x8, global), the name's UTF-8. Value: type id {@code 03} (histogram),
 * {@code Utf8} unit (length 7 LE, bytes), {@code Utf8} help (length 12 LE, bytes).
 */
class MetadataValueTest {
  static final FamilyMetadata RPC =
      new FamilyMetadata("rpc_seconds", PromType.HISTOGRAM, "seconds", "RPC latency.");
  static final String KEY = "01 80 72 70 63 5f 73 65 63 6f 6e 64 73";
  static final String VALUE =
      "03 07 00 73 65 63 6f 6e 64 73 0c 00 52 50 43 20 6c 61 74 65 6e 63 79 2e";

  @Test
  void golden() {
    assertThat(hex(Keys.metadata(RPC.family()))).isEqualTo(KEY);
    assertThat(hex(MetadataValue.encode(RPC))).isEqualTo(VALUE);
    assertThat(MetadataValue.decode(hex(KEY), hex(VALUE))).isEqualTo(RPC);
    assertThat(Keys.recordType(hex(KEY))).isEqualTo(RecordType.METADATA);
  }

  @Test
  void emptyUnitAndHelpAndEveryType() {
    // counter "up", no unit, no help: 01 80 75 70 / 01 00 00 00 00
    FamilyMetadata up = new FamilyMetadata("up", PromType.COUNTER, "", "");
    assertThat(hex(MetadataValue.encode(up))).isEqualTo("01 00 00 00 00");
    for (PromType t : PromType.values()) {
      FamilyMetadata m = new FamilyMetadata("m_é", t, "u", "h");
      assertThat(MetadataValue.decode(Keys.metadata(m.family()), MetadataValue.encode(m)))
          .isEqualTo(m);
    }
  }

  @Test
  void typeIdsAreRemoteWritesEnumNumbers() {
    assertThat(PromType.UNKNOWN.id()).isZero();
    assertThat(PromType.COUNTER.id()).isEqualTo(1);
    assertThat(PromType.GAUGE.id()).isEqualTo(2);
    assertThat(PromType.HISTOGRAM.id()).isEqualTo(3);
    assertThat(PromType.GAUGEHISTOGRAM.id()).isEqualTo(4);
    assertThat(PromType.SUMMARY.id()).isEqualTo(5);
    assertThat(PromType.INFO.id()).isEqualTo(6);
    assertThat(PromType.STATESET.id()).isEqualTo(7);
  }

  @Test
  void adversarialRecordsThrowCorruptRecordException() {
    byte[] key = hex(KEY);
    assertThatThrownBy(() -> MetadataValue.decode(key, hex("08 00 00 00 00")))
        .isInstanceOf(CorruptRecordException.class)
        .hasMessageContaining("unknown type id 8");
    for (int n = 0; n < hex(VALUE).length; n++) {
      byte[] cut = java.util.Arrays.copyOf(hex(VALUE), n);
      assertThatThrownBy(() -> MetadataValue.decode(key, cut))
          .as("truncated to %d bytes", n)
          .isInstanceOf(CorruptRecordException.class);
    }
    assertThatThrownBy(() -> MetadataValue.decode(key, hex(VALUE + " 00")))
        .isInstanceOf(CorruptRecordException.class);
    assertThatThrownBy(() -> MetadataValue.decode(hex("01 80 c0 80"), hex(VALUE)))
        .as("overlong UTF-8 in the name")
        .isInstanceOf(CorruptRecordException.class);
    assertThatThrownBy(() -> MetadataValue.decode(hex("01 80"), hex(VALUE)))
        .as("no name")
        .isInstanceOf(CorruptRecordException.class);
    assertThatThrownBy(() -> MetadataValue.decode(hex("01 70"), hex(VALUE)))
        .as("the schema key")
        .isInstanceOf(CorruptRecordException.class);
  }
}
