package dev.tidemark.tsdb.codec;

/**
 * The record type: the high nibble of the record tag, the second byte of every key ({@code
 * docs/format.md}). The ids are persisted: never renumber, never reuse a retired id.
 *
 * <p>{@code 0x0} is reserved. {@code 0x1}–{@code 0x5} are the RFC 0001 records. {@code 0x6}–{@code
 * 0xF} are for engine records the RFC does not cover; a constant is added here only when the engine
 * defines the record, and each is documented in {@code docs/format.md}.
 *
 * <p>A <em>global</em> record has {@code 0} in the tag's low nibble; a <em>bucket-scoped</em>
 * record has the bucket-size code (1..15) there, followed by the 4-byte {@code time_bucket}.
 */
public enum RecordType {
  /** The list of buckets that hold data. Global: key {@code 01 10}. */
  BUCKET_LIST(0x1, false),
  /** Label-set fingerprint → series id(s), per bucket. */
  SERIES_DICTIONARY(0x2, true),
  /** Series id → metadata and labels, per bucket. */
  FORWARD_INDEX(0x3, true),
  /** Label name and value → posting list of series ids, per bucket. */
  INVERTED_INDEX(0x4, true),
  /** Series id → the samples of that series in the bucket, per bucket. */
  TIME_SERIES(0x5, true),
  /**
   * Engine record: the log of not-yet-sealed head samples, for crash recovery. Bucket-scoped (its
   * key is {@code 01 6s <bucket:4> <seq:8>}) so sealing or dropping a bucket deletes its log with
   * one range delete; the value is defined in the engine section of {@code docs/format.md}, see
   * {@code docs/architecture.md}.
   */
  HEAD_LOG(0x6, true),
  /**
   * Engine record: the schema record (schema version and the settings fixed at creation). Global
   * scope, key {@code 01 70}; the value is defined in the engine section of {@code docs/format.md},
   * see {@code docs/architecture.md}.
   */
  SCHEMA(0x7, false),
  /**
   * Engine record: the metadata of one metric family (TYPE, UNIT, HELP), what {@code
   * /api/v1/metadata} serves. Global scope, key {@code 01 80 <family name, UTF-8>}; the value is
   * defined in the engine section of {@code docs/format.md}.
   */
  METADATA(0x8, false),
  /**
   * Engine record: one frozen part of a head series in an open bucket (issue #22), written when the
   * head freezes the series and deleted when the bucket leaves the head or the store is opened
   * again. Bucket-scoped, key {@code 01 9s <bucket:4> <series_id:4> <part:4>}, value a TimeSeries
   * value; defined in the engine section of {@code docs/format.md}.
   */
  HEAD_CHUNK(0x9, true);

  private static final RecordType[] BY_ID = new RecordType[16];

  static {
    for (RecordType t : values()) {
      BY_ID[t.id] = t;
    }
  }

  private final int id;
  private final boolean bucketScoped;

  RecordType(int id, boolean bucketScoped) {
    this.id = id;
    this.bucketScoped = bucketScoped;
  }

  /** The persisted id (1..15), the high nibble of the record tag. */
  public int id() {
    return id;
  }

  /**
   * Whether keys of this type carry a bucket-size code in the tag's low nibble and a {@code
   * time_bucket} after the tag; false for global records (low nibble 0).
   */
  public boolean bucketScoped() {
    return bucketScoped;
  }

  /**
   * The record tag byte for this type and a bucket-size code ({@code 0} for global records).
   *
   * @throws IllegalArgumentException if the code does not fit the scope
   */
  public int tag(int sizeCode) {
    if (bucketScoped ? sizeCode < 1 || sizeCode > 15 : sizeCode != 0) {
      throw new IllegalArgumentException(
          "size code "
              + sizeCode
              + " is invalid for "
              + (bucketScoped ? "bucket-scoped " : "global ")
              + this);
    }
    return id << 4 | sizeCode;
  }

  /**
   * The type with this persisted id.
   *
   * @throws IllegalArgumentException for an id that is reserved or not defined
   */
  public static RecordType fromId(int id) {
    RecordType t = id >= 0 && id < BY_ID.length ? BY_ID[id] : null;
    if (t == null) {
      throw new IllegalArgumentException("unknown record type id 0x" + Integer.toHexString(id));
    }
    return t;
  }
}
