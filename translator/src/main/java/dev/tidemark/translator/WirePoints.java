package dev.tidemark.translator;

import dev.tidemark.translator.OtlpWire.Reader;
import dev.tidemark.tsdb.codec.Varints;

/**
 * The in-place path's decoding of one data point of each kind from its wire bytes into {@link Pt}
 * (the tree path fills {@code Pt} from the protobuf message with {@code Pt.set}). Field numbers are
 * those of {@code metrics.proto}; the last occurrence of a scalar wins, repeated scalars come
 * packed or not and concatenate, exemplars and unknown fields are skipped. The bytes were checked
 * whole by {@link OtlpWire#isValid} first. Attributes stay bytes: each attribute field's range (tag
 * included) is recorded for the stream lookup ({@link InPlace#entry}).
 */
final class WirePoints {
  private WirePoints() {}

  static void number(Reader r, Pt p, int start, int end) {
    r.pos = start;
    while (r.pos < end) {
      int at = r.pos;
      int tag = r.tag(end);
      switch (tag) {
        case 7 << 3 | OtlpWire.WT_LEN -> {
          int n = r.length(end);
          r.pos += n;
          p.addAttribute(at, r.pos);
        }
        case 2 << 3 | OtlpWire.WT_FIXED64 -> p.startNanos = r.fixed64(end);
        case 3 << 3 | OtlpWire.WT_FIXED64 -> p.timeNanos = r.fixed64(end);
        case 4 << 3 | OtlpWire.WT_FIXED64 -> {
          p.valueCase = Pt.AS_DOUBLE;
          p.asDouble = Double.longBitsToDouble(r.fixed64(end));
        }
        case 6 << 3 | OtlpWire.WT_FIXED64 -> {
          p.valueCase = Pt.AS_INT;
          p.asInt = r.fixed64(end);
        }
        case 8 << 3 | OtlpWire.WT_VARINT -> p.flags = (int) r.varint(end);
        default -> r.skip(tag, end, 0);
      }
    }
  }

  static void histogram(Reader r, Pt p, int start, int end) {
    r.pos = start;
    while (r.pos < end) {
      int at = r.pos;
      int tag = r.tag(end);
      switch (tag) {
        case 9 << 3 | OtlpWire.WT_LEN -> {
          int n = r.length(end);
          r.pos += n;
          p.addAttribute(at, r.pos);
        }
        case 2 << 3 | OtlpWire.WT_FIXED64 -> p.startNanos = r.fixed64(end);
        case 3 << 3 | OtlpWire.WT_FIXED64 -> p.timeNanos = r.fixed64(end);
        case 4 << 3 | OtlpWire.WT_FIXED64 -> p.count = r.fixed64(end);
        case 5 << 3 | OtlpWire.WT_FIXED64 -> {
          p.hasSum = true;
          p.sum = Double.longBitsToDouble(r.fixed64(end));
        }
        case 6 << 3 | OtlpWire.WT_FIXED64 -> p.addCount(r.fixed64(end));
        case 6 << 3 | OtlpWire.WT_LEN -> {
          int eLen = r.length(end);
          int e = r.pos + eLen;
          while (r.pos < e) {
            p.addCount(r.fixed64(e));
          }
        }
        case 7 << 3 | OtlpWire.WT_FIXED64 -> p.addBound(Double.longBitsToDouble(r.fixed64(end)));
        case 7 << 3 | OtlpWire.WT_LEN -> {
          int eLen = r.length(end);
          int e = r.pos + eLen;
          while (r.pos < e) {
            p.addBound(Double.longBitsToDouble(r.fixed64(e)));
          }
        }
        case 10 << 3 | OtlpWire.WT_VARINT -> p.flags = (int) r.varint(end);
        default -> r.skip(tag, end, 0);
      }
    }
  }

  static void exponential(Reader r, Pt p, int start, int end) {
    ExpHistogram h = p.exp;
    r.pos = start;
    while (r.pos < end) {
      int at = r.pos;
      int tag = r.tag(end);
      switch (tag) {
        case 1 << 3 | OtlpWire.WT_LEN -> {
          int n = r.length(end);
          r.pos += n;
          p.addAttribute(at, r.pos);
        }
        case 2 << 3 | OtlpWire.WT_FIXED64 -> p.startNanos = r.fixed64(end);
        case 3 << 3 | OtlpWire.WT_FIXED64 -> p.timeNanos = r.fixed64(end);
        case 4 << 3 | OtlpWire.WT_FIXED64 -> h.count = r.fixed64(end);
        case 5 << 3 | OtlpWire.WT_FIXED64 -> {
          p.hasSum = true;
          h.hasSum = true;
          h.sum = Double.longBitsToDouble(r.fixed64(end));
        }
        case 6 << 3 | OtlpWire.WT_VARINT -> h.scale = Varints.decodeZigZag32((int) r.varint(end));
        case 7 << 3 | OtlpWire.WT_FIXED64 -> h.zeroCount = r.fixed64(end);
        case 8 << 3 | OtlpWire.WT_LEN, 9 << 3 | OtlpWire.WT_LEN -> {
          int eLen = r.length(end);
          int e = r.pos + eLen;
          buckets(r, h, tag >>> 3 == 8, e);
        }
        case 10 << 3 | OtlpWire.WT_VARINT -> p.flags = (int) r.varint(end);
        case 14 << 3 | OtlpWire.WT_FIXED64 ->
            h.zeroThreshold = Double.longBitsToDouble(r.fixed64(end));
        default -> r.skip(tag, end, 0);
      }
    }
  }

  /** One occurrence of a Buckets field: its offset replaces, its counts append (protobuf merge). */
  private static void buckets(Reader r, ExpHistogram h, boolean positive, int end) {
    while (r.pos < end) {
      int tag = r.tag(end);
      switch (tag) {
        case 1 << 3 | OtlpWire.WT_VARINT -> {
          int offset = Varints.decodeZigZag32((int) r.varint(end));
          if (positive) {
            h.posOffset = offset;
          } else {
            h.negOffset = offset;
          }
        }
        case 2 << 3 | OtlpWire.WT_VARINT -> h.addBucket(positive, r.varint(end));
        case 2 << 3 | OtlpWire.WT_LEN -> {
          int eLen = r.length(end);
          int e = r.pos + eLen;
          while (r.pos < e) {
            h.addBucket(positive, r.varint(e));
          }
        }
        default -> r.skip(tag, end, 0);
      }
    }
  }

  static void summary(Reader r, Pt p, int start, int end) {
    r.pos = start;
    while (r.pos < end) {
      int at = r.pos;
      int tag = r.tag(end);
      switch (tag) {
        case 7 << 3 | OtlpWire.WT_LEN -> {
          int n = r.length(end);
          r.pos += n;
          p.addAttribute(at, r.pos);
        }
        case 2 << 3 | OtlpWire.WT_FIXED64 -> p.startNanos = r.fixed64(end);
        case 3 << 3 | OtlpWire.WT_FIXED64 -> p.timeNanos = r.fixed64(end);
        case 4 << 3 | OtlpWire.WT_FIXED64 -> p.count = r.fixed64(end);
        case 5 << 3 | OtlpWire.WT_FIXED64 -> p.sum = Double.longBitsToDouble(r.fixed64(end));
        case 6 << 3 | OtlpWire.WT_LEN -> {
          int eLen = r.length(end);
          int e = r.pos + eLen;
          double q = 0;
          double v = 0;
          while (r.pos < e) {
            int t2 = r.tag(e);
            switch (t2) {
              case 1 << 3 | OtlpWire.WT_FIXED64 -> q = Double.longBitsToDouble(r.fixed64(e));
              case 2 << 3 | OtlpWire.WT_FIXED64 -> v = Double.longBitsToDouble(r.fixed64(e));
              default -> r.skip(t2, e, 0);
            }
          }
          p.addQuantile(q, v);
        }
        case 8 << 3 | OtlpWire.WT_VARINT -> p.flags = (int) r.varint(end);
        default -> r.skip(tag, end, 0);
      }
    }
  }
}
