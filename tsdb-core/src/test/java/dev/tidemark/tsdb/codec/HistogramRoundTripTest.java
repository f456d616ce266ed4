package dev.tidemark.tsdb.codec;

import static dev.tidemark.tsdb.codec.HistogramTestSupport.SEED;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.fail;

import dev.tidemark.tsdb.codec.HistogramTestSupport.Generator;
import dev.tidemark.tsdb.codec.HistogramTestSupport.Sample;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * Seeded properties of the histogram chunk against the simplest reference model, the list of
 * samples appended: random layouts, layout and kind changes mid-chunk, counter resets, NaN and
 * stale sums, odd timestamp gaps. Equality is bit-exact ({@code NativeHistogram.equals}).
 */
class HistogramRoundTripTest {

  @Test
  void randomSeriesDecodeToExactlyWhatWasAppended() {
    SplittableRandom seeds = new SplittableRandom(SEED);
    HistogramEncoder reused = new HistogramEncoder();
    for (int round = 0; round < 400; round++) {
      long seed = seeds.nextLong();
      SplittableRandom rnd = new SplittableRandom(seed);
      List<Sample> samples = new Generator(rnd).series(rnd.nextInt(0, 300));
      try {
        byte[] stream = HistogramTestSupport.encode(samples);
        assertThat(HistogramTestSupport.decode(stream)).containsExactlyElementsOf(samples);
        // the TimeSeries value: the encoding id, then the stream, from an encoder reused
        HistogramEncoder e = reused;
        e.reset();
        samples.forEach(s -> e.append(s.timestampMillis(), s.histogram()));
        assertThat(e.toByteArray()).isEqualTo(stream);
        byte[] value = TimeSeriesValue.encode(e);
        assertThat(value[0]).isEqualTo((byte) TimeSeriesValue.ENCODING_HISTOGRAM);
        HistogramDecoder d = TimeSeriesValue.openHistogram(new HistogramDecoder(), value);
        assertThat(d.count()).isEqualTo(samples.size());
      } catch (AssertionError | RuntimeException e) {
        fail("seed " + seed + " (-Dtidemark.seed to rerun the whole test: " + SEED + ")", e);
      }
    }
  }

  @Test
  void everyTruncationIsCorrupt() {
    SplittableRandom rnd = new SplittableRandom(SEED);
    for (int round = 0; round < 30; round++) {
      List<Sample> samples = new Generator(rnd).series(rnd.nextInt(1, 40));
      byte[] stream = HistogramTestSupport.encode(samples);
      for (int len = 0; len < stream.length; len++) {
        byte[] cut = java.util.Arrays.copyOf(stream, len);
        assertThatThrownBy(() -> HistogramTestSupport.decode(cut))
            .as("%d of %d bytes", len, stream.length)
            .isInstanceOf(CorruptRecordException.class);
      }
      byte[] longer = java.util.Arrays.copyOf(stream, stream.length + 1);
      assertThatThrownBy(() -> HistogramTestSupport.decode(longer))
          .isInstanceOf(CorruptRecordException.class)
          .hasMessageContaining("trailing");
    }
  }

  /**
   * Flipped bits either decode (into histograms that validate, strictly increasing timestamps) or
   * throw {@link CorruptRecordException}; never another exception, never an endless loop.
   */
  @Test
  void flippedBitsNeverEscapeAsAnotherException() {
    SplittableRandom rnd = new SplittableRandom(SEED ^ 0x5EED);
    for (int round = 0; round < 3000; round++) {
      List<Sample> samples = new Generator(rnd).series(rnd.nextInt(1, 20));
      byte[] stream = HistogramTestSupport.encode(samples);
      int flips = rnd.nextInt(1, 4);
      for (int f = 0; f < flips; f++) {
        stream[rnd.nextInt(stream.length)] ^= (byte) (1 << rnd.nextInt(8));
      }
      try {
        List<Sample> out = HistogramTestSupport.decode(stream);
        for (int i = 1; i < out.size(); i++) {
          assertThat(out.get(i).timestampMillis()).isGreaterThan(out.get(i - 1).timestampMillis());
        }
      } catch (CorruptRecordException expected) {
        // fine
      }
    }
  }

  /** Random bytes behind a plausible header decode or throw {@link CorruptRecordException}. */
  @Test
  void randomBytesNeverEscapeAsAnotherException() {
    SplittableRandom rnd = new SplittableRandom(SEED ^ 0xB17E5);
    HistogramDecoder d = new HistogramDecoder();
    for (int round = 0; round < 20000; round++) {
      byte[] b = new byte[rnd.nextInt(1, 64)];
      rnd.nextBytes(b);
      b[0] = (byte) rnd.nextInt(1, 8); // a small count
      if (b.length > 1) {
        b[1] &= 0x7F; // a one-byte t0
      }
      try {
        d.reset(b, 0, b.length);
        while (d.next()) {
          assertThat(d.histogram()).isNotNull();
        }
      } catch (CorruptRecordException expected) {
        // fine
      }
    }
  }

  @Test
  void anEmptyChunkIsOneByte() {
    assertThat(new HistogramEncoder().toByteArray()).containsExactly(0x00);
    assertThat(HistogramTestSupport.decode(new byte[] {0})).isEmpty();
  }

  @Test
  void timestampsMustIncrease() {
    HistogramEncoder e = new HistogramEncoder();
    Sample s = new Generator(new SplittableRandom(1)).next();
    e.append(1000, s.histogram());
    assertThatThrownBy(() -> e.append(1000, s.histogram()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("duplicate");
    assertThatThrownBy(() -> e.append(999, s.histogram())).hasMessageContaining("out of order");
    assertThatThrownBy(() -> new HistogramEncoder().append(-1, s.histogram()))
        .hasMessageContaining(">= 0");
    assertThat(e.count()).isEqualTo(1);
  }
}
