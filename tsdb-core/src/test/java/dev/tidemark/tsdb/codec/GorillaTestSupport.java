package dev.tidemark.tsdb.codec;

import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;

/** Helpers shared by the Gorilla codec tests. */
final class GorillaTestSupport {
  private GorillaTestSupport() {}

  /** Default seed of the property tests; override with {@code -Dtidemark.seed=<long>}. */
  static final long SEED = Long.getLong("tidemark.seed", 0x7_1DE_3A2CL);

  static final long STALE_NAN = 0x7ff0000000000002L;

  /** One sample; {@code valueBits} are raw IEEE-754 bits. */
  record Sample(long timestampMillis, long valueBits) {
    @Override
    public String toString() {
      return timestampMillis + "=" + String.format("%016x", valueBits);
    }
  }

  static Sample sample(long timestampMillis, double value) {
    return new Sample(timestampMillis, Double.doubleToRawLongBits(value));
  }

  static byte[] hex(String hex) {
    return HexFormat.of().parseHex(hex.replace(" ", ""));
  }

  static String hex(byte[] bytes) {
    return HexFormat.of().formatHex(bytes);
  }

  static byte[] encode(List<Sample> samples) {
    GorillaEncoder encoder = new GorillaEncoder();
    for (Sample s : samples) {
      encoder.append(s.timestampMillis(), s.valueBits());
    }
    return encoder.toByteArray();
  }

  /** Decodes a whole stream; throws whatever the decoder throws. */
  static List<Sample> decode(byte[] stream) {
    return decode(new GorillaDecoder(), stream, 0, stream.length);
  }

  static List<Sample> decode(GorillaDecoder decoder, byte[] buf, int offset, int length) {
    decoder.reset(buf, offset, length);
    List<Sample> out = new ArrayList<>(decoder.count());
    while (decoder.next()) {
      out.add(new Sample(decoder.timestampMillis(), decoder.valueBits()));
    }
    return out;
  }
}
