package dev.tidemark.tsdb.codec;

import static dev.tidemark.tsdb.codec.GorillaTestSupport.SEED;
import static dev.tidemark.tsdb.codec.GorillaTestSupport.STALE_NAN;
import static dev.tidemark.tsdb.codec.GorillaTestSupport.decode;
import static dev.tidemark.tsdb.codec.GorillaTestSupport.encode;
import static org.assertj.core.api.Assertions.assertThat;

import dev.tidemark.tsdb.codec.GorillaTestSupport.Sample;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * Seeded round-trip properties of {@link GorillaEncoder} / {@link GorillaDecoder}. The seed is in
 * every assertion message; rerun one with {@code -Dtidemark.seed=<seed>}.
 */
class GorillaRoundTripTest {

  /** Values the codec must keep bit-exact, compared as raw bits. */
  static final long[] SPECIAL_BITS = {
    STALE_NAN,
    0x7ff8000000000000L, // canonical quiet NaN
    0x7ff8000000000001L, // quiet NaN with payload
    0xfff8000000000000L, // negative quiet NaN
    0x7ff0000000000001L, // signalling NaN
    0xfff0000000000001L,
    0x7fffffffffffffffL, // NaN, all payload bits
    0xffffffffffffffffL,
    Double.doubleToRawLongBits(-0.0),
    Double.doubleToRawLongBits(0.0),
    Double.doubleToRawLongBits(Double.POSITIVE_INFINITY),
    Double.doubleToRawLongBits(Double.NEGATIVE_INFINITY),
    Double.doubleToRawLongBits(Double.MIN_VALUE), // smallest subnormal
    Double.doubleToRawLongBits(-Double.MIN_VALUE),
    Double.doubleToRawLongBits(Double.MIN_NORMAL - Double.MIN_VALUE), // largest subnormal
    Double.doubleToRawLongBits(Double.MAX_VALUE),
    Double.doubleToRawLongBits(-Double.MAX_VALUE),
    Double.doubleToRawLongBits(1.0),
    1L,
    0x8000000000000001L,
  };

  static final long YEAR_MILLIS = 366L * 24 * 3600 * 1000;

  /** A random chunk: several timestamp and value shapes, mixed within one chunk too. */
  static List<Sample> randomChunk(SplittableRandom rnd, int size) {
    List<Sample> out = new ArrayList<>(size);
    int tShape = rnd.nextInt(5);
    int vShape = rnd.nextInt(6);
    long t =
        switch (rnd.nextInt(4)) {
          case 0 -> 0;
          case 1 -> rnd.nextLong(1L << 20);
          case 2 -> 1_600_000_000_000L + rnd.nextLong(YEAR_MILLIS * 10);
          default -> rnd.nextLong(Long.MAX_VALUE / 2);
        };
    long interval = 1 + rnd.nextLong(60_000);
    long v = rnd.nextLong();
    double counter = rnd.nextInt(1000);
    for (int i = 0; i < size; i++) {
      if (i > 0) {
        long gap =
            switch (rnd.nextInt(40) == 0 ? 4 : tShape) {
              case 0 -> interval; // regular
              case 1 -> Math.max(1, interval + rnd.nextLong(-50, 51) * 2); // jitter
              case 2 -> 1 + rnd.nextLong(1000); // 1 ms .. 1 s
              case 3 -> 1 + rnd.nextLong(YEAR_MILLIS * 3); // up to years
              default -> pickGap(rnd);
            };
        long headroom = Long.MAX_VALUE - t;
        if (headroom < size - i) {
          break; // no room left for strictly increasing timestamps
        }
        long maxGap = headroom / (size - i);
        t += Math.min(gap, Math.max(1, maxGap));
      }
      switch (rnd.nextInt(30) == 0 ? 5 : vShape) {
        case 0 -> {} // constant
        case 1 -> v = SPECIAL_BITS[rnd.nextInt(SPECIAL_BITS.length)];
        case 2 -> v = rnd.nextLong(); // random bit patterns
        case 3 -> {
          counter += rnd.nextInt(3) == 0 ? 0 : rnd.nextInt(500);
          v = Double.doubleToRawLongBits(counter);
        }
        case 4 -> v = Double.doubleToRawLongBits(Math.round(rnd.nextDouble() * 10000) / 100.0);
        default -> v ^= 1L << rnd.nextInt(64); // single bit flips, any position
      }
      out.add(new Sample(t, v));
    }
    return out;
  }

  private static long pickGap(SplittableRandom rnd) {
    return switch (rnd.nextInt(6)) {
      case 0 -> 1;
      case 1 -> 1 + rnd.nextLong(128);
      case 2 -> 1 + rnd.nextLong(70_000);
      case 3 -> 1 + rnd.nextLong(1L << 24);
      case 4 -> 1 + rnd.nextLong(1L << 40);
      default -> 1 + rnd.nextLong(Long.MAX_VALUE / 4);
    };
  }

  static int randomSize(SplittableRandom rnd) {
    return switch (rnd.nextInt(4)) {
      case 0 -> rnd.nextInt(4); // 0..3
      case 1 -> rnd.nextInt(300);
      default -> rnd.nextInt(2001); // 0..2000
    };
  }

  @Test
  void randomChunksRoundTripBitExact() {
    SplittableRandom rnd = new SplittableRandom(SEED);
    GorillaEncoder encoder = new GorillaEncoder();
    GorillaDecoder decoder = new GorillaDecoder();
    for (int iter = 0; iter < 600; iter++) {
      String ctx = "seed " + SEED + ", iteration " + iter;
      List<Sample> samples = randomChunk(rnd, randomSize(rnd));
      encoder.reset(); // reused encoder and decoder: no state may leak between chunks
      for (Sample s : samples) {
        encoder.append(s.timestampMillis(), s.valueBits());
      }
      byte[] bytes = encoder.toByteArray();
      assertThat(encoder.count()).as(ctx).isEqualTo(samples.size());
      assertThat(encoder.encodedSizeBytes()).as(ctx).isEqualTo(bytes.length);
      assertThat(bytes).as(ctx).isEqualTo(encode(samples));
      assertThat(decode(decoder, bytes, 0, bytes.length)).as(ctx).isEqualTo(samples);
      assertThat(decoder.count()).as(ctx).isEqualTo(samples.size());
      assertThat(decoder.next()).as(ctx + ": next() after the end").isFalse();
      if (!samples.isEmpty()) {
        assertThat(encoder.lastTimestampMillis())
            .as(ctx)
            .isEqualTo(samples.get(samples.size() - 1).timestampMillis());
      }
    }
  }

  @Test
  void encoderStaysUsableAfterToByteArray() {
    SplittableRandom rnd = new SplittableRandom(SEED);
    for (int iter = 0; iter < 100; iter++) {
      String ctx = "seed " + SEED + ", iteration " + iter;
      List<Sample> samples = randomChunk(rnd, 1 + rnd.nextInt(400));
      GorillaEncoder encoder = new GorillaEncoder();
      for (int i = 0; i < samples.size(); i++) {
        Sample s = samples.get(i);
        encoder.append(s.timestampMillis(), s.valueBits());
        assertThat(encoder.encodedSizeBytes()).as(ctx).isEqualTo(encoder.toByteArray().length);
        if (rnd.nextInt(10) == 0) {
          assertThat(decode(encoder.toByteArray()))
              .as(ctx + ", prefix of " + (i + 1))
              .isEqualTo(samples.subList(0, i + 1));
        }
      }
      assertThat(decode(encoder.toByteArray())).as(ctx).isEqualTo(samples);
    }
  }

  @Test
  void writeToAnOffsetMatchesToByteArray() {
    SplittableRandom rnd = new SplittableRandom(SEED);
    for (int iter = 0; iter < 50; iter++) {
      List<Sample> samples = randomChunk(rnd, rnd.nextInt(100));
      GorillaEncoder encoder = new GorillaEncoder();
      samples.forEach(s -> encoder.append(s.timestampMillis(), s.valueBits()));
      byte[] dst = new byte[encoder.encodedSizeBytes() + 5];
      assertThat(encoder.writeTo(dst, 2)).isEqualTo(encoder.encodedSizeBytes());
      assertThat(java.util.Arrays.copyOfRange(dst, 2, 2 + encoder.encodedSizeBytes()))
          .as("seed " + SEED + ", iteration " + iter)
          .isEqualTo(encoder.toByteArray());
    }
  }

  @Test
  void seekMatchesALinearReference() {
    SplittableRandom rnd = new SplittableRandom(SEED);
    GorillaDecoder decoder = new GorillaDecoder();
    for (int iter = 0; iter < 300; iter++) {
      List<Sample> samples = randomChunk(rnd, randomSize(rnd));
      byte[] bytes = encode(samples);
      decoder.reset(bytes, 0, bytes.length);
      int cursor = -1; // reference: index of the current sample, -1 before the first
      boolean onSample = false;
      for (int step = 0; step < 20; step++) {
        String ctx = "seed " + SEED + ", iteration " + iter + ", step " + step;
        long target = seekTarget(rnd, samples, cursor);
        // reference: first index >= max(cursor, 0) whose timestamp >= target
        int from = onSample ? cursor : cursor + 1;
        int expected = -1;
        for (int i = Math.max(from, 0); i < samples.size(); i++) {
          if (samples.get(i).timestampMillis() >= target) {
            expected = i;
            break;
          }
        }
        boolean found = decoder.seek(target);
        assertThat(found).as(ctx + ", seek(" + target + ")").isEqualTo(expected >= 0);
        if (expected < 0) {
          assertThat(decoder.next()).as(ctx).isFalse();
          break;
        }
        cursor = expected;
        onSample = true;
        assertThat(new Sample(decoder.timestampMillis(), decoder.valueBits()))
            .as(ctx + ", seek(" + target + ")")
            .isEqualTo(samples.get(cursor));
        if (rnd.nextInt(3) == 0) { // interleave next()
          boolean more = decoder.next();
          cursor++;
          assertThat(more).as(ctx).isEqualTo(cursor < samples.size());
          if (!more) {
            break;
          }
        }
      }
    }
  }

  private static long seekTarget(SplittableRandom rnd, List<Sample> samples, int cursor) {
    if (samples.isEmpty()) {
      return rnd.nextLong(Long.MAX_VALUE);
    }
    int i = Math.min(samples.size() - 1, Math.max(0, cursor + rnd.nextInt(-2, 30)));
    long ts = samples.get(i).timestampMillis();
    return switch (rnd.nextInt(5)) {
      case 0 -> ts; // exactly a sample
      case 1 -> ts + 1; // just after a sample
      case 2 -> ts - 1; // just before a sample
      case 3 -> Long.MIN_VALUE; // before everything
      default -> samples.get(samples.size() - 1).timestampMillis() + rnd.nextLong(0, 3);
    };
  }

  @Test
  void everySpecialValueAfterEveryOtherIsBitExact() {
    List<Sample> samples = new ArrayList<>();
    long t = 0;
    for (long a : SPECIAL_BITS) {
      for (long b : SPECIAL_BITS) {
        samples.add(new Sample(t += 15_000, a));
        samples.add(new Sample(t += 15_000, b));
      }
    }
    assertThat(decode(encode(samples))).isEqualTo(samples);
  }

  @Test
  void constantRegularChunkIsBelowPointThreeBytesPerSample() {
    GorillaEncoder encoder = new GorillaEncoder();
    for (int i = 0; i < 240; i++) {
      encoder.append(1_700_000_000_000L + 15_000L * i, Double.doubleToRawLongBits(42.0));
    }
    // 2 (count) + 6 (t0) + 8 (v0) + 22 bits (first delta) + 238 bits = 49 bytes
    assertThat(encoder.encodedSizeBytes()).isEqualTo(49);
    assertThat(encoder.encodedSizeBytes() / 240.0).isLessThanOrEqualTo(0.3);
  }

  @Test
  void valueAccessorMatchesValueBits() {
    byte[] bytes = encode(List.of(new Sample(5, STALE_NAN), new Sample(6, 0x8000000000000000L)));
    GorillaDecoder decoder = new GorillaDecoder();
    decoder.reset(bytes, 0, bytes.length);
    assertThat(decoder.next()).isTrue();
    assertThat(Double.doubleToRawLongBits(decoder.value())).isEqualTo(STALE_NAN);
    assertThat(decoder.next()).isTrue();
    assertThat(Double.doubleToRawLongBits(decoder.value())).isEqualTo(0x8000000000000000L);
  }
}
