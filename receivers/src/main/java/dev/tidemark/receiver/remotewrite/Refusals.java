package dev.tidemark.receiver.remotewrite;

import dev.tidemark.tsdb.append.RejectReason;
import java.util.Arrays;

/**
 * The refusals of one request, which make its answer: samples counted by {@link Reason} (the
 * metrics' {@code reason} label), the first {@link #MAX_LISTED} listed one per line (the 400 body,
 * as Prometheus' {@code http.Error} lines), the rest counted. Reused per thread; not thread-safe.
 */
final class Refusals {

  /** Lines of refusals listed in one answer; the rest are counted. */
  static final int MAX_LISTED = 10;

  /** Why samples were refused: the {@code reason} label. */
  enum Reason {
    INVALID_LABELS("invalid_labels"),
    OUT_OF_ORDER("out_of_order"),
    DUPLICATE("duplicate"),
    TOO_OLD("too_old"),
    TOO_FAR_IN_FUTURE("too_far_in_future"),
    INVALID("invalid"),
    LIMIT_EXCEEDED("limit_exceeded"),
    SERIES_LIMIT("series_limit"),
    KIND_CONFLICT("kind_conflict"),
    NATIVE_HISTOGRAM("native_histogram");

    final String label;

    Reason(String label) {
      this.label = label;
    }

    static Reason of(RejectReason r) {
      return switch (r) {
        case OUT_OF_ORDER -> OUT_OF_ORDER;
        case DUPLICATE -> DUPLICATE;
        case TOO_OLD -> TOO_OLD;
        case TOO_FAR_IN_FUTURE -> TOO_FAR_IN_FUTURE;
        case INVALID -> INVALID;
        case LIMIT_EXCEEDED -> LIMIT_EXCEEDED;
        case SERIES_LIMIT -> SERIES_LIMIT;
        case KIND_CONFLICT -> KIND_CONFLICT;
      };
    }
  }

  final long[] byReason = new long[Reason.values().length];
  private final StringBuilder listed = new StringBuilder();
  private int count;

  void reset() {
    Arrays.fill(byReason, 0);
    listed.setLength(0);
    count = 0;
  }

  /**
   * One refusal: {@code samples} counted under {@code reason} (null: counted nowhere, e.g. a 2.0
   * series without samples) and {@code line} listed if there is room.
   */
  void add(Reason reason, String line, long samples) {
    if (reason != null) {
      byReason[reason.ordinal()] += samples;
    }
    if (count < MAX_LISTED) {
      if (count > 0) {
        listed.append('\n');
      }
      listed.append(line);
    }
    count++;
  }

  /** A sample the engine refused, in Prometheus' words. */
  void add(RejectReason why, String detail, String seriesText, long timestampMillis) {
    add(
        Reason.of(why),
        prometheusWording(why)
            + (detail != null ? " (" + detail + ")" : "")
            + " for series "
            + seriesText
            + " at "
            + timestampMillis,
        1);
  }

  /** True if nothing was refused. */
  boolean none() {
    return count == 0;
  }

  /** The answer's body: the listed lines, then how many more there were. */
  String message() {
    if (count <= MAX_LISTED) {
      return listed.toString();
    }
    return listed
        + "\n(and "
        + (count - MAX_LISTED)
        + " more errors; "
        + count
        + " in all, the first "
        + MAX_LISTED
        + " listed)";
  }

  /** The engine's reasons in Prometheus' words ({@code storage.Err...}). */
  static String prometheusWording(RejectReason r) {
    return switch (r) {
      case TOO_FAR_IN_FUTURE -> "out of bounds: timestamp is too far in the future";
      case INVALID -> "out of bounds: invalid sample";
      default -> r.description(); // already Prometheus' words
    };
  }
}
