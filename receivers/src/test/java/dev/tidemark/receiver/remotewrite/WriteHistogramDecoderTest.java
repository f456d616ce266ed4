package dev.tidemark.receiver.remotewrite;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.CodedOutputStream;
import dev.tidemark.receiver.remotewrite.WriteHistogramDecoder.Decoded;
import dev.tidemark.receiver.remotewrite.proto.BucketSpan;
import dev.tidemark.receiver.remotewrite.proto.Histogram;
import dev.tidemark.translator.wire.WireReader;
import dev.tidemark.tsdb.model.CounterResetHint;
import dev.tidemark.tsdb.model.FloatHistogram;
import dev.tidemark.tsdb.model.HistogramLayout;
import dev.tidemark.tsdb.model.IntegerHistogram;
import dev.tidemark.tsdb.model.InvalidHistogramException;
import dev.tidemark.tsdb.model.NativeHistogram;
import java.io.ByteArrayOutputStream;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * Remote-write histogram messages into the native histogram model ({@link WriteHistogramDecoder}),
 * built with the generated classes of Prometheus' own definitions: both kinds, both versions,
 * custom buckets, protobuf's merge rules, Prometheus' refusals, truncations, and a seeded
 * comparison with a reference that reads the parsed message as Prometheus' {@code
 * ToIntHistogram}/{@code ToFloatHistogram} do.
 */
class WriteHistogramDecoderTest {

  static Decoded decode(byte[] b, boolean v2) {
    return WriteHistogramDecoder.decode(b, 0, b.length, v2);
  }

  static BucketSpan span(int offset, int length) {
    return BucketSpan.newBuilder().setOffset(offset).setLength(length).build();
  }

  @Test
  void anIntegerHistogramOfRemoteWrite1() {
    Histogram h =
        Histogram.newBuilder()
            .setCountInt(9)
            .setSum(12.5)
            .setSchema(3)
            .setZeroThreshold(0.001)
            .setZeroCountInt(2)
            .addPositiveSpans(span(-2, 2))
            .addPositiveSpans(span(1, 1))
            .addAllPositiveDeltas(java.util.List.of(1L, 1L, -1L)) // 1, 2, 1
            .addNegativeSpans(span(0, 1))
            .addNegativeDeltas(3)
            .setResetHint(Histogram.ResetHint.YES)
            .setTimestamp(1_700_000_000_123L)
            .build();
    Decoded d = decode(h.toByteArray(), false);
    assertThat(d.timestampMillis()).isEqualTo(1_700_000_000_123L);
    assertThat(d.startTimestampMillis()).isZero();
    assertThat(d.histogram())
        .isEqualTo(
            IntegerHistogram.of(
                HistogramLayout.exponential(3, 0.001, new int[] {-2, 2, 1, 1}, new int[] {0, 1}),
                CounterResetHint.COUNTER_RESET,
                9,
                2,
                12.5,
                new long[] {1, 1, -1},
                new long[] {3}));
  }

  @Test
  void aFloatHistogramOfRemoteWrite2WithItsStartTimestamp() {
    dev.tidemark.receiver.remotewrite.proto.v2.Histogram h =
        dev.tidemark.receiver.remotewrite.proto.v2.Histogram.newBuilder()
            .setCountFloat(4.5)
            .setSum(-3)
            .setSchema(-2)
            .setZeroThreshold(1e-128)
            .setZeroCountFloat(0.5)
            .addPositiveSpans(
                dev.tidemark.receiver.remotewrite.proto.v2.BucketSpan.newBuilder()
                    .setOffset(1)
                    .setLength(2))
            .addPositiveCounts(1.5)
            .addPositiveCounts(2.5)
            .setResetHint(
                dev.tidemark.receiver.remotewrite.proto.v2.Histogram.ResetHint.RESET_HINT_GAUGE)
            .setTimestamp(2000)
            .setStartTimestamp(1000)
            .build();
    Decoded d = decode(h.toByteArray(), true);
    assertThat(d.startTimestampMillis()).isEqualTo(1000);
    assertThat(d.histogram())
        .isEqualTo(
            FloatHistogram.of(
                HistogramLayout.exponential(-2, 1e-128, new int[] {1, 2}, null),
                CounterResetHint.GAUGE,
                4.5,
                0.5,
                -3,
                new double[] {1.5, 2.5},
                null));
    // the same bytes read as 1.0: field 17 is unknown there
    assertThat(decode(h.toByteArray(), false).startTimestampMillis()).isZero();
  }

  @Test
  void customBuckets() {
    Histogram h =
        Histogram.newBuilder()
            .setCountInt(3)
            .setSum(7)
            .setSchema(-53)
            .addPositiveSpans(span(0, 2))
            .addPositiveDeltas(1)
            .addPositiveDeltas(1)
            .addCustomValues(0.5)
            .addCustomValues(1)
            .build();
    NativeHistogram got = decode(h.toByteArray(), false).histogram();
    assertThat(got.layout().usesCustomBuckets()).isTrue();
    assertThat(got.layout().customValues()).containsExactly(0.5, 1);
    Histogram unsorted = h.toBuilder().setCustomValues(1, 0.25).build();
    assertThatThrownBy(() -> decode(unsorted.toByteArray(), false))
        .isInstanceOf(InvalidHistogramException.class)
        .extracting(e -> ((InvalidHistogramException) e).reason())
        .isEqualTo(InvalidHistogramException.Reason.CUSTOM_BOUNDS_NOT_INCREASING);
  }

  @Test
  void theKindIsTheCountOneofsLastMemberAndTheOtherKindsFieldsAreIgnored() {
    Histogram ignored =
        Histogram.newBuilder()
            .setCountInt(2)
            .setZeroCountInt(2)
            .addPositiveCounts(99) // ignored by an integer histogram
            .build();
    assertThat(decode(ignored.toByteArray(), false).histogram().layout().positiveBucketCount())
        .isZero();
    Histogram ints = Histogram.newBuilder().setCountInt(2).setZeroCountInt(2).build();
    Histogram floats = Histogram.newBuilder().setCountFloat(0).build();
    // concatenated messages merge: the later oneof member wins
    byte[] intThenFloat = concat(ints.toByteArray(), floats.toByteArray());
    assertThat(decode(intThenFloat, false).histogram()).isInstanceOf(FloatHistogram.class);
    // the float histogram's zero count is the float member: the oneof holds the integer one
    assertThat(((FloatHistogram) decode(intThenFloat, false).histogram()).zeroCount()).isZero();
    byte[] floatThenInt =
        concat(
            Histogram.newBuilder().setCountFloat(5).build().toByteArray(),
            Histogram.newBuilder().setCountInt(0).build().toByteArray());
    assertThat(decode(floatThenInt, false).histogram()).isInstanceOf(IntegerHistogram.class);
    // no count at all: an empty integer histogram
    NativeHistogram empty = decode(new byte[0], false).histogram();
    assertThat(empty).isInstanceOf(IntegerHistogram.class);
    assertThat(((IntegerHistogram) empty).count()).isZero();
  }

  @Test
  void repeatedNumbersPackedOrNot() throws Exception {
    ByteArrayOutputStream buf = new ByteArrayOutputStream();
    CodedOutputStream out = CodedOutputStream.newInstance(buf);
    out.writeUInt64(1, 3);
    out.writeMessage(11, span(0, 3));
    out.writeSInt64(12, 1); // unpacked
    out.writeSInt64(12, 0);
    out.writeSInt64(12, 0);
    out.writeFixed32(99, 7); // unknown
    out.flush();
    NativeHistogram h = decode(buf.toByteArray(), false).histogram();
    assertThat(((IntegerHistogram) h).positiveDeltas()).containsExactly(1, 0, 0);
  }

  @Test
  void prometheusRefusalsKeepTheirReasons() {
    Histogram countOff =
        Histogram.newBuilder()
            .setCountInt(5)
            .addPositiveSpans(span(0, 1))
            .addPositiveDeltas(4)
            .build();
    assertReason(countOff, InvalidHistogramException.Reason.COUNT_MISMATCH);
    assertReason(
        countOff.toBuilder().setSchema(9).build(), InvalidHistogramException.Reason.INVALID_SCHEMA);
    assertReason(
        countOff.toBuilder().setCountInt(0).setPositiveDeltas(0, -1).build(),
        InvalidHistogramException.Reason.NEGATIVE_BUCKET_COUNT);
    assertReason(
        countOff.toBuilder().addPositiveDeltas(1).build(),
        InvalidHistogramException.Reason.SPANS_BUCKETS_MISMATCH);
    assertReason(
        countOff.toBuilder().addPositiveSpans(span(-1, 1)).addPositiveDeltas(0).build(),
        InvalidHistogramException.Reason.SPAN_NEGATIVE_OFFSET);
    Histogram hint = Histogram.newBuilder().setResetHintValue(5).build();
    assertThatThrownBy(() -> decode(hint.toByteArray(), false))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("unknown reset_hint 5");
  }

  private static void assertReason(Histogram h, InvalidHistogramException.Reason reason) {
    assertThatThrownBy(() -> decode(h.toByteArray(), false))
        .isInstanceOf(InvalidHistogramException.class)
        .extracting(e -> ((InvalidHistogramException) e).reason())
        .isEqualTo(reason);
  }

  @Test
  void everyTruncationIsMalformedOrAHistogramOfWhatIsLeft() {
    byte[] full =
        Histogram.newBuilder()
            .setCountFloat(3)
            .setSum(1)
            .setSchema(1)
            .addPositiveSpans(span(2, 3))
            .addPositiveCounts(1)
            .addPositiveCounts(1)
            .addPositiveCounts(1)
            .setTimestamp(12345)
            .build()
            .toByteArray();
    for (int n = 0; n < full.length; n++) {
      byte[] cut = java.util.Arrays.copyOf(full, n);
      try {
        decode(cut, false);
      } catch (WireReader.Malformed | IllegalArgumentException expected) {
        // a cut inside a field, or a histogram that lost buckets
      }
    }
    assertThat(decode(full, false).histogram().layout().positiveBucketCount()).isEqualTo(3);
  }

  // ---------------------------------------------------------------- seeded reference

  /**
   * Prometheus' reading of a parsed message (ToIntHistogram / ToFloatHistogram), into the model.
   */
  static NativeHistogram reference(Histogram h) {
    int[] pos = new int[h.getPositiveSpansCount() * 2];
    for (int i = 0; i < h.getPositiveSpansCount(); i++) {
      pos[2 * i] = h.getPositiveSpans(i).getOffset();
      pos[2 * i + 1] = h.getPositiveSpans(i).getLength();
    }
    int[] neg = new int[h.getNegativeSpansCount() * 2];
    for (int i = 0; i < h.getNegativeSpansCount(); i++) {
      neg[2 * i] = h.getNegativeSpans(i).getOffset();
      neg[2 * i + 1] = h.getNegativeSpans(i).getLength();
    }
    double[] custom = h.getCustomValuesList().stream().mapToDouble(Double::doubleValue).toArray();
    HistogramLayout l = HistogramLayout.of(h.getSchema(), h.getZeroThreshold(), pos, neg, custom);
    CounterResetHint hint = CounterResetHint.fromId(h.getResetHintValue());
    if (h.getCountCase() == Histogram.CountCase.COUNT_FLOAT) {
      return FloatHistogram.of(
          l,
          hint,
          h.getCountFloat(),
          h.getZeroCountFloat(),
          h.getSum(),
          h.getPositiveCountsList().stream().mapToDouble(Double::doubleValue).toArray(),
          h.getNegativeCountsList().stream().mapToDouble(Double::doubleValue).toArray());
    }
    return IntegerHistogram.of(
        l,
        hint,
        h.getCountInt(),
        h.getZeroCountInt(),
        h.getSum(),
        h.getPositiveDeltasList().stream().mapToLong(Long::longValue).toArray(),
        h.getNegativeDeltasList().stream().mapToLong(Long::longValue).toArray());
  }

  static Histogram random(SplittableRandom rnd) {
    Histogram.Builder b = Histogram.newBuilder();
    boolean custom = rnd.nextInt(5) == 0;
    b.setSchema(custom ? -53 : rnd.nextInt(-5, 10));
    b.setSum(rnd.nextInt(4) == 0 ? Double.NaN : rnd.nextDouble(-100, 100));
    b.setResetHintValue(rnd.nextInt(4));
    b.setTimestamp(rnd.nextLong(0, 1L << 42));
    boolean floats = rnd.nextBoolean();
    long total = 0;
    double ftotal = 0;
    for (int side = 0; side < (custom ? 1 : 2); side++) {
      int spans = rnd.nextInt(0, 4);
      int buckets = 0;
      for (int s = 0; s < spans; s++) {
        int len = rnd.nextInt(0, 4);
        BucketSpan sp = span(s == 0 ? rnd.nextInt(-3, 4) : rnd.nextInt(0, 3), len);
        buckets += len;
        if (side == 0) {
          b.addPositiveSpans(sp);
        } else {
          b.addNegativeSpans(sp);
        }
      }
      if (rnd.nextInt(10) == 0) {
        buckets += 1; // spans and buckets disagree
      }
      long cur = 0;
      for (int i = 0; i < buckets; i++) {
        long next = rnd.nextInt(20) == 0 ? -1 : rnd.nextInt(0, 10);
        if (floats) {
          double c = next;
          ftotal += c;
          if (side == 0) {
            b.addPositiveCounts(c);
          } else {
            b.addNegativeCounts(c);
          }
        } else {
          total += next;
          if (side == 0) {
            b.addPositiveDeltas(next - cur);
          } else {
            b.addNegativeDeltas(next - cur);
          }
        }
        cur = next;
      }
    }
    if (custom) {
      double bound = rnd.nextDouble(-10, 0);
      for (int i = 0; i < rnd.nextInt(0, 12); i++) {
        bound += rnd.nextInt(10) == 0 ? 0 : rnd.nextDouble(0.1, 5);
        b.addCustomValues(bound);
      }
    } else {
      b.setZeroThreshold(rnd.nextInt(3) == 0 ? 0 : 1e-3);
    }
    int zero = custom && rnd.nextInt(3) != 0 ? 0 : rnd.nextInt(0, 3);
    boolean off = rnd.nextInt(8) == 0;
    if (floats) {
      b.setZeroCountFloat(zero);
      b.setCountFloat(ftotal + zero + (off ? 1 : 0));
    } else {
      b.setZeroCountInt(zero);
      b.setCountInt(total + zero + (off ? 1 : 0));
    }
    return b.build();
  }

  @Test
  void decodesAsThePrometheusReadingOfTheParsedMessageSeeded() throws Exception {
    long seed = System.nanoTime();
    SplittableRandom rnd = new SplittableRandom(seed);
    int accepted = 0;
    for (int round = 0; round < 4000; round++) {
      Histogram h = random(rnd);
      String what = "seed " + seed + " round " + round + ": " + h;
      NativeHistogram want;
      try {
        want = reference(h);
      } catch (InvalidHistogramException e) {
        assertThatThrownBy(() -> decode(h.toByteArray(), false))
            .as(what)
            .isInstanceOf(InvalidHistogramException.class)
            .extracting(x -> ((InvalidHistogramException) x).reason())
            .isEqualTo(e.reason());
        continue;
      }
      Decoded d = decode(h.toByteArray(), false);
      assertThat(d.histogram()).as(what).isEqualTo(want);
      assertThat(d.timestampMillis()).as(what).isEqualTo(h.getTimestamp());
      accepted++;
    }
    assertThat(accepted).as("seed " + seed).isGreaterThan(200);
  }

  static byte[] concat(byte[] a, byte[] b) {
    byte[] out = java.util.Arrays.copyOf(a, a.length + b.length);
    System.arraycopy(b, 0, out, a.length, b.length);
    return out;
  }
}
