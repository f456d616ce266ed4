package dev.tidemark.tsdb.codec;

import static dev.tidemark.tsdb.codec.GorillaTestSupport.SEED;
import static dev.tidemark.tsdb.codec.GorillaTestSupport.decode;
import static dev.tidemark.tsdb.codec.GorillaTestSupport.encode;
import static dev.tidemark.tsdb.codec.GorillaTestSupport.hex;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.tidemark.tsdb.codec.GorillaGoldenVectorTest.Golden;
import dev.tidemark.tsdb.codec.GorillaTestSupport.Sample;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** What the Gorilla codec refuses, and how: bad appends and corrupt streams. */
class GorillaRefusalTest {

  // ---- encoder -----------------------------------------------------------------------------

  @Test
  void refusesDuplicateTimestampNamingBoth() {
    GorillaEncoder encoder = new GorillaEncoder();
    encoder.append(1_000, 0);
    assertThatThrownBy(() -> encoder.append(1_000, 0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("duplicate")
        .hasMessageContaining("timestampMillis 1000 is not after the previous timestamp 1000");
  }

  @Test
  void refusesOutOfOrderTimestampNamingBoth() {
    GorillaEncoder encoder = new GorillaEncoder();
    encoder.append(1_000, 0);
    encoder.append(2_000, 0);
    assertThatThrownBy(() -> encoder.append(1_500, 0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("out of order")
        .hasMessageContaining("1500")
        .hasMessageContaining("2000");
    // the refused sample left no trace
    assertThat(encoder.count()).isEqualTo(2);
    encoder.append(3_000, 0);
    assertThat(decode(encoder.toByteArray()))
        .extracting(Sample::timestampMillis)
        .containsExactly(1_000L, 2_000L, 3_000L);
  }

  @Test
  void refusesNegativeTimestamps() {
    GorillaEncoder encoder = new GorillaEncoder();
    assertThatThrownBy(() -> encoder.append(-1, 0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("timestampMillis must be >= 0, was -1");
    encoder.append(5, 0);
    assertThatThrownBy(() -> encoder.append(Long.MIN_VALUE, 0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(String.valueOf(Long.MIN_VALUE));
    assertThat(encoder.count()).isEqualTo(1);
  }

  @Test
  void lastTimestampOfAnEmptyEncoderIsAnError() {
    GorillaEncoder encoder = new GorillaEncoder();
    assertThatThrownBy(encoder::lastTimestampMillis).isInstanceOf(IllegalStateException.class);
    encoder.append(0, 0);
    assertThat(encoder.lastTimestampMillis()).isZero();
    encoder.reset();
    assertThatThrownBy(encoder::lastTimestampMillis).isInstanceOf(IllegalStateException.class);
    assertThat(encoder.toByteArray()).containsExactly(0);
  }

  @Test
  void accessorsOutsideASampleAreAnError() {
    byte[] bytes = encode(List.of(new Sample(1, 1)));
    GorillaDecoder decoder = new GorillaDecoder();
    decoder.reset(bytes, 0, bytes.length);
    assertThatThrownBy(decoder::timestampMillis).isInstanceOf(IllegalStateException.class);
    assertThat(decoder.next()).isTrue();
    assertThat(decoder.timestampMillis()).isEqualTo(1);
    assertThat(decoder.next()).isFalse();
    assertThatThrownBy(decoder::valueBits).isInstanceOf(IllegalStateException.class);
  }

  // ---- decoder: corrupt streams ------------------------------------------------------------

  static List<Golden> vectors() {
    return GorillaGoldenVectorTest.vectors().toList();
  }

  /** Decodes everything; returns the samples or the CorruptRecordException, fails otherwise. */
  private static Object decodeOrCorrupt(byte[] bytes, String ctx) {
    Throwable thrown = catchThrowable(() -> decode(bytes));
    if (thrown == null) {
      return decode(bytes);
    }
    assertThat(thrown).as(ctx).isInstanceOf(CorruptRecordException.class);
    assertThat(thrown.getMessage()).as(ctx).isNotBlank();
    return thrown;
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("vectors")
  void everyTruncationIsCorrupt(Golden golden) {
    byte[] full = hex(golden.hex());
    for (int len = 0; len < full.length; len++) {
      byte[] cut = Arrays.copyOf(full, len);
      assertThatThrownBy(() -> decode(cut))
          .as(golden.name() + " truncated to " + len + " bytes")
          .isInstanceOf(CorruptRecordException.class)
          .hasMessageContaining("Gorilla");
    }
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("vectors")
  void trailingBytesAreCorrupt(Golden golden) {
    byte[] full = hex(golden.hex());
    byte[] longer = Arrays.copyOf(full, full.length + 1);
    assertThatThrownBy(() -> decode(longer))
        .isInstanceOf(CorruptRecordException.class)
        .hasMessageContaining("trailing");
  }

  @Test
  void nonZeroPaddingIsCorrupt() {
    byte[] bytes = hex("06 80d095ffbc31 4014000000000000 f1d4c0ac0701"); // golden + a padding bit
    assertThatThrownBy(() -> decode(bytes))
        .isInstanceOf(CorruptRecordException.class)
        .hasMessageContaining("padding");
  }

  @Test
  void countLargerThanTheBitsIsCorruptAtReset() {
    // count 2^31-1, t0 0, one value
    byte[] bytes = hex("ffffffff07 00 3ff0000000000000 00");
    assertThatThrownBy(() -> new GorillaDecoder().reset(bytes, 0, bytes.length))
        .isInstanceOf(CorruptRecordException.class)
        .hasMessageContaining("cannot fit");
    assertThatThrownBy(() -> decode(countPatchedTo17()))
        .isInstanceOf(CorruptRecordException.class)
        .hasMessageContaining("truncated");
  }

  /**
   * Three samples (13 bits after the first value, 2 bytes) with the count patched to 17: the header
   * check passes (16 one-bit samples fit in 16 bits), the zero padding decodes as three more
   * samples, then the stream runs out.
   */
  private static byte[] countPatchedTo17() {
    byte[] bytes = encode(List.of(new Sample(1, 0), new Sample(2, 0), new Sample(3, 0)));
    assertThat(bytes[0]).isEqualTo((byte) 3);
    bytes[0] = 17;
    return bytes;
  }

  @Test
  void badHeaderVarintsAreCorrupt() {
    assertThatThrownBy(() -> decode(new byte[0]))
        .isInstanceOf(CorruptRecordException.class)
        .hasMessageContaining("empty");
    assertThatThrownBy(() -> decode(hex("ffffffff0f"))) // count 2^32-1
        .isInstanceOf(CorruptRecordException.class)
        .hasMessageContaining("exceeds");
    assertThatThrownBy(() -> decode(hex("ffffffffff01"))) // six-byte count
        .isInstanceOf(CorruptRecordException.class)
        .hasMessageContaining("longer than 5 bytes");
    assertThatThrownBy(() -> decode(hex("8000"))) // count 0 written in two bytes
        .isInstanceOf(CorruptRecordException.class)
        .hasMessageContaining("not minimal");
    assertThatThrownBy(() -> decode(hex("01 ffffffffffffffffff01 0000000000000000"))) // t0 >= 2^63
        .isInstanceOf(CorruptRecordException.class)
        .hasMessageContaining("first timestamp");
    assertThatThrownBy(() -> decode(hex("01 8100 0000000000000000")))
        .isInstanceOf(CorruptRecordException.class)
        .hasMessageContaining("not minimal");
  }

  @Test
  void timestampsThatDoNotIncreaseAreCorrupt() {
    // count 2; t0 0; v0 0; then '0' = dod 0 with the initial delta 0: timestamp 0 again
    assertThatThrownBy(() -> decode(hex("02 00 0000000000000000 00")))
        .isInstanceOf(CorruptRecordException.class)
        .hasMessageContaining("timestamps must increase");
    // count 2; t0 Long.MAX_VALUE; then '11' '0' dod 0000100 = +4, '0' -> overflow
    assertThatThrownBy(() -> decode(hex("02 ffffffffffffffff7f 0000000000000000 c080")))
        .isInstanceOf(CorruptRecordException.class)
        .hasMessageContaining("timestamps must increase");
  }

  @Test
  void anXorWindowWiderThan64BitsIsCorrupt() {
    // count 2; t0 0; v0 0; '11' '0' dod 1 (0000001) changed '1', then '1' new window:
    // leading 31 (11111), significant 57 (111000) -> 88 bits
    // bits: 110 0000001 1 1 11111 111000 -> c0 7f f0 ...
    assertThatThrownBy(() -> decode(hex("02 00 0000000000000000 c07ff0 0000000000000000 00")))
        .isInstanceOf(CorruptRecordException.class)
        .hasMessageContaining("XOR window");
  }

  @Test
  void failureIsSticky() {
    byte[] bytes = countPatchedTo17();
    GorillaDecoder decoder = new GorillaDecoder();
    decoder.reset(bytes, 0, bytes.length);
    Throwable first =
        catchThrowable(
            () -> {
              while (decoder.next()) {
                // drain
              }
            });
    assertThat(first).isInstanceOf(CorruptRecordException.class);
    assertThatThrownBy(decoder::next).isSameAs(first);
    assertThatThrownBy(decoder::timestampMillis).isInstanceOf(IllegalStateException.class);

    assertThatThrownBy(() -> decoder.reset(new byte[] {(byte) 0x80}, 0, 1))
        .isInstanceOf(CorruptRecordException.class);
    assertThatThrownBy(decoder::next).isInstanceOf(CorruptRecordException.class);
    assertThat(decoder.count()).isZero();
  }

  @Test
  void randomByteFlipsThrowCorruptOrDecodeValidSamples() {
    SplittableRandom rnd = new SplittableRandom(SEED);
    for (int iter = 0; iter < 3000; iter++) {
      String ctx = "seed " + SEED + ", iteration " + iter;
      List<Sample> samples =
          GorillaRoundTripTest.randomChunk(
              rnd, rnd.nextInt(4) == 0 ? rnd.nextInt(4) : rnd.nextInt(300));
      byte[] bytes = encode(samples);
      int flips = 1 + rnd.nextInt(3);
      for (int f = 0; f < flips; f++) {
        bytes[rnd.nextInt(bytes.length)] ^= (byte) (1 + rnd.nextInt(255));
      }
      Object result = decodeOrCorrupt(bytes, ctx + ", bytes " + hex(bytes));
      if (result instanceof List<?> decoded) {
        long previous = -1;
        for (Object o : decoded) {
          long t = ((Sample) o).timestampMillis();
          assertThat(t).as(ctx + ": decoded timestamps increase").isGreaterThan(previous);
          previous = t;
        }
      }
    }
  }

  @Test
  void randomGarbageThrowsCorruptOrDecodes() {
    SplittableRandom rnd = new SplittableRandom(SEED);
    for (int iter = 0; iter < 3000; iter++) {
      byte[] bytes = new byte[rnd.nextInt(64)];
      for (int i = 0; i < bytes.length; i++) {
        bytes[i] = (byte) rnd.nextInt(256);
      }
      if (bytes.length > 0 && rnd.nextBoolean()) {
        bytes[0] = (byte) rnd.nextInt(40); // a plausible count, to get past the header
      }
      decodeOrCorrupt(bytes, "seed " + SEED + ", iteration " + iter + ", bytes " + hex(bytes));
    }
  }

  // ---- TimeSeriesValue ---------------------------------------------------------------------

  @Test
  void unknownEncodingIdIsCorruptNamingTheId() {
    TimeSeriesValue.Decoders decoders = new TimeSeriesValue.Decoders();
    assertThatThrownBy(() -> decoders.open(hex("04 00")))
        .isInstanceOf(CorruptRecordException.class)
        .hasMessageContaining("unknown encoding id 0x04");
    // 0x03 is the histogram chunk since issue #25: not float samples, refused by name
    assertThatThrownBy(() -> decoders.open(hex("03 00")))
        .isInstanceOf(CorruptRecordException.class)
        .hasMessageContaining("histogram chunk");
    assertThatThrownBy(() -> decoders.open(hex("ff 00")))
        .isInstanceOf(CorruptRecordException.class)
        .hasMessageContaining("0xff");
    assertThatThrownBy(() -> decoders.open(new byte[0]))
        .isInstanceOf(CorruptRecordException.class)
        .hasMessageContaining("empty");
    assertThatThrownBy(() -> decoders.open(hex("01")))
        .isInstanceOf(CorruptRecordException.class)
        .hasMessageContaining("Gorilla");
  }
}
