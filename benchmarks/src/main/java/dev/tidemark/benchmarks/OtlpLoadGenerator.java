package dev.tidemark.benchmarks;

import io.grpc.CallOptions;
import io.grpc.KnownLength;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.StreamObserver;
import io.opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceResponse;
import io.opentelemetry.proto.collector.metrics.v1.MetricsServiceGrpc;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

/**
 * OTLP/gRPC load generator for a Tidemark server running as another process (issue #5 benchmark;
 * driver: {@code benchmarks/bin/otlp-ingest.sh}).
 *
 * <pre>
 * java -cp benchmarks/target/benchmarks.jar dev.tidemark.benchmarks.OtlpLoadGenerator \
 *     --target 127.0.0.1:4317 [--metrics-url http://127.0.0.1:9090/metrics] [--server-pid PID] \
 *     [--workload history|active] [--senders 4] [--connections 1] [--rate SAMPLES_PER_S] ...
 * </pre>
 *
 * <p>Workloads ({@link OtlpLoadDataset}): {@code history} = 100 instances × 100 series (10k
 * series), one sample per 15 s for 6 hours ending now (14.4 M samples), requests of 5 instances × 4
 * steps = 2,000 points; {@code active} = 1,000 instances × 100 series (100k series) for 10
 * simulated minutes ending now, requests of 20 instances × 1 step = 2,000 points. Every request is
 * encoded before the timed phase and sent as raw bytes.
 *
 * <p>Modes: without {@code --rate}, {@code --senders} threads send as fast as they can, one request
 * at a time each; sender s owns the request groups g with g mod senders = s, so every series is
 * sent in time order by one thread; the request groups must split evenly over the senders, and no
 * sender runs more than {@code --max-lag-steps} (default 60, i.e. 15 minutes of data) ahead of the
 * slowest. With {@code --rate R}, one pacer issues requests (all groups, time order) at R
 * samples/s, asynchronously, with at most one request of a group in flight; the latency of a
 * request is measured from its scheduled send time (no coordinated omission) to its answer; {@code
 * --warmup-s N} first sends a separate warm-up dataset (other instances, hours earlier) at the same
 * rate (max mode: {@code --warmup-rate}, default 250,000) for about N seconds; the figures then
 * describe a warm server.
 *
 * <p>Checks: every Export must succeed with no rejected point (UNAVAILABLE and RESOURCE_EXHAUSTED
 * are retried after 200 ms, up to 20 times, but count as errors; with {@code --allow-retries}, for
 * overload runs where back-pressure is the expected answer, they fail the check only if a request
 * runs out of attempts); at the end, the points the server acknowledged must equal the points sent,
 * and with {@code --metrics-url} the server's {@code
 * tidemark_otlp_data_points_accepted_total{protocol="grpc"}} must have grown by exactly that and
 * {@code tidemark_head_series} must be at least the dataset's series. Exit code 1 on any error,
 * rejection or mismatch.
 *
 * <p>Output: {@code RESULT} lines with samples/s, ack latency p50/p99/max, errors, rejected points;
 * with {@code --server-pid}, the server's CPU seconds over the timed phase (per million samples)
 * and its peak RSS (VmHWM); the generator's own CPU seconds. {@code --server-jfr FILE} records the
 * server with JFR ({@code settings=profile}, through jcmd) over exactly the timed phase.
 */
public final class OtlpLoadGenerator {

  private static final MethodDescriptor<byte[], ExportMetricsServiceResponse> EXPORT =
      MetricsServiceGrpc.getExportMethod().toBuilder(
              new BytesMarshaller(), MetricsServiceGrpc.getExportMethod().getResponseMarshaller())
          .build();

  private static final int MAX_ATTEMPTS = 20;
  private static final long RETRY_DELAY_MS = 200;

  private final Map<String, String> opts;
  private OtlpLoadDataset data;
  private final List<ManagedChannel> channels = new ArrayList<>();
  private byte[][] bodies;
  private long[] latencies; // by request index, nanos (the warm-up swaps these three)

  /**
   * {@code --loops L} (paced mode): the dataset is sent L times, each pass shifted later by the
   * dataset's length (the time fields patched in a copy of each body), so a long run needs no more
   * memory than one pass; the data then starts L passes before now.
   */
  private final int loops;

  /** Per body, the offsets of its data points' {@code time_unix_nano} (with {@code --loops}). */
  private int[][] timeOffsets;

  private final AtomicLong ackedPoints = new AtomicLong();
  private final AtomicLong rejectedPoints = new AtomicLong();
  private final AtomicLong errors = new AtomicLong();
  private final AtomicLong failedRequests = new AtomicLong();
  private final AtomicLong bytesSent = new AtomicLong();
  private final AtomicReference<String> firstError = new AtomicReference<>();

  private OtlpLoadGenerator(Map<String, String> opts) {
    this.opts = opts;
    String workload = opts.getOrDefault("workload", "history");
    long stepMs = Long.parseLong(opts.getOrDefault("step-s", "15")) * 1000;
    int instances;
    int steps;
    int ipr;
    int spr;
    switch (workload) {
      case "history" -> {
        instances = 100;
        steps = (int) (6 * 3600_000L / stepMs);
        ipr = 5;
        spr = 4;
      }
      case "active" -> {
        instances = 1000;
        steps = (int) (10 * 60_000L / stepMs);
        ipr = 20;
        spr = 1;
      }
      default -> throw new IllegalArgumentException("--workload history|active, not " + workload);
    }
    instances = Integer.parseInt(opts.getOrDefault("instances", String.valueOf(instances)));
    if (opts.containsKey("minutes")) {
      steps = (int) (Long.parseLong(opts.get("minutes")) * 60_000L / stepMs);
    }
    steps = Integer.parseInt(opts.getOrDefault("steps", String.valueOf(steps)));
    ipr = Integer.parseInt(opts.getOrDefault("instances-per-request", String.valueOf(ipr)));
    spr = Integer.parseInt(opts.getOrDefault("steps-per-request", String.valueOf(spr)));
    loops = Integer.parseInt(opts.getOrDefault("loops", "1"));
    long now = System.currentTimeMillis();
    // The last sample a step before now (the server refuses samples too far in the future).
    long start = (now / stepMs) * stepMs - (long) steps * stepMs * loops;
    start = Long.parseLong(opts.getOrDefault("start-ms", String.valueOf(start)));
    this.data = new OtlpLoadDataset(instances, steps, start, stepMs, ipr, spr);
  }

  /** What {@code --help} prints: every option, as the class documentation describes them. */
  static final String USAGE =
      String.join(
          "\n",
          "usage: OtlpLoadGenerator --target HOST:PORT [options]   (see the class documentation)",
          "  --workload history|active   10k series x 6 h, or N instances x 10 min (default history)",
          "  --instances N  --minutes M  --steps N  --step-s S  --start-ms MS",
          "  --instances-per-request N  --steps-per-request N",
          "  --senders N  --connections N  --rate SAMPLES_PER_S  --loops L  --max-lag-steps N",
          "  --warmup-s S  --warmup-rate R",
          "  --metrics-url URL  --server-pid PID  --server-jfr FILE",
          "  --dry-run  --allow-unbalanced  --allow-retries");

  public static void main(String[] args) throws Exception {
    Map<String, String> opts = new LinkedHashMap<>();
    for (int i = 0; i < args.length; i++) {
      String a = args[i];
      if (a.equals("--help") || a.equals("-h")) {
        System.out.println(USAGE);
        return;
      }
      if (a.startsWith("--")
          && !a.contains("=")
          && i + 1 >= args.length
          && !(a.equals("--dry-run")
              || a.equals("--allow-unbalanced")
              || a.equals("--allow-retries"))) {
        throw new IllegalArgumentException("option " + a + " needs a value\n" + USAGE);
      }
      if (!a.startsWith("--")) {
        throw new IllegalArgumentException("unexpected argument " + a);
      }
      String k = a.substring(2);
      if (k.contains("=")) {
        opts.put(k.substring(0, k.indexOf('=')), k.substring(k.indexOf('=') + 1));
      } else if (k.equals("dry-run") || k.equals("allow-unbalanced") || k.equals("allow-retries")) {
        opts.put(k, "true");
      } else {
        opts.put(k, args[++i]);
      }
    }
    System.exit(new OtlpLoadGenerator(opts).run());
  }

  private int run() throws Exception {
    int senders = Integer.parseInt(opts.getOrDefault("senders", "4"));
    int connections = Integer.parseInt(opts.getOrDefault("connections", "1"));
    double rate = Double.parseDouble(opts.getOrDefault("rate", "0"));
    String workload = opts.getOrDefault("workload", "history");
    long serverPid = Long.parseLong(opts.getOrDefault("server-pid", "-1"));
    String metricsUrl = opts.get("metrics-url");

    long t0 = System.nanoTime();
    bodies = data.encodeAll();
    long totalBytes = 0;
    for (byte[] b : bodies) {
      totalBytes += b.length;
    }
    latencies = new long[bodies.length * loops];
    if (loops > 1) {
      if (rate <= 0) {
        throw new IllegalArgumentException("--loops needs --rate (paced mode)");
      }
      timeOffsets = new int[bodies.length][];
      for (int i = 0; i < bodies.length; i++) {
        timeOffsets[i] = OtlpTimeFields.offsets(bodies[i]);
      }
    }
    System.out.printf(
        Locale.ROOT,
        "dataset workload=%s series=%d samples=%d start_ms=%d steps=%d step_s=%d requests=%d bytes=%d"
            + " bytes_per_point=%.1f build_s=%.1f%n",
        workload,
        data.series(),
        data.samples(),
        data.startMs,
        data.steps,
        data.stepMs / 1000,
        bodies.length,
        totalBytes,
        (double) totalBytes / data.samples(),
        (System.nanoTime() - t0) / 1e9);
    if (opts.containsKey("dry-run")) {
      return 0;
    }

    String target = opts.get("target");
    if (target == null) {
      throw new IllegalArgumentException("--target HOST:PORT is required");
    }
    String host = target.substring(0, target.lastIndexOf(':'));
    int port = Integer.parseInt(target.substring(target.lastIndexOf(':') + 1));
    for (int i = 0; i < connections; i++) {
      channels.add(
          NettyChannelBuilder.forAddress(host, port)
              .usePlaintext()
              .maxInboundMessageSize(16 << 20)
              .build());
    }

    int warmupS = Integer.parseInt(opts.getOrDefault("warmup-s", "0"));
    if (warmupS > 0) {
      warmup(
          rate > 0 ? rate : Double.parseDouble(opts.getOrDefault("warmup-rate", "250000")),
          warmupS);
    }

    String before = OtlpLoadProc.scrape(metricsUrl);
    double acceptedBefore =
        OtlpLoadProc.sum(before, "tidemark_otlp_data_points_accepted_total", "protocol=\"grpc\"");
    double rejectedBefore =
        OtlpLoadProc.sum(before, "tidemark_otlp_data_points_rejected_total", "protocol=\"grpc\"");
    long selfPid = ProcessHandle.current().pid();
    double serverCpu0 = serverPid > 0 ? OtlpLoadProc.cpuSeconds(serverPid) : Double.NaN;
    double selfCpu0 = OtlpLoadProc.cpuSeconds(selfPid);
    String uptime0 = loadavg();

    String jfr = opts.get("server-jfr");
    if (jfr != null && serverPid > 0) {
      jcmd(serverPid, "JFR.start", "name=otlp-load", "settings=profile", "filename=" + jfr);
    }
    long start = System.nanoTime();
    if (rate > 0) {
      paced(rate, loops);
    } else {
      maxRate(senders);
    }
    long wallNanos = System.nanoTime() - start;
    if (jfr != null && serverPid > 0) {
      jcmd(serverPid, "JFR.stop", "name=otlp-load");
    }

    double serverCpu = serverPid > 0 ? OtlpLoadProc.cpuSeconds(serverPid) - serverCpu0 : Double.NaN;
    double selfCpu = OtlpLoadProc.cpuSeconds(selfPid) - selfCpu0;
    long hwmKb = serverPid > 0 ? OtlpLoadProc.statusKb(serverPid, "VmHWM") : -1;
    long rssKb = serverPid > 0 ? OtlpLoadProc.statusKb(serverPid, "VmRSS") : -1;
    String uptime1 = loadavg();
    for (ManagedChannel c : channels) {
      c.shutdown();
    }

    long samples = data.samples() * loops;
    double wall = wallNanos / 1e9;
    long[] lat = OtlpLoadProc.sorted(latencies, latencies.length);
    // steady state: requests scheduled after the first 10% of the run (JIT warm-up excluded)
    long[] steady =
        OtlpLoadProc.sorted(
            java.util.Arrays.copyOfRange(latencies, latencies.length / 10, latencies.length),
            latencies.length - latencies.length / 10);
    String mode =
        rate > 0 ? String.format(Locale.ROOT, "paced rate=%.0f", rate) : "max senders=" + senders;
    System.out.printf(
        Locale.ROOT,
        "RESULT otlp-load workload=%s mode=%s connections=%d samples=%d requests=%d wall_s=%.2f samples_per_s=%.0f"
            + " errors=%d failed_requests=%d rejected_points=%d%n",
        workload,
        mode,
        connections,
        samples,
        bodies.length * loops,
        wall,
        samples / wall,
        errors.get(),
        failedRequests.get(),
        rejectedPoints.get());
    System.out.printf(
        Locale.ROOT,
        "RESULT ack workload=%s mode=%s ack_p50_ms=%.1f ack_p99_ms=%.1f ack_p999_ms=%.1f ack_max_ms=%.1f"
            + " steady_p50_ms=%.1f steady_p99_ms=%.1f steady_max_ms=%.1f%n",
        workload,
        mode,
        OtlpLoadProc.pctMs(lat, 50),
        OtlpLoadProc.pctMs(lat, 99),
        OtlpLoadProc.pctMs(lat, 99.9),
        OtlpLoadProc.pctMs(lat, 100),
        OtlpLoadProc.pctMs(steady, 50),
        OtlpLoadProc.pctMs(steady, 99),
        OtlpLoadProc.pctMs(steady, 100));
    System.out.printf(
        Locale.ROOT,
        "RESULT cpu workload=%s server_cpu_s=%.2f server_cpu_s_per_M=%.3f server_cores_used=%.2f"
            + " server_peak_rss_mb=%.0f server_rss_mb=%.0f client_cpu_s=%.2f client_cpu_s_per_M=%.3f%n",
        workload,
        serverCpu,
        serverCpu / (samples / 1e6),
        serverCpu / wall,
        hwmKb / 1024.0,
        rssKb / 1024.0,
        selfCpu,
        selfCpu / (samples / 1e6));
    slowest(start);
    System.out.println("RESULT load before=[" + uptime0 + "] after=[" + uptime1 + "]");

    // Verification.
    boolean ok =
        (errors.get() == 0 || opts.containsKey("allow-retries"))
            && rejectedPoints.get() == 0
            && failedRequests.get() == 0;
    ok &= ackedPoints.get() == samples;
    String verify =
        String.format(Locale.ROOT, "acked_points=%d sent_points=%d", ackedPoints.get(), samples);
    if (metricsUrl != null) {
      String after = OtlpLoadProc.scrape(metricsUrl);
      double accepted =
          OtlpLoadProc.sum(after, "tidemark_otlp_data_points_accepted_total", "protocol=\"grpc\"")
              - acceptedBefore;
      double rejected =
          OtlpLoadProc.sum(after, "tidemark_otlp_data_points_rejected_total", "protocol=\"grpc\"")
              - rejectedBefore;
      double headSeries = OtlpLoadProc.sum(after, "tidemark_head_series");
      ok &= accepted == samples - rejectedPoints.get() && rejected == rejectedPoints.get();
      ok &= headSeries >= data.series();
      verify +=
          String.format(
              Locale.ROOT,
              " server_accepted=%.0f server_rejected=%.0f server_head_series=%.0f expected_series=%d",
              accepted,
              rejected,
              headSeries,
              data.series());
    }
    System.out.println("RESULT verify " + verify + " status=" + (ok ? "OK" : "MISMATCH"));
    if (firstError.get() != null) {
      System.out.println("first error: " + firstError.get());
    }
    return ok ? 0 : 1;
  }

  /** Where the slow answers were: requests over 200 ms, by data hour, and the five slowest. */
  private void slowest(long startNanos) {
    Map<Long, Integer> slowByHour = new java.util.TreeMap<>();
    Integer[] idx = new Integer[latencies.length];
    for (int i = 0; i < latencies.length; i++) {
      idx[i] = i;
      if (latencies[i] > 200_000_000L) {
        slowByHour.merge(dataMs(i) / 3_600_000L * 3_600_000L, 1, Integer::sum);
      }
    }
    java.util.Arrays.sort(idx, (a, b) -> Long.compare(latencies[b], latencies[a]));
    StringBuilder sb = new StringBuilder("slow answers (>200 ms) by data hour:");
    slowByHour.forEach(
        (h, n) -> sb.append(' ').append(java.time.Instant.ofEpochMilli(h)).append('=').append(n));
    sb.append("; slowest:");
    for (int i = 0; i < Math.min(5, idx.length); i++) {
      sb.append(
          String.format(
              Locale.ROOT,
              " #%d(data %s, %.0f ms)",
              idx[i],
              java.time.Instant.ofEpochMilli(dataMs(idx[i])),
              latencies[idx[i]] / 1e6));
    }
    System.out.println(sb);
  }

  /** The first sample time of request i. */
  private long dataMs(int i) {
    int pass = i / bodies.length;
    int b = i % bodies.length;
    return data.startMs
        + (long) pass * data.steps * data.stepMs
        + (long) (b / data.groups()) * data.stepsPerRequest * data.stepMs;
  }

  /** Sender s sends groups g ≡ s (mod senders), chunk by chunk, one request at a time. */
  private void maxRate(int senders) throws InterruptedException {
    int groups = data.groups();
    if (groups % senders != 0 && !opts.containsKey("allow-unbalanced")) {
      throw new IllegalArgumentException(
          groups
              + " request groups do not split evenly over "
              + senders
              + " senders (--allow-unbalanced to force)");
    }
    // Senders stay within maxLag chunks of each other, so the data in flight spans a bounded time
    // range (as with real exporters), however the threads get scheduled.
    int maxLag =
        Math.max(
            1, Integer.parseInt(opts.getOrDefault("max-lag-steps", "60")) / data.stepsPerRequest);
    java.util.concurrent.atomic.AtomicIntegerArray progress =
        new java.util.concurrent.atomic.AtomicIntegerArray(senders);
    List<Thread> threads = new ArrayList<>();
    for (int s = 0; s < senders; s++) {
      final int sender = s;
      Thread t =
          new Thread(
              () -> {
                ManagedChannel ch = channels.get(sender % channels.size());
                for (int chunk = 0; chunk < data.stepChunks(); chunk++) {
                  while (minProgress(progress) < chunk - maxLag) {
                    LockSupport.parkNanos(200_000);
                  }
                  for (int g = sender; g < groups; g += senders) {
                    int idx = chunk * groups + g;
                    long t0 = System.nanoTime();
                    sendBlocking(ch, idx);
                    latencies[idx] = System.nanoTime() - t0;
                  }
                  progress.set(sender, chunk + 1);
                }
                progress.set(sender, Integer.MAX_VALUE);
              },
              "sender-" + s);
      threads.add(t);
      t.start();
    }
    for (Thread t : threads) {
      t.join();
    }
  }

  private static int minProgress(java.util.concurrent.atomic.AtomicIntegerArray progress) {
    int m = Integer.MAX_VALUE;
    for (int i = 0; i < progress.length(); i++) {
      m = Math.min(m, progress.get(i));
    }
    return m;
  }

  private void sendBlocking(ManagedChannel ch, int idx) {
    for (int attempt = 1; ; attempt++) {
      try {
        ExportMetricsServiceResponse r =
            ClientCalls.blockingUnaryCall(
                ch,
                EXPORT,
                CallOptions.DEFAULT.withDeadlineAfter(60, TimeUnit.SECONDS),
                bodies[idx]);
        bytesSent.addAndGet(bodies[idx].length);
        acked(idx, r);
        return;
      } catch (StatusRuntimeException e) {
        if (!retry(idx, e, attempt)) {
          return;
        }
        sleepMs(RETRY_DELAY_MS);
      }
    }
  }

  private void acked(int idx, ExportMetricsServiceResponse r) {
    int chunk = idx / data.groups();
    long rejected = r.hasPartialSuccess() ? r.getPartialSuccess().getRejectedDataPoints() : 0;
    if (rejected > 0) {
      rejectedPoints.addAndGet(rejected);
      firstError.compareAndSet(
          null,
          "partial success: " + rejected + " rejected: " + r.getPartialSuccess().getErrorMessage());
    }
    ackedPoints.addAndGet(data.points(chunk) - rejected);
  }

  /** Counts the error; true if the request should be tried again. */
  private boolean retry(int idx, StatusRuntimeException e, int attempt) {
    errors.incrementAndGet();
    firstError.compareAndSet(null, "request " + idx + ": " + e.getStatus());
    Status.Code c = e.getStatus().getCode();
    boolean retryable = c == Status.Code.UNAVAILABLE || c == Status.Code.RESOURCE_EXHAUSTED;
    if (!retryable || attempt >= MAX_ATTEMPTS) {
      failedRequests.incrementAndGet();
      return false;
    }
    return true;
  }

  /**
   * Paced sends of a separate dataset (instances numbered after the measured ones, same shape,
   * placed hours before the measured range) for about {@code seconds}, so the JIT, caches and pools
   * are warm; then every counter is reset. Its series stay in the server (the head series check
   * allows extra).
   */
  private void warmup(double rate, int seconds) throws InterruptedException {
    OtlpLoadDataset main = data;
    byte[][] mainBodies = bodies;
    long[] mainLatencies = latencies;
    int groups = main.groups();
    int chunks =
        (int) Math.max(1, Math.min(main.stepChunks(), rate * seconds / main.points(0) / groups));
    // The warm-up data lies before the measured range (hour-aligned, ending an hour or more before
    // it), so the measured requests never touch a bucket the warm-up filled: the engine seals a
    // bucket once its newest sample is 30 min past the bucket's end, and appends to a bucket being
    // sealed wait for the seal.
    long hour = 3_600_000L;
    int maxChunks = (int) Math.max(1, 5 * hour / (main.stepsPerRequest * main.stepMs));
    chunks = Math.min(chunks, maxChunks);
    long warmStart = (main.startMs / hour - 7) * hour;
    data =
        new OtlpLoadDataset(
            100_000,
            main.instances,
            chunks * main.stepsPerRequest,
            warmStart,
            main.stepMs,
            main.instancesPerRequest,
            main.stepsPerRequest);
    bodies = data.encodeAll();
    latencies = new long[bodies.length];
    long t0 = System.nanoTime();
    paced(rate, 1);
    long[] lat = OtlpLoadProc.sorted(latencies, latencies.length);
    System.out.printf(
        Locale.ROOT,
        "warmup samples=%d wall_s=%.1f errors=%d rejected_points=%d ack_p50_ms=%.1f ack_p99_ms=%.1f%n",
        data.samples(),
        (System.nanoTime() - t0) / 1e9,
        errors.get(),
        rejectedPoints.get(),
        OtlpLoadProc.pctMs(lat, 50),
        OtlpLoadProc.pctMs(lat, 99));
    // One request at the start of the measured range moves the head's newest time there, so the
    // warm-up buckets get sealed now, during the pause, rather than during the measurement.
    OtlpLoadDataset push =
        new OtlpLoadDataset(
            200_000,
            main.instancesPerRequest,
            1,
            main.startMs,
            main.stepMs,
            main.instancesPerRequest,
            1);
    ExportMetricsServiceResponse pr =
        ClientCalls.blockingUnaryCall(
            channels.get(0), EXPORT, CallOptions.DEFAULT, push.encode(0, 0).toByteArray());
    if (pr.hasPartialSuccess() && pr.getPartialSuccess().getRejectedDataPoints() > 0) {
      System.out.println("warmup push rejected: " + pr.getPartialSuccess().getErrorMessage());
    }
    data = main;
    bodies = mainBodies;
    latencies = mainLatencies;
    ackedPoints.set(0);
    rejectedPoints.set(0);
    errors.set(0);
    failedRequests.set(0);
    bytesSent.set(0);
    firstError.set(null);
    Thread.sleep(5000);
  }

  /**
   * Issues every request in time order at {@code rate} samples/s, asynchronously, {@code passes}
   * times (each pass later by the dataset's length: {@code --loops}).
   */
  private void paced(double rate, int passes) throws InterruptedException {
    int bodyCount = bodies.length;
    int n = bodyCount * passes;
    CountDownLatch done = new CountDownLatch(n);
    Semaphore inFlight = new Semaphore(1024);
    ScheduledExecutorService retries = Executors.newSingleThreadScheduledExecutor();
    AtomicInteger next = new AtomicInteger();
    // One request in flight per group, as one exporter per group would: a group's requests reach
    // the server in time order. A late answer delays the next send; the latency, measured from
    // the scheduled time, shows it.
    Semaphore[] groupTurn = new Semaphore[data.groups()];
    for (int g = 0; g < groupTurn.length; g++) {
      groupTurn[g] = new Semaphore(1);
    }
    long start = System.nanoTime();
    for (int v = 0; v < n; v++) {
      int i = v % bodyCount;
      int pass = v / bodyCount;
      long intended =
          start + (long) ((pointsBefore(i) + (double) pass * data.samples()) / rate * 1e9);
      long wait;
      while ((wait = intended - System.nanoTime()) > 0) {
        LockSupport.parkNanos(wait);
      }
      Semaphore turn = groupTurn[i % data.groups()];
      turn.acquire();
      inFlight.acquire();
      Runnable release =
          () -> {
            turn.release();
            inFlight.release();
          };
      ManagedChannel ch = channels.get(next.getAndIncrement() % channels.size());
      byte[] body =
          pass == 0
              ? bodies[i]
              : OtlpTimeFields.shifted(
                  bodies[i], timeOffsets[i], pass * data.steps * data.stepMs * 1_000_000L);
      sendAsync(ch, v, body, 1, intended, done, release, retries);
    }
    done.await();
    retries.shutdownNow();
  }

  /** Points in the requests before index i (all requests of a chunk have the same size). */
  private double pointsBefore(int i) {
    int groups = data.groups();
    int chunk = i / groups;
    // every chunk but maybe the last is full
    return (double) chunk * groups * data.points(0) + (double) (i % groups) * data.points(chunk);
  }

  /** Sends request idx; {@code release} runs once, when the request is answered or given up. */
  private void sendAsync(
      ManagedChannel ch,
      int idx,
      byte[] body,
      int attempt,
      long intended,
      CountDownLatch done,
      Runnable release,
      ScheduledExecutorService retries) {
    ClientCalls.asyncUnaryCall(
        ch.newCall(EXPORT, CallOptions.DEFAULT.withDeadlineAfter(60, TimeUnit.SECONDS)),
        body,
        new StreamObserver<>() {
          @Override
          public void onNext(ExportMetricsServiceResponse r) {
            latencies[idx] = System.nanoTime() - intended;
            bytesSent.addAndGet(body.length);
            acked(idx % bodies.length, r);
          }

          @Override
          public void onError(Throwable t) {
            StatusRuntimeException e =
                t instanceof StatusRuntimeException s
                    ? s
                    : Status.fromThrowable(t).asRuntimeException();
            if (retry(idx, e, attempt)) {
              retries.schedule(
                  () -> sendAsync(ch, idx, body, attempt + 1, intended, done, release, retries),
                  RETRY_DELAY_MS,
                  TimeUnit.MILLISECONDS);
            } else {
              latencies[idx] = System.nanoTime() - intended;
              release.run();
              done.countDown();
            }
          }

          @Override
          public void onCompleted() {
            release.run();
            done.countDown();
          }
        });
  }

  /** Runs jcmd against the server (--server-jfr: a JFR recording of exactly the timed phase). */
  private static void jcmd(long pid, String... args) {
    List<String> cmd = new ArrayList<>(List.of("jcmd", String.valueOf(pid)));
    cmd.addAll(List.of(args));
    try {
      Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
      String out =
          new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
      if (p.waitFor() != 0) {
        System.out.println("jcmd " + String.join(" ", args) + " failed: " + out.strip());
      }
    } catch (IOException e) {
      System.out.println("jcmd failed: " + e.getMessage());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private static String loadavg() {
    try {
      return java.nio.file.Files.readString(java.nio.file.Path.of("/proc/loadavg")).trim();
    } catch (IOException e) {
      return "?";
    }
  }

  private static void sleepMs(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** Sends a pre-encoded body as is; the runtime copies it into its frames without a re-encode. */
  private static final class BytesMarshaller implements MethodDescriptor.Marshaller<byte[]> {
    @Override
    public InputStream stream(byte[] value) {
      return new KnownLengthStream(value);
    }

    @Override
    public byte[] parse(InputStream stream) {
      try {
        return stream.readAllBytes();
      } catch (IOException e) {
        throw new IllegalStateException(e);
      }
    }
  }

  private static final class KnownLengthStream extends ByteArrayInputStream
      implements KnownLength, io.grpc.Drainable {
    KnownLengthStream(byte[] b) {
      super(b);
    }

    @Override
    public int drainTo(OutputStream target) throws IOException {
      int n = count - pos;
      target.write(buf, pos, n);
      pos = count;
      return n;
    }
  }
}
