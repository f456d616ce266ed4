package dev.tidemark.promql.parser;

import dev.tidemark.tsdb.query.LabelMatcher;
import java.time.Duration;
import java.util.List;
import java.util.Objects;

/**
 * An instant vector selector: {@code foo{a="b", c=~"d.*"} @ 100 offset 5m}.
 *
 * @param name the metric name written before the braces, or "" when there is none ({@code
 *     {__name__="foo"}}, {@code {"foo"}})
 * @param matchers every matcher, in query order, with the implied {@code __name__="name"} matcher
 *     last when {@code name} is not empty; a name written inside the braces ({@code {"foo"}}) is a
 *     {@code __name__} matcher in its place. Unmodifiable
 * @param offset the {@code offset} as written (negative for {@code offset -5m}); {@link
 *     Duration#ZERO} when there is none
 * @param at the {@code @} modifier, or null when there is none
 * @param positionRange from the name (or the brace) to the end of the last modifier
 * @param offsetExpr the offset when written as a {@link DurationExpr} ({@code offset step()}), else
 *     null; {@code offset} is then zero until the engine resolves it
 * @param extendedRange {@code anchored} or {@code smoothed}, written after the selector or, for a
 *     range selector, after its range; {@link ExtendedRange#NONE} when neither is
 */
public record VectorSelector(
    String name,
    List<LabelMatcher> matchers,
    Duration offset,
    AtModifier at,
    PositionRange positionRange,
    DurationExpr offsetExpr,
    ExtendedRange extendedRange)
    implements Expr {

  public VectorSelector {
    matchers = List.copyOf(matchers);
    Objects.requireNonNull(extendedRange, "extendedRange");
  }

  /** A selector without {@code anchored} or {@code smoothed}. */
  public VectorSelector(
      String name,
      List<LabelMatcher> matchers,
      Duration offset,
      AtModifier at,
      PositionRange positionRange,
      DurationExpr offsetExpr) {
    this(name, matchers, offset, at, positionRange, offsetExpr, ExtendedRange.NONE);
  }

  /** A selector whose offset, if any, is a plain duration. */
  public VectorSelector(
      String name,
      List<LabelMatcher> matchers,
      Duration offset,
      AtModifier at,
      PositionRange positionRange) {
    this(name, matchers, offset, at, positionRange, null, ExtendedRange.NONE);
  }

  /** Whether an offset was written, as a duration or as an expression. */
  public boolean hasOffset() {
    return !offset.isZero() || offsetExpr != null;
  }

  @Override
  public ValueType type() {
    return ValueType.VECTOR;
  }

  VectorSelector withOffset(Duration newOffset, DurationExpr newOffsetExpr, int end) {
    return new VectorSelector(
        name,
        matchers,
        newOffset,
        at,
        new PositionRange(positionRange.start(), end),
        newOffsetExpr,
        extendedRange);
  }

  VectorSelector withAt(AtModifier newAt, int end) {
    return new VectorSelector(
        name,
        matchers,
        offset,
        newAt,
        new PositionRange(positionRange.start(), end),
        offsetExpr,
        extendedRange);
  }

  /** This selector with {@code anchored} or {@code smoothed}; the position range stays. */
  public VectorSelector withExtendedRange(ExtendedRange newExtendedRange) {
    return new VectorSelector(
        name, matchers, offset, at, positionRange, offsetExpr, newExtendedRange);
  }

  @Override
  public String toString() {
    return Printer.print(this);
  }
}
