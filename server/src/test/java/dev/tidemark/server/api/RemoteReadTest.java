package dev.tidemark.server.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.CodedInputStream;
import dev.tidemark.receiver.remotewrite.proto.Chunk;
import dev.tidemark.receiver.remotewrite.proto.ChunkedReadResponse;
import dev.tidemark.receiver.remotewrite.proto.ChunkedSeries;
import dev.tidemark.receiver.remotewrite.proto.Query;
import dev.tidemark.receiver.remotewrite.proto.ReadRequest;
import dev.tidemark.receiver.remotewrite.proto.ReadResponse;
import dev.tidemark.receiver.remotewrite.proto.Sample;
import dev.tidemark.receiver.remotewrite.proto.TimeSeries;
import dev.tidemark.tsdb.append.SampleBatch;
import dev.tidemark.tsdb.engine.Engine;
import dev.tidemark.tsdb.engine.EngineConfig;
import dev.tidemark.tsdb.kv.InMemoryKvStore;
import dev.tidemark.tsdb.model.Labels;
import dev.tidemark.tsdb.model.MetricMetadata;
import dev.tidemark.tsdb.query.LabelMatcher;
import dev.tidemark.tsdb.query.QueryContext;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Test;

/**
 * Remote read's two answers against the real engine, and {@link XorChunk} against a reader written
 * after Prometheus' {@code xorIterator} (the bit layout it reads, step by step).
 */
class RemoteReadTest {
  private static final long T0 = 1_705_312_800_000L; // 2024-01-15T10:00Z

  @Test
  void xorChunksReadBackAsPrometheusReadsThem() {
    SplittableRandom rnd = new SplittableRandom(1128);
    XorChunk chunk = new XorChunk();
    for (int round = 0; round < 2000; round++) {
      chunk.reset();
      int n = rnd.nextInt(1, 121);
      long[] ts = new long[n];
      long[] vs = new long[n];
      long t = rnd.nextLong(-1L << 40, 1L << 41);
      double v = rnd.nextInt(100);
      for (int i = 0; i < n; i++) {
        switch (rnd.nextInt(6)) {
          case 0 -> t += 15_000;
          case 1 -> t += rnd.nextInt(0, 20_000);
          case 2 -> t += rnd.nextLong(0, 1L << 22);
          case 3 -> t += rnd.nextLong(0, 1L << 40);
          default -> t += 15_000 + rnd.nextInt(-3, 4);
        }
        switch (rnd.nextInt(7)) {
          case 0 -> {} // the same value
          case 1 -> v += 1;
          case 2 -> v = rnd.nextDouble() * 1e6;
          case 3 -> v = Double.longBitsToDouble(rnd.nextLong());
          case 4 -> v = Double.longBitsToDouble(SampleBatch.STALE_NAN_BITS);
          case 5 -> v = rnd.nextBoolean() ? -0.0 : Double.NaN;
          default -> v = Math.round(v * 7) / 7.0;
        }
        ts[i] = t;
        vs[i] = Double.doubleToRawLongBits(v);
        chunk.append(t, vs[i]);
      }
      List<long[]> read = PrometheusXorReader.read(chunk.bytes());
      assertThat(read).as("round %d", round).hasSize(n);
      for (int i = 0; i < n; i++) {
        assertThat(read.get(i)).as("round %d sample %d", round, i).containsExactly(ts[i], vs[i]);
      }
      assertThat(chunk.minTime()).isEqualTo(ts[0]);
      assertThat(chunk.maxTime()).isEqualTo(ts[n - 1]);
    }
  }

  @Test
  void samplesAndStreamedChunksAnswerTheSameSeries() throws Exception {
    Clock clock = Clock.fixed(Instant.ofEpochMilli(T0 + 3_600_000), ZoneOffset.UTC);
    try (Engine engine =
        Engine.open(
            new InMemoryKvStore(),
            EngineConfig.builder().clock(clock).retentionInterval(Duration.ZERO).build())) {
      SampleBatch b = new SampleBatch();
      for (int i = 0; i < 300; i++) {
        long t = T0 + i * 10_000L;
        b.addPoint(Labels.of("__name__", "up", "job", "a"), MetricMetadata.UNKNOWN, t, i % 2);
        b.addPoint(
            Labels.of("__name__", "temp", "job", "a"), MetricMetadata.UNKNOWN, t, 20 + i / 7.0);
      }
      b.addPoint(Labels.of("__name__", "up", "job", "b"), MetricMetadata.UNKNOWN, T0, 1);
      assertThat(engine.append(b).rejectedPoints()).isZero();

      ReadRequest req =
          ReadRequest.newBuilder()
              .addQueries(query(T0 + 5_000, T0 + 2_000_000, "job", "a"))
              .addQueries(query(T0, T0 + 10, "__name__", "up"))
              .addAcceptedResponseTypes(ReadRequest.ResponseType.STREAMED_XOR_CHUNKS)
              .build();
      List<List<LabelMatcher>> matchers =
          List.of(
              List.of(LabelMatcher.equal("job", "a")),
              List.of(LabelMatcher.equal("__name__", "up")));
      RemoteRead rr = new RemoteRead(engine, QueryConfig.DEFAULTS);

      ReadResponse sampled = rr.samples(req, matchers, QueryContext.NONE);
      assertThat(sampled.getResultsCount()).isEqualTo(2);
      List<TimeSeries> first = sampled.getResults(0).getTimeseriesList();
      assertThat(first).hasSize(2);
      assertThat(first.get(0).getLabels(0).getValue()).isEqualTo("temp"); // sorted by labels
      assertThat(first.get(0).getSamplesCount()).isEqualTo(200); // T0+10s .. T0+1990s
      assertThat(first.get(0).getSamples(0).getTimestamp()).isEqualTo(T0 + 10_000);
      assertThat(sampled.getResults(1).getTimeseriesList()).hasSize(2); // up{job=a}, up{job=b}

      ByteArrayOutputStream out = new ByteArrayOutputStream();
      rr.stream(req, matchers, QueryContext.NONE, out);
      List<ChunkedReadResponse> frames = frames(out.toByteArray());
      assertThat(frames).hasSize(4); // one series a frame
      for (int q = 0; q < 2; q++) {
        List<TimeSeries> expected = sampled.getResults(q).getTimeseriesList();
        int at = 0;
        for (ChunkedReadResponse f : frames) {
          if (f.getQueryIndex() != q) {
            continue;
          }
          ChunkedSeries cs = f.getChunkedSeries(0);
          TimeSeries ts = expected.get(at++);
          assertThat(cs.getLabelsList()).isEqualTo(ts.getLabelsList());
          List<Sample> fromChunks = new ArrayList<>();
          for (Chunk c : cs.getChunksList()) {
            assertThat(c.getType()).isEqualTo(Chunk.Encoding.XOR);
            List<long[]> samples = PrometheusXorReader.read(c.getData().toByteArray());
            assertThat(samples.size()).isBetween(1, RemoteRead.SAMPLES_PER_CHUNK);
            assertThat(c.getMinTimeMs()).isEqualTo(samples.get(0)[0]);
            assertThat(c.getMaxTimeMs()).isEqualTo(samples.get(samples.size() - 1)[0]);
            for (long[] s : samples) {
              fromChunks.add(
                  Sample.newBuilder()
                      .setTimestamp(s[0])
                      .setValue(Double.longBitsToDouble(s[1]))
                      .build());
            }
          }
          assertThat(fromChunks).isEqualTo(ts.getSamplesList());
        }
        assertThat(at).isEqualTo(expected.size());
      }

      RemoteRead small =
          new RemoteRead(
              engine,
              new QueryConfig(
                  QueryConfig.DEFAULT_TIMEOUT,
                  100,
                  4,
                  QueryConfig.DEFAULT_MAX_QUEUED,
                  QueryConfig.DEFAULT_LOOKBACK_DELTA,
                  QueryConfig.DEFAULTS.promql(),
                  QueryConfig.DEFAULTS.maxSamplesTotal()));
      assertThatThrownBy(() -> small.samples(req, matchers, QueryContext.NONE))
          .isInstanceOf(RemoteRead.TooManySamples.class)
          .hasMessage("exceeded sample limit (100)");
    }
  }

  private static Query query(long start, long end, String name, String value) {
    return Query.newBuilder()
        .setStartTimestampMs(start)
        .setEndTimestampMs(end)
        .addMatchers(
            dev.tidemark.receiver.remotewrite.proto.LabelMatcher.newBuilder()
                .setType(dev.tidemark.receiver.remotewrite.proto.LabelMatcher.Type.EQ)
                .setName(name)
                .setValue(value))
        .build();
  }

  /** Frames as Prometheus' ChunkedReader reads them: uvarint size, big-endian CRC-32C, message. */
  private static List<ChunkedReadResponse> frames(byte[] bytes) throws Exception {
    List<ChunkedReadResponse> out = new ArrayList<>();
    CodedInputStream in = CodedInputStream.newInstance(new ByteArrayInputStream(bytes));
    while (!in.isAtEnd()) {
      int size = in.readUInt32();
      byte[] crc = in.readRawBytes(4);
      byte[] data = in.readRawBytes(size);
      CRC32C c = new CRC32C();
      c.update(data);
      int expected =
          (crc[0] & 0xff) << 24 | (crc[1] & 0xff) << 16 | (crc[2] & 0xff) << 8 | (crc[3] & 0xff);
      assertThat((int) c.getValue()).isEqualTo(expected);
      out.add(ChunkedReadResponse.parseFrom(data));
    }
    return out;
  }

  /** Prometheus' xorIterator, step by step: what a chunk's bits say. */
  static final class PrometheusXorReader {
    private final byte[] b;
    private int bit;

    private PrometheusXorReader(byte[] b) {
      this.b = b;
      this.bit = 16;
    }

    static List<long[]> read(byte[] chunk) {
      PrometheusXorReader r = new PrometheusXorReader(chunk);
      int total = (chunk[0] & 0xff) << 8 | (chunk[1] & 0xff);
      List<long[]> out = new ArrayList<>();
      long t = 0;
      long val = 0;
      long tDelta = 0;
      int leading = 0;
      int trailing = 0;
      for (int i = 0; i < total; i++) {
        if (i == 0) {
          long zz = r.uvarint();
          t = (zz >>> 1) ^ -(zz & 1);
          val = r.bits(64);
        } else {
          if (i == 1) {
            tDelta = r.uvarint();
          } else {
            int d = 0;
            for (int k = 0; k < 4; k++) {
              d <<= 1;
              if (r.bits(1) == 0) {
                break;
              }
              d |= 1;
            }
            long dod = 0;
            int sz =
                switch (d) {
                  case 0b10 -> 14;
                  case 0b110 -> 17;
                  case 0b1110 -> 20;
                  default -> 0;
                };
            if (d == 0b1111) {
              dod = r.bits(64);
            } else if (sz != 0) {
              long bits = r.bits(sz);
              if (bits > (1L << (sz - 1))) {
                bits -= 1L << sz;
              }
              dod = bits;
            }
            tDelta += dod;
          }
          t += tDelta;
          if (r.bits(1) != 0) {
            if (r.bits(1) != 0) {
              leading = (int) r.bits(5);
              int mbits = (int) r.bits(6);
              if (mbits == 0) {
                mbits = 64;
              }
              trailing = 64 - leading - mbits;
            }
            int mbits = 64 - leading - trailing;
            val ^= r.bits(mbits) << trailing;
          }
        }
        out.add(new long[] {t, val});
      }
      return out;
    }

    private long uvarint() {
      long x = 0;
      for (int shift = 0; ; shift += 7) {
        long by = bits(8);
        x |= (by & 0x7f) << shift;
        if ((by & 0x80) == 0) {
          return x;
        }
      }
    }

    private long bits(int n) {
      long v = 0;
      for (int i = 0; i < n; i++) {
        int by = b[bit >>> 3] & 0xff;
        v = (v << 1) | ((by >>> (7 - (bit & 7))) & 1);
        bit++;
      }
      return v;
    }
  }
}
