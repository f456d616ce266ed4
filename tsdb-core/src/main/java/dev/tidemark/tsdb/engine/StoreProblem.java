package dev.tidemark.tsdb.engine;

import dev.tidemark.tsdb.codec.TimeBucket;
import java.time.Instant;
import java.util.Objects;

/**
 * One inconsistency {@link StoreVerifier} found in a store: what kind, where (bucket and series id,
 * when it has them) and a detail naming the record. Immutable.
 *
 * @param kind the kind of problem
 * @param bucket the bucket of the record, or null for a global record or a key without a bucket
 * @param seriesId the series id (a u32) the problem is about, or -1
 * @param detail what exactly is wrong, naming the record
 */
public record StoreProblem(Kind kind, TimeBucket bucket, long seriesId, String detail) {

  /** The kinds of problems, in the order a report lists them. */
  public enum Kind {
    SCHEMA("schema record missing, unreadable or of another version (repair refuses)"),
    STRAY_KEY("key that is no Tidemark record key"),
    UNDECODABLE_RECORD("record that does not decode"),
    BUCKET_NOT_LISTED("bucket with records missing from the BucketList (its data is invisible)"),
    UNFINISHED_COMPACTION(
        "coarse bucket the BucketList does not name: records of an interrupted compaction (the engine deletes them on open)"),
    LISTED_BUCKET_EMPTY("BucketList names a bucket without records"),
    TIME_SERIES_UNKNOWN_SERIES("TimeSeries record without a ForwardIndex record"),
    HEAD_LOG_UNKNOWN_SERIES("HeadLog record names series without a ForwardIndex record"),
    HEAD_CHUNK_UNKNOWN_SERIES("HeadChunk record without a ForwardIndex record"),
    DICTIONARY_UNKNOWN_SERIES(
        "SeriesDictionary entry names a series without a ForwardIndex record"),
    DICTIONARY_WRONG_FINGERPRINT(
        "SeriesDictionary entry names a series whose labels hash to another fingerprint"),
    SERIES_NOT_IN_DICTIONARY("ForwardIndex series missing from the SeriesDictionary"),
    POSTING_UNKNOWN_SERIES("posting names a series without a ForwardIndex record"),
    POSTING_WRONG_SERIES("posting names a series without that label pair"),
    POSTING_EMPTY("empty posting"),
    SERIES_NOT_IN_POSTINGS("series of a sealed bucket missing from its postings");

    private final String description;

    Kind(String description) {
      this.description = description;
    }

    /** One line, for reports. */
    public String description() {
      return description;
    }
  }

  public StoreProblem {
    Objects.requireNonNull(kind, "kind");
    Objects.requireNonNull(detail, "detail");
  }

  /** {@code 2024-01-15T10:00:00Z series 71: detail}, the bucket and series when known. */
  @Override
  public String toString() {
    StringBuilder sb = new StringBuilder();
    if (bucket != null) {
      sb.append(bucketName(bucket));
    }
    if (seriesId >= 0) {
      sb.append(sb.length() > 0 ? " " : "").append("series ").append(seriesId);
    }
    return sb.append(sb.length() > 0 ? ": " : "").append(detail).toString();
  }

  /** A bucket's start as an RFC 3339 instant, with its size when it is not one hour. */
  static String bucketName(TimeBucket b) {
    String start = Instant.ofEpochMilli(b.startMillis()).toString();
    return b.sizeCode() == TimeBucket.ONE_HOUR ? start : start + " (" + b.sizeHours() + " h)";
  }
}
