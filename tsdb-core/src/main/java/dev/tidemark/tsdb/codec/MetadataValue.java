package dev.tidemark.tsdb.codec;

import dev.tidemark.tsdb.model.FamilyMetadata;
import dev.tidemark.tsdb.model.PromType;

/**
 * The Metadata record ({@code docs/format.md}, engine records): key {@code 01 80 <family name,
 * UTF-8>} ({@link Keys#metadata}), value {@code type: u8} (the {@link PromType#id()}), {@code unit:
 * Utf8}, {@code help: Utf8}.
 *
 * <p>Stateless and thread-safe.
 */
public final class MetadataValue {
  private static final String WHAT = "Metadata value";

  private MetadataValue() {}

  /**
   * Encodes a family's value.
   *
   * @throws IllegalArgumentException if the unit or help has no UTF-8 form or is longer than 65535
   *     UTF-8 bytes
   */
  public static byte[] encode(FamilyMetadata meta) {
    ValueWriter w =
        new ValueWriter(
            1 + ValueWriter.sizeOfUtf8(meta.unit()) + ValueWriter.sizeOfUtf8(meta.help()));
    return w.putU8(meta.type().id()).putUtf8(meta.unit()).putUtf8(meta.help()).finish();
  }

  /**
   * Decodes a Metadata record.
   *
   * @throws CorruptRecordException if the key is not a Metadata key, the name or a string is not
   *     valid UTF-8, the type id is unknown or the value has bytes left over
   */
  public static FamilyMetadata decode(byte[] key, byte[] value) {
    if (Keys.recordType(key) != RecordType.METADATA) {
      throw new CorruptRecordException("not a Metadata key: " + Keys.hex(key));
    }
    String family = ValueReader.decodeUtf8(key, 2, key.length - 2, "Metadata key");
    ValueReader r = new ValueReader(value, WHAT);
    int id = r.u8();
    PromType type = PromType.fromId(id);
    if (type == null) {
      throw new CorruptRecordException(WHAT + ": unknown type id " + id + " for " + family);
    }
    String unit = r.utf8();
    String help = r.utf8();
    r.expectEnd();
    return new FamilyMetadata(family, type, unit, help);
  }
}
