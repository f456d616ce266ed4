package dev.tidemark.benchmarks;

import dev.tidemark.tsdb.codec.DecimalDecoder;
import dev.tidemark.tsdb.codec.DecimalEncoder;
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
 * The decimal chunk codec (TimeSeries encoding {@code 0x02}) against the Gorilla XOR codec ({@code
 * 0x01}) on the same chunks: encode and decode throughput in samples/s (one operation is one
 * sample, {@code @OperationsPerInvocation(240)}) and bytes/sample of both, printed once per trial
 * as {@code bytes/sample shape=… gorilla=… decimal=…} (stream header included, without the 1-byte
 * encoding id). Chunks of 240 samples (one hour at 15 s); each invocation takes the next of 64
 * pre-generated chunks. Run:
 *
 * <pre>
 * java -jar benchmarks/target/benchmarks.jar DecimalChunkBenchmark -f 1 -wi 2 -w 1 -i 3 -r 1 -t 1
 * </pre>
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
public class DecimalChunkBenchmark {
  static final int SAMPLES = 240;
  static final int CHUNKS = 64;
  static final long INTERVAL_MILLIS = 15_000;
  static final long START_MILLIS = 1_700_000_000_000L;

  /** The style guide's shapes plus node-exporter-like jitter of a few ms. */
  public enum Shape {
    /** 42.0 at a regular 15 s interval. */
    CONSTANT,
    /** A monotonic counter, integer increments 0..1000, regular 15 s. */
    COUNTER,
    /** A random walk with Gaussian steps (full-precision doubles), regular 15 s. */
    RANDOM_WALK,
    /** A gauge with two decimals (23.17) moving in 0.01 steps of at most ±5, regular 15 s. */
    GAUGE_2DEC,
    /** {@link #COUNTER} with 15 s ± 1..3 ms of timestamp jitter. */
    COUNTER_JITTER_3MS,
    /** {@link #GAUGE_2DEC} with 15 s ± 1..3 ms of timestamp jitter. */
    GAUGE_2DEC_JITTER_3MS
  }

  @Param({
    "CONSTANT",
    "COUNTER",
    "RANDOM_WALK",
    "GAUGE_2DEC",
    "COUNTER_JITTER_3MS",
    "GAUGE_2DEC_JITTER_3MS"
  })
  public Shape shape;

  private long[][] timestamps;
  private long[][] values;
  private byte[][] gorilla;
  private byte[][] decimal;
  private byte[] scratch;
  private int next;
  private final GorillaEncoder gorillaEncoder = new GorillaEncoder();
  private final GorillaDecoder gorillaDecoder = new GorillaDecoder();
  private final DecimalEncoder decimalEncoder = new DecimalEncoder();
  private final DecimalDecoder decimalDecoder = new DecimalDecoder();

  @Setup
  public void setup() {
    SplittableRandom rnd = new SplittableRandom(42);
    timestamps = new long[CHUNKS][SAMPLES];
    values = new long[CHUNKS][SAMPLES];
    gorilla = new byte[CHUNKS][];
    decimal = new byte[CHUNKS][];
    long gorillaBytes = 0;
    long decimalBytes = 0;
    int maxBytes = 0;
    for (int c = 0; c < CHUNKS; c++) {
      generate(shape, rnd, timestamps[c], values[c], START_MILLIS + c * 3_600_000L);
      gorillaEncoder.reset();
      decimalEncoder.reset();
      for (int i = 0; i < SAMPLES; i++) {
        gorillaEncoder.append(timestamps[c][i], values[c][i]);
        decimalEncoder.append(timestamps[c][i], values[c][i]);
      }
      gorilla[c] = gorillaEncoder.toByteArray();
      decimal[c] = decimalEncoder.toByteArray();
      gorillaBytes += gorilla[c].length;
      decimalBytes += decimal[c].length;
      maxBytes = Math.max(maxBytes, Math.max(gorilla[c].length, decimal[c].length));
      verify(c);
    }
    scratch = new byte[maxBytes];
    System.out.printf(
        Locale.ROOT,
        "%nbytes/sample shape=%s gorilla=%.3f decimal=%.3f (mean of %d chunks of %d samples)%n",
        shape,
        gorillaBytes / (double) (CHUNKS * SAMPLES),
        decimalBytes / (double) (CHUNKS * SAMPLES),
        CHUNKS,
        SAMPLES);
  }

  static void generate(Shape shape, SplittableRandom rnd, long[] ts, long[] vs, long start) {
    double counter = rnd.nextInt(1_000_000);
    double walk = 100 * rnd.nextDouble();
    long centi = 2317; // 23.17
    boolean jitter = shape == Shape.COUNTER_JITTER_3MS || shape == Shape.GAUGE_2DEC_JITTER_3MS;
    for (int i = 0; i < ts.length; i++) {
      long j = jitter ? rnd.nextLong(1, 4) * (rnd.nextBoolean() ? 1 : -1) : 0;
      ts[i] = start + i * INTERVAL_MILLIS + j;
      double v;
      switch (shape) {
        case CONSTANT -> v = 42.0;
        case COUNTER, COUNTER_JITTER_3MS -> {
          counter += rnd.nextInt(1001);
          v = counter;
        }
        case RANDOM_WALK -> {
          double u = 1 - rnd.nextDouble();
          double w = rnd.nextDouble();
          walk += Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * w);
          v = walk;
        }
        case GAUGE_2DEC, GAUGE_2DEC_JITTER_3MS -> {
          centi += rnd.nextInt(-5, 6);
          v = centi / 100.0;
        }
        default -> throw new AssertionError(shape);
      }
      vs[i] = Double.doubleToRawLongBits(v);
    }
  }

  private void verify(int c) {
    gorillaDecoder.reset(gorilla[c], 0, gorilla[c].length);
    decimalDecoder.reset(decimal[c], 0, decimal[c].length);
    for (int i = 0; i < SAMPLES; i++) {
      if (!gorillaDecoder.next()
          || !decimalDecoder.next()
          || gorillaDecoder.timestampMillis() != timestamps[c][i]
          || gorillaDecoder.valueBits() != values[c][i]
          || decimalDecoder.timestampMillis() != timestamps[c][i]
          || decimalDecoder.valueBits() != values[c][i]) {
        throw new IllegalStateException("round trip failed for " + shape + " chunk " + c);
      }
    }
  }

  @Benchmark
  @OperationsPerInvocation(SAMPLES)
  public int encodeGorilla() {
    int c = next++ & (CHUNKS - 1);
    long[] ts = timestamps[c];
    long[] vs = values[c];
    GorillaEncoder e = gorillaEncoder;
    e.reset();
    for (int i = 0; i < SAMPLES; i++) {
      e.append(ts[i], vs[i]);
    }
    return e.writeTo(scratch, 0);
  }

  @Benchmark
  @OperationsPerInvocation(SAMPLES)
  public int encodeDecimal() {
    int c = next++ & (CHUNKS - 1);
    long[] ts = timestamps[c];
    long[] vs = values[c];
    DecimalEncoder e = decimalEncoder;
    e.reset();
    for (int i = 0; i < SAMPLES; i++) {
      e.append(ts[i], vs[i]);
    }
    return e.writeTo(scratch, 0);
  }

  @Benchmark
  @OperationsPerInvocation(SAMPLES)
  public long decodeGorilla() {
    int c = next++ & (CHUNKS - 1);
    byte[] bytes = gorilla[c];
    GorillaDecoder d = gorillaDecoder;
    d.reset(bytes, 0, bytes.length);
    long acc = 0;
    while (d.next()) {
      acc += d.timestampMillis() ^ d.valueBits();
    }
    return acc;
  }

  @Benchmark
  @OperationsPerInvocation(SAMPLES)
  public long decodeDecimal() {
    int c = next++ & (CHUNKS - 1);
    byte[] bytes = decimal[c];
    DecimalDecoder d = decimalDecoder;
    d.reset(bytes, 0, bytes.length);
    long acc = 0;
    while (d.next()) {
      acc += d.timestampMillis() ^ d.valueBits();
    }
    return acc;
  }
}
