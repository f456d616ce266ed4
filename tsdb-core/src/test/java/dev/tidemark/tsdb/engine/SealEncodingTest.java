package dev.tidemark.tsdb.engine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.tidemark.tsdb.append.SampleBatch;
import dev.tidemark.tsdb.codec.DecimalEncoder;
import dev.tidemark.tsdb.codec.ForwardIndexValue;
import dev.tidemark.tsdb.codec.GorillaEncoder;
import dev.tidemark.tsdb.codec.Keys;
import dev.tidemark.tsdb.codec.RecordType;
import dev.tidemark.tsdb.codec.TimeBucket;
import dev.tidemark.tsdb.codec.TimeSeriesValue;
import dev.tidemark.tsdb.kv.InMemoryKvStore;
import dev.tidemark.tsdb.kv.KvCursor;
import dev.tidemark.tsdb.model.Labels;
import dev.tidemark.tsdb.query.LabelMatcher;
import dev.tidemark.tsdb.query.SampleIterator;
import dev.tidemark.tsdb.query.Series;
import dev.tidemark.tsdb.time.ManualClock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * Sealing writes each chunk in the smaller TimeSeries encoding (Gorilla {@code 0x01} on a tie or
 * when it wins, decimal {@code 0x02} otherwise), and every read path (queries, reopening a sealed
 * bucket, deletes, verify) reads both.
 */
class SealEncodingTest {
  static final long T0 = EngineTest.T0;
  static final Labels RANDOM = Labels.of("__name__", "huge_noisy", "job", "a");
  static final Labels GAUGE = Labels.of("__name__", "temperature", "job", "a");
  static final long SEED = Long.getLong("tidemark.seed", 0x5EA1L);

  final ManualClock clock = new ManualClock(T0 + 30 * EngineTest.MIN);
  final InMemoryKvStore kv = new InMemoryKvStore();
  final TreeMap<Labels, Map<Long, Long>> model =
      new TreeMap<>((a, b) -> a.toString().compareTo(b.toString()));

  private Engine open() {
    return Engine.open(
        kv, EngineConfig.builder().clock(clock).retentionInterval(Duration.ZERO).build());
  }

  private void append(Engine engine, Labels l, long t, long bits) {
    SampleBatch b = new SampleBatch().add(l, EngineTest.GAUGE, t, Double.longBitsToDouble(bits));
    b.endPoint();
    assertThat(engine.append(b).rejectedPoints()).isZero();
    model.computeIfAbsent(l, x -> new TreeMap<>()).put(t, bits);
  }

  /** Encoding id of each series' TimeSeries record in the bucket of T0. */
  private Map<Labels, Integer> encodings() {
    TimeBucket b = TimeBucket.containing(T0, EngineConfig.BUCKET_SIZE_CODE);
    Map<Integer, Labels> byId = new TreeMap<>();
    try (KvCursor c = kv.scanPrefix(Keys.bucketPrefix(RecordType.FORWARD_INDEX, b))) {
      while (c.next()) {
        byId.put(Keys.seriesId(c.key()), ForwardIndexValue.decode(c.value()).labels());
      }
    }
    Map<Labels, Integer> out = new TreeMap<>((x, y) -> x.toString().compareTo(y.toString()));
    try (KvCursor c = kv.scanPrefix(Keys.bucketPrefix(RecordType.TIME_SERIES, b))) {
      while (c.next()) {
        out.put(byId.get(Keys.seriesId(c.key())), c.value()[0] & 0xFF);
      }
    }
    return out;
  }

  private void assertReadsTheModel(Engine engine, String msg) {
    Map<Labels, Map<Long, Long>> actual = new TreeMap<>(model.comparator());
    for (Series s : engine.select(0, Long.MAX_VALUE / 2, List.of()).toList()) {
      SampleIterator it = s.iterator();
      Map<Long, Long> samples = new TreeMap<>();
      while (it.next()) {
        samples.put(it.timestampMillis(), it.valueBits());
      }
      actual.put(s.labels(), samples);
    }
    assertThat(actual).as(msg).isEqualTo(model);
  }

  /**
   * Where Gorilla wins: doubles beyond the {@code long} range (about 1.2e21) that differ only in
   * their low 16 mantissa bits. Gorilla codes them in a narrow XOR window (~20-30 bits); for the
   * decimal chunk no exponent fits, so every one is a 9-byte exception. (Decimal-looking or slowly
   * changing full-precision data is no such case: 1 + tiny noise has 16 digits and small integer
   * deltas at e = 16, and fully random bits cost about 9 bytes a sample either way.)
   */
  static long noisy(SplittableRandom rnd) {
    return Double.doubleToRawLongBits(0x1p70) | (rnd.nextLong() & 0xFFFF);
  }

  @Test
  void sealPicksTheSmallerEncodingAndEveryReadPathReadsBoth() {
    SplittableRandom rnd = new SplittableRandom(SEED);
    try (Engine engine = open()) {
      long centi = 2317;
      for (int i = 0; i < 120; i++) {
        long t = T0 + i * 15_000L + rnd.nextInt(-3, 4) + 5;
        append(engine, RANDOM, t, noisy(rnd));
        centi += rnd.nextInt(-5, 6);
        append(engine, GAUGE, t, Double.doubleToRawLongBits(centi / 100.0));
      }
      append(engine, GAUGE, T0 + 120 * 15_000L, SampleBatch.STALE_NAN_BITS);
      engine.flush();
      assertThat(encodings())
          .as("seed " + SEED)
          .containsEntry(RANDOM, TimeSeriesValue.ENCODING_GORILLA)
          .containsEntry(GAUGE, TimeSeriesValue.ENCODING_DECIMAL);
      assertReadsTheModel(engine, "sealed, seed " + SEED);

      // reopen the sealed bucket (it is read back into the head), add, seal again
      append(engine, GAUGE, T0 + 121 * 15_000L, Double.doubleToRawLongBits(1.5));
      append(engine, RANDOM, T0 + 2, noisy(rnd));
      assertReadsTheModel(engine, "reopened, seed " + SEED);
      engine.flush();
      assertThat(encodings()).containsEntry(GAUGE, TimeSeriesValue.ENCODING_DECIMAL);
      assertReadsTheModel(engine, "sealed again, seed " + SEED);

      // a delete rewrites the decimal chunk
      engine.deleteSeries(
          T0, T0 + 10 * 15_000L - 1000, List.of(LabelMatcher.equal("__name__", "temperature")));
      model.get(GAUGE).keySet().removeIf(t -> t < T0 + 10 * 15_000L - 1000);
      assertReadsTheModel(engine, "after delete, seed " + SEED);
      assertThat(encodings()).containsEntry(GAUGE, TimeSeriesValue.ENCODING_DECIMAL);
    }
    // a restart reads the store as written
    try (Engine engine = open()) {
      assertReadsTheModel(engine, "restarted, seed " + SEED);
    }
    VerifyReport report = StoreVerifier.verify(kv);
    assertThat(report.counts()).as("verify").isEmpty();
    assertThat(report.clean()).isTrue();
  }

  @Test
  void encodeSmallestKeepsGorillaOnATieAndWhenItWins() {
    GorillaEncoder empty = new GorillaEncoder();
    DecimalEncoder scratch = new DecimalEncoder();
    assertThat(TimeSeriesValue.encodeSmallest(empty, scratch)).containsExactly(0x01, 0x00);

    SplittableRandom rnd = new SplittableRandom(SEED);
    GorillaEncoder random = new GorillaEncoder();
    GorillaEncoder decimal = new GorillaEncoder();
    for (int i = 0; i < 240; i++) {
      random.append(T0 + 15_000L * i, noisy(rnd));
      decimal.append(T0 + 15_000L * i, Double.doubleToRawLongBits(i / 4.0));
    }
    byte[] r = TimeSeriesValue.encodeSmallest(random, scratch);
    assertThat(r[0]).isEqualTo((byte) 0x01);
    assertThat(r).hasSize(1 + random.encodedSizeBytes());
    byte[] d = TimeSeriesValue.encodeSmallest(decimal, scratch);
    assertThat(d[0]).isEqualTo((byte) 0x02);
    assertThat(d.length).isLessThan(decimal.encodedSizeBytes() / 10);
    List<Long> back = new ArrayList<>();
    var dec = new TimeSeriesValue.Decoders().open(d);
    while (dec.next()) {
      back.add(dec.valueBits());
    }
    assertThat(back).hasSize(240).element(239).isEqualTo(Double.doubleToRawLongBits(239 / 4.0));
  }
}
