package dev.tidemark.tsdb.codec;

import static dev.tidemark.tsdb.codec.RecordCodecTestSupport.corruptOrDecodes;
import static dev.tidemark.tsdb.codec.RecordCodecTestSupport.hex;
import static dev.tidemark.tsdb.codec.RecordCodecTestSupport.randomNonEmptyString;
import static dev.tidemark.tsdb.codec.RecordCodecTestSupport.randomString;
import static dev.tidemark.tsdb.codec.RecordCodecTestSupport.seed;
import static dev.tidemark.tsdb.codec.RecordCodecTestSupport.seedMsg;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.tidemark.tsdb.model.Labels;
import dev.tidemark.tsdb.model.MetricMetadata;
import dev.tidemark.tsdb.model.MetricType;
import dev.tidemark.tsdb.model.Temporality;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * ForwardIndex value golden vectors and properties.
 *
 * <p>Golden vectors, derived by hand from docs/format.md: unit OptionalNonEmptyUtf8 (u16 LE length
 * + UTF-8), metric_type u8, flags u8 (bits 0-1 temporality, bit 2 monotonic), u16 LE label count,
 * then (Utf8 name, Utf8 value) pairs in label order.
 */
class ForwardIndexValueTest {

  /**
   * A monotonic cumulative Sum, unit "1": requests_total{job="api"}. Flags 0x05 = cumulative (1) |
   * monotonic (4).
   */
  static final ForwardIndexValue SUM =
      new ForwardIndexValue(
          new MetricMetadata(MetricType.SUM, "1", Temporality.CUMULATIVE, true),
          Labels.of("__name__", "requests_total", "job", "api"));

  static final String SUM_HEX =
      "01 00 31" // unit: length 1, "1"
          + " 02" // metric_type 2 = Sum
          + " 05" // flags: temporality 1 (cumulative) | monotonic bit 2
          + " 02 00" // 2 labels
          + " 08 00 5f 5f 6e 61 6d 65 5f 5f" // "__name__"
          + " 0e 00 72 65 71 75 65 73 74 73 5f 74 6f 74 61 6c" // "requests_total"
          + " 03 00 6a 6f 62" // "job"
          + " 03 00 61 70 69"; // "api"

  /** No metadata (unit absent), a non-ASCII value: temp{zone="Zürich"}. */
  static final ForwardIndexValue UNKNOWN =
      new ForwardIndexValue(
          MetricMetadata.UNKNOWN, Labels.of("__name__", "temp", "zone", "Zürich"));

  static final String UNKNOWN_HEX =
      "00 00" // unit absent
          + " 00 00" // metric_type 0 = unknown, flags 0
          + " 02 00"
          + " 08 00 5f 5f 6e 61 6d 65 5f 5f" // "__name__"
          + " 04 00 74 65 6d 70" // "temp"
          + " 04 00 7a 6f 6e 65" // "zone"
          + " 07 00 5a c3 bc 72 69 63 68"; // "Zürich", ü = c3 bc

  @Test
  void golden() {
    assertThat(hex(SUM.encode())).isEqualTo(SUM_HEX);
    assertThat(ForwardIndexValue.decode(hex(SUM_HEX))).isEqualTo(SUM);
    assertThat(hex(UNKNOWN.encode())).isEqualTo(UNKNOWN_HEX);
    assertThat(ForwardIndexValue.decode(hex(UNKNOWN_HEX))).isEqualTo(UNKNOWN);
  }

  @Test
  void noLabels() {
    ForwardIndexValue v = new ForwardIndexValue(MetricMetadata.UNKNOWN, Labels.empty());
    assertThat(hex(v.encode())).isEqualTo("00 00 00 00 00 00");
    assertThat(ForwardIndexValue.decode(v.encode())).isEqualTo(v);
  }

  @Test
  void everyTruncationAndEveryExtensionIsCorrupt() {
    for (String golden : List.of(SUM_HEX, UNKNOWN_HEX)) {
      byte[] v = hex(golden);
      for (int len = 0; len < v.length; len++) {
        byte[] t = Arrays.copyOf(v, len);
        assertThatThrownBy(() -> ForwardIndexValue.decode(t))
            .as("cut to %d", len)
            .isInstanceOf(CorruptRecordException.class);
      }
      assertThatThrownBy(() -> ForwardIndexValue.decode(Arrays.copyOf(v, v.length + 1)))
          .isInstanceOf(CorruptRecordException.class)
          .hasMessageContaining("trailing");
    }
  }

  @Test
  void badMetadataIsCorrupt() {
    assertCorrupt("00 00 06 00 00 00", "unknown metric type");
    assertCorrupt("00 00 ff 00 00 00", "unknown metric type");
    assertCorrupt("00 00 02 08 00 00", "reserved flag bits");
    assertCorrupt("00 00 02 80 00 00", "reserved flag bits");
    assertCorrupt("00 00 02 03 00 00", "temporality");
  }

  @Test
  void invalidUtf8IsCorrupt() {
    for (String bad :
        List.of("c3", "c0 80", "ed a0 80", "f4 90 80 80", "ff", "80", "e2 82", "f0 9f 98")) {
      int n = hex(bad).length;
      String len = String.format("%02x 00", n);
      assertCorrupt(len + " " + bad + " 00 00 00 00", "UTF-8"); // in the unit
      assertCorrupt("00 00 00 00 01 00 " + len + " " + bad + " 01 00 78", "UTF-8"); // in a name
      assertCorrupt("00 00 00 00 01 00 01 00 61 " + len + " " + bad, "UTF-8"); // in a value
    }
  }

  @Test
  void labelRulesAreEnforced() {
    assertCorrupt("00 00 00 00 02 00 01 00 62 01 00 31 01 00 61 01 00 31", "ascending"); // b, a
    assertCorrupt("00 00 00 00 02 00 01 00 61 01 00 31 01 00 61 01 00 32", "ascending"); // a, a
    assertCorrupt("00 00 00 00 01 00 00 00 02 00 31 32", "empty name");
    assertCorrupt("00 00 00 00 01 00 02 00 61 62 00 00", "empty value");
    // UTF-8 order, not UTF-16: U+FFFF (ef bf bf) sorts before U+1F600 (f0 9f 98 80).
    byte[] ok = hex("00 00 00 00 02 00 03 00 ef bf bf 01 00 31 04 00 f0 9f 98 80 01 00 31");
    assertThat(ForwardIndexValue.decode(ok).labels())
        .isEqualTo(Labels.of("\uFFFF", "1", "\uD83D\uDE00", "1"));
    assertCorrupt(
        "00 00 00 00 02 00 04 00 f0 9f 98 80 01 00 31 03 00 ef bf bf 01 00 31", "ascending");
  }

  @Test
  void absurdCountsAreCorruptWithoutAllocating() {
    assertCorrupt("00 00 00 00 ff ff", "65535 labels");
    assertCorrupt("00 00 00 00 ff ff 01 00 61 01 00 31", "labels declared");
    assertCorrupt("ff ff 61", "truncated");
    assertCorrupt("00 00 00 00 01 00 ff ff 61", "truncated");
  }

  @Test
  void limitsAtEncode() {
    String max = "x".repeat(65_535);
    ForwardIndexValue big =
        new ForwardIndexValue(
            new MetricMetadata(MetricType.GAUGE, max, Temporality.UNSPECIFIED, false),
            Labels.of(max, max));
    assertThat(ForwardIndexValue.decode(big.encode())).isEqualTo(big);

    String over = "x".repeat(65_536);
    String overMultiByte = "\u20AC".repeat(21_846); // 3 bytes each: 65538 bytes in 21846 chars
    assertThatThrownBy(
            () ->
                new ForwardIndexValue(
                        new MetricMetadata(MetricType.GAUGE, over, Temporality.UNSPECIFIED, false),
                        Labels.empty())
                    .encode())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("65536");
    assertThatThrownBy(
            () -> new ForwardIndexValue(MetricMetadata.UNKNOWN, Labels.of(over, "v")).encode())
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(
            () ->
                new ForwardIndexValue(MetricMetadata.UNKNOWN, Labels.of("n", overMultiByte))
                    .encode())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("65538");
    assertThatThrownBy(
            () ->
                new ForwardIndexValue(
                        new MetricMetadata(
                            MetricType.GAUGE, "a\uD800", Temporality.UNSPECIFIED, false),
                        Labels.empty())
                    .encode())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("surrogate");

    Labels.Builder many = Labels.builder();
    for (int i = 0; i < 65_535; i++) {
      many.add("l" + i, "v");
    }
    Labels maxLabels = many.build();
    ForwardIndexValue v = new ForwardIndexValue(MetricMetadata.UNKNOWN, maxLabels);
    assertThat(ForwardIndexValue.decode(v.encode()).labels()).isEqualTo(maxLabels);
    Labels tooMany = maxLabels.toBuilder().add("one_more", "v").build();
    assertThatThrownBy(() -> new ForwardIndexValue(MetricMetadata.UNKNOWN, tooMany).encode())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("65536");
  }

  @Test
  void roundTripProperty() {
    long seed = seed();
    SplittableRandom r = new SplittableRandom(seed);
    for (int i = 0; i < 3_000; i++) {
      ForwardIndexValue v = randomValue(r);
      byte[] bytes = v.encode();
      assertThat(ForwardIndexValue.decode(bytes)).as(seedMsg(seed, i)).isEqualTo(v);
    }
  }

  @Test
  void mutatedValuesAreCorruptOrDecode() {
    long seed = seed();
    SplittableRandom r = new SplittableRandom(seed);
    for (int i = 0; i < 20_000; i++) {
      byte[] v = randomValue(r).encode();
      int flips = 1 + r.nextInt(3);
      for (int f = 0; f < flips; f++) {
        v[r.nextInt(v.length)] ^= (byte) (1 + r.nextInt(255));
      }
      byte[] m = r.nextInt(4) == 0 ? Arrays.copyOf(v, r.nextInt(v.length + 1)) : v;
      int iter = i;
      corruptOrDecodes(() -> seedMsg(seed, iter) + " " + hex(m), () -> ForwardIndexValue.decode(m));
    }
  }

  static ForwardIndexValue randomValue(SplittableRandom r) {
    MetricType[] types = MetricType.values();
    Temporality[] temps = Temporality.values();
    MetricMetadata meta =
        new MetricMetadata(
            types[r.nextInt(types.length)],
            r.nextBoolean() ? "" : randomString(r, 8),
            temps[r.nextInt(temps.length)],
            r.nextBoolean());
    Map<String, String> labels = new HashMap<>();
    int n = r.nextInt(r.nextInt(10) == 0 ? 200 : 8);
    for (int j = 0; j < n; j++) {
      labels.put(
          j == 0 ? Labels.METRIC_NAME : randomNonEmptyString(r, 10), randomNonEmptyString(r, 16));
    }
    return new ForwardIndexValue(meta, Labels.fromMap(labels));
  }

  private static void assertCorrupt(String hexValue, String messagePart) {
    assertThatThrownBy(() -> ForwardIndexValue.decode(hex(hexValue)))
        .as(hexValue)
        .isInstanceOf(CorruptRecordException.class)
        .hasMessageContaining(messagePart);
  }
}
