package dev.tidemark.tsdb.codec;

import dev.tidemark.tsdb.model.Labels;
import dev.tidemark.tsdb.model.MetricMetadata;
import java.util.Objects;
import java.util.function.UnaryOperator;

/**
 * The ForwardIndex value ({@code docs/format.md}): what a series id of a bucket stands for.
 *
 * <pre>
 * metric_unit  OptionalNonEmptyUtf8   u16 LE length + UTF-8; length 0 = absent (unit "")
 * metric_type  u8                     {@link dev.tidemark.tsdb.model.MetricType} id
 * flags        u8                     bits 0-1 temporality, bit 2 monotonic, bits 3-7 zero
 * labels       Array&lt;(name: Utf8, value: Utf8)&gt;   ONE u16 LE count, then the pairs
 * </pre>
 *
 * <p>Labels are stored in {@link Labels} order (name, UTF-8 byte order), {@code __name__} included.
 * Decoding checks that names are strictly ascending and non-empty and values non-empty, so a
 * decoded value always has a valid label set.
 *
 * @param metadata type, unit, temporality and monotonic flag
 * @param labels the series' labels
 */
public record ForwardIndexValue(MetricMetadata metadata, Labels labels) {

  private static final String WHAT = "ForwardIndex value";

  public ForwardIndexValue {
    Objects.requireNonNull(metadata, "metadata");
    Objects.requireNonNull(labels, "labels");
  }

  /**
   * Encodes the value into one array of the exact size.
   *
   * @throws IllegalArgumentException if the unit, a name or a value is longer than 65535 UTF-8
   *     bytes, there are more than 65535 labels, or the unit has an unpaired surrogate
   */
  public byte[] encode() {
    int n = labels.size();
    if (n > ValueWriter.MAX_U16) {
      throw new IllegalArgumentException(
          "a series has " + n + " labels, more than the u16 limit 65535");
    }
    int size = ValueWriter.sizeOfUtf8(metadata.unit()) + 1 + 1 + 2;
    for (int i = 0; i < n; i++) {
      size += ValueWriter.sizeOfUtf8(labels.name(i)) + ValueWriter.sizeOfUtf8(labels.value(i));
    }
    ValueWriter w = new ValueWriter(size);
    w.putOptionalNonEmptyUtf8(metadata.unit());
    w.putU8(metadata.type().id());
    w.putU8(metadata.flags());
    w.putU16(n);
    for (int i = 0; i < n; i++) {
      w.putUtf8(labels.name(i)).putUtf8(labels.value(i));
    }
    return w.finish();
  }

  /**
   * Decodes a value.
   *
   * @throws CorruptRecordException if it is truncated or has trailing bytes, has invalid UTF-8, an
   *     unknown metric type or reserved flag bits, an empty label name or value, or names that are
   *     not strictly ascending
   */
  public static ForwardIndexValue decode(byte[] value) {
    return decode(value, UnaryOperator.identity());
  }

  /**
   * {@link #decode(byte[])}, passing every decoded label name and value through {@code strings}
   * (which must return an equal string), e.g. to share one instance of each among many label sets.
   *
   * @throws CorruptRecordException as {@link #decode(byte[])}
   */
  public static ForwardIndexValue decode(byte[] value, UnaryOperator<String> strings) {
    ValueReader r = new ValueReader(value, WHAT);
    String unit = r.optionalNonEmptyUtf8();
    int type = r.u8();
    int flags = r.u8();
    MetricMetadata metadata;
    try {
      metadata = MetricMetadata.fromPersisted(type, unit, flags);
    } catch (IllegalArgumentException e) {
      throw new CorruptRecordException(WHAT + ": " + e.getMessage(), e);
    }
    int n = r.u16();
    // Each label takes at least 2 + 1 + 2 + 1 bytes: reject an absurd count before building.
    if (n > r.remaining() / 6) {
      throw new CorruptRecordException(
          WHAT
              + " truncated: "
              + n
              + " labels declared but only "
              + r.remaining()
              + " bytes remain");
    }
    Labels.Builder b = Labels.builder(n);
    String prev = null;
    for (int i = 0; i < n; i++) {
      String name = r.utf8();
      String val = r.utf8();
      if (name.isEmpty()) {
        throw new CorruptRecordException(WHAT + ": label " + i + " has an empty name");
      }
      if (val.isEmpty()) {
        throw new CorruptRecordException(WHAT + ": label " + name + " has an empty value");
      }
      if (prev != null && Labels.compareUtf8(prev, name) >= 0) {
        throw new CorruptRecordException(
            WHAT
                + ": label names not strictly ascending: "
                + ValueWriter.abbreviate(prev)
                + " then "
                + ValueWriter.abbreviate(name));
      }
      b.add(strings.apply(name), strings.apply(val));
      prev = name;
    }
    r.expectEnd();
    return new ForwardIndexValue(metadata, b.build());
  }
}
