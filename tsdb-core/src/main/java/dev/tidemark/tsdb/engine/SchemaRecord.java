package dev.tidemark.tsdb.engine;

import dev.tidemark.tsdb.codec.Bytes;
import dev.tidemark.tsdb.codec.CorruptRecordException;

/**
 * The schema record ({@code 01 70}, docs/format.md): what a store was created with and may never
 * change. Value: {@code schema_version u16 LE, bucket_size_code u8, hash_id u8}.
 *
 * @param schemaVersion {@link #CURRENT_VERSION} for stores this code writes
 * @param bucketSizeCode the ingestion bucket size code (1 = 1 hour)
 * @param hashId the series fingerprint function ({@link #HASH_XXH3_128})
 */
record SchemaRecord(int schemaVersion, int bucketSizeCode, int hashId) {

  static final int CURRENT_VERSION = 1;

  /** XXH3-128, seed 0, over the canonical label bytes. */
  static final int HASH_XXH3_128 = 1;

  byte[] encode() {
    return new byte[] {
      (byte) schemaVersion, (byte) (schemaVersion >>> 8), (byte) bucketSizeCode, (byte) hashId
    };
  }

  static SchemaRecord decode(byte[] v) {
    if (v.length != 4) {
      throw new CorruptRecordException("schema record must be 4 bytes, was " + v.length);
    }
    return new SchemaRecord(Bytes.getU16Le(v, 0), v[2] & 0xFF, v[3] & 0xFF);
  }

  /**
   * Throws {@link IllegalStateException} naming the conflict if a store with {@code stored} can't
   * be opened as {@code this}.
   */
  void checkCompatible(SchemaRecord stored) {
    if (stored.schemaVersion != CURRENT_VERSION) {
      throw new IllegalStateException(
          "store has schema version "
              + stored.schemaVersion
              + ", this Tidemark reads version "
              + CURRENT_VERSION
              + " only");
    }
    if (stored.bucketSizeCode != bucketSizeCode) {
      throw new IllegalStateException(
          "store was created with bucket size code "
              + stored.bucketSizeCode
              + " but the configuration says "
              + bucketSizeCode);
    }
    if (stored.hashId != hashId) {
      throw new IllegalStateException(
          "store was created with series hash id "
              + stored.hashId
              + " but this Tidemark uses "
              + hashId
              + " (XXH3-128)");
    }
  }
}
