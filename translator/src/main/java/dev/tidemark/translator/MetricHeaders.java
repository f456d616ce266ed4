package dev.tidemark.translator;

import com.dynatrace.hash4j.hashing.Hashing;
import io.opentelemetry.proto.metrics.v1.Metric;
import java.util.Arrays;
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

  /** A header's key, built in a per-thread scratch array. */
  static final class Key {
    byte[] bytes = new byte[256];
    int length;
    long hash;

    /** Sets the key from the header's fields ({@code at} < 0: the field is absent, as empty). */
    void set(
        byte[] buf,
        int nameAt,
        int nameLen,
        int descAt,
        int descLen,
        int unitAt,
        int unitLen,
        int dataField,
        int temporality,
        boolean monotonic) {
      int n = 12 + 12 + nameLen + descLen + unitLen;
      if (bytes.length < n) {
        bytes = new byte[Math.max(n, bytes.length * 2)];
      }
      length = 0;
      putInt(dataField);
      putInt(temporality);
      putInt(monotonic ? 1 : 0);
      putField(buf, nameAt, nameLen);
      putField(buf, descAt, descLen);
      putField(buf, unitAt, unitLen);
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
