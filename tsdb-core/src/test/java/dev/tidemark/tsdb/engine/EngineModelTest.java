package dev.tidemark.tsdb.engine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.tidemark.tsdb.append.AppendResult;
import dev.tidemark.tsdb.append.RejectReason;
import dev.tidemark.tsdb.append.SampleBatch;
import dev.tidemark.tsdb.kv.InMemoryKvStore;
import dev.tidemark.tsdb.model.CounterResetHint;
import dev.tidemark.tsdb.model.FloatHistogram;
import dev.tidemark.tsdb.model.HistogramLayout;
import dev.tidemark.tsdb.model.IntegerHistogram;
import dev.tidemark.tsdb.model.Labels;
import dev.tidemark.tsdb.model.MetricMetadata;
import dev.tidemark.tsdb.model.MetricType;
import dev.tidemark.tsdb.model.NativeHistogram;
import dev.tidemark.tsdb.model.Temporality;
import dev.tidemark.tsdb.query.HistogramIterator;
import dev.tidemark.tsdb.query.LabelMatcher;
import dev.tidemark.tsdb.query.SampleIterator;
import dev.tidemark.tsdb.query.Series;
import dev.tidemark.tsdb.time.ManualClock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.TreeMap;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The engine against {@link ReferenceModel} under seeded random workloads: thousands of series,
 * late, duplicate, future and too-old samples, multi-sample points, flushes, clean restarts, crash
 * restarts (the head recovered from its log) and retention. Every select, label-names and
 * label-values answer must equal the model's, and so must every per-point outcome.
 */
class EngineModelTest {

  private static final long HOUR = 3_600_000L;
  private static final MetricMetadata META =
      new MetricMetadata(MetricType.GAUGE, "", Temporality.UNSPECIFIED, false);
  private static final long[] SPECIAL_BITS = {
    SampleBatch.STALE_NAN_BITS,
    0x7ff8000000000001L,
    Double.doubleToRawLongBits(-0.0),
    Double.doubleToRawLongBits(Double.POSITIVE_INFINITY),
    0x7ff8dead0000beefL,
    1L
  };

  /**
   * The native histograms of the workloads (issue #25): integer and float counts, exponential and
   * custom buckets, layouts that change, a NaN sum, the stale marker; a few, so that retries and
   * conflicts at one timestamp are common.
   */
  static final NativeHistogram[] HISTOGRAMS = {
    IntegerHistogram.of(
        HistogramLayout.exponential(0, 1e-128, new int[] {0, 2}, null),
        CounterResetHint.UNKNOWN,
        5,
        1,
        12.5,
        new long[] {1, 2},
        null),
    IntegerHistogram.of(
        HistogramLayout.exponential(0, 1e-128, new int[] {0, 2}, null),
        CounterResetHint.NOT_COUNTER_RESET,
        9,
        1,
        20.25,
        new long[] {3, 2},
        null),
    IntegerHistogram.of(
        HistogramLayout.exponential(3, 0.001, new int[] {-2, 1, 3, 3}, new int[] {1, 1}),
        CounterResetHint.COUNTER_RESET,
        12,
        0,
        -3.0,
        new long[] {2, -1, 0, 3},
        new long[] {4}),
    FloatHistogram.of(
        HistogramLayout.custom(new int[] {0, 3}, new double[] {0.1, 1, 10}),
        CounterResetHint.GAUGE,
        6.5,
        0,
        7.25,
        new double[] {1, 0.5, 5},
        null),
    FloatHistogram.of(
        HistogramLayout.exponential(-4, 0, null, null),
        CounterResetHint.UNKNOWN,
        2,
        2,
        Double.NaN,
        null,
        null),
    IntegerHistogram.ofBits(
        HistogramLayout.exponential(0, 1e-128, null, null),
        CounterResetHint.UNKNOWN,
        NativeHistogram.STALE_SUM_BITS,
        0,
        NativeHistogram.STALE_SUM_BITS,
        new long[0],
        new long[0])
  };

  @ParameterizedTest
  @ValueSource(longs = {1L, 2L, 3L, 42L})
  void engineMatchesReferenceModel(long baseSeed) {
    engineMatchesReferenceModel(baseSeed, EngineConfig.DEFAULT_HEAD_FREEZE_SAMPLES, false);
  }

  /**
   * The same with head series frozen after every two samples, so that reads, late samples, seals,
   * reopens and recovery meet frozen parts all the time.
   */
  @ParameterizedTest
  @ValueSource(longs = {1L, 2L, 3L, 42L})
  void engineMatchesReferenceModelWithHeadSeriesFrozenOften(long baseSeed) {
    engineMatchesReferenceModel(baseSeed, 2, false);
  }

  /**
   * The same with a freeze pass after every step (issue #22, item 5): every head series with three
   * samples in its stream has its frozen parts in the store as HeadChunk records, so reads, late
   * samples (checked against the stored parts), seals, reopens, crash restarts, retention and
   * deletes always meet parts in the store. After a flush or an open no HeadChunk record is left.
   */
  @ParameterizedTest
  @ValueSource(longs = {1L, 2L, 3L, 42L})
  void engineMatchesReferenceModelWithFrozenPartsInTheStore(long baseSeed) {
    engineMatchesReferenceModel(baseSeed, 3, true);
  }

  private static long headChunkRecords(InMemoryKvStore kv) {
    byte[][] range = dev.tidemark.tsdb.codec.Keys.headChunkRange();
    long n = 0;
    try (dev.tidemark.tsdb.kv.KvCursor c = kv.scan(range[0], range[1])) {
      while (c.next()) {
        n++;
      }
    }
    return n;
  }

  private void engineMatchesReferenceModel(
      long baseSeed, int headFreezeSamples, boolean freezeEachStep) {
    long seed = Long.getLong("tidemark.seed", baseSeed);
    SplittableRandom rnd = new SplittableRandom(seed);
    long start = 1_700_000_000_000L;
    ManualClock clock = new ManualClock(start);
    EngineConfig config =
        EngineConfig.builder()
            .clock(clock)
            .outOfOrderWindow(Duration.ofMinutes(30))
            .retention(Duration.ofHours(6))
            .retentionInterval(Duration.ZERO)
            .compactionInterval(Duration.ZERO) // deterministic: CompactionTest runs compactions
            .headFreezeSamples(headFreezeSamples)
            .build();
    InMemoryKvStore kv = new InMemoryKvStore();
    Engine engine = Engine.open(kv, config);
    ReferenceModel model = new ReferenceModel(config);

    Labels[] series = testSeries();
    long partsSeen = 0;

    try {
      for (int step = 0; step < 60; step++) {
        String where = "seed " + seed + " step " + step;
        int op = rnd.nextInt(100);
        if (op < 70) {
          SampleBatch batch = randomBatch(rnd, series, model, clock.millis());
          AppendResult r = engine.append(batch);
          RejectReason[] want = model.append(batch, clock.millis());
          RejectReason[] got = new RejectReason[r.pointCount()];
          for (int p = 0; p < got.length; p++) {
            got[p] = r.pointReason(p);
          }
          StringBuilder diff = new StringBuilder();
          for (int p = 0; p < got.length; p++) {
            if (got[p] != want[p]) {
              int first = 0;
              while (batch.pointOf(first) != p) {
                first++;
              }
              diff.append("\n point ")
                  .append(p)
                  .append(": engine ")
                  .append(got[p])
                  .append(", model ")
                  .append(want[p])
                  .append(", first sample ")
                  .append(batch.labels(first))
                  .append(" @")
                  .append(batch.timestampMillis(first))
                  .append(" now ")
                  .append(clock.millis());
              for (int k = first; k < batch.size() && batch.pointOf(k) == p; k++) {
                TreeMap<Long, Long> ms = model.data.get(batch.labels(k));
                diff.append("\n   sample ")
                    .append(batch.labels(k))
                    .append(" @")
                    .append(batch.timestampMillis(k))
                    .append(" model max ")
                    .append(ms == null ? "none" : ms.lastKey() + " n=" + ms.size());
              }
            }
          }
          assertThat(diff.toString()).as(where).isEmpty();
        } else if (op < 80) {
          clock.advance(rnd.nextLong(60_000, 50 * 60_000));
        } else if (op < 84) {
          engine.flush();
          if (freezeEachStep) {
            assertThat(headChunkRecords(kv)).as(where + " parts after a flush").isZero();
          }
        } else if (op < 88) {
          engine.close();
          engine = Engine.open(kv, config);
          if (freezeEachStep) {
            assertThat(headChunkRecords(kv)).as(where + " parts after an open").isZero();
          }
        } else if (op < 92) {
          engine.abandon();
          engine = Engine.open(kv, config);
          if (freezeEachStep) {
            assertThat(headChunkRecords(kv)).as(where + " parts after a crash").isZero();
          }
        } else if (op < 97) {
          engine.applyRetention();
          model.applyRetention(clock.millis());
        } else {
          long maxT = clock.millis() - rnd.nextLong(0, 3 * HOUR);
          long minT = maxT - rnd.nextLong(0, 2 * HOUR);
          List<LabelMatcher> matchers = randomMatchers(rnd);
          engine.deleteSeries(minT, maxT, matchers);
          model.delete(minT, maxT, matchers);
        }
        if (freezeEachStep) {
          engine.freezeNow();
          partsSeen = Math.max(partsSeen, headChunkRecords(kv));
        }
        compare(engine, model, rnd, clock.millis(), where);
      }
      if (freezeEachStep) {
        assertThat(partsSeen).as("seed " + seed + ": parts in the store at some step").isPositive();
      }
      engine.flush();
      long histogramSamples = 0;
      long histogramRecords = 0;
      for (Series s : engine.select(0, Long.MAX_VALUE / 2, List.of()).toList()) {
        for (HistogramIterator it = s.histogramIterator(); it.next(); ) {
          histogramSamples++;
        }
      }
      try (dev.tidemark.tsdb.kv.KvCursor c = kv.scan(new byte[] {0}, new byte[] {(byte) 0xff})) {
        while (c.next()) {
          byte[] v = c.value();
          if (c.key().length > 1
              && (c.key()[1] & 0xF0) == 0x50 // TimeSeries: 01 5s <bucket> <id>
              && v.length > 0
              && v[0] == 0x03) {
            histogramRecords++;
          }
        }
      }
      assertThat(histogramSamples).as("seed " + seed + ": histogram samples read").isPositive();
      assertThat(histogramRecords).as("seed " + seed + ": 0x03 records sealed").isPositive();
    } finally {
      engine.close();
    }
  }

  /** 2,000 series over 8 metric names with a few optional labels; shared with the fault test. */
  static Labels[] testSeries() {
    Labels[] series = new Labels[2000];
    for (int i = 0; i < series.length; i++) {
      Labels.Builder b =
          Labels.builder()
              .add(Labels.METRIC_NAME, "m" + (i % 7))
              .add("job", "job" + (i % 3))
              .add("instance", "host-" + (i % 101));
      if (i % 5 == 0) {
        b.add("le", Integer.toString(i % 11));
      }
      if (i % 13 == 0) {
        b.add("zone", i % 2 == 0 ? "eu" : "us");
      }
      series[i] = b.build();
    }
    return series;
  }

  static SampleBatch randomBatch(
      SplittableRandom rnd, Labels[] series, ReferenceModel model, long now) {
    return randomBatch(rnd, series, model, now, true);
  }

  /**
   * A random batch; with {@code mixKinds} a series now and then takes a sample of its other kind
   * (float or histogram), else each series keeps one kind, so that a compaction is never held back
   * by a series of both kinds ({@code Compactor.MixedKinds}).
   */
  static SampleBatch randomBatch(
      SplittableRandom rnd, Labels[] series, ReferenceModel model, long now, boolean mixKinds) {
    SampleBatch batch = new SampleBatch();
    int points = 1 + rnd.nextInt(400);
    for (int p = 0; p < points; p++) {
      int perPoint = rnd.nextInt(10) == 0 ? 1 + rnd.nextInt(4) : 1;
      int first = rnd.nextInt(series.length);
      for (int j = 0; j < perPoint; j++) {
        Labels l = series[(first + j * 17) % series.length];
        long t;
        int kind = rnd.nextInt(100);
        TreeMap<Long, Long> existing = model.data.get(l);
        if (kind < 70) {
          t = now - rnd.nextLong(0, 120_000);
        } else if (kind < 80) {
          t = now - rnd.nextLong(0, 3 * HOUR); // often late, sometimes beyond the window
        } else if (kind < 90 && existing != null && !existing.isEmpty()) {
          t = existing.lastKey() - rnd.nextLong(0, 5) * 1000; // retries and duplicates
        } else if (kind < 94) {
          t = now + rnd.nextLong(0, 20 * 60_000); // some too far ahead
        } else if (kind < 97) {
          t = now - rnd.nextLong(5 * HOUR, 8 * HOUR); // some too old
        } else {
          t = rnd.nextBoolean() ? -1 : now;
          if (t == now) {
            l = Labels.of("job", "nameless");
          }
        }
        long bits;
        // Issue #25: a quarter of the series take native histograms, now and then a float (and
        // the others now and then a histogram), so the kind rule is met.
        boolean histogramSeries = Math.floorMod(l.hashCode(), 4) == 0;
        boolean histogram =
            mixKinds
                ? histogramSeries ? rnd.nextInt(20) != 0 : rnd.nextInt(100) == 0
                : histogramSeries;
        if (existing != null && existing.containsKey(t) && rnd.nextBoolean()) {
          bits = existing.get(t); // an idempotent retry
        } else if (histogram) {
          // two draws, as a float value takes: with one kind per series the workload's sequence
          // (and so its restarts, seals and compactions) is the float-only one
          bits =
              model.handle(HISTOGRAMS[(rnd.nextInt(20) + rnd.nextInt(1000)) % HISTOGRAMS.length]);
        } else if (rnd.nextInt(20) == 0) {
          bits = SPECIAL_BITS[rnd.nextInt(SPECIAL_BITS.length)];
        } else {
          bits = Double.doubleToRawLongBits(rnd.nextInt(1000) / 4.0);
        }
        if (ReferenceModel.isHistogram(bits)) {
          batch.addHistogram(l, META, t, model.histogramOf(bits));
        } else if (bits == SampleBatch.STALE_NAN_BITS) {
          batch.addStaleMarker(l, META, t);
        } else {
          batch.add(l, META, t, Double.longBitsToDouble(bits));
        }
      }
      batch.endPoint();
    }
    return batch;
  }

  static void compare(
      Engine engine, ReferenceModel model, SplittableRandom rnd, long now, String where) {
    for (int q = 0; q < 2; q++) {
      long minT = now - rnd.nextLong(0, 8 * HOUR);
      long maxT = minT + rnd.nextLong(0, 9 * HOUR);
      List<LabelMatcher> matchers = randomMatchers(rnd);
      String ctx = where + " select " + matchers + " [" + minT + "," + maxT + "]";

      TreeMap<Labels, List<long[]>> want = model.select(minT, maxT, matchers);
      List<Series> got = engine.select(minT, maxT, matchers).toList();
      List<Labels> gotLabels = new ArrayList<>();
      for (Series s : got) {
        gotLabels.add(s.labels());
      }
      assertThat(gotLabels).as(ctx).containsExactlyElementsOf(want.keySet());
      for (Series s : got) {
        TreeMap<Long, String> gotSamples = new TreeMap<>();
        SampleIterator it = s.iterator();
        while (it.next()) {
          gotSamples.put(it.timestampMillis(), Long.toHexString(it.valueBits()));
        }
        HistogramIterator hit = s.histogramIterator();
        while (hit.next()) {
          Long handle = model.knownHandle(hit.histogram());
          String was =
              gotSamples.put(
                  hit.timestampMillis(),
                  handle == null ? "unknown " + hit.histogram() : Long.toHexString(handle));
          assertThat(was).as(ctx + " a float and a histogram at one timestamp").isNull();
        }
        if (!s.hasHistograms()) {
          assertThat(s.histogramIterator().next()).as(ctx + " hasHistograms false").isFalse();
        }
        List<String> wantSamples = new ArrayList<>();
        for (long[] tv : want.get(s.labels())) {
          wantSamples.add(tv[0] + "=" + Long.toHexString(tv[1]));
        }
        List<String> gotList = new ArrayList<>();
        gotSamples.forEach((t, v) -> gotList.add(t + "=" + v));
        assertThat(gotList).as(ctx + " " + s.labels()).containsExactlyElementsOf(wantSamples);
        // seek: to a random time, twice (the second may not move back), then on to the end; the
        // float cursor's samples are the floats of the model, the histogram cursor's the others
        List<long[]> samples = new ArrayList<>();
        List<long[]> histogramSamples = new ArrayList<>();
        for (long[] tv : want.get(s.labels())) {
          (ReferenceModel.isHistogram(tv[1]) ? histogramSamples : samples).add(tv);
        }
        long target = minT + rnd.nextLong(0, Math.max(1, maxT - minT + 1));
        SampleIterator seeking = s.iterator();
        List<String> afterSeek = new ArrayList<>();
        if (seeking.seek(target)) {
          assertThat(seeking.seek(target - 1)).isTrue();
          do {
            afterSeek.add(seeking.timestampMillis() + "=" + Long.toHexString(seeking.valueBits()));
          } while (seeking.next());
        }
        List<String> wantAfter = new ArrayList<>();
        for (long[] tv : samples) {
          if (tv[0] >= target) {
            wantAfter.add(tv[0] + "=" + Long.toHexString(tv[1]));
          }
        }
        assertThat(afterSeek)
            .as(ctx + " " + s.labels() + " seek " + target)
            .containsExactlyElementsOf(wantAfter);
        HistogramIterator hseek = s.histogramIterator();
        List<String> histogramsAfterSeek = new ArrayList<>();
        if (hseek.seek(target)) {
          assertThat(hseek.seek(target - 1)).isTrue();
          do {
            histogramsAfterSeek.add(
                hseek.timestampMillis()
                    + "="
                    + Long.toHexString(model.knownHandle(hseek.histogram())));
          } while (hseek.next());
        }
        List<String> wantHistogramsAfter = new ArrayList<>();
        for (long[] tv : histogramSamples) {
          if (tv[0] >= target) {
            wantHistogramsAfter.add(tv[0] + "=" + Long.toHexString(tv[1]));
          }
        }
        assertThat(histogramsAfterSeek)
            .as(ctx + " " + s.labels() + " histogram seek " + target)
            .containsExactlyElementsOf(wantHistogramsAfter);
        // newestIn: the newest sample of a window from the seek target, read newest chunk first.
        // No draws from rnd: other tests' workloads (EngineFaultTest's) share its sequence.
        long lo = target;
        long hi = lo + Math.floorMod(Long.rotateLeft(target * 0x9E3779B97F4A7C15L, 17), 7_200_000L);
        long[] newest = new long[2];
        String wantNewest = null;
        for (long[] tv : samples) {
          if (tv[0] >= lo && tv[0] <= hi) {
            wantNewest = tv[0] + "=" + Long.toHexString(tv[1]);
          }
        }
        boolean has = s.iterator().newestIn(lo, hi, newest);
        assertThat(has ? newest[0] + "=" + Long.toHexString(newest[1]) : null)
            .as(ctx + " " + s.labels() + " newest in [" + lo + ", " + hi + "]")
            .isEqualTo(wantNewest);
      }
      assertThat(engine.series(minT, maxT, matchers))
          .as(ctx + " series")
          .containsExactlyElementsOf(model.series(minT, maxT, matchers));
      assertThat(engine.labelNames(minT, maxT, matchers))
          .as(ctx + " names")
          .containsExactlyElementsOf(model.labelNames(minT, maxT, matchers));
      String name = Arrays.asList("instance", "le", "zone", "__name__", "nope").get(rnd.nextInt(5));
      assertThat(engine.labelValues(name, minT, maxT, matchers))
          .as(ctx + " values of " + name)
          .containsExactlyElementsOf(model.labelValues(name, minT, maxT, matchers));
    }
  }

  static List<LabelMatcher> randomMatchers(SplittableRandom rnd) {
    List<LabelMatcher> out = new ArrayList<>();
    int n = rnd.nextInt(4);
    for (int i = 0; i < n; i++) {
      switch (rnd.nextInt(10)) {
        case 0 -> out.add(LabelMatcher.equal(Labels.METRIC_NAME, "m" + rnd.nextInt(8)));
        case 1 -> out.add(LabelMatcher.notEqual("job", "job" + rnd.nextInt(3)));
        case 2 -> out.add(LabelMatcher.regex("instance", "host-1.*"));
        case 3 -> out.add(LabelMatcher.regex("instance", "host-(3|4)"));
        case 4 -> out.add(LabelMatcher.regex("le", "1|2|3"));
        case 5 -> out.add(LabelMatcher.equal("zone", ""));
        case 6 -> out.add(LabelMatcher.notEqual("le", ""));
        case 7 -> out.add(LabelMatcher.notRegex("instance", ".*7"));
        case 8 -> out.add(LabelMatcher.regex("zone", "|eu"));
        default -> out.add(LabelMatcher.regex(Labels.METRIC_NAME, ".+"));
      }
    }
    return out;
  }
}
