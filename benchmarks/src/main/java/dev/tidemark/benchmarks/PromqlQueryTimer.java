package dev.tidemark.benchmarks;

import java.lang.management.ManagementFactory;
import java.util.Arrays;

/**
 * {@link PromqlBenchmark}'s data and queries outside JMH, for A/B runs on a shared machine: per
 * query the wall time and the process CPU time (all threads, GC and JIT included), which other
 * processes' load inflates much less than wall time. Prints min and median of each.
 *
 * <pre>
 * java -cp benchmarks/target/benchmarks.jar dev.tidemark.benchmarks.PromqlQueryTimer CPU 20 30
 * </pre>
 *
 * (query, warm-up queries, timed queries).
 */
public final class PromqlQueryTimer {
  private PromqlQueryTimer() {}

  /** SHA-256 over every series' labels, timestamps and raw value bits, in result order. */
  static String checksum(dev.tidemark.promql.engine.QueryResult r) throws Exception {
    java.security.MessageDigest md = java.security.MessageDigest.getInstance("SHA-256");
    java.nio.ByteBuffer buf = java.nio.ByteBuffer.allocate(16);
    for (dev.tidemark.promql.engine.Value.Series s :
        ((dev.tidemark.promql.engine.Value.Matrix) r.value()).series()) {
      md.update(s.labels().toString().getBytes(java.nio.charset.StandardCharsets.UTF_8));
      for (int i = 0; i < s.size(); i++) {
        buf.clear();
        buf.putLong(s.timestamps()[i]).putLong(Double.doubleToRawLongBits(s.values()[i]));
        md.update(buf.array());
      }
    }
    return java.util.HexFormat.of().formatHex(md.digest()).substring(0, 16);
  }

  public static void main(String[] args) throws Exception {
    PromqlBenchmark b = new PromqlBenchmark();
    b.query = PromqlBenchmark.Query.valueOf(args.length > 0 ? args[0] : "CPU");
    int warmup = args.length > 1 ? Integer.parseInt(args[1]) : 20;
    int runs = args.length > 2 ? Integer.parseInt(args[2]) : 30;
    b.load();
    com.sun.management.OperatingSystemMXBean os =
        (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
    try {
      System.out.println(b.query + ": result checksum " + checksum(b.rangeQuery()));
      for (int i = 0; i < warmup; i++) {
        b.rangeQuery();
      }
      double[] wall = new double[runs];
      double[] cpu = new double[runs];
      for (int i = 0; i < runs; i++) {
        long c0 = os.getProcessCpuTime();
        long t0 = System.nanoTime();
        b.rangeQuery();
        wall[i] = (System.nanoTime() - t0) / 1e6;
        cpu[i] = (os.getProcessCpuTime() - c0) / 1e6;
      }
      Arrays.sort(wall);
      Arrays.sort(cpu);
      System.out.printf(
          "%s: wall min %.1f median %.1f ms; process CPU min %.1f median %.1f ms per query (%d runs)%n",
          b.query, wall[0], wall[runs / 2], cpu[0], cpu[runs / 2], runs);
    } finally {
      b.close();
    }
  }
}
