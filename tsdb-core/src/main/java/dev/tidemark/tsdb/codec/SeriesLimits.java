package dev.tidemark.tsdb.codec;

import dev.tidemark.tsdb.model.Labels;
import dev.tidemark.tsdb.model.MetricMetadata;

/**
 * The limits the persisted format puts on a series ({@code docs/format.md}, "Limits"), checked
 * before anything is written so that a series that cannot be stored is refused on its own instead
 * of failing the encoding of a record half-way through an append.
 *
 * <ul>
 *   <li>every label name and value (the metric name is the value of {@code __name__}) and the unit:
 *       at most {@link #MAX_STRING_BYTES} UTF-8 bytes, the {@code u16} length prefix of {@code
 *       Utf8};
 *   <li>at most {@link #MAX_LABELS} labels, the {@code u16} count of the ForwardIndex label array;
 *   <li>at most {@link #MAX_TOTAL_LABEL_BYTES} UTF-8 bytes of names and values together, so one
 *       ForwardIndex value stays one bounded array (the two limits above alone would allow 8 GiB);
 *   <li>every string has a UTF-8 form (no unpaired surrogate, which only a {@code \ud800} escape in
 *       JSON input can produce).
 * </ul>
 *
 * <p>Stateless; no allocation unless a limit is broken.
 */
public final class SeriesLimits {

  /** Longest label name, label value or unit in UTF-8 bytes. */
  public static final int MAX_STRING_BYTES = ValueWriter.MAX_U16;

  /** Most labels per series, {@code __name__} included. */
  public static final int MAX_LABELS = ValueWriter.MAX_U16;

  /** Most UTF-8 bytes of all label names and values of a series together (16 MiB). */
  public static final int MAX_TOTAL_LABEL_BYTES = 16 << 20;

  private static final int SHOWN_CHARS = 64;

  private SeriesLimits() {}

  /**
   * Why a series with these labels and metadata cannot be stored, naming the field and the limit
   * (e.g. {@code label value of 70000 bytes exceeds the 65535-byte limit (label "db_statement")}),
   * or null if it can.
   */
  public static String violation(Labels labels, MetricMetadata metadata) {
    int n = labels.size();
    if (n > MAX_LABELS) {
      return n + " labels exceed the " + MAX_LABELS + "-label limit";
    }
    long total = 0;
    for (int i = 0; i < n; i++) {
      String name = labels.name(i);
      boolean metricName = name.equals(Labels.METRIC_NAME);
      int nameBytes = utf8Bytes(name);
      if (nameBytes < 0) {
        return "label name " + quote(name) + " is not valid UTF-8 (unpaired surrogate)";
      }
      if (nameBytes > MAX_STRING_BYTES) {
        return "label name of "
            + nameBytes
            + " bytes exceeds the "
            + MAX_STRING_BYTES
            + "-byte limit ("
            + quote(name)
            + ")";
      }
      String value = labels.value(i);
      int valueBytes = utf8Bytes(value);
      if (valueBytes < 0) {
        return what(metricName)
            + " is not valid UTF-8 (unpaired surrogate) ("
            + where(name, value)
            + ")";
      }
      if (valueBytes > MAX_STRING_BYTES) {
        return what(metricName)
            + " of "
            + valueBytes
            + " bytes exceeds the "
            + MAX_STRING_BYTES
            + "-byte limit ("
            + where(name, value)
            + ")";
      }
      total += nameBytes + valueBytes;
    }
    if (total > MAX_TOTAL_LABEL_BYTES) {
      return "labels of "
          + total
          + " bytes in all exceed the "
          + MAX_TOTAL_LABEL_BYTES
          + "-byte limit";
    }
    String unit = metadata.unit();
    int unitBytes = utf8Bytes(unit);
    if (unitBytes < 0) {
      return "metric unit " + quote(unit) + " is not valid UTF-8 (unpaired surrogate)";
    }
    if (unitBytes > MAX_STRING_BYTES) {
      return "metric unit of "
          + unitBytes
          + " bytes exceeds the "
          + MAX_STRING_BYTES
          + "-byte limit";
    }
    return null;
  }

  private static String what(boolean metricName) {
    return metricName ? "metric name" : "label value";
  }

  /** The metric name itself, or the label's name. */
  private static String where(String name, String value) {
    return name.equals(Labels.METRIC_NAME) ? quote(value) : "label " + quote(name);
  }

  /** Whether {@link #violation} is null, without building a message. */
  public static boolean storable(Labels labels, MetricMetadata metadata) {
    int n = labels.size();
    if (n > MAX_LABELS) {
      return false;
    }
    long total = 0;
    for (int i = 0; i < n; i++) {
      int nb = utf8Bytes(labels.name(i));
      int vb = utf8Bytes(labels.value(i));
      if (nb < 0 || vb < 0 || nb > MAX_STRING_BYTES || vb > MAX_STRING_BYTES) {
        return false;
      }
      total += nb + vb;
    }
    int ub = utf8Bytes(metadata.unit());
    return total <= MAX_TOTAL_LABEL_BYTES && ub >= 0 && ub <= MAX_STRING_BYTES;
  }

  /**
   * UTF-8 length of {@code s} (at most Integer.MAX_VALUE), or -1 if it has an unpaired surrogate.
   */
  private static int utf8Bytes(String s) {
    long len = ValueWriter.utf8LengthOrNegative(s);
    return len < 0 ? -1 : (int) Math.min(len, Integer.MAX_VALUE);
  }

  /**
   * The refused string as its sender wrote it, cut after {@value #SHOWN_CHARS} chars: not Go's
   * quoting ({@code PromText.quote}) on purpose. What is refused here is mostly an unpaired
   * surrogate, which only a JSON {@code \ud800} escape can send and which Go has no string for (its
   * decoders make it U+FFFD): the message shows that escape, as the client sent it, so it can be
   * found in the request; and a value at the size limit is not printed whole.
   */
  private static String quote(String s) {
    StringBuilder sb = new StringBuilder(Math.min(s.length(), SHOWN_CHARS) + 8).append('"');
    int shown = 0;
    for (int i = 0; i < s.length() && shown < SHOWN_CHARS; i++, shown++) {
      char c = s.charAt(i);
      if (Character.isSurrogate(c) || c < 0x20 || c == '"' || c == '\\') {
        sb.append(String.format("\\u%04x", (int) c));
      } else {
        sb.append(c);
      }
    }
    if (s.length() > SHOWN_CHARS) {
      sb.append("...");
    }
    return sb.append('"').toString();
  }
}
