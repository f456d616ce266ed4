package dev.tidemark.tsdb.codec;

import dev.tidemark.tsdb.model.Labels;
import java.nio.charset.StandardCharsets;

/**
 * Builds and parses the RFC 0001 record keys ({@code docs/format.md}). Keys are big-endian and
 * compare as unsigned bytes; every key starts with the version byte {@link #VERSION} and the record
 * tag (record type in the high nibble, bucket-size code or {@code 0} in the low nibble), and
 * bucket-scoped keys continue with the 4-byte {@code time_bucket}.
 *
 * <pre>
 * BucketList        01 10
 * SeriesDictionary  01 2s &lt;bucket:4&gt; &lt;fingerprint high:8&gt; &lt;fingerprint low:8&gt;
 * ForwardIndex      01 3s &lt;bucket:4&gt; &lt;series_id:4&gt;
 * InvertedIndex     01 4s &lt;bucket:4&gt; &lt;terminated(label name)&gt; &lt;raw value bytes&gt;
 * TimeSeries        01 5s &lt;bucket:4&gt; &lt;series_id:4&gt;
 * Schema            01 70
 * HeadChunk         01 9s &lt;bucket:4&gt; &lt;series_id:4&gt; &lt;part:4&gt;
 * </pre>
 *
 * <p>Builders allocate exactly one array of the final size (strings are measured, then encoded into
 * it) and hand it to the caller. Decoders check version, tag and length before reading and throw
 * {@link CorruptRecordException} for anything wrong, never an index exception. Series ids are
 * {@code u32} values held in an {@code int}.
 *
 * <p>Stateless and thread-safe.
 */
public final class Keys {

  /** The key format version, the first byte of every key. */
  public static final int VERSION = 0x01;

  /** Length of {@code version | tag | time_bucket}, the prefix of every bucket-scoped key. */
  public static final int BUCKET_PREFIX_LENGTH = 6;

  /** Length of a SeriesDictionary key. */
  public static final int SERIES_DICTIONARY_LENGTH = BUCKET_PREFIX_LENGTH + 16;

  /** Length of a ForwardIndex or TimeSeries key. */
  public static final int SERIES_KEY_LENGTH = BUCKET_PREFIX_LENGTH + 4;

  /** Length of a HeadChunk key. */
  public static final int HEAD_CHUNK_KEY_LENGTH = BUCKET_PREFIX_LENGTH + 8;

  private static final int GLOBAL_KEY_LENGTH = 2;

  private Keys() {}

  // ------------------------------------------------------------------------------------ builders

  /** The BucketList key, {@code 01 10}. */
  public static byte[] bucketList() {
    return new byte[] {VERSION, (byte) 0x10};
  }

  /** The Schema key, {@code 01 70} (engine record, see {@code docs/architecture.md}). */
  public static byte[] schema() {
    return new byte[] {VERSION, (byte) 0x70};
  }

  /** The Metadata key of a family, {@code 01 80 <name UTF-8>} (engine record). */
  public static byte[] metadata(String family) {
    byte[] name = family.getBytes(StandardCharsets.UTF_8);
    byte[] key = new byte[GLOBAL_KEY_LENGTH + name.length];
    key[0] = VERSION;
    key[1] = (byte) 0x80;
    System.arraycopy(name, 0, key, GLOBAL_KEY_LENGTH, name.length);
    return key;
  }

  /** The prefix of every Metadata key, {@code 01 80}: one scan reads them all. */
  public static byte[] metadataPrefix() {
    return new byte[] {VERSION, (byte) 0x80};
  }

  /**
   * {@code version | tag | time_bucket} for a bucket-scoped record type: every scan of that type in
   * that bucket stays inside this prefix.
   *
   * @throws IllegalArgumentException if {@code type} is a global record type
   */
  public static byte[] bucketPrefix(RecordType type, TimeBucket b) {
    byte[] k = new byte[BUCKET_PREFIX_LENGTH];
    putPrefix(k, type, b);
    return k;
  }

  /** The SeriesDictionary key of a fingerprint: high 64 bits, then low 64 bits, big-endian. */
  public static byte[] seriesDictionary(TimeBucket b, long fingerprintHigh, long fingerprintLow) {
    byte[] k = new byte[SERIES_DICTIONARY_LENGTH];
    putPrefix(k, RecordType.SERIES_DICTIONARY, b);
    Bytes.putLongBe(k, BUCKET_PREFIX_LENGTH, fingerprintHigh);
    Bytes.putLongBe(k, BUCKET_PREFIX_LENGTH + 8, fingerprintLow);
    return k;
  }

  /** The SeriesDictionary key of a label set (its {@link Labels#fingerprintHigh() fingerprint}). */
  public static byte[] seriesDictionary(TimeBucket b, Labels labels) {
    return seriesDictionary(b, labels.fingerprintHigh(), labels.fingerprintLow());
  }

  /** The ForwardIndex key of a series id (a u32 held in an int). */
  public static byte[] forwardIndex(TimeBucket b, int seriesId) {
    return seriesKey(RecordType.FORWARD_INDEX, b, seriesId);
  }

  /** The TimeSeries key of a series id (a u32 held in an int). */
  public static byte[] timeSeries(TimeBucket b, int seriesId) {
    return seriesKey(RecordType.TIME_SERIES, b, seriesId);
  }

  /**
   * The HeadChunk key of part {@code part} (a u32 held in an int) of series {@code seriesId} in an
   * open bucket (engine record, {@code docs/format.md}): the series id, then the part number, both
   * big-endian, so one series' parts are adjacent and in part order.
   */
  public static byte[] headChunk(TimeBucket b, int seriesId, int part) {
    byte[] k = new byte[HEAD_CHUNK_KEY_LENGTH];
    putPrefix(k, RecordType.HEAD_CHUNK, b);
    Bytes.putIntBe(k, BUCKET_PREFIX_LENGTH, seriesId);
    Bytes.putIntBe(k, BUCKET_PREFIX_LENGTH + 4, part);
    return k;
  }

  /**
   * The lowest possible key of a HeadChunk record and the key past the highest, over every bucket
   * and size code: {@code 01 90} and {@code 01 a0}. One range delete over them drops every frozen
   * part a store holds (what recovery does).
   */
  public static byte[][] headChunkRange() {
    return new byte[][] {
      {VERSION, (byte) (RecordType.HEAD_CHUNK.id() << 4)},
      {VERSION, (byte) ((RecordType.HEAD_CHUNK.id() + 1) << 4)}
    };
  }

  /**
   * The InvertedIndex key of a label pair: {@code terminated(UTF-8 name)} then the raw UTF-8 value.
   * {@code ("", "")} is the all-series key ({@link #invertedIndexAllSeries}); {@code (name, "")} is
   * the same bytes as {@link #invertedIndexLabelPrefix}, the lowest key of that label.
   *
   * @throws IllegalArgumentException for an empty name with a non-empty value, or a string with an
   *     unpaired surrogate
   */
  public static byte[] invertedIndex(TimeBucket b, String labelName, String labelValue) {
    if (labelName.isEmpty() && !labelValue.isEmpty()) {
      throw new IllegalArgumentException(
          "an inverted index key with an empty label name must have an empty value, was "
              + ValueWriter.abbreviate(labelValue));
    }
    int nameLen = TerminatedBytes.encodedLength(labelName);
    int valueLen = ValueWriter.utf8Length(labelValue);
    byte[] k = new byte[BUCKET_PREFIX_LENGTH + nameLen + valueLen];
    putPrefix(k, RecordType.INVERTED_INDEX, b);
    int off = TerminatedBytes.encode(labelName, k, BUCKET_PREFIX_LENGTH);
    ValueWriter.putUtf8Bytes(labelValue, k, off);
    return k;
  }

  /**
   * The InvertedIndex key whose posting list holds every series of the bucket: empty name, empty
   * value, i.e. {@code 01 4s <bucket:4> 00}.
   */
  public static byte[] invertedIndexAllSeries(TimeBucket b) {
    byte[] k = new byte[BUCKET_PREFIX_LENGTH + 1];
    putPrefix(k, RecordType.INVERTED_INDEX, b);
    return k; // the last byte is the terminator 0x00 of the empty name
  }

  /**
   * The prefix of the InvertedIndex keys of all values of {@code labelName}: the bucket prefix and
   * the terminated name. No key of another label starts with it.
   *
   * @throws IllegalArgumentException if the name is empty or has an unpaired surrogate
   */
  public static byte[] invertedIndexLabelPrefix(TimeBucket b, String labelName) {
    if (labelName.isEmpty()) {
      throw new IllegalArgumentException("label name must not be empty");
    }
    byte[] k = new byte[BUCKET_PREFIX_LENGTH + TerminatedBytes.encodedLength(labelName)];
    putPrefix(k, RecordType.INVERTED_INDEX, b);
    TerminatedBytes.encode(labelName, k, BUCKET_PREFIX_LENGTH);
    return k;
  }

  // ------------------------------------------------------------------------------------ decoders

  /**
   * The record type of a key, after checking the version byte, that the tag's low nibble fits the
   * type's scope (0 for global, a size code 1..15 for bucket-scoped), and the key's length (exact
   * for fixed-size keys, a minimum for InvertedIndex and engine keys).
   *
   * @throws CorruptRecordException if any of these checks fails
   */
  public static RecordType recordType(byte[] key) {
    if (key.length < GLOBAL_KEY_LENGTH) {
      throw new CorruptRecordException(
          "key of " + key.length + " bytes is shorter than version and tag");
    }
    if (key[0] != VERSION) {
      throw new CorruptRecordException(
          "unknown key version 0x" + hex(key[0]) + " (supported: 0x01) in key " + hex(key));
    }
    int tag = key[1] & 0xFF;
    RecordType type;
    try {
      type = RecordType.fromId(tag >>> 4);
    } catch (IllegalArgumentException e) {
      throw new CorruptRecordException(
          "unknown record type in tag 0x" + hex(key[1]) + " of key " + hex(key), e);
    }
    int low = tag & 0x0F;
    if (type.bucketScoped() ? low == 0 : low != 0) {
      throw new CorruptRecordException(
          "tag 0x"
              + hex(key[1])
              + " has a size code of "
              + low
              + ", invalid for "
              + type
              + " in key "
              + hex(key));
    }
    boolean lengthOk =
        switch (type) {
          case BUCKET_LIST, SCHEMA -> key.length == GLOBAL_KEY_LENGTH;
          case SERIES_DICTIONARY -> key.length == SERIES_DICTIONARY_LENGTH;
          case FORWARD_INDEX, TIME_SERIES -> key.length == SERIES_KEY_LENGTH;
          case HEAD_CHUNK -> key.length == HEAD_CHUNK_KEY_LENGTH;
          case INVERTED_INDEX -> key.length > BUCKET_PREFIX_LENGTH; // at least the terminator
          // The rest of the key is the engine's; at least the prefix of its scope must be there.
          case METADATA -> key.length > GLOBAL_KEY_LENGTH; // a name is never empty
          case HEAD_LOG ->
              key.length >= (type.bucketScoped() ? BUCKET_PREFIX_LENGTH : GLOBAL_KEY_LENGTH);
        };
    if (!lengthOk) {
      throw new CorruptRecordException(
          type + " key has a wrong length of " + key.length + ": " + hex(key));
    }
    return type;
  }

  /**
   * The time bucket of a bucket-scoped key.
   *
   * @throws CorruptRecordException if the key is invalid ({@link #recordType}), global, or its
   *     bucket is not aligned to its size
   */
  public static TimeBucket timeBucket(byte[] key) {
    RecordType type = recordType(key);
    if (!type.bucketScoped()) {
      throw new CorruptRecordException(type + " key has no time bucket: " + hex(key));
    }
    return bucketOf(key);
  }

  /**
   * The series id (a u32 in an int) of a ForwardIndex or TimeSeries key.
   *
   * @throws CorruptRecordException if the key is invalid or of another type
   */
  public static int seriesId(byte[] key) {
    RecordType type = recordType(key);
    if (type != RecordType.FORWARD_INDEX && type != RecordType.TIME_SERIES) {
      throw new CorruptRecordException(
          "expected a ForwardIndex or TimeSeries key, got " + type + ": " + hex(key));
    }
    bucketOf(key);
    return Bytes.getIntBe(key, BUCKET_PREFIX_LENGTH);
  }

  /**
   * The series id (a u32 in an int) of a HeadChunk key.
   *
   * @throws CorruptRecordException if the key is invalid or of another type
   */
  public static int headChunkSeriesId(byte[] key) {
    expect(key, RecordType.HEAD_CHUNK);
    return Bytes.getIntBe(key, BUCKET_PREFIX_LENGTH);
  }

  /**
   * The part number (a u32 in an int) of a HeadChunk key.
   *
   * @throws CorruptRecordException if the key is invalid or of another type
   */
  public static int headChunkPart(byte[] key) {
    expect(key, RecordType.HEAD_CHUNK);
    return Bytes.getIntBe(key, BUCKET_PREFIX_LENGTH + 4);
  }

  /** The high 64 bits of the fingerprint in a SeriesDictionary key. */
  public static long fingerprintHigh(byte[] key) {
    expect(key, RecordType.SERIES_DICTIONARY);
    return Bytes.getLongBe(key, BUCKET_PREFIX_LENGTH);
  }

  /** The low 64 bits of the fingerprint in a SeriesDictionary key. */
  public static long fingerprintLow(byte[] key) {
    expect(key, RecordType.SERIES_DICTIONARY);
    return Bytes.getLongBe(key, BUCKET_PREFIX_LENGTH + 8);
  }

  /**
   * The {@code {name, value}} of an InvertedIndex key; {@code {"", ""}} for the all-series key.
   *
   * @throws CorruptRecordException if the key is invalid or of another type, the name has no
   *     terminator or a bad escape, either string is not valid UTF-8, or the name is empty while
   *     the value is not
   */
  public static String[] invertedIndexLabel(byte[] key) {
    expect(key, RecordType.INVERTED_INDEX);
    int end = TerminatedBytes.end(key, BUCKET_PREFIX_LENGTH, key.length);
    String name =
        TerminatedBytes.decodeUtf8(key, BUCKET_PREFIX_LENGTH, end, "InvertedIndex key label name");
    String value =
        ValueReader.decodeUtf8(key, end, key.length - end, "InvertedIndex key label value");
    if (name.isEmpty() && !value.isEmpty()) {
      throw new CorruptRecordException(
          "InvertedIndex key with an empty label name has a value: " + hex(key));
    }
    return new String[] {name, value};
  }

  // ------------------------------------------------------------------------------------ helpers

  private static void expect(byte[] key, RecordType expected) {
    RecordType type = recordType(key);
    if (type != expected) {
      throw new CorruptRecordException(
          "expected a " + expected + " key, got " + type + ": " + hex(key));
    }
    bucketOf(key);
  }

  private static TimeBucket bucketOf(byte[] key) {
    try {
      return new TimeBucket(key[1] & 0x0F, Bytes.getIntBe(key, 2));
    } catch (IllegalArgumentException e) {
      throw new CorruptRecordException(
          "invalid time bucket in key " + hex(key) + ": " + e.getMessage(), e);
    }
  }

  private static byte[] seriesKey(RecordType type, TimeBucket b, int seriesId) {
    byte[] k = new byte[SERIES_KEY_LENGTH];
    putPrefix(k, type, b);
    Bytes.putIntBe(k, BUCKET_PREFIX_LENGTH, seriesId);
    return k;
  }

  private static void putPrefix(byte[] k, RecordType type, TimeBucket b) {
    if (!type.bucketScoped()) {
      throw new IllegalArgumentException(
          type + " is a global record type and has no bucket prefix");
    }
    k[0] = VERSION;
    k[1] = (byte) (type.id() << 4 | b.sizeCode());
    Bytes.putIntBe(k, 2, b.startMinutes());
  }

  private static String hex(byte b) {
    return String.format("%02x", b & 0xFF);
  }

  /** Lower-case hex of a key, abbreviated past 64 bytes, for messages. */
  static String hex(byte[] key) {
    StringBuilder sb = new StringBuilder(Math.min(key.length, 64) * 2 + 16);
    for (int i = 0; i < key.length && i < 64; i++) {
      sb.append(Character.forDigit((key[i] >>> 4) & 0xF, 16))
          .append(Character.forDigit(key[i] & 0xF, 16));
    }
    if (key.length > 64) {
      sb.append("… (").append(key.length).append(" bytes)");
    }
    return sb.toString();
  }
}
