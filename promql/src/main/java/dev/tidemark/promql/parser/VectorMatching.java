package dev.tidemark.promql.parser;

import java.util.List;

/**
 * How the two instant vectors of a {@link BinaryExpr} are matched: {@code on (a, b)} or {@code
 * ignoring (c)}, and {@code group_left (d)} / {@code group_right (d)}.
 *
 * @param card the cardinality: one-to-one by default, many-to-one with {@code group_left},
 *     one-to-many with {@code group_right}, many-to-many for the set operators (always)
 * @param matchingLabels the labels of {@code on} or {@code ignoring}, unmodifiable
 * @param on true for {@code on}, false for {@code ignoring} (or neither)
 * @param include the labels of {@code group_left}/{@code group_right} copied from the "one" side,
 *     unmodifiable
 * @param fillLeft the value of {@code fill_left(v)} (or {@code fill(v)}), standing in for a missing
 *     left-hand sample; null when there is none. Experimental ({@link
 *     ParserOptions#binopFillModifiers()})
 * @param fillRight the value of {@code fill_right(v)} (or {@code fill(v)}) for a missing right-hand
 *     sample; null when there is none
 */
public record VectorMatching(
    Cardinality card,
    List<String> matchingLabels,
    boolean on,
    List<String> include,
    Double fillLeft,
    Double fillRight) {

  /** Matching without fill values. */
  public VectorMatching(
      Cardinality card, List<String> matchingLabels, boolean on, List<String> include) {
    this(card, matchingLabels, on, include, null, null);
  }

  /** Match cardinality, as Prometheus' {@code VectorMatchCardinality}. */
  public enum Cardinality {
    ONE_TO_ONE("one-to-one"),
    MANY_TO_ONE("many-to-one"),
    ONE_TO_MANY("one-to-many"),
    MANY_TO_MANY("many-to-many");

    private final String text;

    Cardinality(String text) {
      this.text = text;
    }

    @Override
    public String toString() {
      return text;
    }
  }

  public VectorMatching {
    matchingLabels = List.copyOf(matchingLabels);
    include = List.copyOf(include);
  }

  VectorMatching withCard(Cardinality newCard) {
    return new VectorMatching(newCard, matchingLabels, on, include, fillLeft, fillRight);
  }

  /** Whether {@code fill}, {@code fill_left} or {@code fill_right} was given. */
  public boolean hasFill() {
    return fillLeft != null || fillRight != null;
  }
}
