package dev.tidemark.tsdb.engine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.tidemark.tsdb.codec.DecimalEncoder;
import dev.tidemark.tsdb.codec.GorillaDecoder;
import dev.tidemark.tsdb.codec.GorillaEncoder;
import dev.tidemark.tsdb.codec.TimeBucket;
import dev.tidemark.tsdb.codec.TimeSeriesValue;
import dev.tidemark.tsdb.model.Labels;
import dev.tidemark.tsdb.model.MetricMetadata;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/** A head series with a frozen part against a sorted map of what was inserted. */
class HeadSeriesTest {
  private static final long T0 = 1_700_000_000_000L / 3_600_000L * 3_600_000L;
  private final DecimalEncoder scratch = new DecimalEncoder();

  private static HeadSeries series() {
    return new HeadSeries(
        new HeadBucket(TimeBucket.containing(T0, TimeBucket.ONE_HOUR)),
        Labels.of("__name__", "m"),
        MetricMetadata.UNKNOWN,
        0);
  }

  private static long bits(double v) {
    return Double.doubleToRawLongBits(v);
  }

  /** Everything a reader sees, through the chunks {@link HeadSeries#capture()} gives. */
  private static TreeMap<Long, Long> read(HeadSeries hs) {
    TreeMap<Long, Long> out = new TreeMap<>();
    List<Long> order = new ArrayList<>();
    ChunkIterator it =
        new ChunkIterator(Arrays.asList(hs.capture()), Long.MIN_VALUE, Long.MAX_VALUE);
    while (it.next()) {
      order.add(it.timestampMillis());
      out.put(it.timestampMillis(), it.valueBits());
    }
    assertThat(order).as("samples in time order, each once").isSorted().doesNotHaveDuplicates();
    return out;
  }

  private static TreeMap<Long, Long> sealed(HeadSeries hs) {
    TreeMap<Long, Long> out = new TreeMap<>();
    GorillaEncoder e = hs.sealedChunk();
    byte[] b = e.toByteArray();
    GorillaDecoder d = new GorillaDecoder();
    d.reset(b, 0, b.length);
    long last = Long.MIN_VALUE;
    while (d.next()) {
      assertThat(d.timestampMillis()).isGreaterThan(last);
      last = d.timestampMillis();
      out.put(d.timestampMillis(), d.valueBits());
    }
    return out;
  }

  @Test
  void randomInsertsLateSamplesAndFreezesReadAndSealAsInserted() {
    for (long seed = 1; seed <= 30; seed++) {
      SplittableRandom rnd = new SplittableRandom(seed);
      HeadSeries hs = series();
      TreeMap<Long, Long> model = new TreeMap<>();
      long bytes = hs.sampleBytes(); // an empty stream is one byte (its count)
      long t = T0;
      for (int i = 0; i < 400; i++) {
        int op = rnd.nextInt(10);
        if (op < 6) {
          t += 15_000 + rnd.nextInt(-50, 50);
          long v = bits(rnd.nextInt(10_000) / 100.0);
          assertThat(hs.check(t, v)).isEqualTo(HeadSeries.NEW);
          bytes += hs.insert(t, v);
          model.put(t, v);
        } else if (op < 8) { // late, maybe on an existing timestamp
          long lt = T0 + rnd.nextLong(Math.max(1, t - T0));
          long v = bits(rnd.nextInt(100));
          int c = hs.check(lt, v);
          Long had = model.get(lt);
          assertThat(c)
              .as("seed %d: %d", seed, lt)
              .isEqualTo(
                  had == null ? HeadSeries.NEW : had == v ? HeadSeries.SAME : HeadSeries.CONFLICT);
          if (c == HeadSeries.NEW) {
            bytes += hs.insert(lt, v);
            model.put(lt, v);
          }
        } else {
          bytes += hs.freeze(scratch);
        }
        assertThat(hs.count()).isEqualTo(model.size());
        assertThat(hs.sampleBytes()).isEqualTo(bytes);
        if (!model.isEmpty()) {
          assertThat(hs.maxTimestamp()).isEqualTo(model.lastKey());
        }
        if (i % 37 == 0) {
          assertThat(read(hs)).as("seed %d step %d", seed, i).isEqualTo(model);
        }
      }
      assertThat(read(hs)).isEqualTo(model);
      assertThat(sealed(hs)).isEqualTo(model);
    }
  }

  @Test
  void anUndoneAppendAfterAFreezeLeavesTheFrozenLastSampleAsTheNewest() {
    HeadSeries hs = series();
    for (int i = 0; i < 10; i++) {
      hs.insert(T0 + i * 1000L, bits(i));
    }
    hs.freezeIfDue(1, 10, scratch);
    assertThat(hs.inOrderCount()).isZero();
    hs.insert(T0 + 10_000, bits(99)); // an append that is then undone
    hs.truncateInOrder(0);
    assertThat(hs.count()).isEqualTo(10);
    assertThat(hs.maxTimestamp()).isEqualTo(T0 + 9000);
    // a retry of the last frozen sample is the same sample, another value a conflict
    assertThat(hs.check(T0 + 9000, bits(9))).isEqualTo(HeadSeries.SAME);
    assertThat(hs.check(T0 + 9000, bits(8))).isEqualTo(HeadSeries.CONFLICT);
    assertThat(hs.check(T0 + 10_000, bits(99))).isEqualTo(HeadSeries.NEW);
  }

  @Test
  void freezesOnlyAtAnAppendsFirstTouchAndOnlyWhenDue() {
    HeadSeries hs = series(); // id 0: due at 6 - 6/6 = 5 samples
    for (int i = 0; i < 4; i++) {
      hs.insert(T0 + i * 1000L, bits(i));
    }
    assertThat(hs.freezeIfDue(1, 6, scratch)).isZero(); // not due
    assertThat(hs.inOrderCount()).isEqualTo(4);
    hs.insert(T0 + 4000, bits(4));
    assertThat(hs.freezeIfDue(1, 6, scratch)).isZero(); // same append: never
    assertThat(hs.inOrderCount()).isEqualTo(5);
    hs.freezeIfDue(2, 6, scratch);
    assertThat(hs.inOrderCount()).isZero();
    assertThat(hs.count()).isEqualTo(5);
  }

  @Test
  void seriesWrittenTogetherFreezeAtDifferentLengths() {
    // 96 give or take a sixth, by id: 80..112, so one request's thousands of series spread their
    // re-encoding over many appends
    java.util.Set<Integer> lengths = new java.util.TreeSet<>();
    for (int id = 0; id < 100; id++) {
      HeadSeries hs =
          new HeadSeries(
              new HeadBucket(TimeBucket.containing(T0, TimeBucket.ONE_HOUR)),
              Labels.of("__name__", "m" + id),
              MetricMetadata.UNKNOWN,
              id);
      int n = 0;
      while (hs.inOrderCount() == n) {
        hs.freezeIfDue(n + 1, 96, scratch);
        if (hs.inOrderCount() == 0 && n > 0) {
          break;
        }
        hs.insert(T0 + n * 1000L, bits(n));
        n++;
      }
      lengths.add(n);
    }
    assertThat(lengths).hasSize(33);
    assertThat(lengths).first().isEqualTo(80);
    assertThat(lengths).last().isEqualTo(112);
  }

  @Test
  void decimalLookingValuesTakeLessMemoryOnceFrozen() {
    HeadSeries hs = series();
    SplittableRandom rnd = new SplittableRandom(5);
    for (int i = 0; i < 240; i++) {
      hs.insert(T0 + i * 15_000L + rnd.nextInt(-25, 25), bits(rnd.nextInt(100_000) / 100.0));
    }
    long gorilla = hs.sampleBytes();
    hs.freeze(scratch);
    assertThat(hs.sampleBytes()).isLessThan(gorilla / 2);
    assertThat(hs.capture()).hasSize(1);
    assertThat(hs.capture()[0].encoding()).isEqualTo(TimeSeriesValue.ENCODING_DECIMAL);
  }
}
