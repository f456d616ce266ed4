package dev.tidemark.benchmarks;

import java.lang.management.ManagementFactory;

/**
 * Runs {@link TranslatorBenchmark#translate()} in a loop and reports data points per second of
 * <em>thread CPU time</em> and allocated bytes per point. A cross-check for JMH's wall-clock
 * figures on a shared, overloaded machine (our 2-core boxes often run several builds at once).
 * Not a JMH benchmark: no forks, no blackholes; read it beside the JMH result, not instead of it.
 *
 * <pre>
 * java -cp benchmarks/target/benchmarks.jar dev.tidemark.benchmarks.TranslatorCpuTimeHarness 10 [translate|decodeAndTranslate|decodeOnly]
 * </pre>
 */
public final class TranslatorCpuTimeHarness {
  private TranslatorCpuTimeHarness() {}

  public static void main(String[] args) throws Exception {
    int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 10;
    String mode = args.length > 1 ? args[1] : "translate";
    com.sun.management.ThreadMXBean mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    long tid = Thread.currentThread().getId();
    TranslatorBenchmark b = new TranslatorBenchmark();
    b.setup();
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
          case "decodeOnly" -> rejected += b.decodeOnly().getResourceMetricsCount();
          default -> throw new IllegalArgumentException("mode " + mode);
        }
      }
      long cpu = mx.getCurrentThreadCpuTime() - cpu0;
      long wall = System.nanoTime() - wall0;
      long alloc = mx.getThreadAllocatedBytes(tid) - alloc0;
      double points = (double) invocations * TranslatorBenchmark.POINTS;
      System.out.printf(java.util.Locale.ROOT,
          mode + " round %d: %.0f points/cpu-s, %.0f points/wall-s, %.1f B/point, rejected %d%n",
          r, points / (cpu / 1e9), points / (wall / 1e9), alloc / points, rejected);
    }
  }
}
