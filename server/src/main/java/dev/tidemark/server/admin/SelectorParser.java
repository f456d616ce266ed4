package dev.tidemark.server.admin;

import dev.tidemark.promql.parser.ParseException;
import dev.tidemark.promql.parser.PromqlParser;
import dev.tidemark.tsdb.query.LabelMatcher;
import java.util.List;

/**
 * Admin selectors ({@code 'http_requests_total{job="api",code=~"5.."}'}) are PromQL metric
 * selectors, parsed by the PromQL parser itself ({@link PromqlParser#parseMetricSelector}): one
 * grammar for the admin API, the CLI and queries (quoted UTF-8 names, Go string escapes, raw
 * strings). This class only turns its errors into the {@link IllegalArgumentException} the admin
 * API answers with {@code INVALID_ARGUMENT} (and the CLI with exit code 2).
 */
final class SelectorParser {
  private SelectorParser() {}

  /**
   * The matchers of {@code selector}; {@code {}} gives none (the caller applies {@link
   * SelectorRule}).
   *
   * @throws IllegalArgumentException naming the selector, the position and the problem
   */
  static List<LabelMatcher> parse(String selector) {
    try {
      return PromqlParser.parseMetricSelector(selector);
    } catch (ParseException e) {
      throw new IllegalArgumentException(
          "invalid selector '" + selector + "': " + e.getMessage(), e);
    }
  }
}
