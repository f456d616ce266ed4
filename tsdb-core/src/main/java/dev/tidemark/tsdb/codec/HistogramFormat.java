package dev.tidemark.tsdb.codec;

/**
 * Constants shared by {@link HistogramEncoder} and {@link HistogramDecoder}. The layout is in
 * {@code docs/format.md}, section "Histogram chunk".
 */
final class HistogramFormat {
  private HistogramFormat() {}

  /**
   * Classes of the signed "varbit" integer, by prefix: {@code 0} is the value 0; {@code 10}, {@code
   * 110}, {@code 1110}, {@code 11110} and {@code 11111} are followed by that many bits of two's
   * complement.
   */
  static final int[] VARBIT_BITS = {4, 7, 12, 20, 64};

  /** Leading zeros of a new XOR window are stored in 5 bits, so larger counts are capped. */
  static final int MAX_LEADING_ZEROS = 31;

  /** Bits of a new window's header after its '11': 5 bits leading zeros, 6 bits width - 1. */
  static final int NEW_WINDOW_HEADER_BITS = 11;

  /** Run kind bit: integer counts. */
  static final int KIND_INTEGER = 0;

  /** Run kind bit: float counts. */
  static final int KIND_FLOAT = 1;
}
