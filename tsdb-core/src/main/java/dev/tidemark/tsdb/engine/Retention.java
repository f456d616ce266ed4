package dev.tidemark.tsdb.engine;

import static dev.tidemark.tsdb.engine.HeadState.BUCKET_RECORD_TYPES;
import static dev.tidemark.tsdb.engine.HeadState.LOG;

import dev.tidemark.tsdb.codec.BucketListValue;
import dev.tidemark.tsdb.codec.Keys;
import dev.tidemark.tsdb.codec.RecordType;
import dev.tidemark.tsdb.codec.TimeBucket;
import dev.tidemark.tsdb.kv.KeyRanges;
import dev.tidemark.tsdb.kv.KvStore;
import dev.tidemark.tsdb.kv.WriteBatch;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * Retention: drops whole buckets that ended before {@code now - retention} (store first, then the
 * head) and compacts their ranges. See {@code docs/architecture.md}, Retention.
 */
final class Retention {

  private final HeadState head;
  private final Sealer sealer;
  private final KvStore kv;
  private final EngineConfig config;
  private final ReentrantReadWriteLock lock;
  private final TreeMap<TimeBucket, HeadBucket> open;
  private final TreeMap<TimeBucket, HeadBucket> sealing;
  private final TreeSet<TimeBucket> buckets;

  Retention(HeadState head, Sealer sealer) {
    this.head = head;
    this.sealer = sealer;
    this.kv = head.kv;
    this.config = head.config;
    this.lock = head.lock;
    this.open = head.open;
    this.sealing = head.sealing;
    this.buckets = head.buckets;
  }

  /** Drops every bucket that ended before {@code now - retention}; returns how many. */
  int applyRetention() {
    int[] dropped = {0};
    sealer.runOnBackground(() -> dropped[0] = dropExpired());
    return dropped[0];
  }

  void retentionQuietly() {
    try {
      dropExpired();
    } catch (RuntimeException e) {
      LOG.log(Level.WARNING, "retention failed; will retry", e);
    }
  }

  private int dropExpired() {
    long cutoff = config.clock().millis() - head.retentionMillis;
    List<TimeBucket> victims = new ArrayList<>();
    lock.writeLock().lock();
    try {
      head.ensureOpen();
      for (TimeBucket b : buckets) {
        if (b.endMillis() > cutoff) {
          break;
        }
        if (!sealing.containsKey(b)) {
          victims.add(b);
        }
      }
      if (victims.isEmpty()) {
        return 0;
      }
      WriteBatch wb = new WriteBatch();
      TreeSet<TimeBucket> kept = new TreeSet<>(buckets);
      for (TimeBucket b : victims) {
        kept.remove(b);
        for (RecordType type : BUCKET_RECORD_TYPES) {
          byte[] prefix = Keys.bucketPrefix(type, b);
          wb.deleteRange(prefix, KeyRanges.prefixEnd(prefix));
        }
      }
      wb.put(Keys.bucketList(), BucketListValue.encode(kept));
      kv.write(wb); // the head changes only once the store has
      for (TimeBucket b : victims) {
        buckets.remove(b);
        head.labelCache.invalidate(b);
        HeadBucket hb = open.remove(b);
        if (hb != null) {
          hb.state = HeadBucket.State.SEALED;
          head.headSeries -= hb.seriesCount();
          head.bucketLeftLocked(hb);
          for (HeadSeries hs : hb.series()) {
            head.headSampleBytes -= hs.sampleBytes();
          }
        }
      }
      head.forgetRefs(
          r ->
              r.maxT < cutoff
                  || (r.latest != null && r.latest.bucket.state == HeadBucket.State.SEALED));
    } finally {
      lock.writeLock().unlock();
    }
    for (RecordType type : BUCKET_RECORD_TYPES) {
      byte[] from = Keys.bucketPrefix(type, victims.get(0));
      byte[] to = KeyRanges.prefixEnd(Keys.bucketPrefix(type, victims.get(victims.size() - 1)));
      kv.compactRange(from, to);
    }
    LOG.log(
        Level.INFO,
        "retention dropped {0} buckets ending at or before {1}",
        victims.size(),
        cutoff);
    return victims.size();
  }

  /** The retention in force. */
  Duration retention() {
    return Duration.ofMillis(head.retentionMillis);
  }

  /**
   * Changes the retention for the next {@link #applyRetention()} (scheduled or on demand) and for
   * the {@code TOO_OLD} check of later appends. Not persisted: a restart uses the configuration.
   *
   * @throws IllegalArgumentException below {@link EngineConfig#MIN_RETENTION}
   */
  void setRetention(Duration retention) {
    head.retentionMillis = EngineConfig.checkRetention(retention).toMillis();
  }
}
