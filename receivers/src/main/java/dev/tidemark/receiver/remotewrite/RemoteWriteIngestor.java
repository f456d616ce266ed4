package dev.tidemark.receiver.remotewrite;

import dev.tidemark.receiver.ErrorMessages;
import dev.tidemark.receiver.InFlightBytes;
import dev.tidemark.receiver.Outcome;
import dev.tidemark.receiver.RateLimitedLogger;
import dev.tidemark.tsdb.append.AppendResult;
import dev.tidemark.tsdb.append.Appender;
import dev.tidemark.tsdb.append.RejectReason;
import dev.tidemark.tsdb.append.SampleBatch;
import dev.tidemark.tsdb.append.StorageUnavailableException;
import dev.tidemark.tsdb.model.Labels;
import dev.tidemark.tsdb.model.MetadataRegistry;
import dev.tidemark.tsdb.model.MetricMetadata;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.lang.System.Logger.Level;
import java.util.Arrays;
import java.util.Objects;

/**
 * The protocol core of the Prometheus remote-write receiver (1.0 and 2.0): one request's passage
 * ({@link Exchange}) and the write, through the parts beside it, one concern each: decoding and the
 * 2.0 symbol table ({@link WriteDecoder}), series and their validation ({@link SeriesCache}, {@link
 * KnownSeries}; their text by {@code PromText.formatLabels}), metadata ({@link WriteMetadata}),
 * native histograms and exemplars ({@link NonFloatSamples}), the answer's refusals ({@link
 * Refusals}) and the metrics ({@link RemoteWriteMetrics}). The HTTP handler reads the body,
 * decompresses it and maps the {@link WriteResult} to a status.
 *
 * <p><b>Semantics</b> (Prometheus' receiver, {@code storage/remote/write_handler.go}, with its 2.0
 * partial writes for both versions, as the 1.0 spec asks and Prometheus' own 1.0 path notes it
 * should): a request that cannot be decoded writes nothing (400). Otherwise every acceptable sample
 * is written, and each refusal adds a line to the answer, which is then 400 (the sender must not
 * retry what was refused; what was written stays written): a series without {@code __name__}, with
 * an empty label name, invalid UTF-8 or a duplicate label name ({@code invalid metric name or
 * labels, got {...}}); samples out of order, duplicate, too old or too far in the future ({@code
 * <reason> for series {...}}); a native histogram Prometheus would refuse ({@code invalid
 * histogram: <the model's words> for series {...}}; the others are stored); a 2.0 series without
 * samples or with a reference outside the symbol table. Exemplars are dropped silently (the query
 * API has none), as Prometheus does when exemplar storage is off. Only when the store cannot take
 * writes is nothing written and the answer 503 (the sender retries).
 *
 * <p><b>Series.</b> A series is found by the bytes of its label run (names and values in wire
 * order, see {@link WriteDecoder}) in a bounded cache: one XXH3-64 hash and one byte comparison, no
 * String and no {@link Labels} built for a known series. A miss decodes the strings (strict UTF-8),
 * validates and builds the {@link Labels} (sorted; empty values dropped, as Prometheus treats them
 * as absent).
 *
 * <p><b>Metadata.</b> 1.0 metadata entries and 2.0 per-series metadata (type, help, unit) are
 * offered to the {@link MetadataRegistry} the query API's {@code /api/v1/metadata} serves (first
 * registration wins). A 2.0 series' type and unit are also stored with the series (counter: a
 * monotonic cumulative sum; gauge, histogram, summary as such; others unknown).
 *
 * <p><b>Durability.</b> {@link Appender#append} returns once the accepted samples are durable, so
 * any answer but 5xx acknowledges what was written.
 *
 * <p>Thread-safe; per-thread scratch (decoder, batch) is reused, so steady-state requests allocate
 * little beyond their body.
 */
public final class RemoteWriteIngestor {

  /** The remote-write protobuf messages, by the {@code proto} parameter of the content type. */
  public enum Version {
    V1("prometheus.WriteRequest", "1.0"),
    V2("io.prometheus.write.v2.Request", "2.0");

    private final String message;
    private final String label;

    Version(String message, String label) {
      this.message = message;
      this.label = label;
    }

    /** The fully qualified protobuf message name. */
    public String message() {
      return message;
    }

    /** The {@code version} metric label. */
    public String label() {
      return label;
    }
  }

  private static final System.Logger LOG = System.getLogger(RemoteWriteIngestor.class.getName());

  private final Appender appender;
  private final InFlightBytes inFlight;
  private final RateLimitedLogger warnings = new RateLimitedLogger(LOG);
  private final WriteMetadata metadata;
  private final SeriesCache series;
  private final RemoteWriteMetrics metrics;
  private final ThreadLocal<Scratch> scratch = ThreadLocal.withInitial(Scratch::new);

  /**
   * @param appender where samples go (the engine)
   * @param metadata where metadata goes (the translator's registry, which the query API serves)
   * @param inFlight admission control shared with the other receivers
   * @param seriesCacheSize most label runs remembered
   * @param registry where the metrics are registered
   */
  public RemoteWriteIngestor(
      Appender appender,
      MetadataRegistry metadata,
      InFlightBytes inFlight,
      int seriesCacheSize,
      PrometheusRegistry registry) {
    this(appender, metadata, inFlight, seriesCacheSize, registry, false);
  }

  /**
   * @param appender where samples go (the engine)
   * @param metadata where metadata goes (the translator's registry, which the query API serves)
   * @param inFlight admission control shared with the other receivers
   * @param seriesCacheSize most label runs remembered
   * @param registry where the metrics are registered
   * @param typeAndUnitLabels Prometheus' {@code type-and-unit-labels}: a 2.0 series whose metadata
   *     names a type or a unit is written with {@code __type__} and {@code __unit__} labels from it
   */
  public RemoteWriteIngestor(
      Appender appender,
      MetadataRegistry metadata,
      InFlightBytes inFlight,
      int seriesCacheSize,
      PrometheusRegistry registry,
      boolean typeAndUnitLabels) {
    this.appender = Objects.requireNonNull(appender, "appender");
    this.metadata =
        new WriteMetadata(Objects.requireNonNull(metadata, "metadata"), typeAndUnitLabels);
    this.inFlight = Objects.requireNonNull(inFlight, "inFlight");
    this.series = new SeriesCache(seriesCacheSize, this.metadata);
    this.metrics = new RemoteWriteMetrics(registry);
  }

  /**
   * How a request ended.
   *
   * @param decoded true once the body reached the decoder (2.0 answers then carry the written
   *     counts, as Prometheus' do)
   */
  public record WriteResult(
      Outcome outcome,
      String message,
      long samplesWritten,
      long histogramsWritten,
      Version version,
      boolean decoded) {

    /** True if nothing of the request was refused. */
    public boolean success() {
      return outcome == Outcome.SUCCESS;
    }
  }

  /** Starts one request: its clock and its in-flight bytes. Close it when answered. */
  public Exchange begin(Version version) {
    return new Exchange(Objects.requireNonNull(version, "version"));
  }

  /** The admission control (shared). */
  public InFlightBytes inFlight() {
    return inFlight;
  }

  /** One request's passage; used by one thread at a time, {@link #close} once. */
  public final class Exchange implements AutoCloseable {
    private final long startNanos = System.nanoTime();
    private Version version;
    private long held;
    private Outcome outcome;
    private boolean closed;
    private boolean decodeStarted;

    private Exchange(Version version) {
      this.version = version;
    }

    /** Sets the version once the content type is known (the metrics' label). */
    public void version(Version v) {
      this.version = Objects.requireNonNull(v, "v");
    }

    public Version version() {
      return version;
    }

    /** Admits {@code bytes} more against the shared in-flight limit; false = overloaded. */
    public boolean reserve(long bytes) {
      if (!inFlight.reserve(held, bytes)) {
        return false;
      }
      held += bytes;
      return true;
    }

    /** Records a failure decided by the caller (bad headers, body, overload, ...). */
    public WriteResult fail(Outcome o, String message) {
      outcome = o;
      if (o.retryable()) {
        warnings.log(
            o.label(), Level.WARNING, () -> "remote write refused (" + o.label() + "): " + message);
      } else if (o == Outcome.INTERNAL_ERROR) {
        warnings.log(o.label(), Level.ERROR, () -> "remote write failed: " + message);
      } else {
        warnings.log(
            o.label(), Level.DEBUG, () -> "remote write refused (" + o.label() + "): " + message);
      }
      return new WriteResult(o, message, 0, 0, version, decodeStarted);
    }

    /** An overload refusal. */
    public WriteResult overloaded() {
      return fail(
          Outcome.OVERLOADED, "receiver overloaded: " + inFlight.refusal() + "; retry later");
    }

    /**
     * Decodes {@code buf[0, len)} as this exchange's version and writes it; returns once the
     * written samples are durable.
     */
    public WriteResult write(byte[] buf, int len) {
      decodeStarted = true;
      try {
        WriteResult r = RemoteWriteIngestor.this.write(version, buf, len);
        outcome = r.outcome();
        return r;
      } catch (StorageUnavailableException e) {
        return fail(
            Outcome.STORAGE_UNAVAILABLE,
            "storage unavailable: "
                + ErrorMessages.describe(e, "storage failure")
                + "; retry later");
      } catch (RuntimeException e) {
        warnings.log("internal_error", Level.ERROR, () -> "remote write failed unexpectedly", e);
        outcome = Outcome.INTERNAL_ERROR;
        return new WriteResult(Outcome.INTERNAL_ERROR, "internal error", 0, 0, version, true);
      }
    }

    /** Releases the in-flight bytes and records the outcome and latency. Idempotent. */
    @Override
    public void close() {
      if (closed) {
        return;
      }
      closed = true;
      inFlight.release(held);
      held = 0;
      Outcome o = outcome == null ? Outcome.INTERNAL_ERROR : outcome;
      metrics.request(version, o, (System.nanoTime() - startNanos) / 1e9);
    }
  }

  // ---------------------------------------------------------------- the write

  private WriteResult write(Version version, byte[] buf, int len) {
    Scratch sc = scratch.get();
    WriteDecoder d = sc.decoder;
    try {
      if (version == Version.V1) {
        d.decodeV1(buf, 0, len);
      } else {
        d.decodeV2(buf, 0, len);
      }
    } catch (WriteDecoder.Malformed e) {
      return new WriteResult(
          Outcome.INVALID,
          "cannot decode protobuf " + version.message() + " (" + len + " bytes): " + e.getMessage(),
          0,
          0,
          version,
          true);
    }
    Refusals refusals = sc.refusals;
    refusals.reset();
    try {
      if (version == Version.V1) {
        metadata.offerV1(d);
      }
      SampleBatch batch = sc.batch;
      batch.clear();
      int[] seriesOf = sc.seriesOf(d.samples + d.histogramTotal);
      KnownSeries[] known = sc.known(d.series);
      for (int s = 0; s < d.series; s++) {
        int n = d.sampleEnd[s] - d.sampleStart[s];
        KnownSeries k = d.badRef[s] == null ? series.resolve(sc.probe, d, s) : null;
        known[s] = k;
        if (k == null || k.labels == null) {
          String why =
              d.badRef[s] != null
                  ? "invalid series: " + d.badRef[s]
                  : "invalid metric name or labels, got " + (k == null ? "{}" : k.invalid);
          refusals.add(Refusals.Reason.INVALID_LABELS, why, n + d.histograms[s]);
          continue;
        }
        if (version == Version.V2 && NonFloatSamples.emptyV2(d, s)) {
          refusals.add(
              null,
              "TimeSeries must contain at least one sample or histogram for series " + k.text(),
              0);
          continue;
        }
        MetricMetadata meta;
        Labels labels;
        if (version == Version.V2) {
          WriteMetadata.V2Meta m = metadata.forV2(k, d, s);
          meta = m.meta();
          labels = m.labels();
        } else {
          meta = metadata.forV1(k);
          labels = k.labels;
        }
        for (int i = d.sampleStart[s]; i < d.sampleEnd[s]; i++) {
          seriesOf[batch.size()] = s;
          if (d.bits[i] == SampleBatch.STALE_NAN_BITS) {
            batch.addStaleMarker(labels, meta, d.ts[i]);
          } else {
            batch.add(labels, meta, d.ts[i], Double.longBitsToDouble(d.bits[i]));
          }
          batch.endPoint();
        }
        if (d.histograms[s] > 0) {
          NonFloatSamples.addHistograms(
              d, s, k, labels, meta, version == Version.V2, batch, seriesOf, refusals);
        }
      }
      metrics.received(version, d.samples + d.histogramTotal);
      long ok = 0;
      long okHistograms = 0;
      if (batch.size() > 0) {
        AppendResult r = appender.append(batch);
        for (int p = 0; p < r.pointCount(); p++) {
          RejectReason why = r.pointReason(p);
          if (why == null) {
            ok++;
            if (batch.hasHistograms() && batch.histogram(p) != null) {
              okHistograms++;
            }
          } else {
            refusals.add(
                why, r.pointDetail(p), known[seriesOf[p]].text(), batch.timestampMillis(p));
          }
        }
      }
      metrics.written(version, ok, refusals);
      if (refusals.none()) {
        return new WriteResult(
            Outcome.SUCCESS, null, ok - okHistograms, okHistograms, version, true);
      }
      String message = refusals.message();
      warnings.log(
          "partial",
          Level.WARNING,
          () -> "remote write (" + version.label() + ") partly refused: " + message);
      return new WriteResult(
          Outcome.PARTIAL_SUCCESS, message, ok - okHistograms, okHistograms, version, true);
    } finally {
      sc.batch.clear();
      Arrays.fill(sc.knownScratch, 0, Math.min(d.series, sc.knownScratch.length), null);
      if (d.samples > Scratch.KEEP_SAMPLES || d.runsLength > Scratch.KEEP_RUN_BYTES) {
        scratch.remove(); // a rare large request's arrays are not kept by every thread
      }
      d.src = null;
    }
  }

  /** Per-thread reusable state. */
  static final class Scratch {
    /** Past these, a request's scratch is dropped after it (the common request fits). */
    static final int KEEP_SAMPLES = 1 << 16;

    static final int KEEP_RUN_BYTES = 4 << 20;

    final WriteDecoder decoder = new WriteDecoder();
    final SampleBatch batch = new SampleBatch(1024);
    final SeriesCache.RunKey probe = new SeriesCache.RunKey(0, 0);
    final Refusals refusals = new Refusals();
    private int[] seriesOf = new int[1024];
    KnownSeries[] knownScratch = new KnownSeries[256];

    int[] seriesOf(int samples) {
      if (seriesOf.length < samples) {
        seriesOf = new int[Math.max(samples, seriesOf.length * 2)];
      }
      return seriesOf;
    }

    KnownSeries[] known(int series) {
      if (knownScratch.length < series) {
        knownScratch = new KnownSeries[Math.max(series, knownScratch.length * 2)];
      }
      return knownScratch;
    }
  }
}
