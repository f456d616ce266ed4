package dev.tidemark.tsdb.engine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.tidemark.tsdb.codec.TimeBucket;
import dev.tidemark.tsdb.model.Labels;
import dev.tidemark.tsdb.model.MetricMetadata;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.TreeSet;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.roaringbitmap.RoaringBitmap;

/**
 * The head bucket's postings against a model, through runs of series that share values (the last
 * value each name saw short-cuts the sorted map) and rollbacks of the series added last (which may
 * empty the bitmap that short-cut points to).
 */
class HeadBucketPostingsTest {

  private static final MetricMetadata META = MetricMetadata.UNKNOWN;

  @ParameterizedTest
  @ValueSource(longs = {1L, 2L, 3L, 99L})
  void postingsMatchTheSeriesPresent(long seed) {
    SplittableRandom rnd = new SplittableRandom(Long.getLong("tidemark.seed", seed));
    HeadBucket hb = new HeadBucket(TimeBucket.containing(1_700_000_000_000L, 1));
    List<HeadSeries> present = new ArrayList<>();
    int made = 0;
    for (int step = 0; step < 3_000; step++) {
      if (!present.isEmpty() && rnd.nextInt(4) == 0) {
        HeadSeries last = present.remove(present.size() - 1);
        hb.removeLast(last);
        continue;
      }
      // Few values, in runs: the same instance for a while, a value made anew (not the same
      // String instance) now and then.
      String instance = "i" + (made / (1 + rnd.nextInt(5))) % 7;
      Labels l =
          Labels.of(
              "__name__",
              "m" + rnd.nextInt(3),
              "instance",
              rnd.nextBoolean() ? instance : new String(instance),
              "n",
              Integer.toString(made++));
      int id = present.size();
      hb.add(l, META, id);
      present.add(hb.byId(id));
    }
    TreeMap<String, TreeMap<String, RoaringBitmap>> model = new TreeMap<>();
    for (HeadSeries s : present) {
      for (int i = 0; i < s.labels.size(); i++) {
        model
            .computeIfAbsent(s.labels.name(i), k -> new TreeMap<>())
            .computeIfAbsent(s.labels.value(i), k -> new RoaringBitmap())
            .add(s.id);
      }
    }
    TreeMap<String, TreeMap<String, RoaringBitmap>> actual = new TreeMap<>();
    hb.forEachPosting(
        (name, value, bm) -> actual.computeIfAbsent(name, k -> new TreeMap<>()).put(value, bm));
    assertThat(actual).isEqualTo(model);
    assertThat(new TreeSet<>(hb.labelNames())).isEqualTo(model.keySet());
  }
}
