package dev.tidemark.receiver.remotewrite;

import com.dynatrace.hash4j.hashing.Hasher64;
import com.dynatrace.hash4j.hashing.Hashing;
import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import dev.tidemark.receiver.ErrorMessages;
import dev.tidemark.receiver.InFlightBytes;
import dev.tidemark.receiver.Outcome;
import dev.tidemark.receiver.RateLimitedLogger;
import dev.tidemark.translator.FamilyMetadata;
import dev.tidemark.translator.MetadataRegistry;
import dev.tidemark.translator.PromType;
import dev.tidemark.tsdb.append.AppendResult;
import dev.tidemark.tsdb.append.Appender;
import dev.tidemark.tsdb.append.RejectReason;
import dev.tidemark.tsdb.append.SampleBatch;
import dev.tidemark.tsdb.append.StorageUnavailableException;
import dev.tidemark.tsdb.codec.Varints;
import dev.tidemark.tsdb.model.LabelStrings;
import dev.tidemark.tsdb.model.Labels;
import dev.tidemark.tsdb.model.MetricMetadata;
import dev.tidemark.tsdb.model.MetricType;
import dev.tidemark.tsdb.model.Temporality;
import io.prometheus.metrics.core.datapoints.CounterDataPoint;
import io.prometheus.metrics.core.datapoints.DistributionDataPoint;
import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.Histogram;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.prometheus.metrics.model.snapshots.Unit;
import java.lang.System.Logger.Level;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Set;

/**
 * The protocol core of the Prometheus remote-write receiver (1.0 and 2.0): decoding ({@link
 * WriteDecoder}), series resolution, the write through the {@link Appender}, the answer's outcome
 * and message, metadata and metrics. The HTTP handler reads the body, decompresses it and maps the
 * {@link WriteResult} to a status.
 *
 * <p><b>Semantics</b> (Prometheus' receiver, {@code storage/remote/write_handler.go}, with its 2.0
 * partial writes for both versions, as the 1.0 spec asks and Prometheus' own 1.0 path notes it
 * should): a request that cannot be decoded writes nothing (400). Otherwise every acceptable sample
 * is written, and each refusal adds a line to the answer, which is then 400 (the sender must not
 * retry what was refused; what was written stays written): a series without {@code __name__}, with
 * an empty label name, invalid UTF-8 or a duplicate label name ({@code invalid metric name or
 * labels, got {...}}); samples out of order, duplicate, too old or too far in the future ({@code
 * <reason> for series {...}}); native histograms, which Tidemark does not store; a 2.0 series
 * without samples or with a reference outside the symbol table. Exemplars are dropped silently (the
 * query API has none), as Prometheus does when exemplar storage is off. Only when the store cannot
 * take writes is nothing written and the answer 503 (the sender retries).
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

  /** Lines of refusals listed in one answer; the rest are counted. */
  static final int MAX_LISTED_ERRORS = 10;

  static final double[] DURATION_BUCKETS = {
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10
  };

  private static final System.Logger LOG = System.getLogger(RemoteWriteIngestor.class.getName());
  private static final Hasher64 XXH3 = Hashing.xxh3_64();
  private static final RejectReason[] REASONS = RejectReason.values();

  private final Appender appender;
  private final MetadataRegistry metadata;
  private final InFlightBytes inFlight;
  private final RateLimitedLogger warnings = new RateLimitedLogger(LOG);
  private final Cache<RunKey, Known> cache;
  private final ThreadLocal<Scratch> scratch = ThreadLocal.withInitial(Scratch::new);

  private final CounterDataPoint[] received = new CounterDataPoint[2];
  private final CounterDataPoint[] written = new CounterDataPoint[2];
  private final CounterDataPoint[][] refused = new CounterDataPoint[2][];
  private final CounterDataPoint[][] requests = new CounterDataPoint[2][];
  private final DistributionDataPoint[] duration = new DistributionDataPoint[2];

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
    this.appender = Objects.requireNonNull(appender, "appender");
    this.metadata = Objects.requireNonNull(metadata, "metadata");
    this.inFlight = Objects.requireNonNull(inFlight, "inFlight");
    this.cache = Caffeine.newBuilder().maximumSize(seriesCacheSize).executor(Runnable::run).build();
    Counter receivedC =
        Counter.builder()
            .name("tidemark_remote_write_samples_received_total")
            .help("Remote-write samples in requests that could be decoded.")
            .labelNames("version")
            .register(registry);
    Counter writtenC =
        Counter.builder()
            .name("tidemark_remote_write_samples_written_total")
            .help("Remote-write samples written durably.")
            .labelNames("version")
            .register(registry);
    Counter refusedC =
        Counter.builder()
            .name("tidemark_remote_write_samples_refused_total")
            .help(
                "Remote-write samples refused (reported to the sender in a 400 answer), by"
                    + " reason.")
            .labelNames("version", "reason")
            .register(registry);
    Counter requestsC =
        Counter.builder()
            .name("tidemark_remote_write_requests_total")
            .help("Remote-write requests by outcome.")
            .labelNames("version", "outcome")
            .register(registry);
    Histogram durationH =
        Histogram.builder()
            .name("tidemark_remote_write_request_duration_seconds")
            .help("Remote-write request latency, from receipt to acknowledgement.")
            .unit(Unit.SECONDS)
            .labelNames("version")
            .classicOnly()
            .classicUpperBounds(DURATION_BUCKETS)
            .register(registry);
    for (Version v : Version.values()) {
      int i = v.ordinal();
      received[i] = receivedC.labelValues(v.label());
      written[i] = writtenC.labelValues(v.label());
      duration[i] = durationH.labelValues(v.label());
      Refusal[] rs = Refusal.values();
      refused[i] = new CounterDataPoint[rs.length];
      for (Refusal r : rs) {
        refused[i][r.ordinal()] = refusedC.labelValues(v.label(), r.label);
      }
      Outcome[] os = Outcome.values();
      requests[i] = new CounterDataPoint[os.length];
      for (Outcome o : os) {
        requests[i][o.ordinal()] = requestsC.labelValues(v.label(), o.label());
      }
    }
  }

  /** Why samples were refused: the {@code reason} label. */
  enum Refusal {
    INVALID_LABELS("invalid_labels"),
    OUT_OF_ORDER("out_of_order"),
    DUPLICATE("duplicate"),
    TOO_OLD("too_old"),
    TOO_FAR_IN_FUTURE("too_far_in_future"),
    INVALID("invalid"),
    LIMIT_EXCEEDED("limit_exceeded"),
    SERIES_LIMIT("series_limit"),
    NATIVE_HISTOGRAM("native_histogram");

    final String label;

    Refusal(String label) {
      this.label = label;
    }

    static Refusal of(RejectReason r) {
      return switch (r) {
        case OUT_OF_ORDER -> OUT_OF_ORDER;
        case DUPLICATE -> DUPLICATE;
        case TOO_OLD -> TOO_OLD;
        case TOO_FAR_IN_FUTURE -> TOO_FAR_IN_FUTURE;
        case INVALID -> INVALID;
        case LIMIT_EXCEEDED -> LIMIT_EXCEEDED;
        case SERIES_LIMIT -> SERIES_LIMIT;
      };
    }
  }

  /**
   * How a request ended.
   *
   * @param decoded true once the body reached the decoder (2.0 answers then carry the written
   *     counts, as Prometheus' do)
   */
  public record WriteResult(
      Outcome outcome, String message, long samplesWritten, Version version, boolean decoded) {

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
      return new WriteResult(o, message, 0, version, decodeStarted);
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
        return new WriteResult(Outcome.INTERNAL_ERROR, "internal error", 0, version, true);
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
      int v = version.ordinal();
      requests[v][o.ordinal()].inc();
      duration[v].observe((System.nanoTime() - startNanos) / 1e9);
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
          version,
          true);
    }
    int v = version.ordinal();
    Errors errors = sc.errors;
    errors.reset();
    try {
      if (version == Version.V1) {
        offerV1Metadata(d);
      }
      SampleBatch batch = sc.batch;
      batch.clear();
      int[] seriesOf = sc.seriesOf(d.samples);
      Known[] known = sc.known(d.series);
      for (int s = 0; s < d.series; s++) {
        int n = d.sampleEnd[s] - d.sampleStart[s];
        Known k = d.badRef[s] == null ? resolve(sc, d, s, version) : null;
        known[s] = k;
        if (k == null || k.labels == null) {
          String why =
              d.badRef[s] != null
                  ? "invalid series: " + d.badRef[s]
                  : "invalid metric name or labels, got " + (k == null ? "{}" : k.invalid);
          errors.add(Refusal.INVALID_LABELS, why, n + d.histograms[s]);
          continue;
        }
        if (version == Version.V2 && n == 0 && d.histograms[s] == 0) {
          errors.add(
              null,
              "TimeSeries must contain at least one sample or histogram for series " + k.text(),
              0);
          continue;
        }
        if (d.histograms[s] > 0) {
          errors.add(
              Refusal.NATIVE_HISTOGRAM,
              "native histograms are not supported: "
                  + d.histograms[s]
                  + " dropped for series "
                  + k.text(),
              d.histograms[s]);
        }
        MetricMetadata meta = version == Version.V2 ? k.v2Meta(d, s, metadata) : k.v1Meta(metadata);
        for (int i = d.sampleStart[s]; i < d.sampleEnd[s]; i++) {
          seriesOf[batch.size()] = s;
          if (d.bits[i] == SampleBatch.STALE_NAN_BITS) {
            batch.addStaleMarker(k.labels, meta, d.ts[i]);
          } else {
            batch.add(k.labels, meta, d.ts[i], Double.longBitsToDouble(d.bits[i]));
          }
          batch.endPoint();
        }
      }
      received[v].inc(d.samples);
      long ok = 0;
      if (batch.size() > 0) {
        AppendResult r = appender.append(batch);
        for (int p = 0; p < r.pointCount(); p++) {
          RejectReason why = r.pointReason(p);
          if (why == null) {
            ok++;
            continue;
          }
          Known k = known[seriesOf[p]];
          String detail = r.pointDetail(p);
          errors.add(
              Refusal.of(why),
              prometheusWording(why)
                  + (detail != null ? " (" + detail + ")" : "")
                  + " for series "
                  + k.text()
                  + " at "
                  + batch.timestampMillis(p),
              1);
        }
      }
      written[v].inc(ok);
      for (int i = 0; i < errors.byReason.length; i++) {
        if (errors.byReason[i] > 0) {
          refused[v][i].inc(errors.byReason[i]);
        }
      }
      if (errors.count == 0) {
        return new WriteResult(Outcome.SUCCESS, null, ok, version, true);
      }
      String message = errors.message();
      warnings.log(
          "partial",
          Level.WARNING,
          () -> "remote write (" + version.label() + ") partly refused: " + message);
      return new WriteResult(Outcome.PARTIAL_SUCCESS, message, ok, version, true);
    } finally {
      sc.batch.clear();
      Arrays.fill(sc.knownScratch, 0, Math.min(d.series, sc.knownScratch.length), null);
      if (d.samples > Scratch.KEEP_SAMPLES || d.runsLength > Scratch.KEEP_RUN_BYTES) {
        scratch.remove(); // a rare large request's arrays are not kept by every thread
      }
      d.src = null;
    }
  }

  /** The engine's reasons in Prometheus' words ({@code storage.Err...}). */
  static String prometheusWording(RejectReason r) {
    return switch (r) {
      case TOO_FAR_IN_FUTURE -> "out of bounds: timestamp is too far in the future";
      case INVALID -> "out of bounds: invalid sample";
      default -> r.description(); // already Prometheus' words
    };
  }

  // ---------------------------------------------------------------- series

  /** The known series for series {@code s}'s label run, or a new entry (valid or not). */
  private Known resolve(Scratch sc, WriteDecoder d, int s, Version version) {
    int from = d.runStart[s];
    int to = d.runEnd[s];
    long h = XXH3.hashBytesToLong(d.runs, from, to - from);
    RunKey probe = sc.probe.set(h, to - from);
    Known k = cache.getIfPresent(probe);
    if (k != null && Arrays.equals(k.run, 0, k.run.length, d.runs, from, to)) {
      return k;
    }
    Known created = Known.of(Arrays.copyOfRange(d.runs, from, to), d.labelCount[s], metadata);
    if (created.labels != null && k == null) {
      cache.put(new RunKey(h, to - from), created);
    }
    return created;
  }

  /** Offers a 1.0 request's metadata entries to the registry. */
  private void offerV1Metadata(WriteDecoder d) {
    for (int m = 0; m < d.metadata; m++) {
      int[] r = d.mdRanges;
      int at = m * 6;
      String family = utf8OrNull(d.src, r[at], r[at + 1] - r[at]);
      if (family == null || family.isEmpty()) {
        continue;
      }
      String help = utf8OrNull(d.src, r[at + 2], r[at + 3] - r[at + 2]);
      String unit = utf8OrNull(d.src, r[at + 4], r[at + 5] - r[at + 4]);
      metadata.offer(new FamilyMetadata(family, promType(d.mdType[m]), unit, help));
    }
  }

  /** The Prometheus type of a metadata enum number (the same numbers in 1.0 and 2.0). */
  static PromType promType(int type) {
    return switch (type) {
      case 1 -> PromType.COUNTER;
      case 2 -> PromType.GAUGE;
      case 3 -> PromType.HISTOGRAM;
      case 4 -> PromType.GAUGEHISTOGRAM;
      case 5 -> PromType.SUMMARY;
      case 6 -> PromType.INFO;
      case 7 -> PromType.STATESET;
      default -> PromType.UNKNOWN;
    };
  }

  /** What is stored with a series of this remote-write type and unit. */
  static MetricMetadata seriesMetadata(PromType type, String unit) {
    return switch (type) {
      case COUNTER -> new MetricMetadata(MetricType.SUM, unit, Temporality.CUMULATIVE, true);
      case GAUGE -> new MetricMetadata(MetricType.GAUGE, unit, Temporality.UNSPECIFIED, false);
      case HISTOGRAM ->
          new MetricMetadata(MetricType.HISTOGRAM, unit, Temporality.CUMULATIVE, false);
      case SUMMARY -> new MetricMetadata(MetricType.SUMMARY, unit, Temporality.UNSPECIFIED, false);
      default ->
          unit.isEmpty()
              ? MetricMetadata.UNKNOWN
              : new MetricMetadata(MetricType.UNKNOWN, unit, Temporality.UNSPECIFIED, false);
    };
  }

  /**
   * The family a histogram's or summary's series belongs to: the name without {@code _bucket},
   * {@code _sum} or {@code _count}; the name itself if it has none of them.
   */
  static String familyOf(String name) {
    for (String suffix : new String[] {"_bucket", "_sum", "_count"}) {
      if (name.endsWith(suffix)) {
        return name.substring(0, name.length() - suffix.length());
      }
    }
    return name;
  }

  static String utf8OrNull(byte[] b, int off, int len) {
    if (len == 0) {
      return "";
    }
    try {
      return StandardCharsets.UTF_8
          .newDecoder()
          .onMalformedInput(CodingErrorAction.REPORT)
          .onUnmappableCharacter(CodingErrorAction.REPORT)
          .decode(ByteBuffer.wrap(b, off, len))
          .toString();
    } catch (CharacterCodingException e) {
      return null;
    }
  }

  /** Cache key: the run's hash and length (the entry holds the bytes that decide). */
  static final class RunKey {
    private long hash;
    private int length;

    RunKey(long hash, int length) {
      this.hash = hash;
      this.length = length;
    }

    RunKey set(long h, int l) {
      hash = h;
      length = l;
      return this;
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof RunKey k && k.hash == hash && k.length == length;
    }

    @Override
    public int hashCode() {
      return (int) (hash ^ (hash >>> 32));
    }
  }

  /**
   * A label run seen before: its bytes, its labels (null if invalid, with {@link #invalid} saying
   * what they were) and what is stored with it.
   */
  static final class Known {
    final byte[] run;
    final Labels labels;
    final String invalid;

    /**
     * 1.0: from the registry (see {@link #v1Meta(MetadataRegistry)}); 2.0: the last metadata seen
     * (below).
     */
    private volatile MetricMetadata meta;

    /** 1.0: the registry's size when {@link #meta} was looked up while still unknown. */
    private volatile int lookedUpAt;

    private volatile V2Meta v2;
    private String text;

    private Known(byte[] run, Labels labels, String invalid, MetricMetadata meta) {
      this.run = run;
      this.labels = labels;
      this.invalid = invalid;
      this.meta = meta;
    }

    /**
     * 1.0: what to store with the series. Senders send metadata apart from samples (Prometheus
     * every minute), so a series first seen before its family's metadata looks again whenever the
     * registry has grown; once found, it stays.
     */
    MetricMetadata v1Meta(MetadataRegistry registry) {
      MetricMetadata m = meta;
      if (m == MetricMetadata.UNKNOWN) {
        int size = registry.size();
        if (size != lookedUpAt) {
          m = v1Meta(labels.metricName(), registry);
          meta = m;
          lookedUpAt = size;
        }
      }
      return m;
    }

    /** Decodes and validates a run (as Prometheus' {@code labels.IsValid} with UTF-8 names). */
    static Known of(byte[] run, int count, MetadataRegistry registry) {
      long[] v = new long[1];
      List<String> pairs = new ArrayList<>(2 * count);
      boolean valid = true;
      boolean hasName = false;
      Set<String> names = new HashSet<>();
      String duplicate = null;
      int p = 0;
      while (p < run.length) {
        String[] nv = new String[2];
        for (int j = 0; j < 2; j++) {
          p = Varints.read(run, p, run.length, v);
          int l = (int) v[0];
          String str = utf8OrNull(run, p, l);
          if (str == null) {
            valid = false;
            str = new String(run, p, l, StandardCharsets.UTF_8);
          }
          nv[j] = str;
          p += l;
        }
        if (nv[0].isEmpty()) {
          valid = false;
        }
        if (nv[0].equals(Labels.METRIC_NAME)) {
          hasName = !nv[1].isEmpty();
        }
        if (!names.add(nv[0]) && duplicate == null) {
          duplicate = nv[0];
        }
        pairs.add(nv[0]);
        pairs.add(nv[1]);
      }
      if (!valid || !hasName) {
        return new Known(run, null, text(pairs), null);
      }
      if (duplicate != null) {
        return new Known(run, null, text(pairs) + ", duplicated label " + duplicate, null);
      }
      Labels.Builder b = Labels.builder();
      for (int i = 0; i < pairs.size(); i += 2) {
        b.add(LabelStrings.share(pairs.get(i)), LabelStrings.share(pairs.get(i + 1)));
      }
      Labels labels = b.build();
      Known k = new Known(run, labels, null, v1Meta(labels.metricName(), registry));
      k.lookedUpAt = registry.size();
      return k;
    }

    /** 1.0 series metadata: from the registry, by the family the name belongs to. */
    private static MetricMetadata v1Meta(String name, MetadataRegistry registry) {
      FamilyMetadata f = registry.get(name).or(() -> registry.get(familyOf(name))).orElse(null);
      return f == null ? MetricMetadata.UNKNOWN : seriesMetadata(f.type(), f.unit());
    }

    /**
     * 2.0: the metadata for this request's type/help/unit of series {@code s}, remembered until it
     * changes; a change is offered to the registry.
     */
    MetricMetadata v2Meta(WriteDecoder d, int s, MetadataRegistry registry) {
      int type = d.metaType[s];
      int hr = d.helpRef[s];
      int ur = d.unitRef[s];
      byte[] src = d.src;
      int hFrom = hr < d.symbols ? d.symStart[hr] : 0;
      int hTo = hr < d.symbols ? d.symEnd[hr] : 0;
      int uFrom = ur < d.symbols ? d.symStart[ur] : 0;
      int uTo = ur < d.symbols ? d.symEnd[ur] : 0;
      V2Meta m = v2;
      if (m != null
          && m.type == type
          && Arrays.equals(m.help, 0, m.help.length, src, hFrom, hTo)
          && Arrays.equals(m.unit, 0, m.unit.length, src, uFrom, uTo)) {
        return m.meta;
      }
      byte[] help = Arrays.copyOfRange(src, hFrom, hTo);
      byte[] unitBytes = Arrays.copyOfRange(src, uFrom, uTo);
      String unit = utf8OrNull(unitBytes, 0, unitBytes.length);
      String helpText = utf8OrNull(help, 0, help.length);
      PromType promType = promType(type);
      MetricMetadata meta = seriesMetadata(promType, unit == null ? "" : unit);
      v2 = new V2Meta(type, help, unitBytes, meta);
      if (type != 0 || help.length > 0 || unitBytes.length > 0) {
        String name = labels.metricName();
        boolean derived =
            promType == PromType.HISTOGRAM
                || promType == PromType.GAUGEHISTOGRAM
                || promType == PromType.SUMMARY;
        registry.offer(
            new FamilyMetadata(
                derived ? familyOf(name) : name,
                promType,
                unit == null ? "" : unit,
                helpText == null ? "" : helpText));
      }
      return meta;
    }

    /** The labels in Prometheus' notation, for messages. */
    String text() {
      String t = text;
      if (t == null) {
        List<String> pairs = new ArrayList<>();
        for (int i = 0; i < labels.size(); i++) {
          pairs.add(labels.name(i));
          pairs.add(labels.value(i));
        }
        t = text(pairs);
        text = t;
      }
      return t;
    }

    /** {@code {__name__="up", job="a"}}: as Prometheus' {@code labels.Labels.String()}. */
    static String text(List<String> pairs) {
      StringBuilder sb = new StringBuilder("{");
      for (int i = 0; i < pairs.size(); i += 2) {
        if (i > 0) {
          sb.append(", ");
        }
        String n = pairs.get(i);
        if (isLegacyName(n)) {
          sb.append(n);
        } else {
          quote(sb, n);
        }
        sb.append('=');
        quote(sb, pairs.get(i + 1));
      }
      return sb.append('}').toString();
    }

    private static boolean isLegacyName(String n) {
      if (n.isEmpty()) {
        return false;
      }
      for (int i = 0; i < n.length(); i++) {
        char c = n.charAt(i);
        boolean ok =
            c == '_'
                || (c >= 'a' && c <= 'z')
                || (c >= 'A' && c <= 'Z')
                || (i > 0 && c >= '0' && c <= '9');
        if (!ok) {
          return false;
        }
      }
      return true;
    }

    private static void quote(StringBuilder sb, String s) {
      sb.append('"');
      for (int i = 0; i < s.length(); i++) {
        char c = s.charAt(i);
        switch (c) {
          case '\\' -> sb.append("\\\\");
          case '"' -> sb.append("\\\"");
          case '\n' -> sb.append("\\n");
          case '\r' -> sb.append("\\r");
          case '\t' -> sb.append("\\t");
          default -> {
            if (c < 0x20 || c == 0x7f) {
              sb.append(String.format(Locale.ROOT, "\\x%02x", (int) c));
            } else {
              sb.append(c);
            }
          }
        }
      }
      sb.append('"');
    }
  }

  private record V2Meta(int type, byte[] help, byte[] unit, MetricMetadata meta) {}

  /** Refusals of one request: counted by reason, the first few listed. */
  static final class Errors {
    final long[] byReason = new long[Refusal.values().length];
    final StringBuilder listed = new StringBuilder();
    int count;

    void reset() {
      Arrays.fill(byReason, 0);
      listed.setLength(0);
      count = 0;
    }

    void add(Refusal reason, String line, long samples) {
      if (reason != null) {
        byReason[reason.ordinal()] += samples;
      }
      if (count < MAX_LISTED_ERRORS) {
        if (count > 0) {
          listed.append('\n');
        }
        listed.append(line);
      }
      count++;
    }

    String message() {
      if (count <= MAX_LISTED_ERRORS) {
        return listed.toString();
      }
      return listed
          + "\n(and "
          + (count - MAX_LISTED_ERRORS)
          + " more errors; "
          + count
          + " in all, the first "
          + MAX_LISTED_ERRORS
          + " listed)";
    }
  }

  /** Per-thread reusable state. */
  static final class Scratch {
    /** Past these, a request's scratch is dropped after it (the common request fits). */
    static final int KEEP_SAMPLES = 1 << 16;

    static final int KEEP_RUN_BYTES = 4 << 20;

    final WriteDecoder decoder = new WriteDecoder();
    final SampleBatch batch = new SampleBatch(1024);
    final RunKey probe = new RunKey(0, 0);
    final Errors errors = new Errors();
    private int[] seriesOf = new int[1024];
    Known[] knownScratch = new Known[256];

    int[] seriesOf(int samples) {
      if (seriesOf.length < samples) {
        seriesOf = new int[Math.max(samples, seriesOf.length * 2)];
      }
      return seriesOf;
    }

    Known[] known(int series) {
      if (knownScratch.length < series) {
        knownScratch = new Known[Math.max(series, knownScratch.length * 2)];
      }
      return knownScratch;
    }
  }
}
