package dev.tidemark.tsdb.engine;

import dev.tidemark.tsdb.codec.InvertedIndexValue;
import dev.tidemark.tsdb.codec.Keys;
import dev.tidemark.tsdb.codec.RecordType;
import dev.tidemark.tsdb.codec.TimeBucket;
import dev.tidemark.tsdb.kv.KvCursor;
import dev.tidemark.tsdb.kv.KvReader;
import dev.tidemark.tsdb.model.Labels;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BiConsumer;
import org.roaringbitmap.RoaringBitmap;

/** The postings of a sealed bucket, read from its InvertedIndex records. Single use, one thread. */
final class KvPostings implements PostingsSource {

  private final KvReader reader;
  private final TimeBucket bucket;
  private RoaringBitmap all;

  KvPostings(KvReader reader, TimeBucket bucket) {
    this.reader = reader;
    this.bucket = bucket;
  }

  @Override
  public RoaringBitmap all() {
    if (all == null) {
      byte[] v = reader.get(Keys.invertedIndexAllSeries(bucket));
      all = v == null ? new RoaringBitmap() : InvertedIndexValue.decode(v);
    }
    return all;
  }

  @Override
  public RoaringBitmap posting(String name, String value) {
    byte[] v = reader.get(Keys.invertedIndex(bucket, name, value));
    return v == null ? new RoaringBitmap() : InvertedIndexValue.decode(v);
  }

  @Override
  public void forEachValue(String name, String prefix, BiConsumer<String, RoaringBitmap> consumer) {
    byte[] scanPrefix = Keys.invertedIndex(bucket, name, prefix);
    try (KvCursor c = reader.scanPrefix(scanPrefix)) {
      while (c.next()) {
        String[] nv = Keys.invertedIndexLabel(c.key());
        consumer.accept(nv[1], InvertedIndexValue.decode(c.value()));
      }
    }
  }

  /** Decodes only the postings of the values {@code wanted} accepts. */
  @Override
  public void forEachValue(
      String name,
      String prefix,
      java.util.function.Predicate<String> wanted,
      BiConsumer<String, RoaringBitmap> consumer) {
    byte[] scanPrefix = Keys.invertedIndex(bucket, name, prefix);
    try (KvCursor c = reader.scanPrefix(scanPrefix)) {
      while (c.next()) {
        String value = Keys.invertedIndexLabel(c.key())[1];
        if (wanted.test(value)) {
          consumer.accept(value, InvertedIndexValue.decode(c.value()));
        }
      }
    }
  }

  /** Reads the keys and only the header of each posting list (an empty one is 8 bytes). */
  @Override
  public void forEachPresentValue(String name, java.util.function.Consumer<String> consumer) {
    byte[] scanPrefix = Keys.invertedIndex(bucket, name, "");
    try (KvCursor c = reader.scanPrefix(scanPrefix)) {
      while (c.next()) {
        if (!InvertedIndexValue.isEmpty(c.value())) {
          consumer.accept(Keys.invertedIndexLabel(c.key())[1]);
        }
      }
    }
  }

  @Override
  public List<String> labelNames() {
    List<String> names = new ArrayList<>();
    byte[] prefix = Keys.bucketPrefix(RecordType.INVERTED_INDEX, bucket);
    try (KvCursor c = reader.scanPrefix(prefix)) {
      while (c.next()) {
        String name = Keys.invertedIndexLabel(c.key())[0];
        if (!name.isEmpty() && (names.isEmpty() || !names.get(names.size() - 1).equals(name))) {
          names.add(name);
        }
      }
    }
    names.sort(Labels.UTF8_ORDER);
    return names;
  }
}
