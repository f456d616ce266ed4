package dev.tidemark.tsdb.engine;

import dev.tidemark.tsdb.query.LabelMatcher;
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
 */
final class PostingsSelector {
  private PostingsSelector() {}

  static RoaringBitmap select(PostingsSource source, List<LabelMatcher> matchers) {
    List<LabelMatcher> ordered = new ArrayList<>(matchers);
    ordered.sort((a, b) -> Boolean.compare(a.matchesEmpty(), b.matchesEmpty()));
    RoaringBitmap result = null;
    for (LabelMatcher m : ordered) {
      RoaringBitmap p = m.matchesEmpty() ? complement(source, m) : matching(source, m);
      result = result == null ? p : RoaringBitmap.and(result, p);
      if (result.isEmpty()) {
        return result;
      }
    }
    return result == null ? source.all().clone() : result;
  }

  /** Series with a value of the label that {@code m} accepts ({@code m} rejects ""). */
  private static RoaringBitmap matching(PostingsSource source, LabelMatcher m) {
    String name = m.name();
    switch (m.op()) {
      case EQUAL:
        return source.posting(name, m.value()).clone();
      case REGEX:
        if (m.literalAlternatives() != null) {
          RoaringBitmap r = new RoaringBitmap();
          for (String v : m.literalAlternatives()) {
            if (!v.isEmpty()) {
              r.or(source.posting(name, v));
            }
          }
          return r;
        }
        if (m.literalPrefix() != null) {
          return union(source, name, m.literalPrefix(), m, true);
        }
        return union(source, name, "", m, true);
      default:
        return union(source, name, "", m, true);
    }
  }

  /** Every series minus those with a value of the label that {@code m} rejects. */
  private static RoaringBitmap complement(PostingsSource source, LabelMatcher m) {
    RoaringBitmap rejected;
    if (m.op() == LabelMatcher.Op.NOT_EQUAL) {
      rejected = source.posting(m.name(), m.value());
    } else {
      rejected = union(source, m.name(), "", m, false);
    }
    return RoaringBitmap.andNot(source.all(), rejected);
  }

  private static RoaringBitmap union(
      PostingsSource source, String name, String prefix, LabelMatcher m, boolean accepted) {
    List<RoaringBitmap> parts = new ArrayList<>();
    source.forEachValue(
        name,
        prefix,
        (value, bm) -> {
          if (m.matches(value) == accepted) {
            parts.add(bm);
          }
        });
    return parts.isEmpty() ? new RoaringBitmap() : RoaringBitmap.or(parts.iterator());
  }
}
