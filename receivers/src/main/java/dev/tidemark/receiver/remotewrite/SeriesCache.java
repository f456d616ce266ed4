package dev.tidemark.receiver.remotewrite;

import com.dynatrace.hash4j.hashing.Hasher64;
import com.dynatrace.hash4j.hashing.Hashing;
import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import java.util.Arrays;

/**
 * Series by the bytes of their label run (see {@link WriteDecoder}), in a bounded cache: a known
 * series costs one XXH3-64 hash and one byte comparison, no String and no {@code Labels}. A miss
 * validates the run ({@link KnownSeries#of}); invalid runs are not cached. Thread-safe.
 */
final class SeriesCache {
  private static final Hasher64 XXH3 = Hashing.xxh3_64();

  private final Cache<RunKey, KnownSeries> cache;
  private final WriteMetadata metadata;

  /**
   * @param size most label runs remembered
   * @param metadata gives a new series its 1.0 metadata
   */
  SeriesCache(int size, WriteMetadata metadata) {
    this.cache = Caffeine.newBuilder().maximumSize(size).executor(Runnable::run).build();
    this.metadata = metadata;
  }

  /**
   * The known series for series {@code s}'s label run, or a new entry (valid or not).
   *
   * @param probe the calling thread's reusable lookup key
   */
  KnownSeries resolve(RunKey probe, WriteDecoder d, int s) {
    int from = d.runStart[s];
    int to = d.runEnd[s];
    long h = XXH3.hashBytesToLong(d.runs, from, to - from);
    KnownSeries k = cache.getIfPresent(probe.set(h, to - from));
    if (k != null && Arrays.equals(k.run, 0, k.run.length, d.runs, from, to)) {
      return k;
    }
    KnownSeries created = KnownSeries.of(Arrays.copyOfRange(d.runs, from, to), d.labelCount[s]);
    if (created.labels != null) {
      metadata.remember(created);
      if (k == null) {
        cache.put(new RunKey(h, to - from), created);
      }
    }
    return created;
  }

  /** Cache key: the run's hash and length (the entry holds the bytes that decide). */
  static final class RunKey {
    private long hash;
    private int length;

    RunKey(long hash, int length) {
      this.hash = hash;
      this.length = length;
    }

    RunKey set(long h, int l) {
      hash = h;
      length = l;
      return this;
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof RunKey k && k.hash == hash && k.length == length;
    }

    @Override
    public int hashCode() {
      return (int) (hash ^ (hash >>> 32));
    }
  }
}
