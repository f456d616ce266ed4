package dev.tidemark.rocksdb;

import static dev.tidemark.rocksdb.EngineCrashingWriter.BATCHES_PER_BUCKET;
import static dev.tidemark.rocksdb.EngineCrashingWriter.FLUSH_EVERY;
import static dev.tidemark.rocksdb.EngineCrashingWriter.NOW;
import static dev.tidemark.rocksdb.EngineCrashingWriter.SEAL_TRIGGER_OFFSET;
import static dev.tidemark.rocksdb.EngineCrashingWriter.SERIES;
import static org.assertj.core.api.Assertions.assertThat;

import dev.tidemark.rocksdb.EngineCrashingWriter.Generated;
import dev.tidemark.tsdb.append.AppendResult;
import dev.tidemark.tsdb.append.SampleBatch;
import dev.tidemark.tsdb.engine.Engine;
import dev.tidemark.tsdb.model.Labels;
import dev.tidemark.tsdb.query.LabelMatcher;
import dev.tidemark.tsdb.query.SampleIterator;
import dev.tidemark.tsdb.query.Series;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.Reader;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * CRASH TEST: the engine on real RocksDB, its writer process killed with SIGKILL over and over.
 *
 * <p>Each round starts {@link EngineCrashingWriter} in a child JVM on the same folder, lets it
 * acknowledge a random number of batches (sometimes exactly up to the batch that makes the
 * background sealer seal the previous hour, or the one after which the child flushes, so the kill
 * lands inside a seal), kills it, then opens store and engine here and checks the whole content:
 *
 * <ul>
 *   <li>every sample of every acknowledged batch is there with its exact value bits;
 *   <li>the per-point outcomes the child reported are exactly the expected ones, and no sample of a
 *       rejected point is stored (no ghost series either);
 *   <li>nothing else is there except, possibly, the one batch in flight at the kill, entirely or
 *       not at all.
 * </ul>
 *
 * Then the engine is closed cleanly (sealing the head) or abandoned like a crash (the head log is
 * left for the next child to recover), and the next round continues on the same folder. Most rounds
 * run with {@code fsync=false} (process-crash durability), every fourth with {@code fsync=true}.
 * The seed is random and printed; rerun with {@code -Dtidemark.crash.seed=<seed>} (kill timing
 * stays up to the scheduler).
 */
@Tag("crash")
@DisplayName("CRASH TEST: engine on RocksDB survives repeated SIGKILL of its writer")
class EngineCrashTest {

  private static final int ROUNDS = 22;
  private static final List<LabelMatcher> ALL = List.of();

  @TempDir Path tmp;

  /** Everything the store must hold: series → timestamp → value bits. */
  private final Map<Labels, TreeMap<Long, Long>> expected = new HashMap<>();

  private long expectedSamples;

  @Test
  @Timeout(value = 5, unit = TimeUnit.MINUTES)
  @DisplayName(
      "CRASH TEST: 22 SIGKILLs of an ingesting child JVM; every acknowledged batch survives, points stay atomic")
  void everyAcknowledgedBatchSurvivesRepeatedSigkill() throws Exception {
    long seed = Long.getLong("tidemark.crash.seed", System.nanoTime());
    System.out.println(
        "EngineCrashTest seed " + seed + " (rerun with -Dtidemark.crash.seed=" + seed + ")");
    SplittableRandom rnd = new SplittableRandom(seed);
    Path dir = tmp.resolve("db");
    long next = 0;
    int kills = 0;
    int inFlightPresent = 0;
    long started = System.nanoTime();
    for (int round = 0; round < ROUNDS; round++) {
      String where = "seed " + seed + " round " + round;
      boolean fsync = round % 4 == 3;
      // When to kill: a random number of acks, or right after the batch that makes the sealer
      // seal the previous bucket, or right after the batch the child flushes after.
      int killAfter = 3 + rnd.nextInt(90);
      String target = "random";
      int mode = rnd.nextInt(3);
      if (mode == 1) {
        long b = firstAtOrAfter(next + 2, BATCHES_PER_BUCKET, SEAL_TRIGGER_OFFSET);
        if (b - next < 400) {
          killAfter = (int) (b - next + 1);
          target = "seal of bucket before batch " + b;
        }
      } else if (mode == 2) {
        long b = firstAtOrAfter(next + 2, FLUSH_EVERY, FLUSH_EVERY / 2);
        killAfter = (int) (b - next + 1);
        target = "flush after batch " + b;
      }
      long delayMicros = rnd.nextBoolean() ? rnd.nextInt(4000) : 0;

      Process child = startChild(dir, round, next, fsync);
      List<String> acks = new ArrayList<>();
      String ready;
      try (Reader out = new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8)) {
        ready = readLine(out, child, round);
        assertThat(ready).as(where + " child start").startsWith("READY ");
        readLines(out, acks, killAfter, child, round);
        if (delayMicros > 0) {
          LockSupport.parkNanos(delayMicros * 1000);
        }
        // SIGKILL; through the handle so our end of the pipe stays open for the last acks.
        child.toHandle().destroyForcibly();
        assertThat(child.waitFor(20, TimeUnit.SECONDS)).as(where + " child died").isTrue();
        readLines(out, acks, Integer.MAX_VALUE, child, round);
      } finally {
        child.destroyForcibly();
      }
      kills++;
      assertThat(acks).as(where + " acknowledgements").hasSizeGreaterThanOrEqualTo(killAfter);

      // The acks: consecutive batches from `next`, each with exactly the expected rejections.
      long lastAcked = next - 1;
      for (String line : acks) {
        String[] parts = line.split(" ");
        assertThat(parts).as(where + " ack line '%s'", line).hasSize(3);
        assertThat(parts[0]).isEqualTo("ACK");
        long b = Long.parseLong(parts[1]);
        assertThat(b).as(where + " acks are consecutive").isEqualTo(lastAcked + 1);
        Generated g = EngineCrashingWriter.generate(round, b, NOW);
        assertThat(parts[2])
            .as(where + " batch %d: rejected points (index:reason)", b)
            .isEqualTo(EngineCrashingWriter.rejected(g.expected()));
        addExpected(g, expected);
        lastAcked = b;
      }

      long inFlight = lastAcked + 1;
      Map<Labels, TreeMap<Long, Long>> inFlightSamples = new HashMap<>();
      addExpected(EngineCrashingWriter.generate(round, inFlight, NOW), inFlightSamples);

      try (RocksDbKvStore store = RocksDbKvStore.open(dir, EngineCrashingWriter.storeConfig())) {
        Engine engine = Engine.open(store, EngineCrashingWriter.engineConfig(NOW, false));
        boolean present;
        Engine.Stats stats = engine.stats();
        try {
          present =
              verify(
                  engine,
                  inFlightSamples,
                  where + " (batches 0.." + lastAcked + " acked, " + inFlight + " in flight)");
        } catch (Throwable e) {
          abandon(engine); // leave the store as found, for a post-mortem
          throw e;
        }
        if (present) {
          addAll(inFlightSamples, expected);
          inFlightPresent++;
          next = inFlight + 1;
        } else {
          next = inFlight;
        }
        System.out.printf(
            "round %2d fsync=%-5s child %s | killed after %3d acks (target %d: %s, +%d us), batches %d..%d acked,"
                + " in-flight %d %s | parent recovery %d ms, %d open buckets, %d head series, %d buckets%n",
            round,
            fsync,
            ready,
            acks.size(),
            killAfter,
            target,
            delayMicros,
            acks.isEmpty() ? -1 : Long.parseLong(acks.get(0).split(" ")[1]),
            lastAcked,
            inFlight,
            present ? "PRESENT" : "absent",
            stats.recoveryMillis(),
            stats.openBuckets(),
            stats.headSeries(),
            stats.buckets());
        if (round % 3 == 2) {
          engine.close(); // seals: the next child starts from sealed buckets only
        } else {
          abandon(engine); // like a crash: the next child replays the head log
        }
      }
    }

    // Finally: a clean close and reopen keeps everything, with nothing left to replay.
    try (RocksDbKvStore store = RocksDbKvStore.open(dir, EngineCrashingWriter.storeConfig())) {
      Engine engine = Engine.open(store, EngineCrashingWriter.engineConfig(NOW, false));
      verify(engine, Map.of(), "seed " + seed + " after the last round");
      engine.close();
    }
    try (RocksDbKvStore store = RocksDbKvStore.open(dir, EngineCrashingWriter.storeConfig())) {
      Engine engine = Engine.open(store, EngineCrashingWriter.engineConfig(NOW, false));
      try {
        Engine.Stats stats = engine.stats();
        verify(engine, Map.of(), "seed " + seed + " after a clean close");
        assertThat(stats.openBuckets()).as("open buckets after a clean close").isZero();
        assertThat(stats.headSeries()).as("head series after a clean close").isZero();
        assertThat(stats.recoveryMillis()).isNotNegative();
        assertThat(stats.buckets())
            .as("buckets")
            .isGreaterThanOrEqualTo((int) (next / BATCHES_PER_BUCKET));
        System.out.printf(
            "EngineCrashTest: %d kills, %d batches (%d in-flight batches found written), %d samples, %d buckets,"
                + " clean reopen recovery %d ms, %.1f s%n",
            kills,
            next,
            inFlightPresent,
            expectedSamples,
            stats.buckets(),
            stats.recoveryMillis(),
            (System.nanoTime() - started) / 1e9);
      } finally {
        engine.close();
      }
    }
    assertThat(kills).isGreaterThanOrEqualTo(20);
  }

  @Test
  @DisplayName("clean close then reopen recovers every sample; recovery time is reported")
  void cleanCloseAndReopenRecoversEverything() {
    Path dir = tmp.resolve("clean");
    long batches = 2 * BATCHES_PER_BUCKET + 40; // sealed buckets and an open one
    try (RocksDbKvStore store = RocksDbKvStore.open(dir, EngineCrashingWriter.storeConfig())) {
      Engine engine = Engine.open(store, EngineCrashingWriter.engineConfig(NOW, false));
      try {
        for (long b = 0; b < batches; b++) {
          Generated g = EngineCrashingWriter.generate(0, b, NOW);
          AppendResult r = engine.append(g.batch());
          assertThat(EngineCrashingWriter.rejected(r))
              .as("batch %d", b)
              .isEqualTo(EngineCrashingWriter.rejected(g.expected()));
          addExpected(g, expected);
        }
        assertThat(engine.stats().openBuckets()).as("open buckets before close").isPositive();
        verify(engine, Map.of(), "before close");
      } finally {
        engine.close();
      }
    }
    try (RocksDbKvStore store = RocksDbKvStore.open(dir, EngineCrashingWriter.storeConfig())) {
      Engine engine = Engine.open(store, EngineCrashingWriter.engineConfig(NOW, false));
      try {
        Engine.Stats stats = engine.stats();
        System.out.printf(
            "clean reopen: recovery %d ms, %d buckets, %d samples%n",
            stats.recoveryMillis(), stats.buckets(), expectedSamples);
        assertThat(stats.recoveryMillis()).isNotNegative();
        assertThat(stats.openBuckets()).isZero();
        assertThat(stats.headSeries()).isZero();
        // The hour before T0 (late samples of batch 0), T0, T0+1h, T0+2h.
        assertThat(engine.buckets()).as("buckets").hasSize(4);
        verify(engine, Map.of(), "after clean reopen");
        // Appending goes on where it stopped (the late samples reopen the sealed bucket).
        Generated g = EngineCrashingWriter.generate(1, batches, NOW);
        assertThat(EngineCrashingWriter.rejected(engine.append(g.batch())))
            .isEqualTo(EngineCrashingWriter.rejected(g.expected()));
        addExpected(g, expected);
        verify(engine, Map.of(), "after appending to the reopened store");
      } finally {
        engine.close();
      }
    }
  }

  // ---------------------------------------------------------------------------------------------

  /**
   * Compares the engine's whole content with {@link #expected}: equal, or equal plus exactly the
   * samples of {@code inFlight}. Returns whether the in-flight batch is there.
   */
  private boolean verify(Engine engine, Map<Labels, TreeMap<Long, Long>> inFlight, String where) {
    Map<Labels, TreeMap<Long, Long>> actual = new HashMap<>();
    long actualSamples = 0;
    for (Series s : engine.select(0, Long.MAX_VALUE, ALL).toList()) {
      TreeMap<Long, Long> samples = new TreeMap<>();
      SampleIterator it = s.iterator();
      long prev = Long.MIN_VALUE;
      while (it.next()) {
        long t = it.timestampMillis();
        assertThat(t)
            .as(where + " %s: timestamps strictly increasing", s.labels())
            .isGreaterThan(prev);
        prev = t;
        samples.put(t, it.valueBits());
        actualSamples++;
      }
      assertThat(actual.put(s.labels(), samples))
          .as(where + " series listed twice: %s", s.labels())
          .isNull();
    }
    List<String> missing = new ArrayList<>();
    List<String> wrong = new ArrayList<>();
    expected.forEach(
        (l, want) -> {
          TreeMap<Long, Long> got = actual.getOrDefault(l, new TreeMap<>());
          want.forEach(
              (t, bits) -> {
                Long g = got.get(t);
                if (g == null) {
                  missing.add(
                      l + "@" + t + " (batch " + (t - EngineCrashingWriter.T0) / 10_000.0 + ")");
                } else if (g.longValue() != bits) {
                  wrong.add(
                      l
                          + "@"
                          + t
                          + " = "
                          + Long.toHexString(g)
                          + ", want "
                          + Long.toHexString(bits));
                }
              });
        });
    assertThat(wrong).as(where + ": samples with wrong value bits").isEmpty();
    assertThat(missing)
        .as(where + ": acknowledged samples missing (" + missing.size() + ")")
        .isEmpty();
    // What is there beyond the acknowledged batches: nothing, or exactly the in-flight batch.
    Map<Labels, TreeMap<Long, Long>> extra = new HashMap<>();
    actual.forEach(
        (l, got) -> {
          TreeMap<Long, Long> want = expected.getOrDefault(l, new TreeMap<>());
          got.forEach(
              (t, bits) -> {
                if (!want.containsKey(t)) {
                  extra.computeIfAbsent(l, k -> new TreeMap<>()).put(t, bits);
                }
              });
        });
    if (!extra.isEmpty()) {
      assertThat(extra)
          .as(
              where
                  + ": samples beyond the acknowledged batches must be exactly the in-flight batch"
                  + " (entirely: point and batch atomicity; no rejected point's sample)")
          .isEqualTo(inFlight);
    }
    long extraSamples = extra.values().stream().mapToLong(TreeMap::size).sum();
    assertThat(actualSamples).as(where + " sample count").isEqualTo(expectedSamples + extraSamples);
    if (expectedSamples > 0) {
      assertThat(actual).as(where + " series count").hasSize(SERIES);
    }
    List<String> names = engine.labelValues(Labels.METRIC_NAME, 0, Long.MAX_VALUE, ALL);
    assertThat(names)
        .as(where + " metric names (no ghost series from rejected points)")
        .doesNotContain("crash_ghost");
    assertThat(engine.labelNames(0, Long.MAX_VALUE, ALL))
        .as(where + " label names")
        .doesNotContain("batch");
    return !extra.isEmpty();
  }

  private void addExpected(Generated g, Map<Labels, TreeMap<Long, Long>> into) {
    SampleBatch batch = g.batch();
    for (int i = 0; i < batch.size(); i++) {
      if (g.expected()[batch.pointOf(i)] != null) {
        continue;
      }
      Long before =
          into.computeIfAbsent(batch.labels(i), k -> new TreeMap<>())
              .put(batch.timestampMillis(i), batch.valueBits(i));
      if (before == null) {
        if (into == expected) {
          expectedSamples++;
        }
      } else {
        assertThat(before.longValue())
            .as("workload: one value per series and timestamp")
            .isEqualTo(batch.valueBits(i));
      }
    }
  }

  private void addAll(
      Map<Labels, TreeMap<Long, Long>> from, Map<Labels, TreeMap<Long, Long>> into) {
    from.forEach(
        (l, samples) ->
            samples.forEach(
                (t, bits) -> {
                  if (into.computeIfAbsent(l, k -> new TreeMap<>()).put(t, bits) == null) {
                    expectedSamples++;
                  }
                }));
  }

  /** The first batch number {@code >= from} that is {@code offset} modulo {@code period}. */
  private static long firstAtOrAfter(long from, long period, long offset) {
    long b = from - Math.floorMod(from, period) + offset;
    return b < from ? b + period : b;
  }

  /** {@code Engine.abandon()} (package-private, "for tests of recovery"): stop as a crash would. */
  private static void abandon(Engine engine) throws Exception {
    Method m = Engine.class.getDeclaredMethod("abandon");
    m.setAccessible(true);
    m.invoke(engine);
  }

  /**
   * A private copy of the class path's folders and Tidemark jars: other builds sharing the checkout
   * may recompile {@code target/} or reinstall {@code tsdb-core} while this test runs.
   */
  private String childClassPath() throws IOException {
    if (childClassPath != null) {
      return childClassPath;
    }
    List<String> out = new ArrayList<>();
    int n = 0;
    for (String entry : System.getProperty("java.class.path").split(java.io.File.pathSeparator)) {
      Path p = Path.of(entry);
      Path copy = tmp.resolve("cp").resolve(Integer.toString(n++));
      if (Files.isDirectory(p)) {
        try (var files = Files.walk(p)) {
          for (Path f : (Iterable<Path>) files::iterator) {
            Path to = copy.resolve(p.relativize(f).toString());
            if (Files.isDirectory(f)) {
              Files.createDirectories(to);
            } else {
              Files.copy(f, to);
            }
          }
        }
        out.add(copy.toString());
      } else if (p.getFileName().toString().startsWith("tsdb-core") && Files.isRegularFile(p)) {
        Files.createDirectories(copy);
        out.add(Files.copy(p, copy.resolve(p.getFileName())).toString());
      } else {
        out.add(entry);
      }
    }
    childClassPath = String.join(java.io.File.pathSeparator, out);
    return childClassPath;
  }

  private String childClassPath;

  private Process startChild(Path dir, int round, long firstBatch, boolean fsync)
      throws IOException {
    Path childTmp =
        Files.createDirectories(tmp.resolve("child-tmp")); // RocksDB unpacks its .so here
    List<String> cmd =
        List.of(
            Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "-Xmx256m",
            "-XX:+UseSerialGC",
            "-XX:TieredStopAtLevel=1",
            "-Xshare:auto",
            "-Djava.io.tmpdir=" + childTmp,
            "-cp",
            childClassPath(),
            EngineCrashingWriter.class.getName(),
            dir.toString(),
            Long.toString(NOW),
            Integer.toString(round),
            Long.toString(firstBatch),
            Boolean.toString(fsync));
    return new ProcessBuilder(cmd)
        .redirectError(tmp.resolve("child-" + round + ".err").toFile())
        .start();
  }

  private String readLine(Reader out, Process child, int round) throws IOException {
    List<String> one = new ArrayList<>();
    readLines(out, one, 1, child, round);
    return one.get(0);
  }

  /**
   * Reads newline-terminated lines into {@code lines} until it holds {@code atLeast} or the stream
   * ends; a trailing fragment without newline (cut by the kill) is not a line.
   */
  private void readLines(Reader out, List<String> lines, int atLeast, Process child, int round)
      throws IOException {
    StringBuilder line = new StringBuilder();
    while (lines.size() < atLeast) {
      int ch = out.read();
      if (ch < 0) {
        if (atLeast != Integer.MAX_VALUE) {
          throw new AssertionError(
              "round "
                  + round
                  + ": child ended early (exit "
                  + exitCode(child)
                  + "), stderr: "
                  + Files.readString(tmp.resolve("child-" + round + ".err")));
        }
        return;
      }
      if (ch == '\n') {
        lines.add(line.toString());
        line.setLength(0);
      } else {
        line.append((char) ch);
      }
    }
  }

  private static String exitCode(Process p) {
    try {
      return p.waitFor(5, TimeUnit.SECONDS) ? Integer.toString(p.exitValue()) : "still running";
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return "unknown";
    }
  }
}
