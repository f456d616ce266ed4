package dev.tidemark.tsdb.query;

import dev.tidemark.tsdb.model.Labels;
import java.util.List;
import java.util.Objects;

/**
 * A {@link Querier} that hands every call to another one (as Guava's {@code Forwarding*} types):
 * extend it and override only what a wrapper changes (counting, gating, failing a read), so the
 * other calls keep forwarding as {@code Querier} gains methods. Thread-safe if the delegate is.
 */
public abstract class ForwardingQuerier implements Querier {
  private final Querier delegate;

  protected ForwardingQuerier(Querier delegate) {
    this.delegate = Objects.requireNonNull(delegate, "delegate");
  }

  /** The querier every call goes to. */
  protected final Querier delegate() {
    return delegate;
  }

  @Override
  public SeriesSet select(long minT, long maxT, List<LabelMatcher> matchers, QueryContext ctx) {
    return delegate.select(minT, maxT, matchers, ctx);
  }

  @Override
  public List<Labels> series(
      long minT, long maxT, List<LabelMatcher> matchers, int limit, QueryContext ctx) {
    return delegate.series(minT, maxT, matchers, limit, ctx);
  }

  @Override
  public List<String> labelNames(
      long minT, long maxT, List<LabelMatcher> matchers, int limit, QueryContext ctx) {
    return delegate.labelNames(minT, maxT, matchers, limit, ctx);
  }

  @Override
  public List<String> labelValues(
      String name, long minT, long maxT, List<LabelMatcher> matchers, int limit, QueryContext ctx) {
    return delegate.labelValues(name, minT, maxT, matchers, limit, ctx);
  }
}
