package dev.tidemark.tsdb.codec;

/**
 * The SeriesDictionary value ({@code docs/format.md}): {@code FixedElementArray<series_id: u32
 * LE>}, the ids of the series whose label sets have the fingerprint of the key. Normally one id;
 * after an XXH3-128 collision several, told apart through their ForwardIndex labels. The value is
 * never empty (a fingerprint without series has no key).
 *
 * <p>Stateless and thread-safe.
 */
public final class SeriesDictionaryValue {

  /** Bytes per element. */
  public static final int ELEMENT_SIZE = 4;

  private static final String WHAT = "SeriesDictionary value";

  private SeriesDictionaryValue() {}

  /**
   * Encodes the series ids (u32 values held in ints) in the given order.
   *
   * @throws IllegalArgumentException if there are none
   */
  public static byte[] encode(int... seriesIds) {
    if (seriesIds.length == 0) {
      throw new IllegalArgumentException("a SeriesDictionary value needs at least one series id");
    }
    ValueWriter w = new ValueWriter(seriesIds.length * ELEMENT_SIZE);
    for (int id : seriesIds) {
      w.putU32(id);
    }
    return w.finish();
  }

  /**
   * Decodes the series ids.
   *
   * @throws CorruptRecordException if the value is empty or its length is not a multiple of 4
   */
  public static int[] decode(byte[] value) {
    if (value.length == 0 || value.length % ELEMENT_SIZE != 0) {
      throw new CorruptRecordException(
          WHAT + ": length " + value.length + " is not a positive multiple of " + ELEMENT_SIZE);
    }
    int[] ids = new int[value.length / ELEMENT_SIZE];
    for (int i = 0; i < ids.length; i++) {
      ids[i] = Bytes.getIntLe(value, i * ELEMENT_SIZE);
    }
    return ids;
  }
}
