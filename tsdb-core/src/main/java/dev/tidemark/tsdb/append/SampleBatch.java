package dev.tidemark.tsdb.append;

import dev.tidemark.tsdb.model.Labels;
import dev.tidemark.tsdb.model.MetricMetadata;
import dev.tidemark.tsdb.model.NativeHistogram;
import java.util.Arrays;
import java.util.Objects;

/**
 * A reusable, growable batch of samples for {@link Appender#append}, grouped into <em>points</em>.
 *
 * <p>A point is the unit of atomicity: every sample added since the previous {@link #endPoint()}
 * belongs to the same point, and the appender writes a point's samples all or nothing. The
 * translator makes one point per OTLP data point (a histogram point yields many samples); callers
 * with independent samples use {@link #addPoint}.
 *
 * <p>Values travel as raw IEEE-754 bits so that NaN payloads survive; the staleness marker is added
 * only through {@link #addStaleMarker}, never by value, so input can't forge it.
 *
 * <p><b>Native histogram samples</b> ({@link #addHistogram}) travel beside the float samples in the
 * same points: {@link #histogram(int)} is the histogram of sample {@code i}, null for a float
 * sample; {@link #valueBits(int)} of a histogram sample is its sum's bits (never read as a value).
 * The histogram array is made on the first histogram sample, so a float-only batch carries none and
 * a float sample costs what it cost before ({@link #hasHistograms()} lets a reader skip the
 * per-sample test).
 *
 * <p>Not thread-safe. After {@link #clear()} the arrays are reused: steady-state filling does not
 * allocate.
 */
public final class SampleBatch {

  /** The Prometheus staleness marker, a signalling NaN with payload 2. */
  public static final long STALE_NAN_BITS = 0x7ff0000000000002L;

  private Labels[] labels;
  private MetricMetadata[] metadata;
  private long[] timestampMillis;
  private long[] valueBits;
  private int[] pointOf;

  /** Null until the first {@link #addHistogram}; then parallel to the other arrays. */
  private NativeHistogram[] histograms;

  private int histogramCount;
  private int size;
  private int points;

  public SampleBatch() {
    this(64);
  }

  public SampleBatch(int initialCapacity) {
    int c = Math.max(1, initialCapacity);
    labels = new Labels[c];
    metadata = new MetricMetadata[c];
    timestampMillis = new long[c];
    valueBits = new long[c];
    pointOf = new int[c];
  }

  /**
   * Adds a sample to the open point. NaN bits are kept as given; see the translator for
   * canonicalisation.
   */
  public SampleBatch add(Labels series, MetricMetadata meta, long timestampMillis, double value) {
    return addBits(series, meta, timestampMillis, Double.doubleToRawLongBits(value));
  }

  /** Adds a staleness marker ({@link #STALE_NAN_BITS}) to the open point. */
  public SampleBatch addStaleMarker(Labels series, MetricMetadata meta, long timestampMillis) {
    return addBits(series, meta, timestampMillis, STALE_NAN_BITS);
  }

  /** Adds one sample as a point of its own. */
  public SampleBatch addPoint(
      Labels series, MetricMetadata meta, long timestampMillis, double value) {
    add(series, meta, timestampMillis, value);
    endPoint();
    return this;
  }

  /**
   * Adds a native histogram sample to the open point. The histogram is immutable and validated (its
   * constructor enforces Prometheus' rules); a stale marker is a histogram whose sum is {@link
   * NativeHistogram#STALE_SUM_BITS}.
   */
  public SampleBatch addHistogram(
      Labels series, MetricMetadata meta, long timestampMillis, NativeHistogram histogram) {
    Objects.requireNonNull(histogram, "histogram");
    if (histograms == null) {
      histograms = new NativeHistogram[labels.length];
    }
    addBits(series, meta, timestampMillis, histogram.sumBits());
    histograms[size - 1] = histogram;
    histogramCount++;
    return this;
  }

  private SampleBatch addBits(Labels series, MetricMetadata meta, long ts, long bits) {
    Objects.requireNonNull(series, "series");
    Objects.requireNonNull(meta, "meta");
    if (size == labels.length) {
      grow();
    }
    labels[size] = series;
    metadata[size] = meta;
    timestampMillis[size] = ts;
    valueBits[size] = bits;
    pointOf[size] = points;
    size++;
    return this;
  }

  /**
   * Closes the open point and returns its index. A point with no samples is allowed (it is
   * trivially accepted).
   */
  public int endPoint() {
    return points++;
  }

  /** Removes every sample and point; keeps the arrays. */
  public void clear() {
    Arrays.fill(labels, 0, size, null);
    Arrays.fill(metadata, 0, size, null);
    if (histogramCount > 0) {
      Arrays.fill(histograms, 0, size, null);
      histogramCount = 0;
    }
    size = 0;
    points = 0;
  }

  private void grow() {
    int c = labels.length * 2;
    labels = Arrays.copyOf(labels, c);
    metadata = Arrays.copyOf(metadata, c);
    timestampMillis = Arrays.copyOf(timestampMillis, c);
    valueBits = Arrays.copyOf(valueBits, c);
    pointOf = Arrays.copyOf(pointOf, c);
    if (histograms != null) {
      histograms = Arrays.copyOf(histograms, c);
    }
  }

  /** Number of samples. */
  public int size() {
    return size;
  }

  /**
   * Number of closed points. Samples added after the last {@link #endPoint()} belong to point
   * {@code pointCount()}, which the appender treats as closed too.
   */
  public int pointCount() {
    return size > 0 && pointOf[size - 1] == points ? points + 1 : points;
  }

  public Labels labels(int i) {
    return labels[check(i)];
  }

  public MetricMetadata metadata(int i) {
    return metadata[check(i)];
  }

  public long timestampMillis(int i) {
    return timestampMillis[check(i)];
  }

  /** Raw IEEE-754 bits of the value. */
  public long valueBits(int i) {
    return valueBits[check(i)];
  }

  /**
   * Whether sample {@code i} is a float staleness marker (see {@link #histogram} for histograms).
   */
  public boolean isStaleMarker(int i) {
    return valueBits[check(i)] == STALE_NAN_BITS && histogram(i) == null;
  }

  /** Whether some sample of the batch is a native histogram. */
  public boolean hasHistograms() {
    return histogramCount > 0;
  }

  /** The native histogram of sample {@code i}, or null if it is a float sample. */
  public NativeHistogram histogram(int i) {
    check(i);
    return histogramCount == 0 ? null : histograms[i];
  }

  /** The index of the point sample {@code i} belongs to. */
  public int pointOf(int i) {
    return pointOf[check(i)];
  }

  private int check(int i) {
    if (i < 0 || i >= size) {
      throw new IndexOutOfBoundsException("sample " + i + " of " + size);
    }
    return i;
  }
}
