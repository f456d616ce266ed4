package dev.tidemark.tsdb.codec;

import static dev.tidemark.tsdb.codec.GorillaTestSupport.SEED;
import static dev.tidemark.tsdb.codec.GorillaTestSupport.STALE_NAN;
import static org.assertj.core.api.Assertions.assertThat;

import dev.tidemark.tsdb.codec.GorillaTestSupport.Sample;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * Seeded round-trip properties of {@link DecimalEncoder} / {@link DecimalDecoder}: every double
 * bit-pattern class and timestamp shape comes back bit-exact. The seed is in every assertion
 * message; rerun one with {@code -Dtidemark.seed=<seed>}.
 */
class DecimalRoundTripTest {

  static byte[] encode(List<Sample> samples) {
    DecimalEncoder e = new DecimalEncoder();
    for (Sample s : samples) {
      e.append(s.timestampMillis(), s.valueBits());
    }
    return e.toByteArray();
  }

  static List<Sample> decode(DecimalDecoder d, byte[] buf, int offset, int length) {
    d.reset(buf, offset, length);
    List<Sample> out = new ArrayList<>();
    while (d.next()) {
      out.add(new Sample(d.timestampMillis(), d.valueBits()));
    }
    assertThat(d.next()).isFalse();
    return out;
  }

  static List<Sample> decode(byte[] stream) {
    return decode(new DecimalDecoder(), stream, 0, stream.length);
  }

  private static void roundTrip(List<Sample> samples, String msg) {
    byte[] stream = encode(samples);
    assertThat(decode(stream)).as(msg).containsExactlyElementsOf(samples);
    // at an offset inside a larger array, with garbage around it
    byte[] padded = new byte[stream.length + 9];
    java.util.Arrays.fill(padded, (byte) 0xA5);
    System.arraycopy(stream, 0, padded, 4, stream.length);
    assertThat(decode(new DecimalDecoder(), padded, 4, stream.length))
        .as(msg)
        .containsExactlyElementsOf(samples);
  }

  /** A random value of one of the classes; {@code prev} is the previous value's bits. */
  static long randomValue(SplittableRandom rnd, int shape, long prev, int digits) {
    switch (shape) {
      case 0: // random bits: anything, NaNs and subnormals included
        return rnd.nextLong();
      case 1: // specials
        return GorillaRoundTripTest.SPECIAL_BITS[
            rnd.nextInt(GorillaRoundTripTest.SPECIAL_BITS.length)];
      case 2:
        { // decimals with 0..17 digits after the point
          long unscaled = rnd.nextLong(-1_000_000_000_000L, 1_000_000_000_000L);
          return Double.doubleToRawLongBits(unscaled / Math.pow(10, digits));
        }
      case 3:
        { // a 2-decimal gauge walk
          double p = Double.longBitsToDouble(prev);
          long centi = Double.isFinite(p) ? Math.round(p * 100) : 0;
          return Double.doubleToRawLongBits((centi + rnd.nextInt(-50, 51)) / 100.0);
        }
      case 4:
        { // a counter with resets, sometimes in multiples of 5, sometimes fractional
          double p = Double.longBitsToDouble(prev);
          if (!Double.isFinite(p) || rnd.nextInt(50) == 0) {
            return Double.doubleToRawLongBits(0.0);
          }
          return Double.doubleToRawLongBits(
              p + (digits % 3 == 0 ? 5 * rnd.nextInt(10) : rnd.nextInt(1000) / 4.0));
        }
      case 5: // subnormals and tiny values
        return rnd.nextLong(1, 0x0010000000000000L) | (rnd.nextBoolean() ? Long.MIN_VALUE : 0);
      case 6: // large magnitudes around and beyond 2^63
        return Double.doubleToRawLongBits(
            Math.scalb((double) rnd.nextLong(1, 1L << 53), rnd.nextInt(0, 40)));
      default:
        return prev; // constant
    }
  }

  static List<Sample> randomChunk(SplittableRandom rnd, int size) {
    List<Sample> out = new ArrayList<>(size);
    int tShape = rnd.nextInt(5);
    int vShape = rnd.nextInt(9); // 8 = mixed
    int digits = rnd.nextInt(18);
    long t =
        switch (rnd.nextInt(4)) {
          case 0 -> 0;
          case 1 -> rnd.nextLong(1L << 20);
          case 2 -> 1_600_000_000_000L + rnd.nextLong(GorillaRoundTripTest.YEAR_MILLIS * 10);
          default -> rnd.nextLong(Long.MAX_VALUE / 2);
        };
    long interval = 1 + rnd.nextLong(60_000);
    long v = Double.doubleToRawLongBits(rnd.nextInt(1000) / 10.0);
    for (int i = 0; i < size; i++) {
      if (i > 0) {
        long step =
            switch (tShape) {
              case 0 -> interval; // regular
              case 1 -> Math.max(1, interval + rnd.nextLong(-3, 4)); // a few ms of jitter
              case 2 -> 1 + rnd.nextLong(1L << rnd.nextInt(1, 40)); // anything
              case 3 -> rnd.nextInt(20) == 0 ? 1 + rnd.nextLong(1L << 50) : interval; // huge gaps
              default -> 1;
            };
        if (t > Long.MAX_VALUE - step) {
          break;
        }
        t += step;
      }
      int shape = vShape == 8 ? rnd.nextInt(8) : vShape;
      v = randomValue(rnd, shape, v, digits);
      if (rnd.nextInt(100) == 0) {
        v = STALE_NAN;
      }
      out.add(new Sample(t, v));
    }
    return out;
  }

  @Test
  void randomChunksRoundTripBitExact() {
    SplittableRandom rnd = new SplittableRandom(SEED);
    for (int iter = 0; iter < 3000; iter++) {
      int size =
          switch (rnd.nextInt(4)) {
            case 0 -> rnd.nextInt(4);
            case 1 -> rnd.nextInt(300);
            case 2 -> 127 + rnd.nextInt(4);
            default -> rnd.nextInt(2000);
          };
      List<Sample> chunk = randomChunk(rnd, size);
      roundTrip(chunk, "seed " + SEED + ", iteration " + iter);
    }
  }

  @Test
  void largestExponentOnlyRoundTripsBitExactAndIsNeverSmallerThanTheFullSearch() {
    SplittableRandom rnd = new SplittableRandom(SEED + 1);
    DecimalEncoder quick = new DecimalEncoder();
    quick.largestExponentOnly(true);
    for (int iter = 0; iter < 1000; iter++) {
      List<Sample> chunk = randomChunk(rnd, rnd.nextInt(400));
      quick.reset();
      for (Sample s : chunk) {
        quick.append(s.timestampMillis(), s.valueBits());
      }
      byte[] stream = quick.toByteArray();
      assertThat(decode(stream)).as("iteration %d", iter).containsExactlyElementsOf(chunk);
      assertThat(stream.length).isGreaterThanOrEqualTo(encode(chunk).length);
    }
    // values of 0, 1 and 2 decimals: one exponent (2) tried, no exception
    quick.reset();
    double[] values = {12, 12.5, 12.25, 13, 13.75};
    for (int i = 0; i < values.length; i++) {
      quick.append(1_000L * i, Double.doubleToRawLongBits(values[i]));
    }
    assertThat(quick.exceptionCount()).isZero();
    assertThat(decode(quick.toByteArray()))
        .extracting(Sample::valueBits)
        .containsExactly(
            java.util.Arrays.stream(values)
                .mapToObj(Double::doubleToRawLongBits)
                .toArray(Long[]::new));
  }

  @Test
  void everySpecialValueInEveryPositionRoundTrips() {
    for (long special : GorillaRoundTripTest.SPECIAL_BITS) {
      for (int size : new int[] {1, 2, 3, 129, 300}) {
        for (int at : new int[] {0, 1, size / 2, size - 1}) {
          if (at >= size) {
            continue;
          }
          List<Sample> chunk = new ArrayList<>();
          for (int i = 0; i < size; i++) {
            long bits = i == at ? special : Double.doubleToRawLongBits(1 + i * 0.25);
            chunk.add(new Sample(1_700_000_000_000L + 15_000L * i, bits));
          }
          roundTrip(chunk, Long.toHexString(special) + " at " + at + " of " + size);
        }
      }
    }
  }

  @Test
  void decimalsWithZeroToSeventeenDigitsRoundTrip() {
    SplittableRandom rnd = new SplittableRandom(SEED);
    for (int digits = 0; digits <= 17; digits++) {
      List<Sample> chunk = new ArrayList<>();
      for (int i = 0; i < 200; i++) {
        long unscaled =
            rnd.nextLong(-99_999_999_999_999_999L, 99_999_999_999_999_999L) >> rnd.nextInt(60);
        chunk.add(
            new Sample(1000L * i, Double.doubleToRawLongBits(unscaled / Math.pow(10, digits))));
      }
      roundTrip(chunk, "seed " + SEED + ", digits " + digits);
    }
  }

  @Test
  void emptyAndOneSampleChunks() {
    assertThat(encode(List.of())).containsExactly(0);
    assertThat(decode(new byte[] {0})).isEmpty();
    roundTrip(List.of(new Sample(0, STALE_NAN)), "one stale marker at 0");
    roundTrip(
        List.of(new Sample(Long.MAX_VALUE, Double.doubleToRawLongBits(-0.0))), "one -0.0 at max");
    roundTrip(List.of(new Sample(5, Double.doubleToRawLongBits(2.5))), "one decimal");
    roundTrip(List.of(new Sample(0, 0), new Sample(Long.MAX_VALUE, 0)), "epoch-sized gap");
  }

  @Test
  void constantRegularChunkCostsAlmostNothing() {
    List<Sample> chunk = new ArrayList<>();
    for (int i = 0; i < 240; i++) {
      chunk.add(new Sample(1_700_000_000_000L + 15_000L * i, Double.doubleToRawLongBits(42.0)));
    }
    byte[] stream = encode(chunk);
    assertThat(decode(stream)).containsExactlyElementsOf(chunk);
    assertThat(stream.length).isLessThan(20);
  }

  @Test
  void seekFindsTheFirstSampleAtOrAfter() {
    List<Sample> chunk = new ArrayList<>();
    for (int i = 0; i < 300; i++) {
      chunk.add(new Sample(10L * i, Double.doubleToRawLongBits(i)));
    }
    DecimalDecoder d = new DecimalDecoder();
    byte[] s = encode(chunk);
    d.reset(s, 0, s.length);
    assertThat(d.seek(1995)).isTrue();
    assertThat(d.timestampMillis()).isEqualTo(2000);
    assertThat(d.seek(1000)).isTrue();
    assertThat(d.timestampMillis()).isEqualTo(2000);
    assertThat(d.seek(2990)).isTrue();
    assertThat(d.seek(2991)).isFalse();
    assertThat(d.next()).isFalse();
  }
}
