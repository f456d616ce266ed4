package dev.tidemark.tsdb.engine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.tidemark.tsdb.append.SampleBatch;
import dev.tidemark.tsdb.codec.BucketListValue;
import dev.tidemark.tsdb.codec.ChunkDecoder;
import dev.tidemark.tsdb.codec.ForwardIndexValue;
import dev.tidemark.tsdb.codec.InvertedIndexValue;
import dev.tidemark.tsdb.codec.Keys;
import dev.tidemark.tsdb.codec.RecordType;
import dev.tidemark.tsdb.codec.SeriesDictionaryValue;
import dev.tidemark.tsdb.codec.TimeBucket;
import dev.tidemark.tsdb.codec.TimeSeriesValue;
import dev.tidemark.tsdb.kv.InMemoryKvStore;
import dev.tidemark.tsdb.kv.KvCursor;
import dev.tidemark.tsdb.model.Labels;
import dev.tidemark.tsdb.model.MetricMetadata;
import dev.tidemark.tsdb.model.MetricType;
import dev.tidemark.tsdb.model.Temporality;
import dev.tidemark.tsdb.time.ManualClock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Golden vectors of the records a compaction writes (docs/format.md, "Coarse buckets"), checked
 * both ways: the engine's compaction of a fixed input gives exactly these bytes, and the bytes
 * decode to the buckets, series, postings and samples they stand for.
 *
 * <p>How they were produced: by this test's input run through {@code Compactor} at the commit that
 * added it, printed with {@link #dump}, and checked by hand against docs/format.md (keys with size
 * code 2 in the tag's low nibble, coarse ids dense in fingerprint order, the newest member's
 * ForwardIndex value, one decimal chunk per series, remapped postings).
 */
class CompactionGoldenTest {

  /** 2024-01-15T10:00Z, the docs' example bucket; also the start of a 2-hour bucket. */
  static final long T0 = 1_705_312_800_000L;

  static final String BEFORE_BUCKET_LIST = "01 f8 ae b1 01 01 34 af b1 01";

  /** Every key and value of the store after the compaction, but the schema record. */
  static final String AFTER =
      """
      01 10 = 02 f8 ae b1 01
      01 22 01 b1 ae f8 bd e6 ce 16 c9 dc 7b 8f 0b 34 b0 ae 43 04 e6 70 = 00 00 00 00
      01 22 01 b1 ae f8 c6 4a 09 04 56 7e 04 a5 9a 71 1e df 46 16 1a 92 = 01 00 00 00
      01 32 01 b1 ae f8 00 00 00 00 = 01 00 31 02 05 02 00 08 00 5f 5f 6e 61 6d 65 5f 5f 0e 00 72 65 71 75 65 73 74 73 5f 74 6f 74 61 6c 03 00 6a 6f 62 03 00 61 70 69
      01 32 01 b1 ae f8 00 00 00 01 = 00 00 01 00 02 00 08 00 5f 5f 6e 61 6d 65 5f 5f 02 00 75 70 03 00 6a 6f 62 03 00 61 70 69
      01 42 01 b1 ae f8 00 = 3a 30 00 00 01 00 00 00 00 00 01 00 10 00 00 00 00 00 01 00
      01 42 01 b1 ae f8 5f 5f 6e 61 6d 65 5f 5f 00 72 65 71 75 65 73 74 73 5f 74 6f 74 61 6c = 3a 30 00 00 01 00 00 00 00 00 00 00 10 00 00 00 00 00
      01 42 01 b1 ae f8 5f 5f 6e 61 6d 65 5f 5f 00 75 70 = 3a 30 00 00 01 00 00 00 00 00 00 00 10 00 00 00 01 00
      01 42 01 b1 ae f8 6a 6f 62 00 61 70 69 = 3a 30 00 00 01 00 00 00 00 00 01 00 10 00 00 00 00 00 01 00
      01 52 01 b1 ae f8 00 00 00 00 = 02 03 80 9a c1 e4 d0 31 01 00 02 c0 ee 6d 01 00 00 02
      01 52 01 b1 ae f8 00 00 00 01 = 02 01 a0 ee d3 e6 d0 31 01 00 02 00
      """;

  static final Labels REQ = Labels.of("__name__", "requests_total", "job", "api");
  static final Labels UP = Labels.of("__name__", "up", "job", "api");
  static final MetricMetadata SUM =
      new MetricMetadata(MetricType.SUM, "1", Temporality.CUMULATIVE, true);
  static final MetricMetadata GAUGE =
      new MetricMetadata(MetricType.GAUGE, "", Temporality.UNSPECIFIED, false);

  /**
   * requests_total{job="api"}: 1 at 10:00, 2 at 10:30, 3 at 11:00; up{job="api"}: 1 at 11:15. The
   * 10:00 bucket holds requests_total as id 0; the 11:00 bucket up as id 0 and requests_total as id
   * 1 (arrival order).
   */
  static InMemoryKvStore compactedStore() {
    ManualClock clock = new ManualClock(T0);
    EngineConfig config =
        EngineConfig.builder()
            .clock(clock)
            .retention(Duration.ofDays(3650))
            .retentionInterval(Duration.ZERO)
            .compactionInterval(Duration.ZERO)
            .compactionDelay(Duration.ZERO)
            .compactionLevels(List.of(Duration.ofHours(1), Duration.ofHours(2)))
            .build();
    InMemoryKvStore kv = new InMemoryKvStore();
    try (Engine e = Engine.open(kv, config)) {
      e.append(new SampleBatch().addPoint(REQ, SUM, T0, 1.0));
      clock.set(T0 + 1_800_000);
      e.append(new SampleBatch().addPoint(REQ, SUM, T0 + 1_800_000, 2.0));
      clock.set(T0 + 4_500_000);
      e.append(
          new SampleBatch()
              .addPoint(UP, GAUGE, T0 + 4_500_000, 1.0)
              .addPoint(REQ, SUM, T0 + 3_600_000, 3.0));
      clock.set(T0 + 3 * 3_600_000L);
      e.flush();
      assertThat(HexFormat.ofDelimiter(" ").formatHex(kv.get(Keys.bucketList())))
          .isEqualTo(BEFORE_BUCKET_LIST);
      assertThat(e.compactNow()).isEqualTo(1);
    }
    return kv;
  }

  static String dump(InMemoryKvStore kv) {
    StringBuilder sb = new StringBuilder();
    HexFormat hex = HexFormat.ofDelimiter(" ");
    try (KvCursor c = kv.scan(null, null)) {
      while (c.next()) {
        if (Keys.recordType(c.key()) != RecordType.SCHEMA) {
          sb.append(hex.formatHex(c.key()))
              .append(" = ")
              .append(hex.formatHex(c.value()))
              .append('\n');
        }
      }
    }
    return sb.toString();
  }

  @Test
  void compactionWritesTheGoldenRecords() {
    assertThat(dump(compactedStore())).isEqualTo(AFTER);
  }

  @Test
  void theGoldenRecordsDecode() {
    HexFormat hex = HexFormat.ofDelimiter(" ");
    TimeBucket twoHours = new TimeBucket(2, 28_421_880);
    List<String> lines = AFTER.lines().toList();
    byte[][] k = new byte[lines.size()][];
    byte[][] v = new byte[lines.size()][];
    for (int i = 0; i < lines.size(); i++) {
      String[] kv = lines.get(i).split(" = ");
      k[i] = hex.parseHex(kv[0]);
      v[i] = hex.parseHex(kv[1]);
    }
    assertThat(BucketListValue.decode(v[0])).containsExactly(twoHours);
    assertThat(BucketListValue.decode(hex.parseHex(BEFORE_BUCKET_LIST)))
        .containsExactly(new TimeBucket(1, 28_421_880), new TimeBucket(1, 28_421_940));
    for (int i = 1; i < k.length; i++) {
      assertThat(Keys.timeBucket(k[i])).isEqualTo(twoHours);
    }
    // the dictionary: requests_total (fingerprint bde6…) is id 0, up is id 1
    assertThat(k[1]).isEqualTo(Keys.seriesDictionary(twoHours, REQ));
    assertThat(SeriesDictionaryValue.decode(v[1])).containsExactly(0);
    assertThat(k[2]).isEqualTo(Keys.seriesDictionary(twoHours, UP));
    assertThat(SeriesDictionaryValue.decode(v[2])).containsExactly(1);
    assertThat(ForwardIndexValue.decode(v[3])).isEqualTo(new ForwardIndexValue(SUM, REQ));
    assertThat(ForwardIndexValue.decode(v[4])).isEqualTo(new ForwardIndexValue(GAUGE, UP));
    assertThat(Keys.invertedIndexLabel(k[5])).containsExactly("", "");
    assertThat(InvertedIndexValue.decode(v[5]).toArray()).containsExactly(0, 1);
    assertThat(Keys.invertedIndexLabel(k[6])).containsExactly("__name__", "requests_total");
    assertThat(InvertedIndexValue.decode(v[6]).toArray()).containsExactly(0);
    assertThat(Keys.invertedIndexLabel(k[7])).containsExactly("__name__", "up");
    assertThat(InvertedIndexValue.decode(v[7]).toArray()).containsExactly(1);
    assertThat(Keys.invertedIndexLabel(k[8])).containsExactly("job", "api");
    assertThat(InvertedIndexValue.decode(v[8]).toArray()).containsExactly(0, 1);
    assertThat(Keys.seriesId(k[9])).isZero();
    assertThat(samples(v[9]))
        .containsExactly(T0 + "=1.0", (T0 + 1_800_000) + "=2.0", (T0 + 3_600_000) + "=3.0");
    assertThat(v[9][0]).isEqualTo((byte) TimeSeriesValue.ENCODING_DECIMAL);
    assertThat(Keys.seriesId(k[10])).isEqualTo(1);
    assertThat(samples(v[10])).containsExactly((T0 + 4_500_000) + "=1.0");
  }

  private static List<String> samples(byte[] value) {
    List<String> out = new ArrayList<>();
    ChunkDecoder d = new TimeSeriesValue.Decoders().open(value);
    while (d.next()) {
      out.add(d.timestampMillis() + "=" + Double.longBitsToDouble(d.valueBits()));
    }
    return out;
  }
}
