package dev.tidemark.server.admin;

import dev.tidemark.tsdb.query.LabelMatcher;
import java.util.List;
import java.util.stream.Collectors;

/**
 * PromQL's rule for a series selector: at least one matcher must not match the empty string. A
 * matcher that matches "" also matches every series without its label ({@code {nosuch=""}}, {@code
 * {job=~".*"}}, {@code {job!="x"}}), so a selector made only of such matchers, or of none ({@code
 * {}}), selects every series: Prometheus refuses it with {@value #MESSAGE}, and so do the admin API
 * and {@code tidemark admin} whenever a selector or matchers are given. Stateless.
 */
final class SelectorRule {

  /** Prometheus' message for the refused selector, verbatim. */
  static final String MESSAGE = "vector selector must contain at least one non-empty matcher";

  private SelectorRule() {}

  /** Whether some matcher rejects the empty string (the selector does not select every series). */
  static boolean hasNonEmptyMatcher(List<LabelMatcher> matchers) {
    for (LabelMatcher m : matchers) {
      if (!m.matchesEmpty()) {
        return true;
      }
    }
    return false;
  }

  /**
   * @throws IllegalArgumentException starting with {@value #MESSAGE} if every matcher matches the
   *     empty string (or there is none)
   */
  static void check(List<LabelMatcher> matchers) {
    if (hasNonEmptyMatcher(matchers)) {
      return;
    }
    String selector =
        matchers.stream().map(LabelMatcher::toString).collect(Collectors.joining(", ", "{", "}"));
    throw new IllegalArgumentException(
        MESSAGE
            + ": "
            + selector
            + (matchers.isEmpty()
                ? " has no matcher"
                : (matchers.size() == 1 ? " matches" : " all match")
                    + " the empty string, i.e. series without the label too")
            + ", so it would select every series");
  }
}
