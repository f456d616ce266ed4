package dev.tidemark.tsdb.codec;

import static dev.tidemark.tsdb.codec.GorillaTestSupport.STALE_NAN;
import static dev.tidemark.tsdb.codec.GorillaTestSupport.hex;
import static org.assertj.core.api.Assertions.assertThat;

import dev.tidemark.tsdb.codec.GorillaTestSupport.Sample;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Golden byte vectors of the decimal chunk (TimeSeries encoding {@code 0x02}), asserted both ways:
 * encoding the samples gives the hex, decoding the hex gives the samples. "worked example" is the
 * one of docs/format.md, decoded there field by field.
 *
 * <p>How they were produced: by {@link DecimalEncoder} at the commit that introduced encoding
 * {@code 0x02}, then checked by hand against docs/format.md (the worked example bit by bit, the
 * others field by field). A change here is a format change: add an encoding id, never regenerate.
 */
class DecimalGoldenVectorTest {
  static final long T = 1_700_000_000_000L;

  record Golden(String name, List<Sample> samples, String hex) {
    @Override
    public String toString() {
      return name;
    }
  }

  static long d(double v) {
    return Double.doubleToRawLongBits(v);
  }

  static List<Sample> samples(long[] ts, long[] vs) {
    List<Sample> out = new ArrayList<>();
    for (int i = 0; i < ts.length; i++) {
      out.add(new Sample(ts[i], vs[i]));
    }
    return out;
  }

  static Stream<Golden> vectors() {
    long[] rampTs = new long[130];
    long[] rampVs = new long[130];
    for (int i = 0; i < 130; i++) {
      rampTs[i] = 1000L * i;
      rampVs[i] = d(3 + 0.5 * i);
    }
    return Stream.of(
        new Golden("empty", List.of(), "00"),
        new Golden(
            "one sample",
            samples(new long[] {T}, new long[] {d(-1.5)}),
            "01 80 d0 95 ff bc 31 01 01 1d 00"),
        new Golden(
            "worked example: 2-decimal gauge, ms jitter, staleness marker",
            samples(
                new long[] {T, T + 15000, T + 30002, T + 44999, T + 60001, T + 75000},
                new long[] {d(0.25), d(0.5), d(0.75), d(1.25), d(1.0), STALE_NAN}),
            "06 80 d0 95 ff bc 31 04 02 32 98 75 19 01 05 02 00 00 00 00 00 f0 7f"
                + " 02 01 72 40 02 01 ac 40"),
        new Golden(
            "accelerating interval: timestamps as delta-of-delta",
            samples(
                new long[] {T, T + 1000, T + 2001, T + 3003, T + 4006, T + 5010},
                new long[] {d(1), d(2), d(3), d(4), d(5), d(6)}),
            "06 80 d0 95 ff bc 31 00 00 02 e8 07 01 00 01 00 78 00 02"),
        new Golden(
            "counter in multiples of 5, regular: delta-of-delta, divisor 5",
            samples(
                new long[] {T, T + 15000, T + 30000, T + 45000, T + 60000, T + 75000},
                new long[] {d(100), d(110), d(125), d(135), d(150), d(160)}),
            "06 80 d0 95 ff bc 31 01 00 c8 01 98 75 05 00 01 04 50"),
        new Golden(
            "130-sample ramp: two mini-blocks, both of width 0",
            samples(rampTs, rampVs),
            "82 01 00 01 01 3c e8 07 05 00 00 02 00 02"),
        new Golden(
            "exceptions: -0.0, +Inf, a NaN payload, 17 digits",
            samples(
                new long[] {0, 1, 2, 3},
                new long[] {
                  d(-0.0), d(Double.POSITIVE_INFINITY), 0x7ff8000000000001L, d(0.1 + 0.2)
                }),
            "04 00 01 11 88 80 98 f4 e9 b5 ca 6a 01 01 03 00 00 00 00 00 00 00 00 80"
                + " 01 00 00 00 00 00 00 f0 7f 02 01 00 00 00 00 00 f8 7f 00 00"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("vectors")
  void samplesEncodeToTheGoldenBytes(Golden golden) {
    assertThat(hex(DecimalRoundTripTest.encode(golden.samples())))
        .isEqualTo(golden.hex().replace(" ", ""));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("vectors")
  void goldenBytesDecodeToTheSamples(Golden golden) {
    assertThat(DecimalRoundTripTest.decode(hex(golden.hex())))
        .containsExactlyElementsOf(golden.samples());
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("vectors")
  void timeSeriesValueIsEncodingIdThenStream(Golden golden) {
    DecimalEncoder encoder = new DecimalEncoder();
    golden.samples().forEach(s -> encoder.append(s.timestampMillis(), s.valueBits()));
    byte[] value = TimeSeriesValue.encode(encoder);
    assertThat(hex(value)).isEqualTo("02" + golden.hex().replace(" ", ""));
    ChunkDecoder decoder = new TimeSeriesValue.Decoders().open(value);
    assertThat(decoder).isInstanceOf(DecimalDecoder.class);
    List<Sample> decoded = new ArrayList<>();
    while (decoder.next()) {
      decoded.add(new Sample(decoder.timestampMillis(), decoder.valueBits()));
    }
    assertThat(decoded).containsExactlyElementsOf(golden.samples());
  }
}
