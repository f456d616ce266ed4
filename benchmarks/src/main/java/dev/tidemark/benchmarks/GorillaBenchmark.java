package dev.tidemark.benchmarks;

import dev.tidemark.tsdb.codec.GorillaDecoder;
import dev.tidemark.tsdb.codec.GorillaEncoder;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * Encode and decode throughput of the Gorilla XOR chunk codec, in samples/s (one operation is one
 * sample: {@code @OperationsPerInvocation(240)}), over four data shapes, chunks of 240 samples (one
 * hour at 15 s). Bytes/sample (including the stream header, excluding the TimeSeries encoding id
 * byte) is printed once per trial as a line starting with {@code bytes/sample}.
 *
 * <p>Each invocation works on the next of 64 different pre-generated chunks so the branch predictor
 * cannot learn one chunk by heart. Run:
 *
 * <pre>
 * java -jar benchmarks/target/benchmarks.jar GorillaBenchmark -f 1 -wi 3 -w 2 -i 5 -r 2 -t 1
 * </pre>
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
public class GorillaBenchmark {
  static final int SAMPLES = 240;
  static final int CHUNKS = 64;
  static final long INTERVAL_MILLIS = 15_000;
  static final long START_MILLIS = 1_700_000_000_000L;

  /** Data shapes of the style guide. */
  public enum Shape {
    /** 42.0 at a regular 15 s interval. */
    CONSTANT,
    /** A monotonic counter (integer increments 0..1000), 15 s ± 50 ms uniform timestamp jitter. */
    COUNTER_JITTER,
    /** A random walk with Gaussian steps (full-precision doubles), regular 15 s. */
    RANDOM_WALK,
    /** A gauge with two decimals (e.g. 23.17) moving in 0.01 steps, regular 15 s. */
    GAUGE_2DEC
  }

  @Param({"CONSTANT", "COUNTER_JITTER", "RANDOM_WALK", "GAUGE_2DEC"})
  public Shape shape;

  private long[][] timestamps;
  private long[][] values;
  private byte[][] encoded;
  private byte[] scratch;
  private int next;
  private final GorillaEncoder encoder = new GorillaEncoder();
  private final GorillaDecoder decoder = new GorillaDecoder();

  @Setup
  public void setup() {
    SplittableRandom rnd = new SplittableRandom(42);
    timestamps = new long[CHUNKS][SAMPLES];
    values = new long[CHUNKS][SAMPLES];
    encoded = new byte[CHUNKS][];
    long totalBytes = 0;
    int maxBytes = 0;
    for (int c = 0; c < CHUNKS; c++) {
      generate(shape, rnd, timestamps[c], values[c], START_MILLIS + c * 3_600_000L);
      encoder.reset();
      for (int i = 0; i < SAMPLES; i++) {
        encoder.append(timestamps[c][i], values[c][i]);
      }
      encoded[c] = encoder.toByteArray();
      totalBytes += encoded[c].length;
      maxBytes = Math.max(maxBytes, encoded[c].length);
      verify(c);
    }
    scratch = new byte[maxBytes];
    System.out.printf(
        Locale.ROOT,
        "%nbytes/sample shape=%s: %.3f (mean of %d chunks of %d samples, header included)%n",
        shape,
        totalBytes / (double) (CHUNKS * SAMPLES),
        CHUNKS,
        SAMPLES);
  }

  static void generate(Shape shape, SplittableRandom rnd, long[] ts, long[] vs, long start) {
    double counter = rnd.nextInt(1_000_000);
    double walk = 100 * rnd.nextDouble();
    long centi = 2317; // 23.17
    for (int i = 0; i < ts.length; i++) {
      long jitter = shape == Shape.COUNTER_JITTER ? rnd.nextLong(-50, 51) : 0;
      ts[i] = start + i * INTERVAL_MILLIS + jitter;
      double v;
      switch (shape) {
        case CONSTANT -> v = 42.0;
        case COUNTER_JITTER -> {
          counter += rnd.nextInt(1001);
          v = counter;
        }
        case RANDOM_WALK -> {
          walk += gaussian(rnd);
          v = walk;
        }
        case GAUGE_2DEC -> {
          centi += rnd.nextInt(-5, 6);
          v = centi / 100.0;
        }
        default -> throw new AssertionError(shape);
      }
      vs[i] = Double.doubleToRawLongBits(v);
    }
  }

  private static double gaussian(SplittableRandom rnd) {
    double u = 1 - rnd.nextDouble();
    double w = rnd.nextDouble();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * w);
  }

  private void verify(int c) {
    decoder.reset(encoded[c], 0, encoded[c].length);
    for (int i = 0; i < SAMPLES; i++) {
      if (!decoder.next()
          || decoder.timestampMillis() != timestamps[c][i]
          || decoder.valueBits() != values[c][i]) {
        throw new IllegalStateException("round trip failed for " + shape + " chunk " + c);
      }
    }
  }

  /** Appends 240 samples and writes the finished stream into a reused buffer. */
  @Benchmark
  @OperationsPerInvocation(SAMPLES)
  public int encode() {
    int c = next++ & (CHUNKS - 1);
    long[] ts = timestamps[c];
    long[] vs = values[c];
    GorillaEncoder e = encoder;
    e.reset();
    for (int i = 0; i < SAMPLES; i++) {
      e.append(ts[i], vs[i]);
    }
    return e.writeTo(scratch, 0);
  }

  /** Decodes all 240 samples of a stream, consuming timestamp and value bits. */
  @Benchmark
  @OperationsPerInvocation(SAMPLES)
  public long decode() {
    int c = next++ & (CHUNKS - 1);
    byte[] bytes = encoded[c];
    GorillaDecoder d = decoder;
    d.reset(bytes, 0, bytes.length);
    long acc = 0;
    while (d.next()) {
      acc += d.timestampMillis() ^ d.valueBits();
    }
    return acc;
  }
}
