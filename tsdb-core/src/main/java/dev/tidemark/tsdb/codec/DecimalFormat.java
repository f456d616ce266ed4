package dev.tidemark.tsdb.codec;

/**
 * Constants and helpers shared by {@link DecimalEncoder} and {@link DecimalDecoder}. The layout is
 * described in {@code docs/format.md}, section "Decimal chunk (TimeSeries encoding 0x02)".
 */
final class DecimalFormat {
  private DecimalFormat() {}

  /** Residuals per mini-block (the last block of a chunk may be shorter). */
  static final int BLOCK = 128;

  /** Largest decimal exponent: {@code 10^18} is the largest power of ten below {@code 2^63}. */
  static final int MAX_EXPONENT = 18;

  /** Flag bit: every timestamp delta equals the base delta; no timestamp mini-blocks. */
  static final int FLAG_REGULAR = 0x01;

  /** Flag bit: value residuals are delta-of-delta of the scaled integers (else delta). */
  static final int FLAG_VALUE_DOD = 0x02;

  /**
   * Flag bit: timestamp residuals are offsets from the grid {@code t0 + i * step} (the base delta
   * is the step), not deltas of deltas. Never together with {@link #FLAG_REGULAR}.
   */
  static final int FLAG_TS_GRID = 0x04;

  static final int KNOWN_FLAGS = FLAG_REGULAR | FLAG_VALUE_DOD | FLAG_TS_GRID;

  /** {@code POW10[e] = 10^e}, every one exact in a double (5^18 < 2^53). */
  static final double[] POW10 = new double[MAX_EXPONENT + 1];

  static {
    double p = 1;
    for (int e = 0; e <= MAX_EXPONENT; e++) {
      POW10[e] = p;
      p *= 10;
    }
  }

  /**
   * The value bits of scaled integer {@code m} at exponent {@code e}: {@code (double) m / 10^e}.
   */
  static long valueBits(long m, int e) {
    return Double.doubleToRawLongBits(m / POW10[e]);
  }
}
