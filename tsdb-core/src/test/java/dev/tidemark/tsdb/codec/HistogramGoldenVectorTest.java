package dev.tidemark.tsdb.codec;

import static dev.tidemark.tsdb.codec.HistogramTestSupport.DEFAULT_ZERO_THRESHOLD;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.tidemark.tsdb.codec.HistogramTestSupport.Sample;
import dev.tidemark.tsdb.model.CounterResetHint;
import dev.tidemark.tsdb.model.FloatHistogram;
import dev.tidemark.tsdb.model.HistogramLayout;
import dev.tidemark.tsdb.model.IntegerHistogram;
import dev.tidemark.tsdb.model.NativeHistogram;
import java.util.HexFormat;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * Golden byte vectors of the histogram chunk (TimeSeries encoding {@code 0x03}), checked both ways:
 * encoding the samples gives the bytes, decoding the bytes gives the samples. Produced by {@link
 * HistogramEncoder} when the format was introduced and checked field by field against the bit
 * tables of {@code docs/format.md} ("Histogram chunk", worked examples), which were made by a
 * separate decoder written from the format text. A failure here means the format changed: never
 * regenerate these, add a new encoding id.
 */
class HistogramGoldenVectorTest {
  private static final long T0 = 1700000000000L;

  private static final HistogramLayout TWO =
      HistogramLayout.exponential(3, DEFAULT_ZERO_THRESHOLD, new int[] {0, 2}, null);
  private static final HistogramLayout THREE =
      HistogramLayout.exponential(3, DEFAULT_ZERO_THRESHOLD, new int[] {0, 3}, null);
  private static final HistogramLayout CUSTOM =
      HistogramLayout.custom(new int[] {0, 3}, new double[] {0.1, 1});
  private static final HistogramLayout CUSTOM_EMPTY =
      HistogramLayout.custom(null, new double[] {0.1, 1});

  /** Integer counts, a new bucket in the third sample (a new run). */
  static final List<Sample> INTEGER_EXAMPLE =
      List.of(
          new Sample(
              T0,
              IntegerHistogram.of(
                  TWO, CounterResetHint.UNKNOWN, 3, 0, 5.0, new long[] {1, 1}, null)),
          new Sample(
              T0 + 15000,
              IntegerHistogram.of(
                  TWO, CounterResetHint.UNKNOWN, 5, 1, 6.5, new long[] {2, 0}, null)),
          new Sample(
              T0 + 30000,
              IntegerHistogram.of(
                  THREE, CounterResetHint.UNKNOWN, 6, 1, 7.0, new long[] {2, 0, -1}, null)));

  static final String INTEGER_HEX =
      "03 80d095ffbc31 00e6fe00000000000010a246c264016185e03a98450ec0bc37c01a1469a1c26401e25e";

  /** A float gauge histogram with custom buckets, then a stale marker (empty layout). */
  static final List<Sample> FLOAT_EXAMPLE =
      List.of(
          new Sample(
              T0,
              FloatHistogram.of(
                  CUSTOM, CounterResetHint.GAUGE, 4, 0, 2.5, new double[] {1, 2, 1}, null)),
          new Sample(
              T0 + 60000,
              FloatHistogram.of(
                  CUSTOM, CounterResetHint.GAUGE, 4.5, 0, 3, new double[] {1, 2.5, 1}, null)),
          new Sample(
              T0 + 120000,
              FloatHistogram.ofBits(
                  CUSTOM_EMPTY,
                  CounterResetHint.GAUGE,
                  0,
                  0,
                  NativeHistogram.STALE_SUM_BITS,
                  new long[0],
                  new long[0])));

  static final String FLOAT_HEX =
      "03 80d095ffbc31 fcb428d88fee6666666666668ffc000000000000309500584c800e227ffc207113ffbc1d4c0"
          + "dc05000db40a72c09ffc0000000000008";

  private static byte[] hex(String s) {
    return HexFormat.of().parseHex(s.replace(" ", ""));
  }

  @Test
  void emptyChunk() {
    assertThat(HistogramTestSupport.encode(List.of())).containsExactly(hex("00"));
    assertThat(HistogramTestSupport.decode(hex("00"))).isEmpty();
  }

  @Test
  void integerCountsWithANewBucket() {
    assertThat(HexFormat.of().formatHex(HistogramTestSupport.encode(INTEGER_EXAMPLE)))
        .isEqualTo(INTEGER_HEX.replace(" ", ""));
    assertThat(HistogramTestSupport.decode(hex(INTEGER_HEX))).isEqualTo(INTEGER_EXAMPLE);
  }

  @Test
  void floatCustomBucketsAndAStaleMarker() {
    assertThat(HexFormat.of().formatHex(HistogramTestSupport.encode(FLOAT_EXAMPLE)))
        .isEqualTo(FLOAT_HEX.replace(" ", ""));
    List<Sample> decoded = HistogramTestSupport.decode(hex(FLOAT_HEX));
    assertThat(decoded).isEqualTo(FLOAT_EXAMPLE);
    assertThat(decoded.get(2).histogram().isStale()).isTrue();
  }

  @Test
  void theTimeSeriesValueCarriesEncodingIdThree() {
    HistogramEncoder e = new HistogramEncoder();
    INTEGER_EXAMPLE.forEach(s -> e.append(s.timestampMillis(), s.histogram()));
    byte[] value = TimeSeriesValue.encode(e);
    assertThat(HexFormat.of().formatHex(value)).isEqualTo("03" + INTEGER_HEX.replace(" ", ""));
    HistogramDecoder d = TimeSeriesValue.openHistogram(new HistogramDecoder(), value);
    assertThat(d.next()).isTrue();
    assertThat(d.histogram()).isEqualTo(INTEGER_EXAMPLE.get(0).histogram());
    // the float-sample decoders refuse it with a message that names what it is
    assertThatThrownBy(() -> new TimeSeriesValue.Decoders().open(value))
        .isInstanceOf(CorruptRecordException.class)
        .hasMessageContaining("histogram chunk");
    assertThatThrownBy(
            () -> TimeSeriesValue.openHistogram(new HistogramDecoder(), new byte[] {0x01, 0}))
        .isInstanceOf(CorruptRecordException.class)
        .hasMessageContaining("0x01");
    assertThat(TimeSeriesValue.isKnownEncoding(0x03)).isFalse();
    assertThat(TimeSeriesValue.isHistogramEncoding(0x03)).isTrue();
  }

  @Test
  void seekMovesForwardOnly() {
    HistogramDecoder d = new HistogramDecoder();
    d.reset(hex(INTEGER_HEX), 0, hex(INTEGER_HEX).length);
    assertThat(d.onSample()).isFalse();
    assertThat(d.seek(T0 + 1)).isTrue();
    assertThat(d.timestampMillis()).isEqualTo(T0 + 15000);
    assertThat(d.seek(T0)).isTrue(); // stays
    assertThat(d.timestampMillis()).isEqualTo(T0 + 15000);
    assertThat(d.seek(T0 + 30000)).isTrue();
    assertThat(d.histogram()).isEqualTo(INTEGER_EXAMPLE.get(2).histogram());
    assertThat(d.seek(T0 + 30001)).isFalse();
    assertThat(d.onSample()).isFalse();
    assertThatThrownBy(d::timestampMillis).isInstanceOf(IllegalStateException.class);
    assertThat(d.next()).isFalse();
  }

  /** Hand-made corrupt streams (after the worked examples' bit tables). */
  @Test
  void refusals() {
    // count 3 but 2 bytes of bits: cannot hold 3 samples
    assertRefused("03 00 ffff", "announces 3 samples");
    // one sample: hint 0, kind 0, schema 0x14 = 20 (Prometheus' "scale 20"), ...
    assertRefused("01 00 0a 00 00 00", "invalid schema");
    // one sample: hint '0', kind '0', schema 0, threshold '0', 0 spans '0', 0 spans '0', count '0',
    // zero count '0', then the sum '11' + leading 31 + width-1 63: leading + width > 64
    assertRefused("01 00 00 01 ff f0", "XOR window");
    // the integer example with its count field (3, '10 0011') made 4 ('10 0100'): count mismatch
    byte[] b = hex(INTEGER_HEX);
    // stream byte 18 is the negative span count '0', the count '10 0011', the zero count '0'
    assertThat(b[18]).isEqualTo((byte) 0x46);
    b[18] = (byte) 0x48; // '0' '10 0100' '0'
    assertThatThrownBy(() -> HistogramTestSupport.decode(b))
        .isInstanceOf(CorruptRecordException.class)
        .hasMessageContaining("not a valid integer histogram");
    // non-zero padding after the last sample
    byte[] padded = hex(INTEGER_HEX);
    padded[padded.length - 1] |= 1;
    assertThatThrownBy(() -> HistogramTestSupport.decode(padded))
        .isInstanceOf(CorruptRecordException.class)
        .hasMessageContaining("padding");
  }

  private static void assertRefused(String streamHex, String message) {
    assertThatThrownBy(() -> HistogramTestSupport.decode(hex(streamHex)))
        .isInstanceOf(CorruptRecordException.class)
        .hasMessageContaining(message);
  }

  /**
   * The size of a realistic series, pinned so that a change to the encoder's policy shows: a schema
   * 3 latency histogram of 20 buckets, 100 observations per 15 s scrape (log-normal around 0.1 s),
   * ±3 ms of scrape jitter, 240 samples (one hour). docs/format.md quotes these figures.
   */
  @Test
  void realisticSeriesSize() {
    int[] sizes = new int[3];
    int[] perScrape = {10, 100, 1000};
    for (int k = 0; k < 3; k++) {
      sizes[k] = realistic(perScrape[k]).encodedSizeBytes();
    }
    // 14.05, 16.93 and 19.97 bytes per sample
    assertThat(sizes).containsExactly(3373, 4063, 4793);
  }

  static HistogramEncoder realistic(int observationsPerScrape) {
    SplittableRandom rnd = new SplittableRandom(42);
    HistogramEncoder e = new HistogramEncoder();
    HistogramLayout l =
        HistogramLayout.exponential(3, DEFAULT_ZERO_THRESHOLD, new int[] {-10, 20}, null);
    long[] counts = new long[20];
    long count = 0;
    double sum = 0;
    long t = T0;
    for (int i = 0; i < 240; i++) {
      for (int k = 0; k < observationsPerScrape; k++) {
        double v = Math.exp(rnd.nextDouble() * 2 - 3 + rnd.nextDouble());
        int index = (int) Math.ceil(Math.log(v) / Math.log(2) * 8); // schema 3
        counts[Math.max(0, Math.min(19, index + 10))]++;
        count++;
        sum += v;
      }
      long[] deltas = new long[20];
      long prev = 0;
      for (int b = 0; b < 20; b++) {
        deltas[b] = counts[b] - prev;
        prev = counts[b];
      }
      e.append(
          t + rnd.nextInt(-3, 4),
          IntegerHistogram.of(l, CounterResetHint.UNKNOWN, count, 0, sum, deltas, null));
      t += 15000;
    }
    return e;
  }
}
