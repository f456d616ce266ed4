package dev.tidemark.receiver.otlp;

import com.google.protobuf.InvalidProtocolBufferException;
import dev.tidemark.receiver.ErrorMessages;
import dev.tidemark.receiver.InFlightBytes;
import dev.tidemark.receiver.Outcome;
import dev.tidemark.receiver.RateLimitedLogger;
import dev.tidemark.receiver.ReceiverConfig;
import dev.tidemark.translator.RejectionReason;
import dev.tidemark.translator.TranslationResult;
import dev.tidemark.translator.Translator;
import dev.tidemark.tsdb.append.StorageUnavailableException;
import io.opentelemetry.proto.collector.metrics.v1.ExportMetricsPartialSuccess;
import io.opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest;
import io.opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceResponse;
import io.opentelemetry.proto.metrics.v1.Metric;
import io.opentelemetry.proto.metrics.v1.ResourceMetrics;
import io.opentelemetry.proto.metrics.v1.ScopeMetrics;
import io.prometheus.metrics.core.datapoints.CounterDataPoint;
import io.prometheus.metrics.core.datapoints.DistributionDataPoint;
import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.core.metrics.Histogram;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.prometheus.metrics.model.snapshots.Unit;
import java.lang.System.Logger.Level;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;

/**
 * The protocol-independent core of the OTLP receivers: admission control, translation, outcome,
 * metrics and rate-limited warnings. The gRPC service and the HTTP handler only decode, call in
 * here and map the {@link Outcome} to their status codes:
 *
 * <pre>
 * Outcome               gRPC                                   HTTP
 * SUCCESS               OK, empty response                     200, empty ExportMetricsServiceResponse
 * PARTIAL_SUCCESS       OK, partial_success                    200, partial_success
 * INVALID               INVALID_ARGUMENT                       400 + google.rpc.Status
 * TOO_LARGE             RESOURCE_EXHAUSTED (gRPC runtime)      413 + Status
 * UNSUPPORTED_MEDIA_TYPE  -                                    415 + Status
 * METHOD_NOT_ALLOWED      -                                    405 + Allow: POST + Status
 * OVERLOADED            UNAVAILABLE + RetryInfo                503 + Retry-After + Status
 * STORAGE_UNAVAILABLE   UNAVAILABLE + RetryInfo                503 + Retry-After + Status
 * BODY_UNREADABLE         -                                    503 + Retry-After + Status
 * CANCELLED             (nothing is sent)                      -
 * INTERNAL_ERROR        INTERNAL                               500 + Status
 * </pre>
 *
 * <p><b>Admission control.</b> A request's serialized bytes (after decompression) count as in
 * flight from the moment the receiver holds them until its {@link Exchange} is closed: while being
 * read, decoded, translated and made durable. A request that would take the total over {@link
 * ReceiverConfig#maxInFlightBytes()} is refused at once as {@link Outcome#OVERLOADED}, never
 * queued, unless nothing else is in flight (so one request larger than the limit still passes when
 * alone). Decoded messages take roughly two to four times their serialized size; that memory is not
 * counted separately.
 *
 * <p><b>Durability.</b> {@link Translator#translate} returns only once the accepted samples are
 * durable, so a SUCCESS or PARTIAL_SUCCESS answer is an acknowledgement.
 *
 * <p><b>Metrics</b> (registered in the given registry on construction): {@code
 * tidemark_otlp_data_points_received_total{protocol}} (data points of requests handed to the
 * translator), {@code ..._accepted_total{protocol}}, {@code ..._rejected_total{protocol,reason}}
 * (reason = {@link RejectionReason} in lower case), {@code
 * tidemark_otlp_requests_total{protocol,outcome}}, {@code
 * tidemark_otlp_request_duration_seconds{protocol}} (from {@link #begin} to {@link Exchange#close},
 * including reading the body over HTTP) and {@code tidemark_otlp_in_flight_bytes}. {@code protocol}
 * is {@code grpc} or {@code http}.
 *
 * <p><b>Logging.</b> Nothing per request in steady state: rejections, overload, storage trouble,
 * bad requests and internal errors go through a {@link RateLimitedLogger} (one line per kind every
 * 10 s, with the number suppressed).
 *
 * <p>Thread-safe.
 */
public final class OtlpIngestor {
  /**
   * Longest {@code error_message} / status message sent back; longer ones are cut (the OTLP
   * response must stay small).
   */
  public static final int MAX_ERROR_MESSAGE_CHARS = 16 * 1024;

  /**
   * Request latency buckets in seconds: acknowledgement latency is dominated by the durable sync.
   */
  static final double[] DURATION_BUCKETS = {
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10
  };

  private static final System.Logger LOG = System.getLogger(OtlpIngestor.class.getName());
  private static final RejectionReason[] REASONS = RejectionReason.values();

  /** The wire protocol; the {@code protocol} label. */
  public enum Protocol {
    GRPC("grpc"),
    HTTP("http");

    private final String label;

    Protocol(String label) {
      this.label = label;
    }

    public String label() {
      return label;
    }
  }

  private final Translator translator;
  private final ReceiverConfig config;
  private final RateLimitedLogger warnings;
  private final InFlightBytes inFlightBytes;

  // Data points per protocol, reason and outcome are resolved once: no label lookup per request.
  private final CounterDataPoint[] received;
  private final CounterDataPoint[] accepted;
  private final CounterDataPoint[][] rejected;
  private final CounterDataPoint[][] requests;
  private final DistributionDataPoint[] duration;

  /**
   * @param registry where the receiver's metrics are registered (names must not be registered yet)
   */
  public OtlpIngestor(Translator translator, ReceiverConfig config, PrometheusRegistry registry) {
    this(translator, config, registry, new InFlightBytes(config.maxInFlightBytes()));
  }

  /**
   * @param inFlight the admission control, shared with the server's other receivers (its limit is
   *     the one that counts, not {@link ReceiverConfig#maxInFlightBytes()})
   */
  public OtlpIngestor(
      Translator translator,
      ReceiverConfig config,
      PrometheusRegistry registry,
      InFlightBytes inFlight) {
    this(translator, config, registry, new RateLimitedLogger(LOG), inFlight);
  }

  OtlpIngestor(
      Translator translator,
      ReceiverConfig config,
      PrometheusRegistry registry,
      RateLimitedLogger warnings) {
    this(translator, config, registry, warnings, new InFlightBytes(config.maxInFlightBytes()));
  }

  private OtlpIngestor(
      Translator translator,
      ReceiverConfig config,
      PrometheusRegistry registry,
      RateLimitedLogger warnings,
      InFlightBytes inFlight) {
    this.inFlightBytes = Objects.requireNonNull(inFlight, "inFlight");
    this.translator = Objects.requireNonNull(translator, "translator");
    this.config = Objects.requireNonNull(config, "config");
    Objects.requireNonNull(registry, "registry");
    this.warnings = Objects.requireNonNull(warnings, "warnings");

    Counter receivedC =
        Counter.builder()
            .name("tidemark_otlp_data_points_received_total")
            .help("OTLP data points in requests handed to the translator.")
            .labelNames("protocol")
            .register(registry);
    Counter acceptedC =
        Counter.builder()
            .name("tidemark_otlp_data_points_accepted_total")
            .help("OTLP data points written durably.")
            .labelNames("protocol")
            .register(registry);
    Counter rejectedC =
        Counter.builder()
            .name("tidemark_otlp_data_points_rejected_total")
            .help("OTLP data points rejected, reported to the client in partial_success.")
            .labelNames("protocol", "reason")
            .register(registry);
    Counter requestsC =
        Counter.builder()
            .name("tidemark_otlp_requests_total")
            .help("OTLP export requests by outcome.")
            .labelNames("protocol", "outcome")
            .register(registry);
    Histogram durationH =
        Histogram.builder()
            .name("tidemark_otlp_request_duration_seconds")
            .help("OTLP export request latency, from receipt to acknowledgement.")
            .unit(Unit.SECONDS)
            .labelNames("protocol")
            .classicOnly()
            .classicUpperBounds(DURATION_BUCKETS)
            .register(registry);
    GaugeWithCallback.builder()
        .name("tidemark_otlp_in_flight_bytes")
        .help("Request bytes (OTLP and remote write, decompressed) being read, decoded or written.")
        .unit(Unit.BYTES)
        .callback(cb -> cb.call(inFlightBytes.current()))
        .register(registry);

    Protocol[] protocols = Protocol.values();
    Outcome[] outcomes = Outcome.values();
    received = new CounterDataPoint[protocols.length];
    accepted = new CounterDataPoint[protocols.length];
    rejected = new CounterDataPoint[protocols.length][REASONS.length];
    requests = new CounterDataPoint[protocols.length][outcomes.length];
    duration = new DistributionDataPoint[protocols.length];
    for (Protocol p : protocols) {
      int i = p.ordinal();
      received[i] = receivedC.labelValues(p.label());
      accepted[i] = acceptedC.labelValues(p.label());
      duration[i] = durationH.labelValues(p.label());
      for (RejectionReason r : REASONS) {
        rejected[i][r.ordinal()] =
            rejectedC.labelValues(p.label(), r.name().toLowerCase(Locale.ROOT));
      }
      for (Outcome o : outcomes) {
        requests[i][o.ordinal()] = requestsC.labelValues(p.label(), o.label());
      }
    }
  }

  public ReceiverConfig config() {
    return config;
  }

  /** Request bytes currently admitted (the {@code tidemark_otlp_in_flight_bytes} gauge). */
  public long inFlightBytes() {
    return inFlightBytes.current();
  }

  /**
   * Starts one request: the latency clock runs from here. Close the exchange when the answer is
   * decided (try-with-resources); closing releases its in-flight bytes and records the outcome.
   */
  public Exchange begin(Protocol protocol) {
    return new Exchange(Objects.requireNonNull(protocol, "protocol"));
  }

  /** Data points in a request, counted as the translator counts them. */
  public static int countDataPoints(ExportMetricsServiceRequest request) {
    int n = 0;
    for (ResourceMetrics rm : request.getResourceMetricsList()) {
      for (ScopeMetrics sm : rm.getScopeMetricsList()) {
        for (Metric m : sm.getMetricsList()) {
          n +=
              switch (m.getDataCase()) {
                case GAUGE -> m.getGauge().getDataPointsCount();
                case SUM -> m.getSum().getDataPointsCount();
                case HISTOGRAM -> m.getHistogram().getDataPointsCount();
                case EXPONENTIAL_HISTOGRAM -> m.getExponentialHistogram().getDataPointsCount();
                case SUMMARY -> m.getSummary().getDataPointsCount();
                default -> 0;
              };
        }
      }
    }
    return n;
  }

  static String truncate(String s) {
    if (s.length() <= MAX_ERROR_MESSAGE_CHARS) {
      return s;
    }
    int end = MAX_ERROR_MESSAGE_CHARS - 20;
    if (Character.isHighSurrogate(s.charAt(end - 1))) {
      end--;
    }
    return s.substring(0, end) + " ... (truncated)";
  }

  /**
   * One request's passage through the ingestor: its latency clock, its in-flight bytes and its
   * outcome. Used by one thread at a time; {@link #close} exactly once.
   */
  public final class Exchange implements AutoCloseable {
    private final Protocol protocol;
    private final long startNanos = System.nanoTime();
    private long heldBytes;
    private Outcome outcome;
    private boolean closed;

    private Exchange(Protocol protocol) {
      this.protocol = protocol;
    }

    public Protocol protocol() {
      return protocol;
    }

    /** Bytes this exchange holds against the in-flight limit. */
    public long heldBytes() {
      return heldBytes;
    }

    /**
     * Admits {@code bytes} more of this request. Refuses (and admits nothing) if the total in
     * flight would exceed {@link ReceiverConfig#maxInFlightBytes()} while other requests hold
     * bytes; the caller then answers {@link #overloaded()}.
     *
     * @return true if admitted
     */
    public boolean reserve(long bytes) {
      if (bytes < 0) {
        throw new IllegalArgumentException("bytes must not be negative, was " + bytes);
      }
      if (!inFlightBytes.reserve(heldBytes, bytes)) {
        return false;
      }
      heldBytes += bytes;
      return true;
    }

    /**
     * Translates {@code request} (the translator writes through the engine and returns once the
     * accepted samples are durable) and returns SUCCESS, PARTIAL_SUCCESS, STORAGE_UNAVAILABLE or
     * INTERNAL_ERROR. Admission ({@link #reserve}) is the caller's.
     */
    public ExportResult export(ExportMetricsServiceRequest request) {
      TranslationResult tr;
      try {
        tr = translator.translate(request);
      } catch (StorageUnavailableException e) {
        received[protocol.ordinal()].inc(countDataPoints(request));
        return storageUnavailable(e);
      } catch (RuntimeException e) {
        received[protocol.ordinal()].inc(countDataPoints(request));
        return internalError(e);
      }
      return translated(tr);
    }

    /**
     * Decodes and translates a serialized {@code ExportMetricsServiceRequest} in place, without
     * building its message tree ({@link Translator#translate(byte[])}); otherwise as {@link
     * #export(ExportMetricsServiceRequest)}. The protobuf receivers (gRPC, HTTP) use this.
     *
     * @throws InvalidProtocolBufferException if the bytes are not such a request (protobuf-java's
     *     verdict and message); nothing was translated and nothing recorded, the caller answers
     */
    public ExportResult export(byte[] bytes) throws InvalidProtocolBufferException {
      return export(bytes, bytes.length);
    }

    /**
     * {@link #export(byte[])} over {@code bytes[0, length)}; nothing keeps a reference to {@code
     * bytes} after it returns, so the caller may reuse the array.
     */
    public ExportResult export(byte[] bytes, int length) throws InvalidProtocolBufferException {
      TranslationResult tr;
      try {
        tr = translator.translate(bytes, 0, length);
      } catch (StorageUnavailableException e) {
        received[protocol.ordinal()].inc(Math.max(0, Translator.countDataPoints(bytes, 0, length)));
        return storageUnavailable(e);
      } catch (RuntimeException e) {
        received[protocol.ordinal()].inc(Math.max(0, Translator.countDataPoints(bytes, 0, length)));
        return internalError(e);
      }
      return translated(tr);
    }

    private ExportResult storageUnavailable(StorageUnavailableException e) {
      warnings.log(
          "storage_unavailable",
          Level.WARNING,
          () -> "OTLP export refused, storage unavailable: " + e.getMessage(),
          null);
      return fail(
          Outcome.STORAGE_UNAVAILABLE,
          "storage unavailable: " + ErrorMessages.describe(e, "storage failure") + "; retry later");
    }

    private ExportResult translated(TranslationResult tr) {
      int p = protocol.ordinal();
      received[p].inc(tr.totalDataPoints());
      accepted[p].inc(tr.acceptedDataPoints());
      if (tr.rejectedDataPoints() > 0) {
        for (Map.Entry<RejectionReason, Integer> e : tr.rejectedByReason().entrySet()) {
          rejected[p][e.getKey().ordinal()].inc(e.getValue());
        }
      }
      if (tr.isFullSuccess()) {
        outcome = Outcome.SUCCESS;
        return ExportResult.translated(
            Outcome.SUCCESS, ExportMetricsServiceResponse.getDefaultInstance(), tr);
      }
      String message = truncate(tr.partialSuccessMessage());
      ExportMetricsServiceResponse response =
          ExportMetricsServiceResponse.newBuilder()
              .setPartialSuccess(
                  ExportMetricsPartialSuccess.newBuilder()
                      .setRejectedDataPoints(tr.rejectedDataPoints())
                      .setErrorMessage(message))
              .build();
      if (tr.rejectedDataPoints() > 0) {
        outcome = Outcome.PARTIAL_SUCCESS;
        warnings.log(
            "partial_success",
            Level.WARNING,
            () -> "OTLP export (" + protocol.label() + ") partly rejected: " + message,
            null);
      } else {
        outcome = Outcome.SUCCESS;
        warnings.log(
            "warnings",
            Level.INFO,
            () -> "OTLP export (" + protocol.label() + ") accepted with warnings: " + message,
            null);
      }
      return ExportResult.translated(outcome, response, tr);
    }

    /** Records an {@link Outcome#OVERLOADED} refusal and returns its result. */
    public ExportResult overloaded() {
      warnings.log(
          "overloaded",
          Level.WARNING,
          () -> "OTLP requests refused: " + inFlightBytes.refusal(),
          null);
      return fail(
          Outcome.OVERLOADED, "receiver overloaded: " + inFlightBytes.refusal() + "; retry later");
    }

    /**
     * Records an out-of-memory failure as {@link Outcome#OVERLOADED} (retryable: the request may
     * pass once memory is free) and returns its result. Admission control should prevent it; if it
     * happens, the heap is too small for {@link ReceiverConfig#maxInFlightBytes()}.
     */
    public ExportResult outOfMemory(OutOfMemoryError e) {
      warnings.log(
          "out_of_memory",
          Level.ERROR,
          () ->
              "OTLP request failed: out of memory; the heap is too small for maxInFlightBytes="
                  + inFlightBytes.max(),
          e);
      return fail(Outcome.OVERLOADED, "receiver out of memory; retry later");
    }

    /**
     * Records an {@link Outcome#INTERNAL_ERROR} and returns its result. The answer says only
     * "internal error" (no class name, no message: nothing of the internals); the full exception is
     * logged at ERROR through the rate limit.
     */
    public ExportResult internalError(Throwable t) {
      warnings.log("internal_error", Level.ERROR, () -> "OTLP request failed unexpectedly", t);
      return fail(Outcome.INTERNAL_ERROR, "internal error");
    }

    /**
     * Records a failed outcome decided by the receiver (INVALID, TOO_LARGE, UNSUPPORTED_MEDIA_TYPE,
     * METHOD_NOT_ALLOWED, BODY_UNREADABLE, CANCELLED, ...) and returns its result. Client errors
     * and bodies that could not be read (a connection's trouble, counted in {@code
     * tidemark_otlp_requests_total}) are logged at DEBUG through the rate limit.
     */
    public ExportResult fail(Outcome failure, String message) {
      Objects.requireNonNull(failure, "failure");
      if (failure == Outcome.SUCCESS || failure == Outcome.PARTIAL_SUCCESS) {
        throw new IllegalArgumentException("not a failure: " + failure);
      }
      outcome = failure;
      String m = truncate(message == null ? failure.label() : message);
      if (failure == Outcome.BODY_UNREADABLE
          || (!failure.retryable() && failure != Outcome.INTERNAL_ERROR)) {
        warnings.log(
            failure.label(),
            Level.DEBUG,
            () -> "OTLP request (" + protocol.label() + ") refused, " + failure.label() + ": " + m,
            null);
      }
      return ExportResult.failed(failure, m);
    }

    /** The outcome recorded so far, or null. */
    public Outcome outcome() {
      return outcome;
    }

    /**
     * Releases the in-flight bytes and records the outcome (INTERNAL_ERROR if none was recorded,
     * i.e. the caller failed in between) and the latency. Idempotent.
     */
    @Override
    public void close() {
      if (closed) {
        return;
      }
      closed = true;
      inFlightBytes.release(heldBytes);
      heldBytes = 0;
      Outcome o = outcome == null ? Outcome.INTERNAL_ERROR : outcome;
      int p = protocol.ordinal();
      requests[p][o.ordinal()].inc();
      duration[p].observe((System.nanoTime() - startNanos) / 1e9);
    }
  }
}
