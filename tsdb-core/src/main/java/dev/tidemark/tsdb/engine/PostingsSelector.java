package dev.tidemark.tsdb.engine;

import dev.tidemark.tsdb.query.LabelMatcher;
import dev.tidemark.tsdb.query.QueryContext;
import java.util.ArrayList;
import java.util.List;
import org.roaringbitmap.RoaringBitmap;

/**
 * Evaluates Prometheus matchers against one bucket's postings.
 *
 * <p>For a matcher on label {@code l}: if it accepts "" (an absent label), the result is every
 * series minus those whose value of {@code l} it rejects; otherwise the union of the postings of
 * the values it accepts. {@code =} is one posting; {@code =~} with a literal alternation reads only
 * those values, with a literal prefix ({@code foo.*}) scans only values starting with it; anything
 * else scans all values of the label. Results combine with {@code and}; the most selective kind
 * (positive, not matching "") runs first and an empty intersection stops early.
 *
 * <p>A head bucket is matched in three steps, so that no regex runs under the engine's lock (see
 * {@code docs/architecture.md}, Read path): {@link #copyValues} copies, under the lock, the values
 * each scanning matcher must look at; {@link #decide} matches them without the lock; {@link
 * #select(PostingsSource, List, String[][], QueryContext)} then only looks up postings by value. A
 * stored bucket holds no lock and is matched in one go ({@link #select(PostingsSource, List,
 * QueryContext)}). Every loop over values checks the query's context every {@link #CHECK_EVERY}
 * values.
 */
final class PostingsSelector {
  /** How many label values or series a loop handles between two checks of the query's context. */
  static final int CHECK_EVERY = 256;

  private PostingsSelector() {}

  /** Matches in one go: for sources read without the engine's lock (stored buckets). */
  static RoaringBitmap select(
      PostingsSource source, List<LabelMatcher> matchers, QueryContext ctx) {
    return select(source, matchers, null, ctx);
  }

  /**
   * The series of the bucket matching every matcher. {@code decided}, when not null, holds per
   * matcher what {@link #decide} found for it (null for a matcher that scans nothing): then no
   * matcher runs here, values are only looked up.
   */
  static RoaringBitmap select(
      PostingsSource source, List<LabelMatcher> matchers, String[][] decided, QueryContext ctx) {
    int n = matchers.size();
    RoaringBitmap result = null;
    // positive matchers (not matching "") first: they are the selective ones
    for (int pass = 0; pass < 2; pass++) {
      for (int i = 0; i < n; i++) {
        LabelMatcher m = matchers.get(i);
        boolean complement = m.matchesEmpty();
        if (complement != (pass == 1)) {
          continue;
        }
        String[] values = decided == null ? null : decided[i];
        RoaringBitmap p =
            complement ? complement(source, m, values, ctx) : matching(source, m, values, ctx);
        result = result == null ? p : RoaringBitmap.and(result, p);
        if (result.isEmpty()) {
          return result;
        }
      }
    }
    return result == null ? source.all().clone() : result;
  }

  /**
   * The prefix of the values matcher {@code m} must scan ("" for all), or null if it looks up its
   * values directly ({@code =}, {@code !=}, a literal alternation).
   */
  static String scanPrefix(LabelMatcher m) {
    if (m.matchesEmpty()) {
      return m.op() == LabelMatcher.Op.NOT_EQUAL ? null : "";
    }
    return switch (m.op()) {
      case EQUAL -> null;
      case REGEX ->
          m.literalAlternatives() != null
              ? null
              : m.literalPrefix() != null ? m.literalPrefix() : "";
      default -> "";
    };
  }

  /**
   * Under the head's lock: per matcher, the values of its label it must scan (null for a matcher
   * that scans nothing). Copies references only; the strings are immutable.
   */
  static String[][] copyValues(HeadBucket hb, List<LabelMatcher> matchers) {
    String[][] out = new String[matchers.size()][];
    for (int i = 0; i < out.length; i++) {
      LabelMatcher m = matchers.get(i);
      String prefix = scanPrefix(m);
      if (prefix != null) {
        out[i] = hb.values(m.name(), prefix, Integer.MAX_VALUE);
      }
    }
    return out;
  }

  /**
   * Without a lock: per matcher, of the values {@link #copyValues} copied, those that decide: the
   * values it accepts for a positive matcher, the values it rejects for one that accepts "".
   *
   * @throws dev.tidemark.tsdb.query.QueryAbortedException if {@code ctx} says stop
   */
  static String[][] decide(List<LabelMatcher> matchers, String[][] values, QueryContext ctx) {
    String[][] out = new String[values.length][];
    for (int i = 0; i < values.length; i++) {
      String[] vs = values[i];
      if (vs == null) {
        continue;
      }
      LabelMatcher m = matchers.get(i);
      boolean wanted = !m.matchesEmpty();
      List<String> kept = new ArrayList<>();
      for (int j = 0; j < vs.length; j++) {
        if ((j & (CHECK_EVERY - 1)) == 0) {
          ctx.check();
        }
        if (m.matches(vs[j]) == wanted) {
          kept.add(vs[j]);
        }
      }
      out[i] = kept.toArray(new String[0]);
    }
    return out;
  }

  /** Series with a value of the label that {@code m} accepts ({@code m} rejects ""). */
  private static RoaringBitmap matching(
      PostingsSource source, LabelMatcher m, String[] accepted, QueryContext ctx) {
    String name = m.name();
    if (m.op() == LabelMatcher.Op.EQUAL) {
      return source.posting(name, m.value()).clone();
    }
    if (m.op() == LabelMatcher.Op.REGEX && m.literalAlternatives() != null) {
      RoaringBitmap r = new RoaringBitmap();
      for (String v : m.literalAlternatives()) {
        if (!v.isEmpty()) {
          r.or(source.posting(name, v));
        }
      }
      return r;
    }
    if (accepted != null) {
      return postingsOf(source, name, accepted, ctx);
    }
    return union(source, name, scanPrefix(m), m, true, ctx);
  }

  /** Every series minus those with a value of the label that {@code m} rejects. */
  private static RoaringBitmap complement(
      PostingsSource source, LabelMatcher m, String[] rejectedValues, QueryContext ctx) {
    RoaringBitmap rejected;
    if (m.op() == LabelMatcher.Op.NOT_EQUAL) {
      rejected = source.posting(m.name(), m.value());
    } else if (rejectedValues != null) {
      rejected = postingsOf(source, m.name(), rejectedValues, ctx);
    } else {
      rejected = union(source, m.name(), "", m, false, ctx);
    }
    return RoaringBitmap.andNot(source.all(), rejected);
  }

  private static RoaringBitmap postingsOf(
      PostingsSource source, String name, String[] values, QueryContext ctx) {
    List<RoaringBitmap> parts = new ArrayList<>(values.length);
    for (int j = 0; j < values.length; j++) {
      if ((j & (CHECK_EVERY - 1)) == 0) {
        ctx.check();
      }
      parts.add(source.posting(name, values[j]));
    }
    return parts.isEmpty() ? new RoaringBitmap() : RoaringBitmap.or(parts.iterator());
  }

  private static RoaringBitmap union(
      PostingsSource source,
      String name,
      String prefix,
      LabelMatcher m,
      boolean accepted,
      QueryContext ctx) {
    List<RoaringBitmap> parts = new ArrayList<>();
    int[] seen = {0};
    source.forEachValue(
        name,
        prefix,
        value -> {
          if ((seen[0]++ & (CHECK_EVERY - 1)) == 0) {
            ctx.check();
          }
          return m.matches(value) == accepted;
        },
        (value, bm) -> parts.add(bm));
    return parts.isEmpty() ? new RoaringBitmap() : RoaringBitmap.or(parts.iterator());
  }
}
