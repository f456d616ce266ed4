package dev.tidemark.translator;

import com.dynatrace.hash4j.hashing.Hashing;
import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.metrics.v1.ExponentialHistogram;
import io.opentelemetry.proto.metrics.v1.Gauge;
import io.opentelemetry.proto.metrics.v1.Histogram;
import io.opentelemetry.proto.metrics.v1.Metric;
import io.opentelemetry.proto.metrics.v1.Sum;
import io.opentelemetry.proto.metrics.v1.Summary;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * The in-place path's metric headers by their bytes ({@link InPlace}): a metric's header (name,
 * description, unit, data kind, temporality, monotonicity; no metadata) is the same in every export
 * of a sender, and building its {@link Metric} from the bytes each time (three strings, a builder,
 * the message and its data member) was a fifth of the bytes the translator allocates at a million
 * series (docs/benchmarks.md, session 11). The header is an immutable message, so one instance
 * serves every thread and request with the same bytes; what the translator decides from it ({@link
 * Translator#beginMetric}) is decided again for every metric, as before.
 *
 * <p>A lossy direct-mapped table of {@value #SLOTS} entries indexed by the XXH3 of the key bytes; a
 * hit compares the whole key, so two headers never share an entry's message. Thread-safe.
 */
final class MetricHeaders {
  static final int SLOTS = 4096;

  private final AtomicReferenceArray<Entry> table = new AtomicReferenceArray<>(SLOTS);

  private record Entry(byte[] key, Metric header) {}

  /**
   * Where a metric's header fields lie in the request's bytes (an offset of -1: the field is
   * absent, read as empty) and the data member's kind (its field number), temporality and
   * monotonicity. Per-thread scratch.
   */
  static final class Fields {
    int nameAt;
    int nameLen;
    int descAt;
    int descLen;
    int unitAt;
    int unitLen;
    int dataField;
    int temporality;
    boolean monotonic;

    void clear() {
      nameAt = -1;
      nameLen = 0;
      descAt = -1;
      descLen = 0;
      unitAt = -1;
      unitLen = 0;
      dataField = 0;
      temporality = 0;
      monotonic = false;
    }

    /** The header as a message without data points, for {@link Translator#beginMetric}. */
    Metric build(byte[] buf, List<KeyValue> metadata) {
      Metric.Builder header =
          Metric.newBuilder()
              .setName(string(buf, nameAt, nameLen))
              .setDescription(string(buf, descAt, descLen))
              .setUnit(string(buf, unitAt, unitLen));
      if (metadata != null) {
        header.addAllMetadata(metadata);
      }
      switch (dataField) {
        case 5 -> header.setGauge(Gauge.getDefaultInstance());
        case 7 ->
            header.setSum(
                Sum.newBuilder()
                    .setAggregationTemporalityValue(temporality)
                    .setIsMonotonic(monotonic));
        case 9 ->
            header.setHistogram(Histogram.newBuilder().setAggregationTemporalityValue(temporality));
        case 10 ->
            header.setExponentialHistogram(
                ExponentialHistogram.newBuilder().setAggregationTemporalityValue(temporality));
        case 11 -> header.setSummary(Summary.getDefaultInstance());
        default -> {}
      }
      return header.build();
    }

    private static String string(byte[] buf, int at, int len) {
      return at < 0 ? "" : new String(buf, at, len, StandardCharsets.UTF_8);
    }
  }

  /** A header's key, built in a per-thread scratch array. */
  static final class Key {
    byte[] bytes = new byte[256];
    int length;
    long hash;

    /** Sets the key from the header's fields. */
    void set(byte[] buf, Fields f) {
      int n = 12 + 12 + f.nameLen + f.descLen + f.unitLen;
      if (bytes.length < n) {
        bytes = new byte[Math.max(n, bytes.length * 2)];
      }
      length = 0;
      putInt(f.dataField);
      putInt(f.temporality);
      putInt(f.monotonic ? 1 : 0);
      putField(buf, f.nameAt, f.nameLen);
      putField(buf, f.descAt, f.descLen);
      putField(buf, f.unitAt, f.unitLen);
      hash = Hashing.xxh3_64().hashBytesToLong(bytes, 0, length);
    }

    private void putField(byte[] buf, int at, int len) {
      int l = at < 0 ? 0 : len;
      putInt(l);
      if (l > 0) {
        System.arraycopy(buf, at, bytes, length, l);
        length += l;
      }
    }

    private void putInt(int v) {
      bytes[length] = (byte) (v >>> 24);
      bytes[length + 1] = (byte) (v >>> 16);
      bytes[length + 2] = (byte) (v >>> 8);
      bytes[length + 3] = (byte) v;
      length += 4;
    }
  }

  /** The header built before from the same key, or null. */
  Metric get(Key k) {
    Entry e = table.get(slot(k.hash));
    return e != null && Arrays.equals(e.key, 0, e.key.length, k.bytes, 0, k.length)
        ? e.header
        : null;
  }

  /** Remembers {@code header} as the message of key {@code k} (replacing the slot's entry). */
  void put(Key k, Metric header) {
    table.set(slot(k.hash), new Entry(Arrays.copyOf(k.bytes, k.length), header));
  }

  private static int slot(long hash) {
    return (int) (hash ^ (hash >>> 32)) & (SLOTS - 1);
  }
}
