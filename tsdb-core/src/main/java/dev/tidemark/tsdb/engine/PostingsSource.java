package dev.tidemark.tsdb.engine;

import java.util.List;
import java.util.function.BiConsumer;
import org.roaringbitmap.RoaringBitmap;

/**
 * The postings of one bucket, from the head or from InvertedIndex records. Bitmaps handed out must
 * not be modified by the caller.
 */
interface PostingsSource {

  /** Every series of the bucket. */
  RoaringBitmap all();

  /** The series with {@code name=value}; empty if none. */
  RoaringBitmap posting(String name, String value);

  /**
   * Each value of label {@code name} that starts with {@code prefix} ("" for all), in UTF-8 order.
   */
  void forEachValue(String name, String prefix, BiConsumer<String, RoaringBitmap> consumer);

  /**
   * Each value of label {@code name} that starts with {@code prefix} and that {@code wanted}
   * accepts, with its posting, in UTF-8 order; {@code wanted} sees every value first, so a store
   * decodes only the postings handed out.
   */
  default void forEachValue(
      String name,
      String prefix,
      java.util.function.Predicate<String> wanted,
      BiConsumer<String, RoaringBitmap> consumer) {
    forEachValue(
        name,
        prefix,
        (v, bm) -> {
          if (wanted.test(v)) {
            consumer.accept(v, bm);
          }
        });
  }

  /**
   * Each value of label {@code name} that some series of the bucket has, in UTF-8 order, without
   * handing out the series (a store can tell a non-empty posting list without decoding it).
   */
  default void forEachPresentValue(String name, java.util.function.Consumer<String> consumer) {
    forEachValue(
        name,
        "",
        (v, bm) -> {
          if (!bm.isEmpty()) {
            consumer.accept(v);
          }
        });
  }

  /** Every label name in the bucket, in UTF-8 order. */
  List<String> labelNames();
}
