package dev.tidemark.benchmarks;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;

/**
 * Helpers of {@link OtlpLoadGenerator}: process CPU and memory from {@code /proc}, sample values
 * from the server's {@code /metrics}, latency percentiles.
 */
final class OtlpLoadProc {
  private OtlpLoadProc() {}

  /** Clock ticks per second of /proc/PID/stat (USER_HZ; 100 on Linux). */
  static final double HZ = 100.0;

  /** utime + stime of a process in seconds; NaN when unreadable. */
  static double cpuSeconds(long pid) {
    try {
      String stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
      // the command name may contain spaces: fields after the closing parenthesis
      String[] f = stat.substring(stat.lastIndexOf(')') + 2).trim().split(" ");
      // f[0] is field 3 (state); utime is field 14, stime field 15
      return (Long.parseLong(f[11]) + Long.parseLong(f[12])) / HZ;
    } catch (IOException | RuntimeException e) {
      return Double.NaN;
    }
  }

  /** A {@code /proc/PID/status} field in KiB (VmHWM, VmRSS); -1 when unreadable. */
  static long statusKb(long pid, String field) {
    try {
      for (String line : Files.readAllLines(Path.of("/proc/" + pid + "/status"))) {
        if (line.startsWith(field + ":")) {
          return Long.parseLong(line.substring(field.length() + 1).trim().split("\\s+")[0]);
        }
      }
    } catch (IOException | RuntimeException e) {
      // fall through
    }
    return -1;
  }

  private static final HttpClient HTTP =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  /** The Prometheus text exposition at {@code url}; null when unreachable. */
  static String scrape(String url) {
    if (url == null) {
      return null;
    }
    try {
      HttpResponse<String> r =
          HTTP.send(
              HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(10)).GET().build(),
              HttpResponse.BodyHandlers.ofString());
      return r.statusCode() == 200 ? r.body() : null;
    } catch (IOException e) {
      return null;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return null;
    }
  }

  /**
   * Sum of the samples of {@code name} whose label set contains every {@code name="value"} of
   * {@code labelFilter} (e.g. {@code protocol="grpc"}); 0 when absent, NaN without text.
   */
  static double sum(String text, String name, String... labelFilter) {
    if (text == null) {
      return Double.NaN;
    }
    double total = 0;
    for (String line : text.split("\n")) {
      if (line.startsWith("#") || !line.startsWith(name)) {
        continue;
      }
      int sp = line.lastIndexOf(' ');
      String key = line.substring(0, sp);
      String n = key.contains("{") ? key.substring(0, key.indexOf('{')) : key;
      if (!n.equals(name)) {
        continue;
      }
      boolean ok = true;
      for (String lf : labelFilter) {
        ok &= key.contains(lf);
      }
      if (ok) {
        total += Double.parseDouble(line.substring(sp + 1));
      }
    }
    return total;
  }

  /** The p-th percentile (0..100) of sorted nanos, in ms (nearest rank). */
  static double pctMs(long[] sortedNanos, double p) {
    if (sortedNanos.length == 0) {
      return Double.NaN;
    }
    int i = (int) Math.ceil(p / 100.0 * sortedNanos.length) - 1;
    return sortedNanos[Math.max(0, Math.min(sortedNanos.length - 1, i))] / 1e6;
  }

  static long[] sorted(long[] a, int n) {
    long[] s = Arrays.copyOf(a, n);
    Arrays.sort(s);
    return s;
  }
}
