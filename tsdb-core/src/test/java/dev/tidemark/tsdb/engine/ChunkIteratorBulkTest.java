package dev.tidemark.tsdb.engine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.tidemark.tsdb.codec.DecimalEncoder;
import dev.tidemark.tsdb.codec.GorillaEncoder;
import dev.tidemark.tsdb.codec.TimeBucket;
import dev.tidemark.tsdb.codec.TimeSeriesValue;
import dev.tidemark.tsdb.query.SampleIterator;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * {@link ChunkIterator#next(long[], long[], int, int)} reads exactly what repeated {@link
 * ChunkIterator#next()} reads: stored chunks of both encodings, head chunks with late samples,
 * ranges cutting chunks, seeks in between, and a reused iterator.
 */
class ChunkIteratorBulkTest {
  static final long HOUR = 3_600_000L;
  static final long T0 = 1_700_000_000_000L - 1_700_000_000_000L % HOUR;

  @Test
  void bulkReadsEqualOneByOne() {
    long seed = Long.getLong("seed", new SplittableRandom().nextLong());
    SplittableRandom rnd = new SplittableRandom(seed);
    ChunkIterator reused = new ChunkIterator(List.of(), 0, 0);
    for (int round = 0; round < 300; round++) {
      List<ChunkSource> chunks = randomChunks(rnd);
      long minT = T0 + rnd.nextLong(-HOUR, 3 * HOUR);
      long maxT = minT + rnd.nextLong(0, 4 * HOUR);
      List<long[]> expected = new ArrayList<>();
      SampleIterator one = new ChunkIterator(chunks, minT, maxT);
      while (one.next()) {
        expected.add(new long[] {one.timestampMillis(), one.valueBits()});
      }
      SampleIterator bulk =
          rnd.nextBoolean()
              ? new ChunkIterator(chunks, minT, maxT)
              : reused.reset(chunks, minT, maxT);
      List<long[]> got = new ArrayList<>();
      long[] ts = new long[64];
      long[] bits = new long[64];
      while (true) {
        int max = 1 + rnd.nextInt(40);
        int off = rnd.nextInt(64 - max + 1);
        int n = bulk.next(ts, bits, off, max);
        for (int i = 0; i < n; i++) {
          got.add(new long[] {ts[off + i], bits[off + i]});
        }
        if (n == max) {
          assertThat(bulk.timestampMillis())
              .as("seed %d: stands on the last sample read", seed)
              .isEqualTo(ts[off + n - 1]);
          assertThat(bulk.valueBits()).isEqualTo(bits[off + n - 1]);
        }
        if (n < max) {
          assertThat(bulk.next()).as("seed %d: at the end", seed).isFalse();
          break;
        }
        if (rnd.nextInt(4) == 0) { // a seek forward in between, as a window skipping a gap
          long last = ts[off + n - 1];
          long target = last + 1 + rnd.nextLong(0, HOUR / 2);
          if (!bulk.seek(target)) {
            expected.removeIf(s -> s[0] > last);
            break;
          }
          int at = got.size();
          expected.removeIf(s -> s[0] > got.get(at - 1)[0] && s[0] < target);
          got.add(new long[] {bulk.timestampMillis(), bulk.valueBits()});
        }
      }
      assertThat(got.stream().map(x -> x[0] + "=" + x[1]).toList())
          .as("seed %d, round %d", seed, round)
          .isEqualTo(expected.stream().map(x -> x[0] + "=" + x[1]).toList());
    }
  }

  private static List<ChunkSource> randomChunks(SplittableRandom rnd) {
    List<ChunkSource> out = new ArrayList<>();
    int buckets = 1 + rnd.nextInt(3);
    for (int h = 0; h < buckets; h++) {
      TimeBucket b = TimeBucket.containing(T0 + h * HOUR, 1);
      TreeMap<Long, Long> samples = new TreeMap<>();
      int n = 1 + rnd.nextInt(300);
      for (int i = 0; i < n; i++) {
        samples.put(
            b.startMillis() + rnd.nextLong(HOUR),
            Double.doubleToRawLongBits(Math.round(rnd.nextDouble(0, 100) * 100) / 100.0));
      }
      int kind = rnd.nextInt(3);
      if (kind == 2) { // head: in-order stream plus sorted late samples
        GorillaEncoder enc = new GorillaEncoder();
        List<long[]> late = new ArrayList<>();
        samples.forEach(
            (t, v) -> {
              if (late.size() < 20 && rnd.nextInt(5) == 0) {
                late.add(new long[] {t, v});
              } else {
                enc.append(t, v);
              }
            });
        if (enc.count() == 0) {
          continue;
        }
        long[] lt = late.stream().mapToLong(x -> x[0]).toArray();
        long[] lb = late.stream().mapToLong(x -> x[1]).toArray();
        out.add(
            new ChunkSource(
                b, TimeSeriesValue.ENCODING_GORILLA, enc.toByteArray(), 0, lt, lb, lt.length));
      } else {
        byte[] value;
        if (kind == 0) {
          GorillaEncoder enc = new GorillaEncoder();
          samples.forEach(enc::append);
          value = TimeSeriesValue.encode(enc);
        } else {
          DecimalEncoder enc = new DecimalEncoder();
          samples.forEach(enc::append);
          value = TimeSeriesValue.encode(enc);
        }
        out.add(new ChunkSource(b, value[0] & 0xFF, value, 1, null, null, 0));
      }
    }
    return out;
  }
}
