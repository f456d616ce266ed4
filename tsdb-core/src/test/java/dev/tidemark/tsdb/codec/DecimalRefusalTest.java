package dev.tidemark.tsdb.codec;

import static dev.tidemark.tsdb.codec.GorillaTestSupport.SEED;
import static dev.tidemark.tsdb.codec.GorillaTestSupport.hex;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.tidemark.tsdb.codec.GorillaTestSupport.Sample;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * Adversarial decimal streams: everything malformed throws {@link CorruptRecordException} (from
 * {@code reset} or {@code next}), never an {@link IndexOutOfBoundsException}; refusals of the
 * encoder throw {@link IllegalArgumentException}.
 */
class DecimalRefusalTest {
  static final String WORKED =
      "06 80 d0 95 ff bc 31 04 02 32 98 75 19 01 05 02 00 00 00 00 00 f0 7f 02 01 72 40 02 01 ac 40";
  static final String SPECIALS =
      "04 00 01 11 88 80 98 f4 e9 b5 ca 6a 01 01 03 00 00 00 00 00 00 00 00 80"
          + " 01 00 00 00 00 00 00 f0 7f 02 01 00 00 00 00 00 f8 7f 00 00";

  /** Decodes everything; returns the samples or rethrows only CorruptRecordException. */
  static List<Sample> decodeOrCorrupt(byte[] bytes, String msg) {
    DecimalDecoder d = new DecimalDecoder();
    try {
      d.reset(bytes, 0, bytes.length);
      List<Sample> out = new ArrayList<>();
      while (d.next()) {
        out.add(new Sample(d.timestampMillis(), d.valueBits()));
      }
      return out;
    } catch (CorruptRecordException e) {
      // after a failure the decoder stays failed
      assertThatThrownBy(d::next).as(msg).isInstanceOf(CorruptRecordException.class);
      throw e;
    } catch (RuntimeException e) {
      throw new AssertionError(msg + ": " + e, e);
    }
  }

  static void assertCorrupt(byte[] bytes, String msg) {
    assertThatThrownBy(() -> decodeOrCorrupt(bytes, msg))
        .as(msg)
        .isInstanceOf(CorruptRecordException.class);
  }

  static void assertCorrupt(String hexBytes, String messagePart) {
    assertThatThrownBy(() -> decodeOrCorrupt(hex(hexBytes), hexBytes))
        .as(hexBytes)
        .isInstanceOf(CorruptRecordException.class)
        .hasMessageContaining(messagePart);
  }

  static List<byte[]> validStreams() {
    SplittableRandom rnd = new SplittableRandom(SEED);
    List<byte[]> out = new ArrayList<>();
    out.add(hex(WORKED));
    out.add(hex(SPECIALS));
    out.add(hex("01 80 d0 95 ff bc 31 01 01 1d 00"));
    for (int i = 0; i < 20; i++) {
      out.add(
          DecimalRoundTripTest.encode(DecimalRoundTripTest.randomChunk(rnd, 1 + rnd.nextInt(300))));
    }
    return out;
  }

  @Test
  void everyTruncationIsCorrupt() {
    for (byte[] stream : validStreams()) {
      for (int len = 0; len < stream.length; len++) {
        assertCorrupt(
            Arrays.copyOf(stream, len), "seed " + SEED + ", " + hex(stream) + " cut to " + len);
      }
    }
  }

  @Test
  void trailingBytesAreCorrupt() {
    for (byte[] stream : validStreams()) {
      for (int extra : new int[] {0x00, 0x01, 0xff}) {
        byte[] longer = Arrays.copyOf(stream, stream.length + 1);
        longer[stream.length] = (byte) extra;
        assertCorrupt(longer, "seed " + SEED + ", " + hex(stream) + " + " + extra);
      }
    }
    assertCorrupt("00 00", "trailing");
    assertCorrupt("01 80 d0 95 ff bc 31 01 01 1d 00 00", "trailing");
  }

  @Test
  void bitWidthsAbove64AreCorrupt() {
    // worked example: the timestamp width byte is at 23, the value width byte at 27
    for (int at : new int[] {23, 27}) {
      for (int width = 65; width < 256; width++) {
        byte[] b = hex(WORKED);
        b[at] = (byte) width;
        assertCorrupt(b, "width " + width + " at " + at);
      }
    }
    assertCorrupt(WORKED.replace("02 01 72", "41 01 72"), "bit width 65");
  }

  /** A wrong width within 0..64 shifts every later field: corrupt, or (rarely) other samples. */
  @Test
  void wrongBitWidthsNeverEscapeAsAnotherException() {
    int corrupt = 0;
    for (int at : new int[] {23, 27}) {
      for (int width = 0; width <= 64; width++) {
        byte[] b = hex(WORKED);
        if ((b[at] & 0xFF) == width) {
          continue;
        }
        b[at] = (byte) width;
        try {
          assertThat(decodeOrCorrupt(b, "width " + width + " at " + at))
              .isNotEqualTo(decodeOrCorrupt(hex(WORKED), "worked"));
        } catch (CorruptRecordException expected) {
          corrupt++;
        }
      }
    }
    assertThat(corrupt).isGreaterThan(120);
  }

  @Test
  void exceptionPositionsMustIncreaseAndStayBelowTheCount() {
    // SPECIALS has exceptions at positions 0, 1, 2 of 4 samples
    assertCorrupt(SPECIALS.replace("01 01 03 00 00", "01 01 03 01 00"), "not after the previous");
    String positions =
        SPECIALS.replace("80 01 00 00 00 00 00 00 f0 7f 02", "80 00 00 00 00 00 00 00 f0 7f 02");
    assertCorrupt(positions, "not after the previous");
    assertCorrupt(SPECIALS.replace("f0 7f 02 01", "f0 7f 04 01"), "beyond the last sample");
    assertCorrupt(SPECIALS.replace("f0 7f 02 01", "f0 7f 7f 01"), "beyond the last sample");
    assertCorrupt(WORKED.replace("19 01 05 02", "19 01 06 02"), "beyond the last sample");
    assertCorrupt(WORKED.replace("19 01 05 02", "19 07 05 02"), "exception count 7");
    assertCorrupt(WORKED.replace("19 01 05 02", "19 02 05 02"), "exceptions need");
  }

  @Test
  void malformedHeadersAreCorrupt() {
    assertCorrupt("", "empty");
    assertCorrupt("80", "truncated");
    assertCorrupt("80 00", "not minimal");
    assertCorrupt("ff ff ff ff 0f", "exceeds");
    assertCorrupt("01 80 d0 95 ff bc 31 08 01 1d 00", "unknown flags");
    assertCorrupt("01 80 d0 95 ff bc 31 80 01 1d 00", "unknown flags");
    assertCorrupt("01 80 d0 95 ff bc 31 01 13 1d 00", "exponent 19");
    assertCorrupt("01 ff ff ff ff ff ff ff ff ff 01 01 01 1d 00", "exceeds 2^63-1");
    assertCorrupt("01 ff ff ff ff ff ff ff ff ff 02 01 01 1d 00", "exceeds 64 bits");
    assertCorrupt(WORKED.replace("98 75 19", "98 75 00"), "divisor is 0");
    assertCorrupt(WORKED.replace("32 98 75 19", "32 00 19 01"), "base timestamp delta");
    // a count that the bytes cannot hold: ~16M samples in 30 bytes
    assertCorrupt("80 80 80 08 80 d0 95 ff bc 31 01 00 00 01 01 00 00 00 00", "mini-blocks");
    assertCorrupt(WORKED.replace("72 40", "72 41"), "padding");
    assertCorrupt("01 80 d0 95 ff bc 31 05 01 1d 00", "unknown flags");
  }

  @Test
  void timestampsThatDoNotIncreaseOrOverflowAreCorrupt() {
    // worked example (grid timestamps) with the block minimum -1 replaced by -15008
    byte[] b = hex(WORKED.replace("02 01 72 40", "02 bf ea 01 72 40"));
    assertThatThrownBy(() -> decodeOrCorrupt(b, ""))
        .hasMessageContaining("timestamps must increase");
    // regular, 3 samples from t0 = 2^62 with base delta 2^62: the first step overflows
    assertCorrupt(
        "03 80 80 80 80 80 80 80 80 40 01 00 00 80 80 80 80 80 80 80 80 40 01 00 00 00", "2^63-1");
  }

  @Test
  void randomMutationsThrowOnlyCorruptRecordException() {
    SplittableRandom rnd = new SplittableRandom(SEED);
    List<byte[]> streams = validStreams();
    for (int iter = 0; iter < 20_000; iter++) {
      byte[] b = streams.get(rnd.nextInt(streams.size())).clone();
      int flips = 1 + rnd.nextInt(3);
      for (int f = 0; f < flips; f++) {
        b[rnd.nextInt(b.length)] ^= (byte) (1 << rnd.nextInt(8));
      }
      try {
        decodeOrCorrupt(b, "seed " + SEED + ", iteration " + iter + ", bytes " + hex(b));
      } catch (CorruptRecordException expected) {
        // fine
      }
    }
  }

  @Test
  void encoderRefusesBadTimestamps() {
    DecimalEncoder e = new DecimalEncoder();
    assertThatThrownBy(() -> e.append(-1, 0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("-1");
    e.append(10, 0);
    assertThatThrownBy(() -> e.append(10, 0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("duplicates");
    assertThatThrownBy(() -> e.append(9, 0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("before");
    assertThat(e.count()).isEqualTo(1);
  }

  @Test
  void decoderIsStickyAndRefusesAccessOffASample() {
    DecimalDecoder d = new DecimalDecoder();
    byte[] b = hex(WORKED);
    d.reset(b, 0, b.length);
    assertThatThrownBy(d::timestampMillis).isInstanceOf(IllegalStateException.class);
    while (d.next()) {
      // drain
    }
    assertThatThrownBy(d::valueBits).isInstanceOf(IllegalStateException.class);
    byte[] bad = hex(WORKED.replace("72 40", "72 41"));
    d.reset(bad, 0, bad.length);
    assertThat(d.next()).isTrue(); // the first sample is in the header
    assertThatThrownBy(d::next).isInstanceOf(CorruptRecordException.class);
    assertThatThrownBy(d::next).isInstanceOf(CorruptRecordException.class);
    assertThatThrownBy(d::timestampMillis).isInstanceOf(IllegalStateException.class);
  }
}
