package dev.tidemark.server.admin;

import dev.tidemark.admin.v1.AdminServiceGrpc;
import dev.tidemark.admin.v1.ApplyRetentionRequest;
import dev.tidemark.admin.v1.ApplyRetentionResponse;
import dev.tidemark.admin.v1.Bucket;
import dev.tidemark.admin.v1.BucketSeries;
import dev.tidemark.admin.v1.CompactRequest;
import dev.tidemark.admin.v1.CompactResponse;
import dev.tidemark.admin.v1.CreateCheckpointRequest;
import dev.tidemark.admin.v1.CreateCheckpointResponse;
import dev.tidemark.admin.v1.DeleteSeriesRequest;
import dev.tidemark.admin.v1.DeleteSeriesResponse;
import dev.tidemark.admin.v1.FindSeriesRequest;
import dev.tidemark.admin.v1.FindSeriesResponse;
import dev.tidemark.admin.v1.FlushRequest;
import dev.tidemark.admin.v1.FlushResponse;
import dev.tidemark.admin.v1.GetStatusRequest;
import dev.tidemark.admin.v1.GetStatusResponse;
import dev.tidemark.admin.v1.Label;
import dev.tidemark.admin.v1.LabelNamesRequest;
import dev.tidemark.admin.v1.LabelNamesResponse;
import dev.tidemark.admin.v1.LabelValuesRequest;
import dev.tidemark.admin.v1.LabelValuesResponse;
import dev.tidemark.admin.v1.ListBucketsRequest;
import dev.tidemark.admin.v1.ListBucketsResponse;
import dev.tidemark.admin.v1.ReadSamplesRequest;
import dev.tidemark.admin.v1.Sample;
import dev.tidemark.admin.v1.Selection;
import dev.tidemark.admin.v1.SeriesSamples;
import dev.tidemark.admin.v1.SetRetentionRequest;
import dev.tidemark.admin.v1.SetRetentionResponse;
import dev.tidemark.receiver.ErrorMessages;
import dev.tidemark.server.text.ConfigValues;
import dev.tidemark.tsdb.append.SampleBatch;
import dev.tidemark.tsdb.append.StorageUnavailableException;
import dev.tidemark.tsdb.codec.CorruptRecordException;
import dev.tidemark.tsdb.codec.TimeBucket;
import dev.tidemark.tsdb.engine.Engine;
import dev.tidemark.tsdb.engine.EngineConfig;
import dev.tidemark.tsdb.kv.KvStoreException;
import dev.tidemark.tsdb.model.Labels;
import dev.tidemark.tsdb.model.PromText;
import dev.tidemark.tsdb.query.LabelMatcher;
import dev.tidemark.tsdb.query.Querier;
import dev.tidemark.tsdb.query.QueryAbortedException;
import dev.tidemark.tsdb.query.QueryContext;
import dev.tidemark.tsdb.query.SampleIterator;
import dev.tidemark.tsdb.query.Series;
import dev.tidemark.tsdb.query.SeriesSet;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;

/**
 * The admin API ({@code tidemark.admin.v1.AdminService}, {@code admin.proto}) over one engine:
 * every read goes through the {@link Querier} seam, management calls (flush, delete, compaction,
 * retention, status) to the engine, the checkpoint to the store's {@link Checkpointer}; no record
 * codec and no RocksDB type here. See the proto for the contract of each call.
 *
 * <p>Errors: {@link IllegalArgumentException} (bad matcher, regex, range, limit, retention) →
 * {@code INVALID_ARGUMENT}; an existing checkpoint folder → {@code FAILED_PRECONDITION}; storage
 * trouble or a closed engine → {@code UNAVAILABLE}; a corrupt record → {@code DATA_LOSS} (naming
 * {@code tidemark verify}); anything else → {@code INTERNAL} (logged). No answer names a Java
 * class. Every message names the problem.
 *
 * <p>{@code ReadSamples} honours the client's flow control: it sends while the transport is ready
 * and goes on when gRPC says it is ready again, instead of buffering the whole answer or holding a
 * thread while it waits. Thread-safe (the engine is).
 */
public final class AdminGrpcService extends AdminServiceGrpc.AdminServiceImplBase {

  private static final System.Logger LOG = System.getLogger(AdminGrpcService.class.getName());

  /** Samples per {@link SeriesSamples} message; a longer series spans several messages. */
  static final int SAMPLES_PER_MESSAGE = 10_000;

  private final Engine engine;
  private final Querier querier;
  private final Checkpointer checkpointer;
  private final Path dataDir;
  private final String version;
  private final Clock clock;
  private final long startMillis;

  /** Makes a consistent copy of the store into a new folder (the store's own checkpoint). */
  @FunctionalInterface
  public interface Checkpointer {
    /**
     * @throws IllegalArgumentException if {@code target} exists
     */
    void create(Path target);
  }

  /**
   * @param engine management: status, buckets, flush, delete, compaction, retention
   * @param querier every read: series, label names and values, samples
   * @param checkpointer the store's checkpoint ({@code CreateCheckpoint})
   * @param dataDir the data folder (absolute), reported by {@code GetStatus}
   * @param version the server version, reported by {@code GetStatus}
   * @param clock the server clock (uptime)
   */
  public AdminGrpcService(
      Engine engine,
      Querier querier,
      Checkpointer checkpointer,
      Path dataDir,
      String version,
      Clock clock) {
    this.engine = engine;
    this.querier = querier;
    this.checkpointer = checkpointer;
    this.dataDir = dataDir;
    this.version = version;
    this.clock = clock;
    this.startMillis = clock.millis();
  }

  // ---- status ----

  @Override
  public void getStatus(GetStatusRequest request, StreamObserver<GetStatusResponse> out) {
    unary(
        out,
        () -> {
          Engine.Stats stats = engine.stats();
          long now = clock.millis();
          GetStatusResponse.Builder b =
              GetStatusResponse.newBuilder()
                  .setVersion(version)
                  .setStartTimeMs(startMillis)
                  .setUptimeMs(Math.max(0, now - startMillis))
                  .setDataDir(dataDir.toString())
                  .setSchemaVersion(engine.schemaVersion())
                  .setRetentionMs(engine.retention().toMillis())
                  .setRetention(PromText.formatDuration(engine.retention()))
                  .setHeadSeries(stats.headSeries())
                  .setHeadBytes(stats.headBytes())
                  .setOpenBuckets(stats.openBuckets())
                  .setBuckets(stats.buckets())
                  .setSamplesIngested(stats.samplesAccepted())
                  .setSamplesRejected(stats.samplesRejected())
                  .setBytesOnDisk(engine.storageBytes());
          if (stats.headMaxTimestampMillis() != Long.MIN_VALUE) {
            b.setHeadMaxTimeMs(stats.headMaxTimestampMillis());
          }
          for (Engine.BucketInfo info : engine.bucketInfo()) {
            b.addSeriesPerBucket(
                BucketSeries.newBuilder()
                    .setStartTimeMs(info.bucket().startMillis())
                    .setSeries(info.seriesCount()));
          }
          return b.build();
        });
  }

  @Override
  public void listBuckets(ListBucketsRequest request, StreamObserver<ListBucketsResponse> out) {
    unary(
        out,
        () -> {
          ListBucketsResponse.Builder b = ListBucketsResponse.newBuilder();
          for (Engine.BucketInfo info : engine.bucketInfo()) {
            TimeBucket tb = info.bucket();
            b.addBuckets(
                Bucket.newBuilder()
                    .setStartTimeMs(tb.startMillis())
                    .setSizeMs(tb.durationMillis())
                    .setEndTimeMs(tb.endMillis())
                    .setOpen(info.open())
                    .setSeriesCount(info.seriesCount())
                    .setBytes(info.bytes()));
          }
          return b.build();
        });
  }

  // ---- inspection ----

  @Override
  public void labelNames(LabelNamesRequest request, StreamObserver<LabelNamesResponse> out) {
    unary(
        out,
        () -> {
          int limit = limit(request.getLimit());
          Query q = Query.of(request.getSelection());
          List<String> names =
              querier.labelNames(q.minT, q.maxT, q.matchers, readLimit(limit), callContext());
          boolean truncated = limit > 0 && names.size() > limit;
          return LabelNamesResponse.newBuilder()
              .addAllNames(truncated ? names.subList(0, limit) : names)
              .setTruncated(truncated)
              .build();
        });
  }

  @Override
  public void labelValues(LabelValuesRequest request, StreamObserver<LabelValuesResponse> out) {
    unary(
        out,
        () -> {
          if (request.getName().isEmpty()) {
            throw new IllegalArgumentException("name is required: the label whose values to list");
          }
          int limit = limit(request.getLimit());
          Query q = Query.of(request.getSelection());
          List<String> values =
              querier.labelValues(
                  request.getName(), q.minT, q.maxT, q.matchers, readLimit(limit), callContext());
          boolean truncated = limit > 0 && values.size() > limit;
          return LabelValuesResponse.newBuilder()
              .addAllValues(truncated ? values.subList(0, limit) : values)
              .setTruncated(truncated)
              .build();
        });
  }

  @Override
  public void findSeries(FindSeriesRequest request, StreamObserver<FindSeriesResponse> out) {
    unary(
        out,
        () -> {
          int limit = limit(request.getLimit());
          Query q = Query.of(request.getSelection());
          List<Labels> series =
              querier.series(q.minT, q.maxT, q.matchers, readLimit(limit), callContext());
          boolean truncated = limit > 0 && series.size() > limit;
          FindSeriesResponse.Builder b = FindSeriesResponse.newBuilder().setTruncated(truncated);
          for (Labels l : truncated ? series.subList(0, limit) : series) {
            b.addSeries(dev.tidemark.admin.v1.Series.newBuilder().addAllLabels(labels(l)));
          }
          return b.build();
        });
  }

  @Override
  public void readSamples(ReadSamplesRequest request, StreamObserver<SeriesSamples> plainOut) {
    ServerCallStreamObserver<SeriesSamples> out =
        (ServerCallStreamObserver<SeriesSamples>) plainOut;
    SeriesSet selected;
    int limit;
    try {
      limit = limit(request.getLimit());
      Query q = Query.of(request.getSelection());
      selected = querier.select(q.minT, q.maxT, q.matchers, callContext());
    } catch (RuntimeException e) {
      out.onError(status(e));
      return;
    }
    SamplesStream stream = new SamplesStream(out, selected, limit);
    // gRPC runs this (on the call's serialized executor) once this method has returned and every
    // time the transport has room again; a cancelled call gets no more messages.
    out.setOnReadyHandler(stream::send);
    out.setOnCancelHandler(() -> {});
  }

  /**
   * One {@code ReadSamples} answer, sent as the client's flow control allows: {@link #send()} sends
   * messages while the transport is ready and returns when it is not, to go on at the next onReady
   * callback. No thread waits for the client meanwhile: the onReady callback runs on the call's
   * serialized executor, so a handler waiting there for it would only be woken by a timeout. The
   * callbacks run one at a time; the walk of the series set carries over from one to the next.
   */
  private static final class SamplesStream {
    private final ServerCallStreamObserver<SeriesSamples> out;
    private final SeriesSet selected;
    private final int limit;
    private int series;
    private List<Label> labels;
    private SampleIterator samples; // the current series' samples, null between series
    private boolean done;

    SamplesStream(ServerCallStreamObserver<SeriesSamples> out, SeriesSet selected, int limit) {
      this.out = out;
      this.selected = selected;
      this.limit = limit;
    }

    void send() {
      if (done) {
        return;
      }
      try {
        while (out.isReady()) {
          if (out.isCancelled()) {
            done = true;
            return;
          }
          SeriesSamples msg = next();
          if (msg == null) {
            done = true;
            out.onCompleted();
            return;
          }
          out.onNext(msg);
        }
      } catch (RuntimeException e) {
        done = true;
        if (!out.isCancelled()) {
          out.onError(status(e));
        }
      }
    }

    /**
     * The next message: up to {@link #SAMPLES_PER_MESSAGE} samples of the current series, or of the
     * next one with samples; null at the end (or at the limit).
     */
    private SeriesSamples next() {
      while (true) {
        if (samples == null) {
          if ((limit != 0 && series >= limit) || !selected.next()) {
            return null;
          }
          series++;
          Series s = selected.at();
          labels = labels(s.labels());
          samples = s.iterator();
        }
        SeriesSamples.Builder msg = SeriesSamples.newBuilder().addAllLabels(labels);
        while (msg.getSamplesCount() < SAMPLES_PER_MESSAGE && samples.next()) {
          long bits = samples.valueBits();
          msg.addSamples(
              Sample.newBuilder()
                  .setTimestampMs(samples.timestampMillis())
                  .setValueBits(bits)
                  .setValue(Double.longBitsToDouble(bits))
                  .setStale(bits == SampleBatch.STALE_NAN_BITS));
        }
        if (msg.getSamplesCount() < SAMPLES_PER_MESSAGE) {
          samples = null; // the series is done
        }
        if (msg.getSamplesCount() > 0) {
          return msg.build();
        }
      }
    }
  }

  // ---- deletion and maintenance ----

  @Override
  public void deleteSeries(DeleteSeriesRequest request, StreamObserver<DeleteSeriesResponse> out) {
    unary(
        out,
        () -> {
          Query q = Query.of(request.getSelection());
          if (q.matchers.isEmpty()) {
            throw new IllegalArgumentException(
                "delete needs at least one matcher (matchers or selector), e.g. {job=\"a\"}");
          }
          long t0 = System.nanoTime();
          Engine.DeleteResult r = engine.deleteSeries(q.minT, q.maxT, q.matchers);
          LOG.log(
              System.Logger.Level.INFO,
              "admin: deleted "
                  + r.samples()
                  + " samples of "
                  + r.series()
                  + " series in "
                  + r.buckets()
                  + " buckets, matchers "
                  + q.matchers
                  + " in ["
                  + q.minT
                  + ", "
                  + q.maxT
                  + "]");
          return DeleteSeriesResponse.newBuilder()
              .setBuckets(r.buckets())
              .setSeries(r.series())
              .setSamples(r.samples())
              .setDurationMs(millisSince(t0))
              .build();
        });
  }

  @Override
  public void flush(FlushRequest request, StreamObserver<FlushResponse> out) {
    unary(
        out,
        () -> {
          long t0 = System.nanoTime();
          Engine.Stats before = engine.stats();
          engine.flush();
          return FlushResponse.newBuilder()
              .setBucketsSealed(before.openBuckets())
              .setSeriesSealed(before.headSeries())
              .setDurationMs(millisSince(t0))
              .build();
        });
  }

  @Override
  public void compact(CompactRequest request, StreamObserver<CompactResponse> out) {
    unary(
        out,
        () -> {
          long t0 = System.nanoTime();
          long before = engine.storageBytes();
          if (!request.hasMinTimeMs() && !request.hasMaxTimeMs()) {
            engine.compactAll();
          } else {
            long minT = request.hasMinTimeMs() ? request.getMinTimeMs() : Long.MIN_VALUE;
            long maxT = request.hasMaxTimeMs() ? request.getMaxTimeMs() : Long.MAX_VALUE;
            checkRange(minT, maxT);
            engine.compact(minT, maxT);
          }
          return CompactResponse.newBuilder()
              .setBytesBefore(before)
              .setBytesAfter(engine.storageBytes())
              .setDurationMs(millisSince(t0))
              .build();
        });
  }

  @Override
  public void createCheckpoint(
      CreateCheckpointRequest request, StreamObserver<CreateCheckpointResponse> out) {
    unary(
        out,
        () -> {
          String text = request.getTargetDir();
          if (text.isBlank()) {
            throw new IllegalArgumentException(
                "target_dir is required: a new folder for the checkpoint");
          }
          Path target;
          try {
            target = Path.of(text);
          } catch (InvalidPathException e) {
            throw new IllegalArgumentException(
                "target_dir '" + text + "' is not a valid path: " + e.getReason());
          }
          if (!target.isAbsolute()) {
            throw new IllegalArgumentException(
                "target_dir '"
                    + text
                    + "' must be an absolute path (it is a folder on the server's machine)");
          }
          target = target.normalize();
          if (target.startsWith(dataDir)) {
            throw new IllegalArgumentException(
                "target_dir "
                    + target
                    + " is inside the data folder "
                    + dataDir
                    + "; pick a folder outside it");
          }
          if (Files.exists(target)) {
            throw Status.FAILED_PRECONDITION
                .withDescription(
                    "checkpoint folder "
                        + target
                        + " already exists; a checkpoint needs a new folder")
                .asRuntimeException();
          }
          long t0 = System.nanoTime();
          try {
            checkpointer.create(target);
          } catch (IllegalArgumentException e) { // created meanwhile
            throw Status.FAILED_PRECONDITION.withDescription(e.getMessage()).asRuntimeException();
          }
          LOG.log(System.Logger.Level.INFO, "admin: checkpoint created in " + target);
          return CreateCheckpointResponse.newBuilder()
              .setPath(target.toString())
              .setDurationMs(millisSince(t0))
              .build();
        });
  }

  @Override
  public void setRetention(SetRetentionRequest request, StreamObserver<SetRetentionResponse> out) {
    unary(
        out,
        () -> {
          boolean hasText = !request.getRetention().isBlank();
          boolean hasMillis = request.getRetentionMs() != 0;
          if (hasText == hasMillis) {
            throw new IllegalArgumentException(
                "give exactly one of retention (e.g. \"30d\") and retention_ms");
          }
          Duration d;
          if (hasText) {
            try {
              d = ConfigValues.parseDuration(request.getRetention());
            } catch (IllegalArgumentException e) {
              throw new IllegalArgumentException(
                  "invalid retention '" + request.getRetention() + "': " + e.getMessage());
            }
          } else {
            d = Duration.ofMillis(request.getRetentionMs());
          }
          String problem = EngineConfig.retentionProblem(d);
          if (problem != null) {
            throw new IllegalArgumentException(
                "invalid retention "
                    + PromText.formatDuration(d.isNegative() ? Duration.ZERO : d)
                    + (d.isNegative() ? " (negative)" : "")
                    + ": "
                    + problem);
          }
          Duration previous = engine.retention();
          engine.setRetention(d);
          LOG.log(
              System.Logger.Level.INFO,
              "admin: retention set to "
                  + PromText.formatDuration(d)
                  + " (was "
                  + PromText.formatDuration(previous)
                  + ") until the next restart");
          return SetRetentionResponse.newBuilder()
              .setPreviousRetentionMs(previous.toMillis())
              .setRetentionMs(d.toMillis())
              .build();
        });
  }

  @Override
  public void applyRetention(
      ApplyRetentionRequest request, StreamObserver<ApplyRetentionResponse> out) {
    unary(
        out,
        () -> {
          long t0 = System.nanoTime();
          int dropped = engine.applyRetention();
          return ApplyRetentionResponse.newBuilder()
              .setBucketsDropped(dropped)
              .setRetentionMs(engine.retention().toMillis())
              .setDurationMs(millisSince(t0))
              .build();
        });
  }

  // ---- helpers ----

  /**
   * Matchers and an inclusive time range, validated. When matchers or a selector are given, at
   * least one of them must reject the empty string ({@link SelectorRule}); a selection without
   * either selects every series (refused by delete only).
   */
  record Query(List<LabelMatcher> matchers, long minT, long maxT) {
    static Query of(Selection s) {
      List<LabelMatcher> matchers = new ArrayList<>();
      for (int i = 0; i < s.getMatchersCount(); i++) {
        dev.tidemark.admin.v1.LabelMatcher m = s.getMatchers(i);
        if (m.getName().isEmpty()) {
          throw new IllegalArgumentException("matcher " + (i + 1) + " has an empty label name");
        }
        LabelMatcher.Op op =
            switch (m.getOp()) {
              case EQUAL -> LabelMatcher.Op.EQUAL;
              case NOT_EQUAL -> LabelMatcher.Op.NOT_EQUAL;
              case REGEX -> LabelMatcher.Op.REGEX;
              case NOT_REGEX -> LabelMatcher.Op.NOT_REGEX;
              default ->
                  throw new IllegalArgumentException(
                      "matcher "
                          + (i + 1)
                          + " ("
                          + m.getName()
                          + ") has an unknown op "
                          + m.getOpValue());
            };
        matchers.add(LabelMatcher.of(m.getName(), op, m.getValue())); // names a bad regex
      }
      boolean selectorGiven = !s.getSelector().isBlank();
      if (selectorGiven) {
        matchers.addAll(SelectorParser.parse(s.getSelector()));
      }
      if (selectorGiven || s.getMatchersCount() > 0) {
        SelectorRule.check(matchers); // structured matchers and selector together, ANDed
      }
      long minT = s.hasMinTimeMs() ? s.getMinTimeMs() : Long.MIN_VALUE;
      long maxT = s.hasMaxTimeMs() ? s.getMaxTimeMs() : Long.MAX_VALUE;
      checkRange(minT, maxT);
      return new Query(List.copyOf(matchers), minT, maxT);
    }
  }

  private static void checkRange(long minT, long maxT) {
    if (minT > maxT) {
      throw new IllegalArgumentException(
          "min_time_ms "
              + minT
              + " ("
              + TimeArgs.format(minT)
              + ") is after max_time_ms "
              + maxT
              + " ("
              + TimeArgs.format(maxT)
              + ")");
    }
  }

  private static int limit(int limit) {
    if (limit < 0) {
      throw new IllegalArgumentException("limit must be 0 (no limit) or positive, was " + limit);
    }
    return limit;
  }

  private static List<Label> labels(Labels l) {
    List<Label> out = new ArrayList<>(l.size());
    for (int i = 0; i < l.size(); i++) {
      out.add(Label.newBuilder().setName(l.name(i)).setValue(l.value(i)).build());
    }
    return out;
  }

  private static long millisSince(long t0) {
    return (System.nanoTime() - t0) / 1_000_000;
  }

  /** One more than shown, so that a limited read stops early and still knows it cut the answer. */
  private static int readLimit(int limit) {
    return limit > 0 && limit < Integer.MAX_VALUE ? limit + 1 : 0;
  }

  /**
   * The calling RPC's deadline (if its client set one) and cancellation, for the store reads it
   * makes; read on the call's thread.
   */
  static QueryContext callContext() {
    io.grpc.Context call = io.grpc.Context.current();
    io.grpc.Deadline deadline = call.getDeadline();
    long remaining =
        deadline == null
            ? Long.MAX_VALUE / 2 // none: only cancellation stops the read
            : deadline.timeRemaining(java.util.concurrent.TimeUnit.NANOSECONDS);
    // gRPC cancels the context when its deadline passes too: that is a timeout, not a cancellation
    return QueryContext.of(
        System.nanoTime() + remaining,
        () -> call.isCancelled() && (deadline == null || !deadline.isExpired()));
  }

  private static <T> void unary(StreamObserver<T> out, Supplier<T> call) {
    T answer;
    try {
      answer = call.get();
    } catch (RuntimeException e) {
      out.onError(status(e));
      return;
    }
    out.onNext(answer);
    out.onCompleted();
  }

  /** The status for a failure (see the class comment). */
  static StatusRuntimeException status(RuntimeException e) {
    if (e instanceof StatusRuntimeException sre) {
      return sre;
    }
    if (e instanceof QueryAbortedException a) {
      return (a.reason() == QueryAbortedException.Reason.TIMEOUT
              ? Status.DEADLINE_EXCEEDED
              : Status.CANCELLED)
          .withDescription(a.getMessage())
          .asRuntimeException();
    }
    if (e instanceof IllegalArgumentException) {
      return Status.INVALID_ARGUMENT.withDescription(e.getMessage()).asRuntimeException();
    }
    if (e instanceof StorageUnavailableException || e instanceof KvStoreException) {
      return Status.UNAVAILABLE
          .withDescription("storage unavailable: " + e.getMessage())
          .withCause(e)
          .asRuntimeException();
    }
    if (e instanceof CorruptRecordException) {
      LOG.log(System.Logger.Level.WARNING, "admin call met a corrupt record", e);
      return Status.DATA_LOSS
          .withDescription(
              ErrorMessages.describe(e, "corrupt record")
                  + " (stop the server and run tidemark verify --data-dir DIR)")
          .withCause(e)
          .asRuntimeException();
    }
    LOG.log(System.Logger.Level.WARNING, "admin call failed", e);
    return Status.INTERNAL
        .withDescription("internal error: " + ErrorMessages.describe(e, "see the server log"))
        .withCause(e)
        .asRuntimeException();
  }
}
