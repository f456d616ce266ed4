package dev.tidemark.translator;

import static dev.tidemark.translator.Otlp.CUMULATIVE;
import static dev.tidemark.translator.Otlp.DELTA;
import static dev.tidemark.translator.Otlp.SEC;
import static dev.tidemark.translator.Otlp.T0;
import static dev.tidemark.translator.Otlp.dp;
import static dev.tidemark.translator.Otlp.gauge;
import static dev.tidemark.translator.Otlp.hdp;
import static dev.tidemark.translator.Otlp.histogram;
import static dev.tidemark.translator.Otlp.kv;
import static dev.tidemark.translator.Otlp.request;
import static dev.tidemark.translator.Otlp.sum;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

/** Many threads translate at once: every outcome is accounted for and accumulation stays exact. */
class ConcurrencyTest extends TranslatorTestBase {

  @Test
  void concurrentRequestsOnSharedAndPrivateStreams() throws Exception {
    checkInPlace = false; // concurrent requests interleave differently in a twin
    int threads = 4;
    int requests = 200;
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      List<Future<Integer>> futures = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        String me = "t" + t;
        futures.add(
            pool.submit(
                () -> {
                  int rejected = 0;
                  for (int i = 0; i < requests; i++) {
                    long time = T0 + (i + 1) * SEC;
                    TranslationResult r =
                        translate(
                            request(
                                sum(
                                    "work",
                                    "",
                                    DELTA,
                                    true,
                                    dp(time - SEC, time, 1, kv("thread", me))),
                                gauge("shared", "", dp(time, i, kv("k", "v"))),
                                histogram(
                                    "lat",
                                    "s",
                                    CUMULATIVE,
                                    hdp(
                                        time,
                                        new double[] {1, 2},
                                        new long[] {i, 1, 1},
                                        1.0,
                                        kv("thread", me)))));
                    assertThat(r.totalDataPoints()).isEqualTo(3);
                    rejected += r.rejectedDataPoints();
                  }
                  return rejected;
                }));
      }
      for (Future<Integer> f : futures) {
        assertThat(f.get()).isZero();
      }
    } finally {
      pool.shutdownNow();
    }
    for (int t = 0; t < threads; t++) {
      String me = "t" + t;
      List<Double> values =
          appender.named("work_total").stream()
              .filter(s -> me.equals(s.labels().get("thread")))
              .map(RecordingAppender.Sample::value)
              .toList();
      assertThat(values).hasSize(requests);
      assertThat(values.get(requests - 1)).isEqualTo(requests);
    }
    assertThat(appender.named("shared")).hasSize(threads * requests);
    assertThat(translator.deltaStreamCount()).isEqualTo(threads);
    assertThat(translator.metadata().size())
        .isEqualTo(4); // work_total, shared, lat_seconds, target_info
  }
}
