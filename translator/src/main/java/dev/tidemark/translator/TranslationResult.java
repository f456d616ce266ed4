package dev.tidemark.translator;

import java.util.Collections;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

/**
 * The outcome of one {@link Translator#translate} call: every OTLP data point of the request is
 * either accepted or rejected for exactly one {@link RejectionReason}. Immutable.
 *
 * <p>The receiver puts {@link #rejectedDataPoints()} and {@link #partialSuccessMessage()} into
 * {@code ExportMetricsPartialSuccess}; it leaves {@code partial_success} unset when {@link
 * #isFullSuccess()}.
 */
public final class TranslationResult {
  /** Warnings listed in the message at most; the rest are counted. */
  static final int MAX_WARNINGS_IN_MESSAGE = 10;

  private final int totalDataPoints;
  private final int rejectedDataPoints;
  private final Map<RejectionReason, Integer> counts;
  private final Map<RejectionReason, String> examples;
  private final Map<RejectionReason, String> details;
  private final List<String> warnings;
  private final int samplesWritten;

  TranslationResult(
      int totalDataPoints,
      Map<RejectionReason, Integer> counts,
      Map<RejectionReason, String> examples,
      Map<RejectionReason, String> details,
      List<String> warnings,
      int samplesWritten) {
    this.totalDataPoints = totalDataPoints;
    int r = 0;
    for (int c : counts.values()) {
      r += c;
    }
    this.rejectedDataPoints = r;
    this.counts =
        Collections.unmodifiableMap(
            new EnumMap<>(counts.isEmpty() ? new EnumMap<>(RejectionReason.class) : counts));
    this.examples =
        Collections.unmodifiableMap(
            examples.isEmpty() ? new EnumMap<>(RejectionReason.class) : new EnumMap<>(examples));
    this.details =
        Collections.unmodifiableMap(
            details.isEmpty() ? new EnumMap<>(RejectionReason.class) : new EnumMap<>(details));
    this.warnings = List.copyOf(warnings);
    this.samplesWritten = samplesWritten;
  }

  /** OTLP data points in the request. */
  public int totalDataPoints() {
    return totalDataPoints;
  }

  /** OTLP data points not written (the value for {@code rejected_data_points}). */
  public int rejectedDataPoints() {
    return rejectedDataPoints;
  }

  public int acceptedDataPoints() {
    return totalDataPoints - rejectedDataPoints;
  }

  /** Rejected points for {@code reason} (0 if none). */
  public int rejected(RejectionReason reason) {
    return counts.getOrDefault(reason, 0);
  }

  /** Non-zero counts per reason, in enum order. */
  public Map<RejectionReason, Integer> rejectedByReason() {
    return counts;
  }

  /**
   * The Prometheus (or, for name errors, OTLP) name of one metric rejected for {@code reason}, or
   * null.
   */
  public String exampleMetric(RejectionReason reason) {
    return examples.get(reason);
  }

  /** The first detail message recorded for {@code reason} (e.g. the conflicting types), or null. */
  public String detail(RejectionReason reason) {
    return details.get(reason);
  }

  /**
   * Warnings (attribute collisions, metadata conflicts, ...), de-duplicated, in order of first
   * occurrence.
   */
  public List<String> warnings() {
    return warnings;
  }

  /** Samples the appender accepted (including synthetic ones such as target_info). */
  public int samplesWritten() {
    return samplesWritten;
  }

  /** No rejections and no warnings: leave {@code partial_success} unset. */
  public boolean isFullSuccess() {
    return rejectedDataPoints == 0 && warnings.isEmpty();
  }

  /**
   * The English {@code error_message} for OTLP partial success: each reason with its count and an
   * example metric, then the warnings. Empty on full success.
   */
  public String partialSuccessMessage() {
    if (isFullSuccess()) {
      return "";
    }
    StringBuilder sb = new StringBuilder();
    if (rejectedDataPoints > 0) {
      sb.append("rejected ")
          .append(rejectedDataPoints)
          .append(" of ")
          .append(totalDataPoints)
          .append(" data points: ");
      boolean first = true;
      for (Map.Entry<RejectionReason, Integer> e : counts.entrySet()) {
        if (!first) {
          sb.append("; ");
        }
        first = false;
        RejectionReason r = e.getKey();
        sb.append(e.getValue()).append(' ').append(r.description()).append(" (").append(r.name());
        String ex = examples.get(r);
        if (ex != null) {
          sb.append(", e.g. metric \"").append(ex).append('"');
        }
        String d = details.get(r);
        if (d != null) {
          sb.append(": ").append(d);
        }
        sb.append(')');
      }
    }
    if (!warnings.isEmpty()) {
      if (sb.length() > 0) {
        sb.append(". ");
      }
      sb.append("warnings: ");
      int n = Math.min(warnings.size(), MAX_WARNINGS_IN_MESSAGE);
      for (int i = 0; i < n; i++) {
        if (i > 0) {
          sb.append("; ");
        }
        sb.append(warnings.get(i));
      }
      if (warnings.size() > n) {
        sb.append("; and ").append(warnings.size() - n).append(" more");
      }
    }
    return sb.toString();
  }

  @Override
  public String toString() {
    return "TranslationResult{total="
        + totalDataPoints
        + ", rejected="
        + rejectedDataPoints
        + ", byReason="
        + counts
        + ", warnings="
        + warnings.size()
        + "}";
  }
}
