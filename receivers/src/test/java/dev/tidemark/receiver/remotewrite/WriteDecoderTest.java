package dev.tidemark.receiver.remotewrite;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.UnknownFieldSet;
import dev.tidemark.receiver.remotewrite.proto.Exemplar;
import dev.tidemark.receiver.remotewrite.proto.Histogram;
import dev.tidemark.receiver.remotewrite.proto.Label;
import dev.tidemark.receiver.remotewrite.proto.MetricMetadata;
import dev.tidemark.receiver.remotewrite.proto.Sample;
import dev.tidemark.receiver.remotewrite.proto.TimeSeries;
import dev.tidemark.receiver.remotewrite.proto.WriteRequest;
import dev.tidemark.receiver.remotewrite.proto.v2.Metadata;
import dev.tidemark.receiver.remotewrite.proto.v2.Request;
import dev.tidemark.tsdb.codec.Varints;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * The hand-rolled decoder against the protobuf classes generated from Prometheus' definitions (the
 * reference): seeded random requests, with unknown fields and unpacked references, decode to the
 * same series, labels, samples, metadata; every truncation the reference refuses is refused.
 */
class WriteDecoderTest {
  static final long SEED = Long.getLong("tidemark.seed", 20261124L);
  static final String[] WORDS = {"", "a", "job", "__name__", "é", "日本", "x_y", "le", "0.5"};

  @Test
  void randomV1RequestsDecodeAsTheGeneratedParserReadsThem() throws Exception {
    SplittableRandom rnd = new SplittableRandom(SEED);
    WriteDecoder d = new WriteDecoder();
    for (int round = 0; round < 300; round++) {
      WriteRequest req = randomV1(rnd);
      byte[] bytes = req.toByteArray();
      d.decodeV1(bytes, 0, bytes.length);
      assertV1(d, WriteRequest.parseFrom(bytes), "seed " + SEED + " round " + round);
    }
  }

  @Test
  void randomV2RequestsDecodeAsTheGeneratedParserReadsThem() throws Exception {
    SplittableRandom rnd = new SplittableRandom(SEED + 1);
    WriteDecoder d = new WriteDecoder();
    for (int round = 0; round < 300; round++) {
      Request req = randomV2(rnd);
      byte[] bytes = req.toByteArray();
      if (rnd.nextBoolean()) {
        bytes = unpackRefs(bytes, req);
      }
      d.decodeV2(bytes, 0, bytes.length);
      assertV2(d, Request.parseFrom(bytes), "seed " + SEED + " round " + round);
    }
  }

  @Test
  void everyTruncationTheReferenceRefusesIsRefused() throws Exception {
    SplittableRandom rnd = new SplittableRandom(SEED + 2);
    WriteDecoder d = new WriteDecoder();
    for (int round = 0; round < 40; round++) {
      byte[] bytes = randomV1(rnd).toByteArray();
      for (int len = 0; len < bytes.length; len++) {
        WriteRequest ref;
        try {
          ref = WriteRequest.parseFrom(java.util.Arrays.copyOf(bytes, len));
        } catch (InvalidProtocolBufferException e) {
          int l = len;
          assertThatThrownBy(() -> d.decodeV1(bytes, 0, l))
              .as("prefix %d of %d, round %d", len, bytes.length, round)
              .isInstanceOf(WriteDecoder.Malformed.class);
          continue;
        }
        d.decodeV1(bytes, 0, len);
        assertV1(d, ref, "prefix " + len);
      }
    }
  }

  @Test
  void wrongWireTypesAndGroupsAreRefusedWithTheField() {
    WriteDecoder d = new WriteDecoder();
    // timeseries (field 1) as a varint
    assertThatThrownBy(() -> d.decodeV1(new byte[] {0x08, 0x01}, 0, 2))
        .hasMessage("wrong wire type 0 for WriteRequest.timeseries");
    // a start-group of an unknown field 9
    assertThatThrownBy(() -> d.decodeV1(new byte[] {0x4b}, 0, 1))
        .hasMessage("unsupported wire type 3 for field 9");
    assertThatThrownBy(() -> d.decodeV1(new byte[] {0x00}, 0, 1))
        .hasMessageStartingWith("illegal tag 0");
  }

  // ------------------------------------------------------------------ comparison

  private static void assertV1(WriteDecoder d, WriteRequest ref, String ctx) {
    assertThat(d.series).as(ctx).isEqualTo(ref.getTimeseriesCount());
    for (int s = 0; s < d.series; s++) {
      TimeSeries ts = ref.getTimeseries(s);
      List<String> want = new ArrayList<>();
      for (Label l : ts.getLabelsList()) {
        want.add(l.getName());
        want.add(l.getValue());
      }
      assertThat(pairs(d, s)).as(ctx + " series " + s).isEqualTo(want);
      assertSamples(d, s, ts.getSamplesList(), ctx);
      assertThat(d.histograms[s]).isEqualTo(ts.getHistogramsCount());
      assertThat(d.exemplars[s]).isEqualTo(ts.getExemplarsCount());
    }
    assertThat(d.metadata).as(ctx).isEqualTo(ref.getMetadataCount());
    for (int m = 0; m < d.metadata; m++) {
      MetricMetadata md = ref.getMetadata(m);
      assertThat(d.mdType[m]).isEqualTo(md.getTypeValue());
      assertThat(range(d, m * 6)).isEqualTo(md.getMetricFamilyName());
      assertThat(range(d, m * 6 + 2)).isEqualTo(md.getHelp());
      assertThat(range(d, m * 6 + 4)).isEqualTo(md.getUnit());
    }
  }

  private static void assertV2(WriteDecoder d, Request ref, String ctx) {
    assertThat(d.series).as(ctx).isEqualTo(ref.getTimeseriesCount());
    assertThat(d.symbols).isEqualTo(ref.getSymbolsCount());
    for (int s = 0; s < d.series; s++) {
      var ts = ref.getTimeseries(s);
      List<String> want = new ArrayList<>();
      for (int r : ts.getLabelsRefsList()) {
        want.add(ref.getSymbols(r));
      }
      assertThat(d.badRef[s]).as(ctx).isNull();
      assertThat(pairs(d, s)).as(ctx + " series " + s).isEqualTo(want);
      List<Sample> samples = new ArrayList<>();
      for (var x : ts.getSamplesList()) {
        samples.add(
            Sample.newBuilder().setTimestamp(x.getTimestamp()).setValue(x.getValue()).build());
      }
      assertSamples(d, s, samples, ctx);
      assertThat(d.histograms[s]).isEqualTo(ts.getHistogramsCount());
      assertThat(d.exemplars[s]).isEqualTo(ts.getExemplarsCount());
      assertThat(d.metaType[s]).isEqualTo(ts.getMetadata().getTypeValue());
      assertThat(d.helpRef[s]).isEqualTo(ts.getMetadata().getHelpRef());
      assertThat(d.unitRef[s]).isEqualTo(ts.getMetadata().getUnitRef());
    }
  }

  private static void assertSamples(WriteDecoder d, int s, List<Sample> want, String ctx) {
    assertThat(d.sampleEnd[s] - d.sampleStart[s]).as(ctx).isEqualTo(want.size());
    for (int i = 0; i < want.size(); i++) {
      int at = d.sampleStart[s] + i;
      assertThat(d.ts[at]).isEqualTo(want.get(i).getTimestamp());
      assertThat(d.bits[at]).isEqualTo(Double.doubleToRawLongBits(want.get(i).getValue()));
    }
  }

  /** Series {@code s}'s label run as alternating names and values. */
  static List<String> pairs(WriteDecoder d, int s) {
    List<String> out = new ArrayList<>();
    long[] v = new long[1];
    int p = d.runStart[s];
    while (p < d.runEnd[s]) {
      p = Varints.read(d.runs, p, d.runEnd[s], v);
      out.add(new String(d.runs, p, (int) v[0], StandardCharsets.UTF_8));
      p += (int) v[0];
    }
    return out;
  }

  private static String range(WriteDecoder d, int slot) {
    int from = d.mdRanges[slot];
    int to = d.mdRanges[slot + 1];
    return new String(d.src, from, to - from, StandardCharsets.UTF_8);
  }

  // ------------------------------------------------------------------ random requests

  static WriteRequest randomV1(SplittableRandom rnd) {
    WriteRequest.Builder b = WriteRequest.newBuilder();
    int series = rnd.nextInt(6);
    for (int s = 0; s < series; s++) {
      TimeSeries.Builder ts = TimeSeries.newBuilder();
      int labels = rnd.nextInt(5);
      for (int l = 0; l < labels; l++) {
        ts.addLabels(Label.newBuilder().setName(word(rnd)).setValue(word(rnd)));
      }
      int samples = rnd.nextInt(4);
      for (int i = 0; i < samples; i++) {
        Sample.Builder x =
            Sample.newBuilder()
                .setTimestamp(rnd.nextLong(-5, 1L << 42))
                .setValue(Double.longBitsToDouble(rnd.nextLong()));
        if (rnd.nextInt(5) == 0) {
          x.setUnknownFields(unknown(rnd));
        }
        ts.addSamples(x);
      }
      if (rnd.nextInt(4) == 0) {
        ts.addHistograms(Histogram.newBuilder().setCountInt(3).setTimestamp(5));
      }
      if (rnd.nextInt(4) == 0) {
        ts.addExemplars(Exemplar.newBuilder().setValue(1).setTimestamp(2));
      }
      if (rnd.nextInt(4) == 0) {
        ts.setUnknownFields(unknown(rnd));
      }
      b.addTimeseries(ts);
    }
    int metadata = rnd.nextInt(3);
    for (int m = 0; m < metadata; m++) {
      b.addMetadata(
          MetricMetadata.newBuilder()
              .setTypeValue(rnd.nextInt(8))
              .setMetricFamilyName(word(rnd))
              .setHelp(word(rnd))
              .setUnit(word(rnd)));
    }
    return b.build();
  }

  static Request randomV2(SplittableRandom rnd) {
    Request.Builder b = Request.newBuilder().addSymbols("");
    int symbols = 1 + rnd.nextInt(8);
    for (int i = 0; i < symbols; i++) {
      b.addSymbols(word(rnd));
    }
    int n = symbols + 1;
    int series = rnd.nextInt(6);
    for (int s = 0; s < series; s++) {
      var ts = dev.tidemark.receiver.remotewrite.proto.v2.TimeSeries.newBuilder();
      int labels = rnd.nextInt(4);
      for (int l = 0; l < 2 * labels; l++) {
        ts.addLabelsRefs(rnd.nextInt(n));
      }
      int samples = rnd.nextInt(4);
      for (int i = 0; i < samples; i++) {
        ts.addSamples(
            dev.tidemark.receiver.remotewrite.proto.v2.Sample.newBuilder()
                .setTimestamp(rnd.nextLong(0, 1L << 42))
                .setValue(Double.longBitsToDouble(rnd.nextLong()))
                .setStartTimestamp(rnd.nextInt(3)));
      }
      ts.setMetadata(
          Metadata.newBuilder()
              .setTypeValue(rnd.nextInt(8))
              .setHelpRef(rnd.nextInt(n))
              .setUnitRef(rnd.nextInt(n)));
      b.addTimeseries(ts);
    }
    return b.build();
  }

  /**
   * The same request with every series' labels_refs unpacked (one varint field each), which
   * protobuf parsers must also accept.
   */
  static byte[] unpackRefs(byte[] bytes, Request req) throws Exception {
    Request.Builder b = req.toBuilder().clearTimeseries();
    for (var ts : req.getTimeseriesList()) {
      UnknownFieldSet.Builder u = UnknownFieldSet.newBuilder();
      UnknownFieldSet.Field.Builder f = UnknownFieldSet.Field.newBuilder();
      for (int r : ts.getLabelsRefsList()) {
        f.addVarint(r);
      }
      u.addField(1, f.build());
      b.addTimeseries(ts.toBuilder().clearLabelsRefs().setUnknownFields(u.build()));
    }
    byte[] out = b.build().toByteArray();
    // The generated parser takes the unknown field 1 as labels_refs again: the reference holds.
    assertThat(Request.parseFrom(out).getTimeseriesList())
        .extracting(t -> t.getLabelsRefsList())
        .isEqualTo(req.getTimeseriesList().stream().map(t -> t.getLabelsRefsList()).toList());
    return out;
  }

  private static UnknownFieldSet unknown(SplittableRandom rnd) {
    return UnknownFieldSet.newBuilder()
        .addField(
            20 + rnd.nextInt(50),
            UnknownFieldSet.Field.newBuilder()
                .addVarint(rnd.nextLong())
                .addFixed64(rnd.nextLong())
                .addFixed32(rnd.nextInt())
                .addLengthDelimited(com.google.protobuf.ByteString.copyFromUtf8(word(rnd)))
                .build())
        .build();
  }

  private static String word(SplittableRandom rnd) {
    return WORDS[rnd.nextInt(WORDS.length)] + (rnd.nextInt(3) == 0 ? "_" + rnd.nextInt(100) : "");
  }
}
