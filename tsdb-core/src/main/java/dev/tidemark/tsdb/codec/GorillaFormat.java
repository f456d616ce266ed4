package dev.tidemark.tsdb.codec;

/**
 * Constants and header helpers shared by {@link GorillaEncoder} and {@link GorillaDecoder}. The
 * layout is described in {@code docs/format.md}, section "Gorilla XOR chunk".
 */
final class GorillaFormat {
  private GorillaFormat() {}

  /**
   * Delta-of-delta classes inside the "11" control: class {@code i} has the prefix of {@code i}
   * one-bits then a zero (class 4: four one-bits, no zero) followed by {@code DOD_BITS[i]} bits of
   * two's complement.
   */
  static final int[] DOD_BITS = {7, 9, 16, 24, 64};

  /** Length of the class prefix of class {@code i}. */
  static final int[] DOD_PREFIX_BITS = {1, 2, 3, 4, 4};

  /** Leading zeros of a new XOR window are stored in 5 bits, so larger counts are capped. */
  static final int MAX_LEADING_ZEROS = 31;

  /** Bits of the "new window" header after its '1' bit: 5 bits leading zeros, 6 bits length-1. */
  static final int NEW_WINDOW_HEADER_BITS = 11;
}
