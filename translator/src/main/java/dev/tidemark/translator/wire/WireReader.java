package dev.tidemark.translator.wire;

import dev.tidemark.tsdb.codec.Bytes;
import dev.tidemark.tsdb.codec.Varints;

/**
 * A cursor over protobuf wire bytes: the one reader of the hand-written decoders, OTLP's in-place
 * walk ({@code dev.tidemark.translator.OtlpWire}, {@code InPlace}) and remote write's {@code
 * WriteDecoder}. It reads the primitives only (tags, varints, fixed32/64, length prefixes, unknown
 * fields skipped); what a field means is the decoder's.
 *
 * <p><b>Rules</b> (protobuf's encoding spec, as protobuf-java and the Go decoders read it): a
 * varint is at most 10 bytes, any form, bits past the 64th dropped ({@link Varints#read}); a tag is
 * a varint of at most 32 bits with a field number of at least 1; a length must fit in what is left
 * before {@code end}; groups (wire types 3 and 4) are skipped as a whole when {@link #skip(int,
 * int, int)} is given room for them ({@link #MAX_DEPTH}), an end-group tag outside its group and
 * wire types 6 and 7 are errors. Every read checks its bounds against the {@code end} it is given
 * (the end of the enclosing message) and throws {@link Malformed} with what and where, never
 * reading past it: a truncated or lying input cannot index out of the array.
 *
 * <p><b>Cost.</b> Reads allocate nothing (the varint slot is the reader's own); the hot paths keep
 * one reader per thread and {@link #reset} it per message. Only a failure allocates (its message).
 *
 * <p>Not thread-safe. {@link #buf} and {@link #pos} are public so that a decoder reads string and
 * bytes fields in place ({@code buf[pos, pos + length)}) and moves past them.
 */
public class WireReader {
  /** Deepest group nesting {@link #skip(int, int, int)} follows (below protobuf's limit, 100). */
  public static final int MAX_DEPTH = 64;

  public static final int WT_VARINT = 0;
  public static final int WT_FIXED64 = 1;
  public static final int WT_LEN = 2;
  public static final int WT_START_GROUP = 3;
  public static final int WT_END_GROUP = 4;
  public static final int WT_FIXED32 = 5;

  /** The bytes read. */
  public byte[] buf;

  /** Where the next read starts. */
  public int pos;

  /** The slot {@link Varints#read} reads into. */
  private final long[] varint = new long[1];

  public WireReader() {}

  public WireReader(byte[] buf, int pos) {
    this.buf = buf;
    this.pos = pos;
  }

  /** Reads {@code b} from {@code p} on. */
  public final void reset(byte[] b, int p) {
    buf = b;
    pos = p;
  }

  /** The tag of field {@code field} with wire type {@code wireType}. */
  public static int tag(int field, int wireType) {
    return field << 3 | wireType;
  }

  /** A tag: a varint of at most 32 bits, field number at least 1 (the wire type is not checked). */
  public final int tag(int end) {
    int at = pos;
    long t = varint(end);
    if ((t >>> 3) == 0 || t > 0xFFFF_FFFFL) {
      throw new Malformed("illegal tag " + Long.toUnsignedString(t) + " at byte " + at);
    }
    return (int) t;
  }

  /** A varint as protobuf reads it (at most 10 bytes, bits past the 64th dropped). */
  public final long varint(int end) {
    int p = Varints.read(buf, pos, end, varint);
    if (p < 0) {
      throw new Malformed(
          (p == Varints.TRUNCATED ? "truncated varint" : "varint over 10 bytes")
              + " at byte "
              + pos);
    }
    pos = p;
    return varint[0];
  }

  /** A little-endian fixed64. */
  public final long fixed64(int end) {
    if (end - pos < 8) {
      throw new Malformed("truncated fixed64 at byte " + pos);
    }
    long v = Bytes.getLongLe(buf, pos);
    pos += 8;
    return v;
  }

  /** A little-endian fixed32. */
  public final int fixed32(int end) {
    if (end - pos < 4) {
      throw new Malformed("truncated fixed32 at byte " + pos);
    }
    int v = Bytes.getIntLe(buf, pos);
    pos += 4;
    return v;
  }

  /** A length prefix that fits before {@code end}; the cursor is then at the field's first byte. */
  public final int length(int end) {
    long n = varint(end);
    if (n < 0 || n > end - pos) {
      throw new Malformed(
          "length "
              + Long.toUnsignedString(n)
              + " at byte "
              + pos
              + " runs past the end of its message");
    }
    return (int) n;
  }

  /** Skips the field whose tag was just read; groups are refused (no sender of ours uses them). */
  public final void skip(int tag, int end) {
    int wt = tag & 7;
    if (wt == WT_START_GROUP || wt == WT_END_GROUP) {
      throw new Malformed("unsupported wire type " + wt + " for field " + (tag >>> 3));
    }
    skip(tag, end, 0);
  }

  /**
   * Skips the field whose tag was just read, a group with all it holds (nested at most {@link
   * #MAX_DEPTH} deep, counting {@code depth} already).
   */
  public final void skip(int tag, int end, int depth) {
    switch (tag & 7) {
      case WT_VARINT -> varint(end);
      case WT_FIXED64 -> {
        if (end - pos < 8) {
          throw new Malformed("truncated fixed64 field " + (tag >>> 3) + " at byte " + pos);
        }
        pos += 8;
      }
      case WT_LEN -> {
        int n = length(end);
        pos += n;
      }
      case WT_FIXED32 -> {
        if (end - pos < 4) {
          throw new Malformed("truncated fixed32 field " + (tag >>> 3) + " at byte " + pos);
        }
        pos += 4;
      }
      case WT_START_GROUP -> {
        if (depth >= MAX_DEPTH) {
          throw new Malformed("groups nested over " + MAX_DEPTH + " deep at byte " + pos);
        }
        int field = tag >>> 3;
        while (true) {
          if (pos >= end) {
            throw new Malformed("group of field " + field + " not ended");
          }
          int t = tag(end);
          if ((t & 7) == WT_END_GROUP) {
            if ((t >>> 3) != field) {
              throw new Malformed(
                  "end of group " + (t >>> 3) + " inside group " + field + " at byte " + pos);
            }
            return;
          }
          skip(t, end, depth + 1);
        }
      }
      default ->
          throw new Malformed(
              (tag & 7) == WT_END_GROUP
                  ? "end of group " + (tag >>> 3) + " outside a group at byte " + pos
                  : "unsupported wire type " + (tag & 7) + " for field " + (tag >>> 3));
    }
  }

  /**
   * The bytes cannot be read as protobuf; the message says what and at which byte. No stack trace:
   * decoders turn it into an answer, or (OTLP) into a second opinion from protobuf-java.
   */
  public static final class Malformed extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public Malformed(String message) {
      super(message, null, false, false);
    }
  }
}
