package dev.tidemark.tsdb.engine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.tidemark.tsdb.codec.ChunkDecoder;
import dev.tidemark.tsdb.codec.DecimalEncoder;
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
    return read(hs.capture());
  }

  /** Everything a reader sees through captured chunks, read now. */
  private static TreeMap<Long, Long> read(ChunkSource[] captured) {
    TreeMap<Long, Long> out = new TreeMap<>();
    List<Long> order = new ArrayList<>();
    ChunkIterator it = new ChunkIterator(Arrays.asList(captured), Long.MIN_VALUE, Long.MAX_VALUE);
    while (it.next()) {
      order.add(it.timestampMillis());
      out.put(it.timestampMillis(), it.valueBits());
    }
    assertThat(order).as("samples in time order, each once").isSorted().doesNotHaveDuplicates();
    return out;
  }

  private static TreeMap<Long, Long> sealed(HeadSeries hs) {
    TreeMap<Long, Long> out = new TreeMap<>();
    HeadSeries.Parts f = hs.copyParts();
    f.encode(new DecimalEncoder());
    ChunkDecoder d = new TimeSeriesValue.Decoders().open(f.encoded());
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
      HeadSeries.Parts pending = null; // captured, not yet completed: appends go on meanwhile
      // Readers' captures, read only after later appends, freezes and buffer growth: a head
      // stream is captured as a snapshot of its encoder and copied when a reader opens it.
      List<ChunkSource[]> captures = new ArrayList<>();
      List<TreeMap<Long, Long>> capturedModels = new ArrayList<>();
      for (int i = 0; i < 400; i++) {
        int op = rnd.nextInt(11);
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
        } else if (op < 9) {
          bytes += hs.freeze(scratch);
        } else if (pending == null) {
          pending = hs.copyParts();
          pending.encodeForHead(scratch);
        } else {
          bytes += hs.completeFreeze(pending);
          pending = null;
        }
        assertThat(hs.sampleCount()).isEqualTo(model.size());
        assertThat(hs.sampleBytes()).isEqualTo(bytes);
        if (!model.isEmpty()) {
          assertThat(hs.maxTimestamp()).isEqualTo(model.lastKey());
        }
        if (i % 37 == 0) {
          assertThat(read(hs)).as("seed %d step %d", seed, i).isEqualTo(model);
        }
        if (rnd.nextInt(20) == 0) {
          captures.add(hs.capture());
          capturedModels.add(new TreeMap<>(model));
        }
      }
      for (int c = 0; c < captures.size(); c++) {
        assertThat(read(captures.get(c)))
            .as("seed %d: capture %d read after everything since", seed, c)
            .isEqualTo(capturedModels.get(c));
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
    assertThat(hs.due(10)).isTrue();
    hs.freeze(scratch);
    assertThat(hs.inOrderCount()).isZero();
    hs.insert(T0 + 10_000, bits(99)); // an append that is then undone
    hs.truncateInOrder(0);
    assertThat(hs.sampleCount()).isEqualTo(10);
    assertThat(hs.maxTimestamp()).isEqualTo(T0 + 9000);
    // a retry of the last frozen sample is the same sample, another value a conflict
    assertThat(hs.check(T0 + 9000, bits(9))).isEqualTo(HeadSeries.SAME);
    assertThat(hs.check(T0 + 9000, bits(8))).isEqualTo(HeadSeries.CONFLICT);
    assertThat(hs.check(T0 + 10_000, bits(99))).isEqualTo(HeadSeries.NEW);
  }

  @Test
  void dueOnceTheStreamHoldsTheFreezeLength() {
    HeadSeries hs = series();
    for (int i = 0; i < 5; i++) {
      hs.insert(T0 + i * 1000L, bits(i));
    }
    assertThat(hs.due(6)).isFalse();
    assertThat(hs.due(0)).as("0: never").isFalse();
    hs.insert(T0 + 5000, bits(5));
    assertThat(hs.due(6)).isTrue();
    hs.freeze(scratch);
    assertThat(hs.due(6)).isFalse();
    assertThat(hs.inOrderCount()).isZero();
    assertThat(hs.sampleCount()).isEqualTo(6);
  }

  @Test
  void aFreezeCompletedAfterLaterAppendsKeepsThemInTheStream() {
    HeadSeries hs = series();
    TreeMap<Long, Long> model = new TreeMap<>();
    for (int i = 0; i < 8; i++) {
      hs.insert(T0 + i * 1000L, bits(i * 1.5));
      model.put(T0 + i * 1000L, bits(i * 1.5));
    }
    HeadSeries.Parts f = hs.copyParts();
    f.encode(scratch);
    for (int i = 8; i < 11; i++) { // appended between the capture and the swap
      hs.insert(T0 + i * 1000L, bits(i * 1.5));
      model.put(T0 + i * 1000L, bits(i * 1.5));
    }
    long before = hs.sampleBytes();
    long delta = hs.completeFreeze(f);
    assertThat(hs.sampleBytes()).isEqualTo(before + delta);
    assertThat(hs.inOrderCount()).isEqualTo(3);
    assertThat(read(hs)).isEqualTo(model);
    assertThat(sealed(hs)).isEqualTo(model);
    // an append after the swap that is undone cuts only its own sample
    hs.insert(T0 + 11_000, bits(99));
    hs.truncateInOrder(3);
    assertThat(read(hs)).isEqualTo(model);
    assertThat(hs.check(T0 + 10_000, bits(15))).isEqualTo(HeadSeries.SAME);
    assertThat(hs.completeFreeze(f)).as("a capture applies once").isZero();
  }

  @Test
  void aFreezeIsDroppedWhenALateSampleArrivedSinceItsCapture() {
    HeadSeries hs = series();
    for (int i = 0; i < 8; i++) {
      hs.insert(T0 + i * 2000L, bits(i));
    }
    HeadSeries.Parts f = hs.copyParts();
    f.encode(scratch);
    hs.insert(T0 + 3000, bits(42)); // late: not in the capture
    long before = hs.sampleBytes();
    assertThat(hs.completeFreeze(f)).isZero();
    assertThat(hs.sampleBytes()).isEqualTo(before);
    assertThat(hs.inOrderCount()).isEqualTo(8);
    assertThat(hs.sampleCount()).isEqualTo(9);
    assertThat(hs.check(T0 + 3000, bits(42))).isEqualTo(HeadSeries.SAME);
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
