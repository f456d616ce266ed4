package dev.tidemark.tsdb.engine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.tidemark.tsdb.append.AppendResult;
import dev.tidemark.tsdb.append.RejectReason;
import dev.tidemark.tsdb.append.SampleBatch;
import dev.tidemark.tsdb.codec.ChunkDecoder;
import dev.tidemark.tsdb.codec.Keys;
import dev.tidemark.tsdb.codec.RecordType;
import dev.tidemark.tsdb.codec.TimeBucket;
import dev.tidemark.tsdb.codec.TimeSeriesValue;
import dev.tidemark.tsdb.kv.InMemoryKvStore;
import dev.tidemark.tsdb.kv.KvCursor;
import dev.tidemark.tsdb.kv.KvReader;
import dev.tidemark.tsdb.kv.WriteBatch;
import dev.tidemark.tsdb.model.Labels;
import dev.tidemark.tsdb.model.MetricMetadata;
import dev.tidemark.tsdb.model.MetricType;
import dev.tidemark.tsdb.model.Temporality;
import dev.tidemark.tsdb.query.LabelMatcher;
import dev.tidemark.tsdb.query.SampleIterator;
import dev.tidemark.tsdb.query.Series;
import dev.tidemark.tsdb.time.ManualClock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * Frozen head parts written out as HeadChunk records (issue #22, item 5; docs/format.md,
 * HeadChunk): the golden vectors of key and value, and what the engine does with them: reads merge
 * them with the stream and late samples, a late sample inside them is checked against them, the
 * seal folds them into the sealed chunk and deletes them, recovery deletes them and rebuilds from
 * the head log, and the verifier knows them.
 */
class HeadChunkTest {

  private static final MetricMetadata META =
      new MetricMetadata(MetricType.GAUGE, "", Temporality.UNSPECIFIED, false);

  /** 2024-01-15T10:00Z, the bucket of docs/format.md's examples. */
  private static final TimeBucket BUCKET = new TimeBucket(1, 0x01b1aef8);

  private static final long T0 = BUCKET.startMillis();
  private static final Labels SERIES = Labels.of(Labels.METRIC_NAME, "m", "job", "a");

  private static byte[] hex(String s) {
    return HexFormat.ofDelimiter(" ").parseHex(s);
  }

  private static String hex(byte[] b) {
    return HexFormat.ofDelimiter(" ").formatHex(b);
  }

  private ManualClock clock;
  private InMemoryKvStore kv;
  private EngineConfig config;

  private Engine open(int freezeSamples) {
    clock = clock == null ? new ManualClock(T0 + 600_000) : clock;
    kv = kv == null ? new InMemoryKvStore() : kv;
    config =
        EngineConfig.builder()
            .clock(clock)
            .outOfOrderWindow(Duration.ofMinutes(30))
            .retention(Duration.ofDays(7))
            .retentionInterval(Duration.ZERO)
            .compactionInterval(Duration.ZERO)
            .headFreezeSamples(freezeSamples)
            .build();
    return Engine.open(kv, config);
  }

  private static RejectReason append(Engine e, Labels l, long t, double v) {
    SampleBatch b = new SampleBatch();
    b.add(l, META, t, v);
    b.endPoint();
    AppendResult r = e.append(b);
    return r.pointReason(0);
  }

  private static TreeMap<String, byte[]> headChunks(KvReader r) {
    byte[][] range = Keys.headChunkRange();
    TreeMap<String, byte[]> out = new TreeMap<>();
    try (KvCursor c = r.scan(range[0], range[1])) {
      while (c.next()) {
        out.put(hex(c.key()), c.value());
      }
    }
    return out;
  }

  private static List<String> samples(Engine e, Labels l) {
    List<String> out = new ArrayList<>();
    for (Series s :
        e.select(
                Long.MIN_VALUE / 4,
                Long.MAX_VALUE / 4,
                List.of(LabelMatcher.equal(Labels.METRIC_NAME, l.get(Labels.METRIC_NAME))))
            .toList()) {
      if (!s.labels().equals(l)) {
        continue;
      }
      SampleIterator it = s.iterator();
      while (it.next()) {
        out.add((it.timestampMillis() - T0) / 1000 + "=" + Double.longBitsToDouble(it.valueBits()));
      }
    }
    return out;
  }

  private static List<String> decode(byte[] value) {
    List<String> out = new ArrayList<>();
    ChunkDecoder d = new TimeSeriesValue.Decoders().open(value);
    while (d.next()) {
      out.add((d.timestampMillis() - T0) / 1000 + "=" + Double.longBitsToDouble(d.valueBits()));
    }
    return out;
  }

  /**
   * The key of part 2 of series 7 in bucket {@code 01 b1 ae f8}, both ways; the whole-type range
   * recovery deletes.
   */
  @Test
  void keyGolden() {
    String key = "01 91 01 b1 ae f8 00 00 00 07 00 00 00 02";
    assertThat(hex(Keys.headChunk(BUCKET, 7, 2))).isEqualTo(key);
    assertThat(Keys.recordType(hex(key))).isEqualTo(RecordType.HEAD_CHUNK);
    assertThat(Keys.timeBucket(hex(key))).isEqualTo(BUCKET);
    assertThat(Keys.headChunkSeriesId(hex(key))).isEqualTo(7);
    assertThat(Keys.headChunkPart(hex(key))).isEqualTo(2);
    assertThat(hex(Keys.bucketPrefix(RecordType.HEAD_CHUNK, BUCKET)))
        .isEqualTo("01 91 01 b1 ae f8");
    // u32 ids and part numbers: the high bit is a big-endian byte, not a sign.
    assertThat(hex(Keys.headChunk(BUCKET, 0xFFFF_FFFE, 0x8000_0001)))
        .isEqualTo("01 91 01 b1 ae f8 ff ff ff fe 80 00 00 01");
    assertThat(Keys.headChunkPart(hex("01 91 01 b1 ae f8 ff ff ff fe 80 00 00 01")))
        .isEqualTo(0x8000_0001);
    assertThat(hex(Keys.headChunkRange()[0])).isEqualTo("01 90");
    assertThat(hex(Keys.headChunkRange()[1])).isEqualTo("01 a0");
    // a key of the wrong length is corrupt, as every fixed-size key
    org.assertj.core.api.Assertions.assertThatThrownBy(
            () -> Keys.recordType(hex("01 91 01 b1 ae f8 00 00 00 07")))
        .isInstanceOf(dev.tidemark.tsdb.codec.CorruptRecordException.class);
  }

  /**
   * What a freeze writes: part 0 of series 0, the samples 1.5 at 10:00:15 and 2.25 at 10:00:30 in
   * the decimal chunk (docs/format.md, HeadChunk's example), both ways.
   */
  @Test
  void valueGolden() {
    String key = "01 91 01 b1 ae f8 00 00 00 00 00 00 00 00";
    String value = GOLDEN_VALUE;
    Engine e = open(2);
    try {
      assertThat(append(e, SERIES, T0 + 15_000, 1.5)).isNull();
      assertThat(append(e, SERIES, T0 + 30_000, 2.25)).isNull();
      e.freezeNow();
      TreeMap<String, byte[]> parts = headChunks(kv);
      assertThat(parts.keySet()).containsExactly(key);
      assertThat(hex(parts.get(key))).isEqualTo(value);
      assertThat(decode(hex(value))).containsExactly("15=1.5", "30=2.25");
    } finally {
      e.close();
    }
  }

  static final String GOLDEN_VALUE = "02 02 98 8f c2 e4 d0 31 01 02 ac 02 98 75 4b 00 00 02";

  /**
   * Parts in the store, a stream and late samples (before, between and after the parts) read as one
   * series; a late sample inside a part is a duplicate or a retry as before; the seal folds all of
   * them into the sealed chunk and deletes the parts.
   */
  @Test
  void partsStreamAndLateSamplesReadAsOneSeriesAndSealIntoOneChunk() {
    Engine e = open(4);
    try {
      List<String> want = new ArrayList<>();
      for (int i = 1; i <= 10; i++) {
        assertThat(append(e, SERIES, T0 + i * 15_000L, i)).isNull();
        want.add(i * 15 + "=" + (double) i);
        if (i % 4 == 0) {
          e.freezeNow();
        }
      }
      assertThat(e.headChunksWritten()).isEqualTo(2);
      assertThat(headChunks(kv)).hasSize(2);
      assertThat(samples(e, SERIES)).containsExactlyElementsOf(want);
      // late samples: before the first part, inside part 0 (new, retry, conflict), inside part 1
      assertThat(append(e, SERIES, T0 + 5_000, -1)).isNull();
      assertThat(append(e, SERIES, T0 + 20_000, -2)).isNull();
      assertThat(append(e, SERIES, T0 + 30_000, 2)).isNull(); // the same bits: a retry
      assertThat(append(e, SERIES, T0 + 30_000, 7)).isEqualTo(RejectReason.DUPLICATE);
      assertThat(append(e, SERIES, T0 + 100_000, -3)).isNull();
      assertThat(append(e, SERIES, T0 + 100_000, 8)).isEqualTo(RejectReason.DUPLICATE);
      assertThat(append(e, SERIES, T0 + 140_000, -4)).isNull(); // between the parts and stream
      want.add("5=-1.0");
      want.add("20=-2.0");
      want.add("100=-3.0");
      want.add("140=-4.0");
      want.sort(java.util.Comparator.comparingInt(s -> Integer.parseInt(s.split("=")[0])));
      assertThat(samples(e, SERIES)).containsExactlyElementsOf(want);
      // more in order, frozen: late samples older than the parts stay in the late buffer
      for (int i = 11; i <= 14; i++) {
        assertThat(append(e, SERIES, T0 + i * 15_000L, i)).isNull();
        want.add(i * 15 + "=" + (double) i);
      }
      e.freezeNow();
      assertThat(headChunks(kv)).hasSize(3);
      assertThat(samples(e, SERIES)).containsExactlyElementsOf(want);
      long headBytes = e.stats().headBytes();
      e.flush();
      assertThat(headChunks(kv)).isEmpty();
      assertThat(e.stats().headBytes()).isZero();
      assertThat(headBytes).isPositive();
      assertThat(samples(e, SERIES)).containsExactlyElementsOf(want);
      // one sealed chunk with everything
      try (KvCursor c = kv.scanPrefix(Keys.bucketPrefix(RecordType.TIME_SERIES, BUCKET))) {
        assertThat(c.next()).isTrue();
        assertThat(decode(c.value())).hasSize(want.size());
        assertThat(c.next()).isFalse();
      }
      assertThat(StoreVerifier.verify(kv).clean()).isTrue();
    } finally {
      e.close();
    }
  }

  /**
   * A crash with parts in the store: the verifier accepts them, the next open deletes them and
   * rebuilds the head from the head log, with nothing lost or doubled, and freezes write them
   * again.
   */
  @Test
  void recoveryDeletesPartsAndRebuildsFromTheHeadLog() {
    Engine e = open(4);
    List<String> want = new ArrayList<>();
    for (int i = 1; i <= 9; i++) {
      assertThat(append(e, SERIES, T0 + i * 15_000L, i)).isNull();
      want.add(i * 15 + "=" + (double) i);
      if (i % 4 == 0) {
        e.freezeNow();
      }
    }
    assertThat(headChunks(kv)).hasSize(2);
    e.abandon(); // a crash: the head is gone, the store keeps what was written
    VerifyReport v = StoreVerifier.verify(kv);
    assertThat(v.clean()).as(v.toString()).isTrue();
    e = open(4);
    try {
      assertThat(headChunks(kv)).isEmpty();
      assertThat(samples(e, SERIES)).containsExactlyElementsOf(want);
      // recovery froze 8 of them on the heap (every 4 in the stream); 3 more make 4 again
      for (int i = 10; i <= 12; i++) {
        assertThat(append(e, SERIES, T0 + i * 15_000L, i)).isNull();
        want.add(i * 15 + "=" + (double) i);
      }
      e.freezeNow(); // part 0: the heap part and the stream, all 12
      assertThat(headChunks(kv)).hasSize(1);
      assertThat(samples(e, SERIES)).containsExactlyElementsOf(want);
    } finally {
      e.close();
    }
    e = open(4);
    try {
      assertThat(samples(e, SERIES)).containsExactlyElementsOf(want);
    } finally {
      e.close();
    }
  }

  /** The verifier drops a HeadChunk record of an unknown series or one that does not decode. */
  @Test
  void verifierRepairsHeadChunkRecords() {
    Engine e = open(4);
    for (int i = 1; i <= 4; i++) {
      append(e, SERIES, T0 + i * 15_000L, i);
    }
    e.freezeNow();
    e.abandon();
    byte[] part = headChunks(kv).firstEntry().getValue();
    kv.write(
        new WriteBatch()
            .put(Keys.headChunk(BUCKET, 9, 0), part)
            .put(Keys.headChunk(BUCKET, 0, 1), new byte[] {0x01, 0x05}));
    VerifyReport v = StoreVerifier.verify(kv);
    assertThat(v.count(StoreProblem.Kind.HEAD_CHUNK_UNKNOWN_SERIES)).isEqualTo(1);
    assertThat(v.count(StoreProblem.Kind.UNDECODABLE_RECORD)).isEqualTo(1);
    RepairReport r = StoreVerifier.repair(kv);
    assertThat(r.count(RepairReport.Action.HEAD_CHUNKS_DELETED)).isEqualTo(1);
    assertThat(r.count(RepairReport.Action.RECORDS_DELETED)).isEqualTo(1);
    assertThat(StoreVerifier.verify(kv).clean()).isTrue();
    assertThat(headChunks(kv)).hasSize(1);
  }

  /**
   * At the hour boundary the old hour's copy of a series is frozen and written out as the series
   * moves on to the new hour, though its stream is short of the freeze size.
   */
  @Test
  void seriesMovingOnFreezeTheirOldHour() {
    Engine e = open(96);
    try {
      clock.advance(3_000_000);
      for (int i = 0; i < 20; i++) {
        assertThat(append(e, SERIES, T0 + 3_000_000 + i * 15_000L, i)).isNull();
      }
      e.freezeNow();
      assertThat(headChunks(kv)).isEmpty(); // 20 < 96
      clock.advance(3_600_000);
      assertThat(append(e, SERIES, T0 + 3_600_000 + 15_000, 20)).isNull();
      e.freezeNow();
      assertThat(headChunks(kv).keySet()).containsExactly(hex(Keys.headChunk(BUCKET, 0, 0)));
      assertThat(samples(e, SERIES)).hasSize(21);
    } finally {
      e.close();
    }
  }
}
