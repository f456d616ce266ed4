package dev.tidemark.translator;

import com.dynatrace.hash4j.hashing.Hasher64;
import com.dynatrace.hash4j.hashing.Hashing;
import dev.tidemark.translator.wire.WireReader;
import dev.tidemark.tsdb.codec.Bytes;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * The protobuf wire format of {@code ExportMetricsServiceRequest}, read in place: a validating walk
 * ({@link #isValid}) and the reader the in-place translation uses ({@link Reader}: the shared
 * {@link WireReader} and the walk's memory of attribute runs).
 *
 * <p>{@link #isValid} accepts only what protobuf-java's {@code
 * ExportMetricsServiceRequest.parseFrom} accepts (it may refuse a little more: nesting deeper than
 * {@link #MAX_DEPTH}, below protobuf's limit of 100; a tag or a length prefix whose varint holds
 * more than 32 bits, which protobuf-java truncates and {@link WireReader} refuses). It follows the
 * generated parsers: a field is known only with its declared wire type (any other tag is an unknown
 * field and skipped by its wire type, groups included); every {@code string} field must be valid
 * UTF-8 (no overlong forms, surrogates or code points above U+10FFFF); {@code repeated} scalars may
 * come packed or unpacked, and a packed run must hold whole elements; tag 0, wire types 6 and 7, an
 * end-group tag outside its group, lengths below 0 or past the end, and varints longer than 10
 * bytes are errors. Where this walk refuses, the caller asks protobuf-java for the verdict and its
 * message, so a stricter walk costs time, never a different answer.
 */
final class OtlpWire {
  static final int MAX_DEPTH = WireReader.MAX_DEPTH;
  private static final Hasher64 XXH3_64 = Hashing.xxh3_64();

  // Message types of the schema the walk knows.
  static final int REQUEST = 0;
  static final int RESOURCE_METRICS = 1;
  static final int RESOURCE = 2;
  static final int ENTITY_REF = 3;
  static final int SCOPE_METRICS = 4;
  static final int SCOPE = 5;
  static final int KEY_VALUE = 6;
  static final int ANY_VALUE = 7;
  static final int ARRAY_VALUE = 8;
  static final int KV_LIST = 9;
  static final int METRIC = 10;
  static final int GAUGE = 11;
  static final int SUM = 12;
  static final int HISTOGRAM = 13;
  static final int EXP_HISTOGRAM = 14;
  static final int SUMMARY = 15;
  static final int NUMBER_DP = 16;
  static final int HISTOGRAM_DP = 17;
  static final int EXP_DP = 18;
  static final int BUCKETS = 19;
  static final int SUMMARY_DP = 20;
  static final int QUANTILE = 21;
  static final int EXEMPLAR = 22;

  // What a known tag holds (besides sub-messages, which are >= 0: their type).
  private static final int UNKNOWN = -1;
  private static final int STRING = -2;
  private static final int VARINT = -3;
  private static final int FIXED64 = -4;
  private static final int BYTES = -5;
  private static final int PACKED_FIXED64 = -6;
  private static final int PACKED_VARINT = -7;

  static final int WT_VARINT = WireReader.WT_VARINT;
  static final int WT_FIXED64 = WireReader.WT_FIXED64;
  static final int WT_LEN = WireReader.WT_LEN;
  static final int WT_START_GROUP = WireReader.WT_START_GROUP;
  static final int WT_END_GROUP = WireReader.WT_END_GROUP;
  static final int WT_FIXED32 = WireReader.WT_FIXED32;

  private OtlpWire() {}

  static int tag(int field, int wireType) {
    return WireReader.tag(field, wireType);
  }

  /** What {@code tag} holds in message type {@code type}: a sub-message type or a kind above. */
  static int kind(int type, int tag) {
    switch (type) {
      case REQUEST:
        return tag == (1 << 3 | WT_LEN) ? RESOURCE_METRICS : UNKNOWN;
      case RESOURCE_METRICS:
        switch (tag) {
          case 1 << 3 | WT_LEN:
            return RESOURCE;
          case 2 << 3 | WT_LEN:
            return SCOPE_METRICS;
          case 3 << 3 | WT_LEN:
            return STRING;
          default:
            return UNKNOWN;
        }
      case RESOURCE:
        switch (tag) {
          case 1 << 3 | WT_LEN:
            return KEY_VALUE;
          case 2 << 3 | WT_VARINT:
            return VARINT;
          case 3 << 3 | WT_LEN:
            return ENTITY_REF;
          default:
            return UNKNOWN;
        }
      case ENTITY_REF:
        switch (tag) {
          case 1 << 3 | WT_LEN, 2 << 3 | WT_LEN, 3 << 3 | WT_LEN, 4 << 3 | WT_LEN:
            return STRING;
          default:
            return UNKNOWN;
        }
      case SCOPE_METRICS:
        switch (tag) {
          case 1 << 3 | WT_LEN:
            return SCOPE;
          case 2 << 3 | WT_LEN:
            return METRIC;
          case 3 << 3 | WT_LEN:
            return STRING;
          default:
            return UNKNOWN;
        }
      case SCOPE:
        switch (tag) {
          case 1 << 3 | WT_LEN, 2 << 3 | WT_LEN:
            return STRING;
          case 3 << 3 | WT_LEN:
            return KEY_VALUE;
          case 4 << 3 | WT_VARINT:
            return VARINT;
          default:
            return UNKNOWN;
        }
      case KEY_VALUE:
        switch (tag) {
          case 1 << 3 | WT_LEN:
            return STRING;
          case 2 << 3 | WT_LEN:
            return ANY_VALUE;
          case 3 << 3 | WT_VARINT:
            return VARINT;
          default:
            return UNKNOWN;
        }
      case ANY_VALUE:
        switch (tag) {
          case 1 << 3 | WT_LEN:
            return STRING;
          case 2 << 3 | WT_VARINT, 3 << 3 | WT_VARINT, 8 << 3 | WT_VARINT:
            return VARINT;
          case 4 << 3 | WT_FIXED64:
            return FIXED64;
          case 5 << 3 | WT_LEN:
            return ARRAY_VALUE;
          case 6 << 3 | WT_LEN:
            return KV_LIST;
          case 7 << 3 | WT_LEN:
            return BYTES;
          default:
            return UNKNOWN;
        }
      case ARRAY_VALUE:
        return tag == (1 << 3 | WT_LEN) ? ANY_VALUE : UNKNOWN;
      case KV_LIST:
        return tag == (1 << 3 | WT_LEN) ? KEY_VALUE : UNKNOWN;
      case METRIC:
        switch (tag) {
          case 1 << 3 | WT_LEN, 2 << 3 | WT_LEN, 3 << 3 | WT_LEN:
            return STRING;
          case 5 << 3 | WT_LEN:
            return GAUGE;
          case 7 << 3 | WT_LEN:
            return SUM;
          case 9 << 3 | WT_LEN:
            return HISTOGRAM;
          case 10 << 3 | WT_LEN:
            return EXP_HISTOGRAM;
          case 11 << 3 | WT_LEN:
            return SUMMARY;
          case 12 << 3 | WT_LEN:
            return KEY_VALUE;
          default:
            return UNKNOWN;
        }
      case GAUGE:
        return tag == (1 << 3 | WT_LEN) ? NUMBER_DP : UNKNOWN;
      case SUM:
        switch (tag) {
          case 1 << 3 | WT_LEN:
            return NUMBER_DP;
          case 2 << 3 | WT_VARINT, 3 << 3 | WT_VARINT:
            return VARINT;
          default:
            return UNKNOWN;
        }
      case HISTOGRAM:
        switch (tag) {
          case 1 << 3 | WT_LEN:
            return HISTOGRAM_DP;
          case 2 << 3 | WT_VARINT:
            return VARINT;
          default:
            return UNKNOWN;
        }
      case EXP_HISTOGRAM:
        switch (tag) {
          case 1 << 3 | WT_LEN:
            return EXP_DP;
          case 2 << 3 | WT_VARINT:
            return VARINT;
          default:
            return UNKNOWN;
        }
      case SUMMARY:
        return tag == (1 << 3 | WT_LEN) ? SUMMARY_DP : UNKNOWN;
      case NUMBER_DP:
        switch (tag) {
          case 7 << 3 | WT_LEN:
            return KEY_VALUE;
          case 2 << 3 | WT_FIXED64, 3 << 3 | WT_FIXED64, 4 << 3 | WT_FIXED64, 6 << 3 | WT_FIXED64:
            return FIXED64;
          case 5 << 3 | WT_LEN:
            return EXEMPLAR;
          case 8 << 3 | WT_VARINT:
            return VARINT;
          default:
            return UNKNOWN;
        }
      case HISTOGRAM_DP:
        switch (tag) {
          case 9 << 3 | WT_LEN:
            return KEY_VALUE;
          case 2 << 3 | WT_FIXED64,
          3 << 3 | WT_FIXED64,
          4 << 3 | WT_FIXED64,
          5 << 3 | WT_FIXED64,
          6 << 3 | WT_FIXED64,
          7 << 3 | WT_FIXED64,
          11 << 3 | WT_FIXED64,
          12 << 3 | WT_FIXED64:
            return FIXED64;
          case 6 << 3 | WT_LEN, 7 << 3 | WT_LEN:
            return PACKED_FIXED64;
          case 8 << 3 | WT_LEN:
            return EXEMPLAR;
          case 10 << 3 | WT_VARINT:
            return VARINT;
          default:
            return UNKNOWN;
        }
      case EXP_DP:
        switch (tag) {
          case 1 << 3 | WT_LEN:
            return KEY_VALUE;
          case 2 << 3 | WT_FIXED64,
          3 << 3 | WT_FIXED64,
          4 << 3 | WT_FIXED64,
          5 << 3 | WT_FIXED64,
          7 << 3 | WT_FIXED64,
          12 << 3 | WT_FIXED64,
          13 << 3 | WT_FIXED64,
          14 << 3 | WT_FIXED64:
            return FIXED64;
          case 6 << 3 | WT_VARINT, 10 << 3 | WT_VARINT:
            return VARINT;
          case 8 << 3 | WT_LEN, 9 << 3 | WT_LEN:
            return BUCKETS;
          case 11 << 3 | WT_LEN:
            return EXEMPLAR;
          default:
            return UNKNOWN;
        }
      case BUCKETS:
        switch (tag) {
          case 1 << 3 | WT_VARINT, 2 << 3 | WT_VARINT:
            return VARINT;
          case 2 << 3 | WT_LEN:
            return PACKED_VARINT;
          default:
            return UNKNOWN;
        }
      case SUMMARY_DP:
        switch (tag) {
          case 7 << 3 | WT_LEN:
            return KEY_VALUE;
          case 2 << 3 | WT_FIXED64, 3 << 3 | WT_FIXED64, 4 << 3 | WT_FIXED64, 5 << 3 | WT_FIXED64:
            return FIXED64;
          case 6 << 3 | WT_LEN:
            return QUANTILE;
          case 8 << 3 | WT_VARINT:
            return VARINT;
          default:
            return UNKNOWN;
        }
      case QUANTILE:
        switch (tag) {
          case 1 << 3 | WT_FIXED64, 2 << 3 | WT_FIXED64:
            return FIXED64;
          default:
            return UNKNOWN;
        }
      case EXEMPLAR:
        switch (tag) {
          case 7 << 3 | WT_LEN:
            return KEY_VALUE;
          case 2 << 3 | WT_FIXED64, 3 << 3 | WT_FIXED64, 6 << 3 | WT_FIXED64:
            return FIXED64;
          case 4 << 3 | WT_LEN, 5 << 3 | WT_LEN:
            return BYTES;
          default:
            return UNKNOWN;
        }
      default:
        throw new AssertionError(type);
    }
  }

  /**
   * Whether protobuf-java would parse {@code buf[off, off + len)} as an
   * ExportMetricsServiceRequest.
   */
  static boolean isValid(byte[] buf, int off, int len) {
    return isValid(buf, off, len, null);
  }

  /**
   * {@link #isValid(byte[], int, int)}, skipping the check of a data point's attributes when their
   * bytes (the run of adjacent attribute fields, tags included) equal a run in {@code known}: runs
   * of streams the in-place path has seen, so bytes that were checked before (indexed by the low
   * bits of their XXH3-64, see {@link #attributeHash}). Null: check everything.
   */
  static boolean isValid(byte[] buf, int off, int len, AtomicReferenceArray<byte[]> known) {
    return isValid(buf, off, len, known, new Reader(null, 0, 0));
  }

  /**
   * As above, walking with {@code r}, which then holds the hashes of the attribute runs looked up.
   */
  static boolean isValid(
      byte[] buf, int off, int len, AtomicReferenceArray<byte[]> known, Reader r) {
    if (off < 0 || len < 0 || off + len > buf.length) {
      return false;
    }
    try {
      r.reset(buf, off);
      r.known = known;
      r.noRunBefore = 0;
      r.runs = 0;
      message(r, REQUEST, off + len, 0);
      return true;
    } catch (WireReader.Malformed e) {
      return false;
    }
  }

  private static void message(Reader r, int type, int end, int depth) {
    if (depth > MAX_DEPTH) {
      throw new WireReader.Malformed("nested over " + MAX_DEPTH + " deep at byte " + r.pos);
    }
    int attributeTag = attributeTag(type);
    while (r.pos < end) {
      int at = r.pos;
      int tag = r.tag(end);
      if (tag == attributeTag
          && r.known != null
          && at >= r.noRunBefore
          && knownRun(r, at, tag, end)) {
        continue;
      }
      int k = kind(type, tag);
      switch (k) {
        case UNKNOWN -> r.skip(tag, end, depth);
        case STRING -> {
          int n = r.length(end);
          if (!isValidUtf8(r.buf, r.pos, r.pos + n)) {
            throw new WireReader.Malformed("invalid UTF-8 in a string at byte " + r.pos);
          }
          r.pos += n;
        }
        case VARINT -> r.varint(end);
        case FIXED64 -> r.fixed64(end);
        case BYTES -> {
          int skipLen = r.length(end);
          r.pos += skipLen;
        }
        case PACKED_FIXED64 -> {
          int n = r.length(end);
          if ((n & 7) != 0) {
            throw new WireReader.Malformed("packed fixed64 of " + n + " bytes at byte " + r.pos);
          }
          r.pos += n;
        }
        case PACKED_VARINT -> {
          int n = r.length(end);
          int stop = r.pos + n;
          while (r.pos < stop) {
            r.varint(stop);
          }
        }
        default -> {
          int n = r.length(end);
          message(r, k, r.pos + n, depth + 1);
        }
      }
    }
  }

  /** The attributes' tag of a data point type, or -1. */
  private static int attributeTag(int type) {
    return switch (type) {
      case NUMBER_DP, SUMMARY_DP -> tag(7, WT_LEN);
      case HISTOGRAM_DP -> tag(9, WT_LEN);
      case EXP_DP -> tag(1, WT_LEN);
      default -> -1;
    };
  }

  /** The hash of a run of attribute bytes, as the in-place path's stream lookup computes it. */
  static long attributeHash(byte[] b, int off, int len) {
    return XXH3_64.hashBytesToLong(b, off, len);
  }

  /**
   * At an attribute field (its tag just read, starting at {@code at}): if the run of adjacent
   * attribute fields from there equals a known run, moves past it and returns true; otherwise
   * leaves the cursor after the tag and returns false. Reads only what the plain walk would read
   * next, so it throws only where that would.
   */
  private static boolean knownRun(Reader r, int at, int tag, int end) {
    int afterTag = r.pos;
    int runEnd;
    while (true) {
      int n = r.length(end);
      r.pos += n;
      runEnd = r.pos;
      if (r.pos >= end) {
        break;
      }
      int t = r.tag(end);
      if (t != tag) {
        break;
      }
    }
    byte[] b = r.buf;
    int len = runEnd - at;
    long h = attributeHash(b, at, len);
    r.addRun(at, len, h);
    AtomicReferenceArray<byte[]> known = r.known;
    byte[] k = known.get((int) h & (known.length() - 1));
    if (k != null && Arrays.equals(k, 0, k.length, b, at, runEnd)) {
      r.pos = runEnd;
      return true;
    }
    r.pos = afterTag;
    r.noRunBefore = runEnd; // its fields are checked one by one now
    return false;
  }

  /**
   * Strict UTF-8 as protobuf-java checks it ({@code Utf8.isValidUtf8}): no overlong forms, no
   * surrogates, nothing above U+10FFFF, no truncated sequence.
   */
  static boolean isValidUtf8(byte[] b, int i, int end) {
    while (i + 8 <= end && (Bytes.getLongLe(b, i) & 0x8080808080808080L) == 0) {
      i += 8;
    }
    while (i < end && b[i] >= 0) {
      i++;
    }
    while (i < end) {
      int c = b[i++];
      if (c >= 0) {
        continue;
      }
      if (c < (byte) 0xE0) { // 2 bytes
        if (i >= end || c < (byte) 0xC2 || b[i++] > (byte) 0xBF) {
          return false;
        }
      } else if (c < (byte) 0xF0) { // 3 bytes
        if (i + 1 >= end) {
          return false;
        }
        int c2 = b[i++];
        if (c2 > (byte) 0xBF
            || (c == (byte) 0xE0 && c2 < (byte) 0xA0)
            || (c == (byte) 0xED && c2 >= (byte) 0xA0)
            || b[i++] > (byte) 0xBF) {
          return false;
        }
      } else { // 4 bytes
        if (i + 2 >= end) {
          return false;
        }
        int c2 = b[i++];
        if (c2 > (byte) 0xBF
            || (((c << 28) + (c2 - (byte) 0x90)) >> 30) != 0
            || b[i++] > (byte) 0xBF
            || b[i++] > (byte) 0xBF) {
          return false;
        }
      }
    }
    return true;
  }

  /**
   * The shared {@link WireReader} with what the validating walk remembers: the known-run table it
   * consults and the attribute runs it hashed.
   */
  static final class Reader extends WireReader {
    AtomicReferenceArray<byte[]> known;

    /** No known-run lookup for attribute fields before this position (a run that missed). */
    int noRunBefore;

    /**
     * Attribute runs hashed by the walk, in wire order: start, length, hash. Allocated on the first
     * run: a reader made for one lookup (a new stream's attributes) hashes none, and 4 KB of arrays
     * per new stream were 8 % of the CPU samples while a million series were created (JFR, session
     * 10).
     */
    private int[] runAt = new int[0];

    private int[] runLen = new int[0];
    private long[] runHashes = new long[0];
    int runs;
    private int runCursor;

    void addRun(int at, int len, long h) {
      if (runs == runAt.length) {
        int n = Math.max(256, runs * 2);
        runAt = Arrays.copyOf(runAt, n);
        runLen = Arrays.copyOf(runLen, n);
        runHashes = Arrays.copyOf(runHashes, n);
      }
      runAt[runs] = at;
      runLen[runs] = len;
      runHashes[runs++] = h;
    }

    void rewindRuns() {
      runCursor = 0;
    }

    /**
     * The hash the walk computed for the run {@code [at, at + len)}, or 0 if none; asked in
     * increasing {@code at} (the order the translation visits points), so a cursor suffices.
     */
    long runHash(int at, int len) {
      while (runCursor < runs && runAt[runCursor] < at) {
        runCursor++;
      }
      if (runCursor < runs && runAt[runCursor] == at && runLen[runCursor] == len) {
        return runHashes[runCursor];
      }
      return 0;
    }

    Reader(byte[] buf, int pos, int limit) {
      super(buf, pos);
    }
  }
}
