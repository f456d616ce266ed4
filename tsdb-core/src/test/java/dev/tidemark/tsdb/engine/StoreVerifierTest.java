package dev.tidemark.tsdb.engine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.tidemark.tsdb.append.SampleBatch;
import dev.tidemark.tsdb.codec.BucketListValue;
import dev.tidemark.tsdb.codec.ForwardIndexValue;
import dev.tidemark.tsdb.codec.Keys;
import dev.tidemark.tsdb.codec.RecordType;
import dev.tidemark.tsdb.codec.TimeBucket;
import dev.tidemark.tsdb.engine.RepairReport.Action;
import dev.tidemark.tsdb.engine.StoreProblem.Kind;
import dev.tidemark.tsdb.kv.InMemoryKvStore;
import dev.tidemark.tsdb.kv.KvCursor;
import dev.tidemark.tsdb.kv.WriteBatch;
import dev.tidemark.tsdb.model.Labels;
import dev.tidemark.tsdb.model.MetricMetadata;
import dev.tidemark.tsdb.query.LabelMatcher;
import dev.tidemark.tsdb.query.SampleIterator;
import dev.tidemark.tsdb.query.Series;
import dev.tidemark.tsdb.time.ManualClock;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * {@link StoreVerifier} on the two kinds of damage of issue #9, made with direct KV writes into
 * stores the engine wrote: (a) postings naming a series without a ForwardIndex record, (b) buckets
 * with records missing from the BucketList; plus undecodable records, stray keys, head logs naming
 * unknown series and a missing schema. Each test checks that verify names the problems, that repair
 * leaves a store that verifies clean, and that the engine then opens and reads every readable
 * sample.
 */
class StoreVerifierTest {
  static final long HOUR = 3_600_000L;
  static final long MIN = 60_000L;
  static final long T0 = 1_700_000_000_000L - 1_700_000_000_000L % HOUR;
  static final TimeBucket B0 = TimeBucket.containing(T0, 1);
  static final TimeBucket B1 = B0.next();
  static final TimeBucket B2 = B1.next();

  final ManualClock clock = new ManualClock(T0 + 4 * HOUR);
  final InMemoryKvStore kv = new InMemoryKvStore();
  final EngineConfig config =
      EngineConfig.builder().clock(clock).retentionInterval(Duration.ZERO).build();

  static Labels job(int i) {
    return Labels.of("__name__", "up", "job", "j" + i);
  }

  /** Ten series, a sample every 10 minutes of hours 0 and 1 (value = job * 1000 + minute). */
  void writeTwoHours(Engine e) {
    for (long t = T0; t < T0 + 2 * HOUR; t += 10 * MIN) {
      SampleBatch b = new SampleBatch();
      for (int i = 0; i < 10; i++) {
        b.addPoint(job(i), MetricMetadata.UNKNOWN, t, i * 1000 + (t - T0) / MIN);
      }
      assertThat(e.append(b).rejectedPoints()).isZero();
    }
  }

  static Map<Labels, Map<Long, Long>> readAll(Engine e) {
    Map<Labels, Map<Long, Long>> out = new TreeMap<>();
    for (Series s :
        e.select(0, Long.MAX_VALUE, List.of(LabelMatcher.regex("__name__", ".+"))).toList()) {
      Map<Long, Long> samples = new TreeMap<>();
      SampleIterator it = s.iterator();
      while (it.next()) {
        samples.put(it.timestampMillis(), it.valueBits());
      }
      out.put(s.labels(), samples);
    }
    return out;
  }

  int idOf(TimeBucket b, Labels labels) {
    try (KvCursor c = kv.scanPrefix(Keys.bucketPrefix(RecordType.FORWARD_INDEX, b))) {
      while (c.next()) {
        if (ForwardIndexValue.decode(c.value()).labels().equals(labels)) {
          return Keys.seriesId(c.key());
        }
      }
    }
    throw new AssertionError(labels + " not in " + b);
  }

  void assertRepairedAndReadable(Map<Labels, Map<Long, Long>> expected) {
    RepairReport r = StoreVerifier.repair(kv);
    assertThat(r.refusal()).isNull();
    assertThat(r.after().clean()).as("after repair:\n%s", r.after().format()).isTrue();
    assertThat(StoreVerifier.verify(kv).clean()).isTrue();
    Engine e = Engine.open(kv, config);
    try {
      assertThat(readAll(e)).isEqualTo(expected);
    } finally {
      e.close();
    }
    assertThat(StoreVerifier.verify(kv).clean())
        .as("after the engine sealed what it replayed")
        .isTrue();
  }

  @Test
  void aCleanStoreVerifiesCleanAndRepairChangesNothing() {
    Engine e = Engine.open(kv, config);
    writeTwoHours(e);
    e.close();
    VerifyReport v = StoreVerifier.verify(kv);
    assertThat(v.clean()).as(v.format()).isTrue();
    assertThat(v.listedBuckets()).isEqualTo(2);
    assertThat(v.bucketsWithRecords()).isEqualTo(2);
    assertThat(v.format()).contains("no problems found");
    RepairReport r = StoreVerifier.repair(kv);
    assertThat(r.actions()).isEmpty();
    assertThat(r.formatActions()).contains("nothing to change");
    assertThat(StoreVerifier.verify(new InMemoryKvStore()).clean()).as("an empty store").isTrue();
  }

  @Test
  void postingsNamingASeriesWithoutForwardIndexRecordAreCleanedAndReadsWorkAgain() {
    Engine e = Engine.open(kv, config);
    writeTwoHours(e);
    e.close();
    Engine reader = Engine.open(kv, config);
    Map<Labels, Map<Long, Long>> before = readAll(reader);
    reader.abandon();
    // Damage (a): series j5 of hour 0 loses its ForwardIndex and dictionary records, as after
    // an append that failed after the head had assigned the id; postings and chunk remain.
    int id = idOf(B0, job(5));
    kv.write(
        new WriteBatch()
            .delete(Keys.forwardIndex(B0, id))
            .delete(Keys.seriesDictionary(B0, job(5))));

    Engine damaged = Engine.open(kv, config);
    // Reads skip the series that cannot be read and count it, instead of failing the selector.
    assertThat(damaged.select(T0, T0 + HOUR - 1, List.of(LabelMatcher.equal("job", "j5"))).toList())
        .isEmpty();
    assertThat(damaged.stats().unreadableRecords()).isEqualTo(1);
    damaged.abandon();

    VerifyReport v = StoreVerifier.verify(kv);
    assertThat(v.count(Kind.POSTING_UNKNOWN_SERIES))
        .as(v.format())
        .isEqualTo(3); // all, __name__, job
    assertThat(v.count(Kind.TIME_SERIES_UNKNOWN_SERIES)).isEqualTo(1);
    assertThat(v.counts().keySet())
        .containsOnly(Kind.POSTING_UNKNOWN_SERIES, Kind.TIME_SERIES_UNKNOWN_SERIES);
    assertThat(v.examples(Kind.POSTING_UNKNOWN_SERIES))
        .allSatisfy(
            p -> {
              assertThat(p.bucket()).isEqualTo(B0);
              assertThat(p.seriesId()).isEqualTo(id);
            });
    assertThat(v.format())
        .contains("posting names a series without a ForwardIndex record")
        .contains(StoreProblem.bucketName(B0) + " series " + id + ": posting job=\"j5\" names it")
        .contains("the all-series posting");

    Map<Labels, Map<Long, Long>> expected = new TreeMap<>(before);
    Map<Long, Long> j5 = new TreeMap<>(before.get(job(5)));
    j5.keySet().removeIf(t -> t < T0 + HOUR); // its hour-0 samples have no labels any more
    expected.put(job(5), j5);
    RepairReport r = StoreVerifier.repair(kv);
    assertThat(r.count(Action.TIME_SERIES_DELETED)).isEqualTo(1);
    assertThat(r.count(Action.SAMPLES_DROPPED)).isEqualTo(6);
    assertThat(r.count(Action.POSTINGS_DELETED)).as(r.formatActions()).isEqualTo(1); // job="j5"
    assertThat(r.count(Action.POSTINGS_WRITTEN)).isEqualTo(2); // all-series, __name__="up"
    assertThat(r.after().clean()).isTrue();
    assertRepairedAndReadable(expected);
  }

  @Test
  void bucketsMissingFromTheBucketListComeBackWithTheirHeadLog() {
    Engine e = Engine.open(kv, config);
    writeTwoHours(e);
    e.flush(); // hours 0 and 1 sealed
    SampleBatch b = new SampleBatch();
    for (int i = 0; i < 10; i++) {
      b.addPoint(job(i), MetricMetadata.UNKNOWN, T0 + 2 * HOUR + 5 * MIN, -i);
    }
    e.append(b);
    Map<Labels, Map<Long, Long>> expected = readAll(e);
    e.abandon(); // a crash: hour 2 is only in its head log
    // Damage (b): the BucketList forgot sealed hour 1 and open hour 2.
    kv.write(new WriteBatch().put(Keys.bucketList(), BucketListValue.encode(List.of(B0))));

    Engine blind = Engine.open(kv, config);
    assertThat(blind.buckets()).containsExactly(B0);
    assertThat(readAll(blind).get(job(3))).hasSize(6);
    blind.abandon();

    VerifyReport v = StoreVerifier.verify(kv);
    assertThat(v.counts()).containsOnlyKeys(Kind.BUCKET_NOT_LISTED);
    assertThat(v.count(Kind.BUCKET_NOT_LISTED)).isEqualTo(2);
    assertThat(v.listedBuckets()).isEqualTo(1);
    assertThat(v.bucketsWithRecords()).isEqualTo(3);
    assertThat(v.examples(Kind.BUCKET_NOT_LISTED))
        .extracting(StoreProblem::bucket)
        .containsExactly(B1, B2);
    assertThat(v.examples(Kind.BUCKET_NOT_LISTED).get(1).detail())
        .contains("10 series", "a head log to replay");

    RepairReport r = StoreVerifier.repair(kv);
    assertThat(r.actions()).containsExactly(Map.entry(Action.BUCKETS_LISTED, 2L));
    assertThat(BucketListValue.decode(kv.get(Keys.bucketList()))).containsExactly(B0, B1, B2);
    assertThat(expected.get(job(3))).hasSize(13);
    assertRepairedAndReadable(expected);
  }

  @Test
  void undecodableRecordsStrayKeysAndHeadLogSamplesOfUnknownSeriesAreDropped() {
    Engine e = Engine.open(kv, config);
    writeTwoHours(e);
    e.flush();
    SampleBatch b = new SampleBatch();
    for (int i = 0; i < 10; i++) {
      b.addPoint(job(i), MetricMetadata.UNKNOWN, T0 + 2 * HOUR + 5 * MIN, 100 + i);
    }
    e.append(b); // one head-log record naming all ten series of hour 2
    Map<Labels, Map<Long, Long>> expected = readAll(e);
    e.abandon();

    int j1 = idOf(B0, job(1));
    int j2 = idOf(B1, job(2));
    int j7 = idOf(B2, job(7));
    byte[] chunk = kv.get(Keys.timeSeries(B0, j1));
    kv.write(
        new WriteBatch()
            .put(Keys.timeSeries(B0, j1), Arrays.copyOf(chunk, chunk.length - 2)) // truncated chunk
            .put(Keys.forwardIndex(B1, j2), new byte[] {1, 2, 3}) // garbage labels
            .delete(Keys.forwardIndex(B2, j7)) // the head log names j7, now unknown
            .delete(Keys.invertedIndex(B1, "job", "j4")) // a lost posting of a sealed bucket
            .put(
                new byte[] {1, (byte) 0xA0, 9},
                new byte[] {1}) // unknown record type 10 (9: HeadChunk)
            .put(new byte[] {1, 0x31, 0, 0, 0, 7}, new byte[0])); // unaligned 1-hour bucket

    VerifyReport v = StoreVerifier.verify(kv);
    assertThat(v.count(Kind.UNDECODABLE_RECORD)).as(v.format()).isEqualTo(2);
    assertThat(v.count(Kind.STRAY_KEY)).isEqualTo(2);
    assertThat(v.count(Kind.HEAD_LOG_UNKNOWN_SERIES)).isEqualTo(1);
    assertThat(v.examples(Kind.HEAD_LOG_UNKNOWN_SERIES).get(0).detail())
        .contains("1 of 10 samples name series [" + j7 + "]");
    assertThat(v.count(Kind.DICTIONARY_UNKNOWN_SERIES)).isEqualTo(2); // j2 in hour 1, j7 in hour 2
    assertThat(v.count(Kind.SERIES_NOT_IN_POSTINGS)).isEqualTo(1); // j4 in hour 1
    assertThat(v.count(Kind.POSTING_UNKNOWN_SERIES)).isEqualTo(3); // j2's postings in hour 1
    assertThat(v.format()).contains("TimeSeries record 0151", "unknown record type");

    expected.get(job(1)).keySet().removeIf(t -> t < T0 + HOUR);
    expected.get(job(2)).keySet().removeIf(t -> t >= T0 + HOUR && t < T0 + 2 * HOUR);
    expected.get(job(7)).keySet().removeIf(t -> t >= T0 + 2 * HOUR);
    RepairReport r = StoreVerifier.repair(kv);
    assertThat(r.count(Action.HEAD_LOG_RECORDS_REWRITTEN)).isEqualTo(1);
    assertThat(r.count(Action.STRAY_KEYS_DELETED)).isEqualTo(2);
    assertThat(r.count(Action.RECORDS_DELETED)).isEqualTo(2);
    assertRepairedAndReadable(expected);
  }

  @Test
  void aStoreWithoutSchemaRecordIsReportedAndNotTouched() {
    Engine e = Engine.open(kv, config);
    writeTwoHours(e);
    e.close();
    kv.write(
        new WriteBatch()
            .delete(Keys.schema())
            .put(Keys.bucketList(), BucketListValue.encode(List.of())));
    RepairReport r = StoreVerifier.repair(kv);
    assertThat(r.refusal()).contains("no schema record");
    assertThat(r.before().count(Kind.SCHEMA)).isEqualTo(1);
    assertThat(r.before().count(Kind.BUCKET_NOT_LISTED)).isEqualTo(2);
    assertThat(r.clean()).isFalse();
    assertThat(r.formatActions()).contains("refused");
    assertThat(BucketListValue.decode(kv.get(Keys.bucketList()))).as("nothing written").isEmpty();
  }
}
