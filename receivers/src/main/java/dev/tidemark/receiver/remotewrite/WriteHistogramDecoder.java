package dev.tidemark.receiver.remotewrite;

import dev.tidemark.translator.wire.WireReader;
import dev.tidemark.tsdb.model.CounterResetHint;
import dev.tidemark.tsdb.model.FloatHistogram;
import dev.tidemark.tsdb.model.HistogramLayout;
import dev.tidemark.tsdb.model.IntegerHistogram;
import dev.tidemark.tsdb.model.InvalidHistogramException;
import dev.tidemark.tsdb.model.NativeHistogram;
import java.util.Arrays;

/**
 * One remote-write {@code Histogram} message (1.0's {@code prometheus.Histogram} and 2.0's {@code
 * io.prometheus.write.v2.Histogram}, which share their field numbers; 2.0 adds {@code
 * start_timestamp}) read from the wire into the native histogram model, as Prometheus' {@code
 * ToIntHistogram} and {@code ToFloatHistogram} read it and its appender validates it. Issue #25:
 * {@link WriteDecoder} counts histograms and the receiver refuses them until the engine stores them
 * (docs/architecture.md, "Native histograms"); this is the conversion that step will call with each
 * message's bytes.
 *
 * <p><b>Integer or float.</b> A histogram whose {@code count} oneof holds {@code count_float} is a
 * {@link FloatHistogram}: its zero count is {@code zero_count_float} (0 when the oneof holds the
 * integer member) and its buckets {@code positive_counts}/{@code negative_counts}; any other (no
 * count at all included) is an {@link IntegerHistogram} of {@code count_int}, {@code
 * zero_count_int} and the {@code *_deltas}; the other kind's fields are ignored, as Prometheus
 * ignores them. Schema −53 is custom buckets with {@code custom_values} as bounds.
 *
 * <p><b>Wire rules</b> (protobuf's): fields in any order, the last of a scalar or oneof member
 * wins, repeated numbers packed or not, unknown fields (and known fields with another wire type)
 * skipped, {@code sint32}/{@code sint64} zigzag, {@code uint32} span lengths of 2^31 or more taken
 * as invalid. A reset hint outside 0..3 is refused (Prometheus casts any number to its hint type).
 *
 * <p><b>Refusals.</b> Bytes that are not such a message throw {@link WireReader.Malformed}; a
 * histogram Prometheus' {@code Validate} refuses throws the model's {@link
 * InvalidHistogramException} with its reason and Prometheus' wording. Stateless and thread-safe.
 */
final class WriteHistogramDecoder {
  private WriteHistogramDecoder() {}

  /**
   * A decoded histogram sample.
   *
   * @param startTimestampMillis 2.0's {@code start_timestamp}, 0 when not given (and always for
   *     1.0)
   */
  record Decoded(NativeHistogram histogram, long timestampMillis, long startTimestampMillis) {}

  private static final int COUNT_INT = 1;
  private static final int COUNT_FLOAT = 2;
  private static final int SUM = 3;
  private static final int SCHEMA = 4;
  private static final int ZERO_THRESHOLD = 5;
  private static final int ZERO_COUNT_INT = 6;
  private static final int ZERO_COUNT_FLOAT = 7;
  private static final int NEGATIVE_SPANS = 8;
  private static final int NEGATIVE_DELTAS = 9;
  private static final int NEGATIVE_COUNTS = 10;
  private static final int POSITIVE_SPANS = 11;
  private static final int POSITIVE_DELTAS = 12;
  private static final int POSITIVE_COUNTS = 13;
  private static final int RESET_HINT = 14;
  private static final int TIMESTAMP = 15;
  private static final int CUSTOM_VALUES = 16;
  private static final int START_TIMESTAMP = 17;

  /** A growable run of longs (deltas, or doubles as raw bits). */
  private static final class Longs {
    long[] a = new long[8];
    int n;

    void add(long v) {
      if (n == a.length) {
        a = Arrays.copyOf(a, n * 2);
      }
      a[n++] = v;
    }

    long[] toArray() {
      return Arrays.copyOf(a, n);
    }
  }

  /** A growable run of span (offset, length) pairs. */
  private static final class Spans {
    int[] a = new int[8];
    int n;

    void add(int offset, int length) {
      if (n + 2 > a.length) {
        a = Arrays.copyOf(a, a.length * 2);
      }
      a[n++] = offset;
      a[n++] = length;
    }

    int[] toArray() {
      return Arrays.copyOf(a, n);
    }
  }

  /**
   * Decodes the message in {@code buf[from, to)}.
   *
   * @param v2 whether it is a 2.0 message (whose field 17 is {@code start_timestamp})
   * @throws WireReader.Malformed if the bytes are not a histogram message
   * @throws InvalidHistogramException if Prometheus would refuse the histogram
   * @throws IllegalArgumentException for a reset hint outside 0..3 (the model has no reason for it)
   */
  static Decoded decode(byte[] buf, int from, int to, boolean v2) {
    WireReader r = new WireReader(buf, from);
    int countKind = 0; // 0 none, COUNT_INT or COUNT_FLOAT: the oneof's last member
    long countBits = 0;
    int zeroKind = 0;
    long zeroBits = 0;
    long sumBits = 0;
    int schema = 0;
    long zeroThresholdBits = 0;
    int hint = 0;
    long timestamp = 0;
    long startTimestamp = 0;
    Spans negSpans = new Spans();
    Spans posSpans = new Spans();
    Longs negDeltas = new Longs();
    Longs posDeltas = new Longs();
    Longs negCounts = new Longs();
    Longs posCounts = new Longs();
    Longs custom = new Longs();
    while (r.pos < to) {
      int tag = r.tag(to);
      int field = tag >>> 3;
      int wt = tag & 7;
      switch (field) {
        case COUNT_INT, ZERO_COUNT_INT -> {
          if (wt != WireReader.WT_VARINT) {
            r.skip(tag, to);
          } else if (field == COUNT_INT) {
            countKind = COUNT_INT;
            countBits = r.varint(to);
          } else {
            zeroKind = ZERO_COUNT_INT;
            zeroBits = r.varint(to);
          }
        }
        case COUNT_FLOAT, ZERO_COUNT_FLOAT, SUM, ZERO_THRESHOLD -> {
          if (wt != WireReader.WT_FIXED64) {
            r.skip(tag, to);
            break;
          }
          long bits = r.fixed64(to);
          switch (field) {
            case COUNT_FLOAT -> {
              countKind = COUNT_FLOAT;
              countBits = bits;
            }
            case ZERO_COUNT_FLOAT -> {
              zeroKind = ZERO_COUNT_FLOAT;
              zeroBits = bits;
            }
            case SUM -> sumBits = bits;
            default -> zeroThresholdBits = bits;
          }
        }
        case SCHEMA, RESET_HINT, TIMESTAMP, START_TIMESTAMP -> {
          if (wt != WireReader.WT_VARINT || (field == START_TIMESTAMP && !v2)) {
            r.skip(tag, to);
            break;
          }
          long v = r.varint(to);
          switch (field) {
            case SCHEMA -> schema = zigzag32(v);
            case RESET_HINT -> hint = (int) v;
            case TIMESTAMP -> timestamp = v;
            default -> startTimestamp = v;
          }
        }
        case NEGATIVE_SPANS, POSITIVE_SPANS -> {
          if (wt != WireReader.WT_LEN) {
            r.skip(tag, to);
            break;
          }
          int n = r.length(to);
          span(r, r.pos + n, field == NEGATIVE_SPANS ? negSpans : posSpans);
        }
        case NEGATIVE_DELTAS, POSITIVE_DELTAS -> {
          Longs out = field == NEGATIVE_DELTAS ? negDeltas : posDeltas;
          if (wt == WireReader.WT_VARINT) {
            out.add(zigzag64(r.varint(to)));
          } else if (wt == WireReader.WT_LEN) {
            int n = r.length(to);
            int end = r.pos + n;
            while (r.pos < end) {
              out.add(zigzag64(r.varint(end)));
            }
          } else {
            r.skip(tag, to);
          }
        }
        case NEGATIVE_COUNTS, POSITIVE_COUNTS, CUSTOM_VALUES -> {
          Longs out =
              field == NEGATIVE_COUNTS ? negCounts : field == POSITIVE_COUNTS ? posCounts : custom;
          if (wt == WireReader.WT_FIXED64) {
            out.add(r.fixed64(to));
          } else if (wt == WireReader.WT_LEN) {
            int n = r.length(to);
            if ((n & 7) != 0) {
              throw new WireReader.Malformed(
                  "packed doubles of field " + field + " are " + n + " bytes, not a multiple of 8");
            }
            int end = r.pos + n;
            while (r.pos < end) {
              out.add(r.fixed64(end));
            }
          } else {
            r.skip(tag, to);
          }
        }
        default -> r.skip(tag, to);
      }
    }
    if (hint < 0 || hint > 3) {
      throw new IllegalArgumentException("unknown reset_hint " + hint);
    }
    CounterResetHint h = CounterResetHint.fromId(hint);
    double[] bounds = new double[custom.n];
    for (int i = 0; i < custom.n; i++) {
      bounds[i] = Double.longBitsToDouble(custom.a[i]);
    }
    HistogramLayout layout =
        HistogramLayout.of(
            schema,
            Double.longBitsToDouble(zeroThresholdBits),
            posSpans.toArray(),
            negSpans.toArray(),
            bounds);
    NativeHistogram out;
    if (countKind == COUNT_FLOAT) {
      out =
          FloatHistogram.ofBits(
              layout,
              h,
              countBits,
              zeroKind == ZERO_COUNT_FLOAT ? zeroBits : 0L,
              sumBits,
              posCounts.toArray(),
              negCounts.toArray());
    } else {
      out =
          IntegerHistogram.ofBits(
              layout,
              h,
              countKind == COUNT_INT ? countBits : 0L,
              zeroKind == ZERO_COUNT_INT ? zeroBits : 0L,
              sumBits,
              posDeltas.toArray(),
              negDeltas.toArray());
    }
    return new Decoded(out, timestamp, startTimestamp);
  }

  /** One {@code BucketSpan} message in {@code [r.pos, end)}: sint32 offset 1, uint32 length 2. */
  private static void span(WireReader r, int end, Spans out) {
    int offset = 0;
    long length = 0;
    while (r.pos < end) {
      int tag = r.tag(end);
      if (tag == WireReader.tag(1, WireReader.WT_VARINT)) {
        offset = zigzag32(r.varint(end));
      } else if (tag == WireReader.tag(2, WireReader.WT_VARINT)) {
        length = r.varint(end) & 0xFFFF_FFFFL;
      } else {
        r.skip(tag, end);
      }
    }
    // A length of 2^31 or more cannot be met with buckets: the layout refuses it as negative.
    out.add(offset, (int) length);
  }

  /** {@code sint32}: the varint's low 32 bits, zigzag-decoded. */
  static int zigzag32(long v) {
    int n = (int) v;
    return (n >>> 1) ^ -(n & 1);
  }

  /** {@code sint64}: zigzag-decoded. */
  static long zigzag64(long v) {
    return (v >>> 1) ^ -(v & 1);
  }
}
