package dev.tidemark.benchmarks;

import java.util.Arrays;

/**
 * Finds and shifts the {@code time_unix_nano} fields of a serialized {@code
 * ExportMetricsServiceRequest} whose metrics are gauges and sums (what {@link OtlpLoadDataset}
 * builds), so that one encoded pass of a dataset can be sent again later in time without encoding
 * it anew. Walks only the path ResourceMetrics(1) → ScopeMetrics(2) → Metric(2) → Gauge(5) or
 * Sum(7) → NumberDataPoint(1) → time_unix_nano(3, fixed64).
 */
final class OtlpTimeFields {
  private OtlpTimeFields() {}

  /** Offsets of every data point's time_unix_nano value (8 bytes, little-endian). */
  static int[] offsets(byte[] body) {
    Offsets out = new Offsets();
    walk(body, 0, body.length, 0, out);
    return Arrays.copyOf(out.at, out.n);
  }

  /** A copy of {@code body} with {@code deltaNanos} added to every time_unix_nano. */
  static byte[] shifted(byte[] body, int[] offsets, long deltaNanos) {
    byte[] b = body.clone();
    for (int at : offsets) {
      long v = 0;
      for (int k = 7; k >= 0; k--) {
        v = (v << 8) | (b[at + k] & 0xFF);
      }
      v += deltaNanos;
      for (int k = 0; k < 8; k++) {
        b[at + k] = (byte) (v >>> (8 * k));
      }
    }
    return b;
  }

  private static final class Offsets {
    int[] at = new int[64];
    int n;

    void add(int p) {
      if (n == at.length) {
        at = Arrays.copyOf(at, n * 2);
      }
      at[n++] = p;
    }
  }

  /** depth: 0 request, 1 ResourceMetrics, 2 ScopeMetrics, 3 Metric, 4 Gauge/Sum, 5 data point. */
  private static void walk(byte[] b, int p, int end, int depth, Offsets out) {
    long[] r = new long[2];
    while (p < end) {
      p = varint(b, p, r);
      int field = (int) (r[0] >>> 3);
      int wire = (int) (r[0] & 7);
      switch (wire) {
        case 0 -> p = varint(b, p, r);
        case 1 -> {
          if (depth == 5 && field == 3) {
            out.add(p);
          }
          p += 8;
        }
        case 5 -> p += 4;
        case 2 -> {
          p = varint(b, p, r);
          int to = p + (int) r[0];
          boolean into =
              (depth == 0 && field == 1)
                  || (depth == 1 && field == 2)
                  || (depth == 2 && field == 2)
                  || (depth == 3 && (field == 5 || field == 7))
                  || (depth == 4 && field == 1);
          if (into) {
            walk(b, p, to, depth + 1, out);
          }
          p = to;
        }
        default -> throw new IllegalArgumentException("wire type " + wire + " at " + p);
      }
    }
  }

  /** Reads a varint at {@code p} into {@code r[0]}; returns the position after it. */
  private static int varint(byte[] b, int p, long[] r) {
    long v = 0;
    int shift = 0;
    while (true) {
      byte x = b[p++];
      v |= (long) (x & 0x7F) << shift;
      if (x >= 0) {
        r[0] = v;
        return p;
      }
      shift += 7;
    }
  }
}
