package dev.tidemark.tsdb.engine;

import dev.tidemark.tsdb.engine.StoreProblem.Kind;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

/**
 * What {@link StoreVerifier#verify} found: how much it checked, and per {@link Kind} the number of
 * problems and the first {@link #EXAMPLES_PER_KIND} of them. Immutable.
 */
public final class VerifyReport {

  /** Problems kept as examples per kind; the rest are only counted. */
  public static final int EXAMPLES_PER_KIND = 5;

  private final int listedBuckets;
  private final int bucketsWithRecords;
  private final long records;
  private final Map<Kind, Long> counts;
  private final Map<Kind, List<StoreProblem>> examples;

  private VerifyReport(Builder b) {
    this.listedBuckets = b.listedBuckets;
    this.bucketsWithRecords = b.bucketsWithRecords;
    this.records = b.records;
    this.counts = Collections.unmodifiableMap(new EnumMap<>(b.counts));
    EnumMap<Kind, List<StoreProblem>> ex = new EnumMap<>(Kind.class);
    b.examples.forEach((k, v) -> ex.put(k, List.copyOf(v)));
    this.examples = Collections.unmodifiableMap(ex);
  }

  /** Whether no problem was found. */
  public boolean clean() {
    return counts.isEmpty();
  }

  /** The number of problems of every kind. */
  public long problemCount() {
    long n = 0;
    for (long c : counts.values()) {
      n += c;
    }
    return n;
  }

  /** The number of problems of one kind. */
  public long count(Kind kind) {
    return counts.getOrDefault(kind, 0L);
  }

  /** Problem counts by kind, only kinds that occurred, in {@link Kind} order. */
  public Map<Kind, Long> counts() {
    return counts;
  }

  /** The first problems of one kind (at most {@link #EXAMPLES_PER_KIND}). */
  public List<StoreProblem> examples(Kind kind) {
    return examples.getOrDefault(kind, List.of());
  }

  /** Buckets the BucketList names. */
  public int listedBuckets() {
    return listedBuckets;
  }

  /** Buckets that have at least one record of any type, listed or not. */
  public int bucketsWithRecords() {
    return bucketsWithRecords;
  }

  /** Records read (every key of the store). */
  public long records() {
    return records;
  }

  /**
   * The report as text: one summary line, then per kind of problem its count and description and
   * the examples, indented.
   */
  public String format() {
    StringBuilder sb = new StringBuilder();
    sb.append("checked ")
        .append(records)
        .append(" records in ")
        .append(bucketsWithRecords)
        .append(" buckets with records (")
        .append(listedBuckets)
        .append(" in the BucketList)\n");
    if (clean()) {
      return sb.append("no problems found\n").toString();
    }
    long total = problemCount();
    sb.append(total)
        .append(total == 1 ? " problem" : " problems")
        .append(" of ")
        .append(counts.size())
        .append(counts.size() == 1 ? " kind:\n" : " kinds:\n");
    int width = 1;
    for (long c : counts.values()) {
      width = Math.max(width, Long.toString(c).length());
    }
    for (Map.Entry<Kind, Long> e : counts.entrySet()) {
      String n = Long.toString(e.getValue());
      sb.append("  ")
          .append(" ".repeat(width - n.length()))
          .append(n)
          .append("  ")
          .append(e.getKey().description())
          .append(" [")
          .append(e.getKey())
          .append("]\n");
      for (StoreProblem p : examples(e.getKey())) {
        sb.append("  ").append(" ".repeat(width)).append("    ").append(p).append('\n');
      }
      long more = e.getValue() - examples(e.getKey()).size();
      if (more > 0) {
        sb.append("  ")
            .append(" ".repeat(width))
            .append("    ... and ")
            .append(more)
            .append(" more\n");
      }
    }
    return sb.toString();
  }

  @Override
  public String toString() {
    return format();
  }

  /** Collects problems during a check. Not thread-safe. */
  static final class Builder {
    int listedBuckets;
    int bucketsWithRecords;
    long records;
    private final EnumMap<Kind, Long> counts = new EnumMap<>(Kind.class);
    private final EnumMap<Kind, List<StoreProblem>> examples = new EnumMap<>(Kind.class);

    void add(StoreProblem p) {
      counts.merge(p.kind(), 1L, Long::sum);
      List<StoreProblem> list = examples.computeIfAbsent(p.kind(), k -> new ArrayList<>());
      if (list.size() < EXAMPLES_PER_KIND) {
        list.add(p);
      }
    }

    boolean has(Kind kind) {
      return counts.containsKey(kind);
    }

    VerifyReport build() {
      return new VerifyReport(this);
    }
  }
}
