package dev.tidemark.tsdb.codec;

import static dev.tidemark.tsdb.codec.GorillaTestSupport.STALE_NAN;
import static dev.tidemark.tsdb.codec.GorillaTestSupport.decode;
import static dev.tidemark.tsdb.codec.GorillaTestSupport.encode;
import static dev.tidemark.tsdb.codec.GorillaTestSupport.hex;
import static dev.tidemark.tsdb.codec.GorillaTestSupport.sample;
import static org.assertj.core.api.Assertions.assertThat;

import dev.tidemark.tsdb.codec.GorillaTestSupport.Sample;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Golden byte vectors of the Gorilla XOR stream (docs/format.md, "Gorilla XOR chunk"), checked in
 * both directions. A persisted byte never changes silently: if one of these fails, the format
 * changed, and that needs a new encoding id, not a new vector.
 *
 * <p>How they were produced: the header bytes and the bit fields were derived by hand from the
 * layout in docs/format.md ("Gorilla XOR chunk") (varints with Python's arithmetic, bit strings
 * written out field by field and regrouped into bytes), then confirmed by running the encoder. The
 * "regular" vector is decoded bit by bit in the worked example of that document.
 */
class GorillaGoldenVectorTest {

  record Golden(String name, List<Sample> samples, String hex) {
    @Override
    public String toString() {
      return name;
    }
  }

  static final long T0 = 1_700_000_000_000L; // 2023-11-14T22:13:20Z, varint 80 d0 95 ff bc 31

  static Stream<Golden> vectors() {
    List<Golden> v = new ArrayList<>();
    // count 0 -> varint 00, nothing else
    v.add(new Golden("empty", List.of(), "00"));
    // count 01; t0 1000 = 0b111_1101000 -> e8 07; v0 1.0 = 3ff0000000000000; no further bits
    v.add(new Golden("one sample", List.of(sample(1000, 1.0)), "01 e807 3ff0000000000000"));
    // count 01; t0 Long.MAX_VALUE -> nine bytes ff..ff 7f; v0 +0.0
    v.add(
        new Golden(
            "one sample at Long.MAX_VALUE",
            List.of(sample(Long.MAX_VALUE, 0.0)),
            "01 ffffffffffffffff7f 0000000000000000"));
    // count 03; t0 T0; v0 1.0
    // s1: '11' '110' dod 15000 = 0011101010011000 (16 bits), changed '1';
    //     xor 1.0^stale = 4000000000000002 fits the initial 64-bit window -> '0' + 64 bits
    // s2: '11' '0' dod 10 = 0001010 (7 bits), changed '1';
    //     xor stale^-0.0 = fff0000000000002 -> reuse the 64-bit window: '0' + 64 bits
    // 87 + 76 = 163 bits -> 21 bytes, 5 zero padding bits
    v.add(
        new Golden(
            "stale marker and -0.0",
            List.of(sample(T0, 1.0), new Sample(T0 + 15_000, STALE_NAN), sample(T0 + 30_010, -0.0)),
            "03 80d095ffbc31 3ff0000000000000 f1d4c48000000000000005855ffe00000000000040"));
    // the worked example of docs/format.md ("Gorilla XOR chunk"): 15 s interval, 5.0 x4 then 6.0 x2
    // s1: '11' '110' 0011101010011000 '0' | s2 '0' | s3 '0'
    // s4: '10' new window '1' 01100 000001 '11' | s5 '0' | 7 padding bits
    List<Sample> regular = new ArrayList<>();
    for (int i = 0; i < 6; i++) {
      regular.add(sample(T0 + 15_000L * i, i < 4 ? 5.0 : 6.0));
    }
    v.add(new Golden("regular 15 s", regular, "06 80d095ffbc31 4014000000000000 f1d4c0ac0700"));
    // count 03; t0 0 -> 00; v0 +Inf = 7ff0000000000000
    // s1: '11' '1111' dod 3fffffffffffffff (64 bits) '1';
    //     xor 0008000000000001: new window '1' 01100 (12) 110011 (52-1) + 52 bits
    // s2: '11' '0' dod 1 = 0000001 '1'; xor 7ff8000000000000: new window '1' 00001 001011 + 12 ones
    v.add(
        new Golden(
            "huge gaps, NaN payload, subnormal",
            List.of(
                sample(0, Double.POSITIVE_INFINITY),
                new Sample(Long.MAX_VALUE / 2, 0x7ff8000000000001L),
                sample(Long.MAX_VALUE, Double.MIN_VALUE)),
            "03 00 7ff0000000000000 fcffffffffffffffff667000000000000380e12fffc0"));
    return v.stream();
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("vectors")
  void encodesToGoldenBytes(Golden golden) {
    byte[] encoded = encode(golden.samples());
    assertThat(hex(encoded)).as(golden.name()).isEqualTo(golden.hex().replace(" ", ""));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("vectors")
  void decodesGoldenBytes(Golden golden) {
    byte[] bytes = hex(golden.hex());
    GorillaDecoder decoder = new GorillaDecoder();
    List<Sample> decoded = decode(decoder, bytes, 0, bytes.length);
    assertThat(decoder.count()).isEqualTo(golden.samples().size());
    assertThat(decoded).as(golden.name()).containsExactlyElementsOf(golden.samples());
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("vectors")
  void timeSeriesValueIsEncodingIdThenStream(Golden golden) {
    GorillaEncoder encoder = new GorillaEncoder();
    golden.samples().forEach(s -> encoder.append(s.timestampMillis(), s.valueBits()));
    byte[] value = TimeSeriesValue.encode(encoder);
    assertThat(hex(value)).isEqualTo("01" + golden.hex().replace(" ", ""));

    ChunkDecoder decoder = new TimeSeriesValue.Decoders().open(value);
    assertThat(decoder).isInstanceOf(GorillaDecoder.class);
    List<Sample> decoded = new ArrayList<>();
    while (decoder.next()) {
      decoded.add(new Sample(decoder.timestampMillis(), decoder.valueBits()));
    }
    assertThat(decoded).containsExactlyElementsOf(golden.samples());
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("vectors")
  void decodesAtAnOffsetInsideALargerArray(Golden golden) {
    byte[] stream = hex(golden.hex());
    byte[] padded = new byte[stream.length + 7];
    java.util.Arrays.fill(padded, (byte) 0xA5);
    System.arraycopy(stream, 0, padded, 3, stream.length);
    assertThat(decode(new GorillaDecoder(), padded, 3, stream.length))
        .containsExactlyElementsOf(golden.samples());
  }
}
