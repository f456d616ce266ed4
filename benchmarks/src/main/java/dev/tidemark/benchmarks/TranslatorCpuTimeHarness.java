package dev.tidemark.benchmarks;

import java.lang.management.ManagementFactory;

/**
 * Runs {@link TranslatorBenchmark#translate()} in a loop and reports data points per second of
 * <em>thread CPU time</em> and allocated bytes per point. A cross-check for JMH's wall-clock
 * figures on a shared, overloaded machine (our 2-core boxes often run several builds at once). Not
 * a JMH benchmark: no forks, no blackholes; read it beside the JMH result, not instead of it.
 *
 * <pre>
 * java -cp benchmarks/target/benchmarks.jar dev.tidemark.benchmarks.TranslatorCpuTimeHarness 10 [translate|decodeAndTranslate|inPlace|decodeOnly|translateCold]
 * </pre>
 */
public final class TranslatorCpuTimeHarness {
  private TranslatorCpuTimeHarness() {}

  /**
   * Translation of requests decoded beforehand (48 at a time, ~200 MB), so the decoded objects are
   * fresh and no longer in cache: the worst case for the translator's memory accesses. The delta
   * streams see each variant once per round, in order.
   */
  private static void translateCold(
      TranslatorBenchmark b, int rounds, com.sun.management.ThreadMXBean mx, long tid)
      throws Exception {
    int next = 1;
    for (int r = 0; r < rounds; r++) {
      io.opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest[] reqs =
          new io.opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest[48];
      for (int i = 0; i < reqs.length; i++) {
        if (next == b.encoded.length) {
          throw new IllegalStateException("too many rounds for the delta variants");
        }
        reqs[i] =
            io.opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest.parseFrom(
                b.encoded[next++]);
      }
      long cpu0 = mx.getCurrentThreadCpuTime();
      long alloc0 = mx.getThreadAllocatedBytes(tid);
      long rejected = 0;
      for (var req : reqs) {
        rejected += b.translator.translate(req).rejectedDataPoints();
      }
      long cpu = mx.getCurrentThreadCpuTime() - cpu0;
      long alloc = mx.getThreadAllocatedBytes(tid) - alloc0;
      double points = (double) reqs.length * TranslatorBenchmark.POINTS;
      System.out.printf(
          java.util.Locale.ROOT,
          "translateCold round %d: %.0f points/cpu-s, %.1f B/point, rejected %d%n",
          r,
          points / (cpu / 1e9),
          alloc / points,
          rejected);
    }
  }

  public static void main(String[] args) throws Exception {
    int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 10;
    String mode = args.length > 1 ? args[1] : "translate";
    com.sun.management.ThreadMXBean mx =
        (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    long tid = Thread.currentThread().getId();
    TranslatorBenchmark b = new TranslatorBenchmark();
    b.setup();
    if (mode.equals("translateCold")) {
      translateCold(b, rounds, mx, tid);
      return;
    }
    int invocations = 4000;
    for (int r = 0; r < rounds; r++) {
      long cpu0 = mx.getCurrentThreadCpuTime();
      long wall0 = System.nanoTime();
      long alloc0 = mx.getThreadAllocatedBytes(tid);
      long rejected = 0;
      for (int i = 0; i < invocations; i++) {
        switch (mode) {
          case "translate" -> rejected += b.translate();
          case "decodeAndTranslate" -> rejected += b.decodeAndTranslate();
          case "inPlace" -> rejected += b.inPlace();
          case "decodeOnly" -> rejected += b.decodeOnly().getResourceMetricsCount();
          default -> throw new IllegalArgumentException("mode " + mode);
        }
      }
      long cpu = mx.getCurrentThreadCpuTime() - cpu0;
      long wall = System.nanoTime() - wall0;
      long alloc = mx.getThreadAllocatedBytes(tid) - alloc0;
      double points = (double) invocations * TranslatorBenchmark.POINTS;
      System.out.printf(
          java.util.Locale.ROOT,
          mode + " round %d: %.0f points/cpu-s, %.0f points/wall-s, %.1f B/point, rejected %d%n",
          r,
          points / (cpu / 1e9),
          points / (wall / 1e9),
          alloc / points,
          rejected);
    }
  }
}
