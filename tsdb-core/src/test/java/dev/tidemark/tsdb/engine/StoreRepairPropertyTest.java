package dev.tidemark.tsdb.engine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.tidemark.tsdb.append.SampleBatch;
import dev.tidemark.tsdb.codec.BucketListValue;
import dev.tidemark.tsdb.codec.ChunkDecoder;
import dev.tidemark.tsdb.codec.CorruptRecordException;
import dev.tidemark.tsdb.codec.ForwardIndexValue;
import dev.tidemark.tsdb.codec.InvertedIndexValue;
import dev.tidemark.tsdb.codec.Keys;
import dev.tidemark.tsdb.codec.RecordType;
import dev.tidemark.tsdb.codec.TimeBucket;
import dev.tidemark.tsdb.codec.TimeSeriesValue;
import dev.tidemark.tsdb.kv.InMemoryKvStore;
import dev.tidemark.tsdb.kv.KvCursor;
import dev.tidemark.tsdb.kv.WriteBatch;
import dev.tidemark.tsdb.model.Labels;
import dev.tidemark.tsdb.model.MetricMetadata;
import dev.tidemark.tsdb.time.ManualClock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.roaringbitmap.RoaringBitmap;

/**
 * A seeded property: a random engine workload on an {@link InMemoryKvStore} (ending with a clean
 * close, or with a crash that leaves a head log in the newest bucket and in a reopened one), then
 * random damage by direct KV writes (ForwardIndex records deleted or garbled, buckets dropped from
 * the BucketList or the list garbled, chunks and head-log records truncated, postings deleted or
 * naming unknown ids, dictionary entries deleted, stray keys), then {@link StoreVerifier#repair}.
 * The repaired store verifies clean, the engine opens it and reads back exactly every sample whose
 * series still has a decodable ForwardIndex record and whose chunk or head-log record decodes, and
 * the store still verifies clean after the engine sealed what it replayed. Seeds 1..{@value #RUNS};
 * {@code -Dtidemark.test.seed=N} runs one more; the seed is in every failure message.
 */
class StoreRepairPropertyTest {
  static final int RUNS = 40;
  static final long HOUR = 3_600_000L;
  static final long MIN = 60_000L;
  static final long T0 = 1_700_000_000_000L - 1_700_000_000_000L % HOUR;

  @Test
  void randomDamageIsRepairedAndEveryReadableSampleReadsBack() {
    List<Long> seeds = new ArrayList<>();
    for (long s = 1; s <= RUNS; s++) {
      seeds.add(s);
    }
    Long extra = Long.getLong("tidemark.test.seed");
    if (extra != null) {
      seeds.add(extra);
    }
    for (long seed : seeds) {
      try {
        run(seed);
      } catch (AssertionError | RuntimeException e) {
        throw new AssertionError(
            "seed " + seed + " (rerun with -Dtidemark.test.seed=" + seed + "): " + e, e);
      }
    }
  }

  private static void run(long seed) {
    SplittableRandom rnd = new SplittableRandom(seed);
    InMemoryKvStore kv = new InMemoryKvStore();
    EngineConfig config =
        EngineConfig.builder()
            .clock(new ManualClock(T0 + 5 * HOUR))
            .retentionInterval(Duration.ZERO)
            .build();
    workload(rnd, kv, config);
    List<String> damage = damage(rnd, kv);
    Map<Labels, Map<Long, Long>> expected = readable(kv);

    RepairReport r = StoreVerifier.repair(kv);
    assertThat(r.after().clean())
        .as(
            "damage %s%nbefore:%n%sactions:%n%safter:%n%s",
            damage, r.before().format(), r.formatActions(), r.after().format())
        .isTrue();
    Engine e = Engine.open(kv, config);
    try {
      assertThat(StoreVerifierTest.readAll(e))
          .as("damage %s%n%s", damage, r.before().format())
          .isEqualTo(expected);
    } finally {
      e.close();
    }
    VerifyReport v = StoreVerifier.verify(kv);
    assertThat(v.clean()).as("after the engine ran: %s", v.format()).isTrue();
  }

  /** Series over hours 0..2, some flushes; then a clean close, or late samples and a crash. */
  private static void workload(SplittableRandom rnd, InMemoryKvStore kv, EngineConfig config) {
    int n = 3 + rnd.nextInt(12);
    List<Labels> series = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      series.add(
          Labels.of(
              "__name__", "m" + rnd.nextInt(3), "job", "j" + i, "zone", "z" + rnd.nextInt(2)));
    }
    Engine e = Engine.open(kv, config);
    for (long t = T0; t < T0 + 3 * HOUR; t += 5 * MIN) {
      SampleBatch b = new SampleBatch();
      for (Labels l : series) {
        if (rnd.nextInt(4) > 0) {
          b.addPoint(l, MetricMetadata.UNKNOWN, t + rnd.nextInt(1000), value(rnd));
        }
      }
      e.append(b);
      if (rnd.nextInt(15) == 0) {
        e.flush();
      }
    }
    if (rnd.nextBoolean()) {
      e.close();
      return;
    }
    // Crash: flush (so no seal runs in the background), then samples that no seal is due for yet
    // (the newest stays within the out-of-order window of hour 2's end): late ones reopening hour
    // 2, new ones in hour 3; the head log of both stays.
    e.flush();
    for (int k = 0; k < 4; k++) {
      SampleBatch b = new SampleBatch();
      for (Labels l : series) {
        if (rnd.nextBoolean()) {
          b.addPoint(l, MetricMetadata.UNKNOWN, T0 + 3 * HOUR - 4 * MIN + k * 1000, value(rnd));
        }
        if (rnd.nextBoolean()) {
          b.addPoint(l, MetricMetadata.UNKNOWN, T0 + 3 * HOUR + k * 5 * MIN, value(rnd));
        }
      }
      e.append(b);
    }
    e.abandon();
  }

  private static double value(SplittableRandom rnd) {
    return switch (rnd.nextInt(8)) {
      case 0 -> Double.longBitsToDouble(SampleBatch.STALE_NAN_BITS);
      case 1 -> -0.0;
      default -> rnd.nextInt(1000) / 4.0;
    };
  }

  /** One to four random damages; returns what was done, for messages. */
  private static List<String> damage(SplittableRandom rnd, InMemoryKvStore kv) {
    List<String> done = new ArrayList<>();
    int count = 1 + rnd.nextInt(4);
    for (int i = 0; i < count; i++) {
      int kind = rnd.nextInt(10);
      WriteBatch wb = new WriteBatch();
      switch (kind) {
        case 0 -> pick(rnd, kv, RecordType.FORWARD_INDEX).ifPresent(k -> wb.delete(k));
        case 1 -> {
          byte[] v = kv.get(Keys.bucketList());
          if (v != null && v.length % BucketListValue.ELEMENT_SIZE == 0) { // not garbled by kind 7
            List<TimeBucket> list = new ArrayList<>(BucketListValue.decode(v));
            if (!list.isEmpty()) {
              list.remove(rnd.nextInt(list.size()));
              wb.put(Keys.bucketList(), BucketListValue.encode(list));
            }
          }
        }
        case 2 ->
            pick(rnd, kv, RecordType.TIME_SERIES)
                .ifPresent(
                    k -> {
                      byte[] v = kv.get(k);
                      wb.put(k, Arrays.copyOf(v, Math.max(1, v.length - 1 - rnd.nextInt(3))));
                    });
        case 3 -> pick(rnd, kv, RecordType.INVERTED_INDEX).ifPresent(k -> wb.delete(k));
        case 4 ->
            pick(rnd, kv, RecordType.INVERTED_INDEX)
                .ifPresent(
                    k -> {
                      RoaringBitmap bm = InvertedIndexValue.decode(kv.get(k));
                      bm.add(500 + rnd.nextInt(100));
                      wb.put(k, InvertedIndexValue.encode(bm));
                    });
        case 5 ->
            pick(rnd, kv, RecordType.FORWARD_INDEX).ifPresent(k -> wb.put(k, new byte[] {1, 2, 3}));
        case 6 ->
            pick(rnd, kv, RecordType.HEAD_LOG)
                .ifPresent(
                    k -> {
                      byte[] v = kv.get(k);
                      wb.put(k, Arrays.copyOf(v, Math.max(0, v.length - 3)));
                    });
        case 7 -> {
          byte[] v = kv.get(Keys.bucketList());
          if (v != null) {
            wb.put(Keys.bucketList(), Arrays.copyOf(v, v.length + 2));
          }
        }
        case 8 -> pick(rnd, kv, RecordType.SERIES_DICTIONARY).ifPresent(k -> wb.delete(k));
        default ->
            wb.put(
                new byte[] {1, (byte) (0x80 + rnd.nextInt(0x80)), (byte) rnd.nextInt(256)},
                new byte[] {7});
      }
      if (!wb.isEmpty()) {
        kv.write(wb);
        done.add(kind + ":" + StoreVerifier.hex(wb.ops().get(0).key()));
      }
    }
    return done;
  }

  private static java.util.Optional<byte[]> pick(
      SplittableRandom rnd, InMemoryKvStore kv, RecordType type) {
    List<byte[]> keys = new ArrayList<>();
    try (KvCursor c =
        kv.scan(
            new byte[] {1, (byte) (type.id() << 4)},
            new byte[] {1, (byte) ((type.id() + 1) << 4)})) {
      while (c.next()) {
        keys.add(c.key());
      }
    }
    return keys.isEmpty()
        ? java.util.Optional.empty()
        : java.util.Optional.of(keys.get(rnd.nextInt(keys.size())));
  }

  /**
   * The samples that can still be read, from the raw records: those of chunks and head-log records
   * that decode, of series with a decodable ForwardIndex record in their bucket, whether the bucket
   * is listed or not.
   */
  static Map<Labels, Map<Long, Long>> readable(InMemoryKvStore kv) {
    Map<TimeBucket, Map<Integer, Labels>> labels = new HashMap<>();
    List<byte[][]> chunks = new ArrayList<>();
    List<byte[][]> logs = new ArrayList<>();
    try (KvCursor c = kv.scan(null, null)) {
      while (c.next()) {
        byte[] key = c.key();
        RecordType type;
        TimeBucket b;
        try {
          type = Keys.recordType(key);
          b = type.bucketScoped() ? Keys.timeBucket(key) : null;
        } catch (CorruptRecordException e) {
          continue;
        }
        switch (type) {
          case FORWARD_INDEX -> {
            try {
              labels
                  .computeIfAbsent(b, x -> new HashMap<>())
                  .put(Keys.seriesId(key), ForwardIndexValue.decode(c.value()).labels());
            } catch (CorruptRecordException e) {
              // unreadable: its series is gone
            }
          }
          case TIME_SERIES -> chunks.add(new byte[][] {key, c.value()});
          case HEAD_LOG -> logs.add(new byte[][] {key, c.value()});
          default -> {}
        }
      }
    }
    Map<Labels, Map<Long, Long>> out = new TreeMap<>();
    TimeSeriesValue.Decoders decoders = new TimeSeriesValue.Decoders();
    for (byte[][] kvPair : chunks) {
      TimeBucket b = Keys.timeBucket(kvPair[0]);
      Labels l = labels.getOrDefault(b, Map.of()).get(Keys.seriesId(kvPair[0]));
      if (l == null) {
        continue;
      }
      Map<Long, Long> samples = new TreeMap<>();
      try {
        ChunkDecoder d = decoders.open(kvPair[1]);
        while (d.next()) {
          samples.put(d.timestampMillis(), d.valueBits());
        }
      } catch (CorruptRecordException e) {
        continue;
      }
      out.computeIfAbsent(l, x -> new TreeMap<>()).putAll(samples);
    }
    for (byte[][] kvPair : logs) {
      TimeBucket b = Keys.timeBucket(kvPair[0]);
      if (kvPair[0].length != Keys.BUCKET_PREFIX_LENGTH + 8) {
        continue;
      }
      List<long[]> entries = new ArrayList<>();
      try {
        HeadLogBuffer.decode(kvPair[1], (id, t, bits) -> entries.add(new long[] {id, t, bits}));
      } catch (CorruptRecordException e) {
        continue;
      }
      for (long[] en : entries) {
        Labels l = labels.getOrDefault(b, Map.of()).get((int) en[0]);
        if (l != null) {
          out.computeIfAbsent(l, x -> new TreeMap<>()).put(en[1], en[2]);
        }
      }
    }
    return out;
  }
}
