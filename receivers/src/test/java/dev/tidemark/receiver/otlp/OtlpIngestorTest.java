package dev.tidemark.receiver.otlp;

import static dev.tidemark.receiver.otlp.Otlp.counter;
import static dev.tidemark.receiver.otlp.Otlp.dp;
import static dev.tidemark.receiver.otlp.Otlp.gauge;
import static dev.tidemark.receiver.otlp.Otlp.request;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.tidemark.receiver.Outcome;
import dev.tidemark.receiver.ReceiverConfig;
import dev.tidemark.receiver.ReceiverFixture;
import dev.tidemark.receiver.otlp.OtlpIngestor.Exchange;
import dev.tidemark.receiver.otlp.OtlpIngestor.Protocol;
import dev.tidemark.translator.RejectionReason;
import dev.tidemark.tsdb.append.RejectReason;
import io.opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest;
import io.opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceResponse;
import org.junit.jupiter.api.Test;

class OtlpIngestorTest {

  @Test
  void fullSuccessLeavesPartialSuccessUnsetAndCountsPoints() {
    ReceiverFixture f = new ReceiverFixture();
    ExportResult r;
    try (Exchange ex = f.ingestor.begin(Protocol.GRPC)) {
      r = ex.export(request(gauge("temp", 1, 2, 3), counter("hits", 7)));
    }
    assertThat(r.outcome()).isEqualTo(Outcome.SUCCESS);
    assertThat(r.response()).isEqualTo(ExportMetricsServiceResponse.getDefaultInstance());
    assertThat(r.response().hasPartialSuccess()).isFalse();
    assertThat(f.appender.named("temp")).hasSize(3);
    assertThat(f.appender.named("hits_total")).hasSize(1);
    assertThat(f.counter("tidemark_otlp_data_points_received", "protocol", "grpc")).isEqualTo(4);
    assertThat(f.counter("tidemark_otlp_data_points_accepted", "protocol", "grpc")).isEqualTo(4);
    assertThat(f.requests("grpc", Outcome.SUCCESS)).isEqualTo(1);
    assertThat(f.durationCount("grpc")).isEqualTo(1);
    assertThat(f.counter("tidemark_otlp_data_points_received", "protocol", "http")).isZero();
  }

  @Test
  void emptyRequestSucceeds() {
    ReceiverFixture f = new ReceiverFixture();
    try (Exchange ex = f.ingestor.begin(Protocol.HTTP)) {
      assertThat(ex.export(ExportMetricsServiceRequest.getDefaultInstance()).outcome())
          .isEqualTo(Outcome.SUCCESS);
    }
    assertThat(f.requests("http", Outcome.SUCCESS)).isEqualTo(1);
  }

  @Test
  void partialSuccessNamesEachReasonWithCountAndExample() {
    ReceiverFixture f = new ReceiverFixture();
    f.appender.reject("late", RejectReason.OUT_OF_ORDER);
    ExportResult r;
    try (Exchange ex = f.ingestor.begin(Protocol.HTTP)) {
      r =
          ex.export(
              request(gauge("good", 1, 2), gauge("late", 1, 2, 3), gauge("no_time", dp(0, 1))));
    }
    assertThat(r.outcome()).isEqualTo(Outcome.PARTIAL_SUCCESS);
    assertThat(r.response().getPartialSuccess().getRejectedDataPoints()).isEqualTo(4);
    assertThat(r.response().getPartialSuccess().getErrorMessage())
        .contains("rejected 4 of 6 data points")
        .contains("3 out of order sample (OUT_OF_ORDER, e.g. metric \"late\")")
        .contains(
            "1 data point without timestamp (time_unix_nano is 0) (ZERO_TIMESTAMP, e.g. metric \"no_time\")");
    assertThat(f.appender.named("good")).hasSize(2);
    assertThat(f.appender.named("late")).isEmpty();
    assertThat(f.counter("tidemark_otlp_data_points_received", "protocol", "http")).isEqualTo(6);
    assertThat(f.counter("tidemark_otlp_data_points_accepted", "protocol", "http")).isEqualTo(2);
    assertThat(
            f.counter(
                "tidemark_otlp_data_points_rejected", "protocol", "http", "reason", "out_of_order"))
        .isEqualTo(3);
    assertThat(
            f.counter(
                "tidemark_otlp_data_points_rejected",
                "protocol",
                "http",
                "reason",
                "zero_timestamp"))
        .isEqualTo(1);
    assertThat(f.requests("http", Outcome.PARTIAL_SUCCESS)).isEqualTo(1);
    assertThat(r.translation().rejected(RejectionReason.OUT_OF_ORDER)).isEqualTo(3);
  }

  @Test
  void storageUnavailableIsRetryableAndCountsReceivedPoints() {
    ReceiverFixture f = new ReceiverFixture();
    f.appender.unavailable(true);
    ExportResult r;
    try (Exchange ex = f.ingestor.begin(Protocol.GRPC)) {
      r = ex.export(request(gauge("temp", 1, 2)));
    }
    assertThat(r.outcome()).isEqualTo(Outcome.STORAGE_UNAVAILABLE);
    assertThat(r.outcome().retryable()).isTrue();
    assertThat(r.response()).isNull();
    assertThat(r.message()).contains("storage unavailable").contains("test: storage unavailable");
    assertThat(f.counter("tidemark_otlp_data_points_received", "protocol", "grpc")).isEqualTo(2);
    assertThat(f.counter("tidemark_otlp_data_points_accepted", "protocol", "grpc")).isZero();
    assertThat(f.requests("grpc", Outcome.STORAGE_UNAVAILABLE)).isEqualTo(1);
  }

  @Test
  void inFlightBytesAreBoundedAndReleasedOnClose() {
    ReceiverFixture f =
        new ReceiverFixture(ReceiverConfig.builder().maxInFlightBytes(1000).build());
    Exchange a = f.ingestor.begin(Protocol.GRPC);
    assertThat(a.reserve(600)).isTrue();
    assertThat(f.ingestor.inFlightBytes()).isEqualTo(600);
    assertThat(f.inFlightGauge()).isEqualTo(600);

    Exchange b = f.ingestor.begin(Protocol.GRPC);
    assertThat(b.reserve(500)).as("600 + 500 > 1000").isFalse();
    assertThat(b.reserve(400)).isTrue();
    assertThat(b.reserve(1)).isFalse();
    ExportResult refused = b.overloaded();
    assertThat(refused.outcome()).isEqualTo(Outcome.OVERLOADED);
    assertThat(refused.message()).contains("1000");
    b.close();
    assertThat(f.ingestor.inFlightBytes()).isEqualTo(600);

    a.close();
    a.close(); // idempotent
    assertThat(f.ingestor.inFlightBytes()).isZero();
    assertThat(f.inFlightGauge()).isZero();
    assertThat(f.requests("grpc", Outcome.OVERLOADED)).isEqualTo(1);
    assertThat(f.requests("grpc", Outcome.INTERNAL_ERROR))
        .as("a closed without an outcome")
        .isEqualTo(1);
  }

  @Test
  void aRequestLargerThanTheLimitPassesWhenAlone() {
    ReceiverFixture f = new ReceiverFixture(ReceiverConfig.builder().maxInFlightBytes(100).build());
    try (Exchange a = f.ingestor.begin(Protocol.HTTP)) {
      assertThat(a.reserve(60)).isTrue();
      assertThat(a.reserve(500)).as("alone: may grow past the limit").isTrue();
      try (Exchange b = f.ingestor.begin(Protocol.HTTP)) {
        assertThat(b.reserve(1)).isFalse();
      }
    }
    assertThat(f.ingestor.inFlightBytes()).isZero();
  }

  @Test
  void internalErrorsAreRecorded() {
    ReceiverFixture f = new ReceiverFixture();
    ExportResult r;
    try (Exchange ex = f.ingestor.begin(Protocol.HTTP)) {
      r = ex.internalError(new IllegalStateException("boom"));
    }
    assertThat(r.outcome()).isEqualTo(Outcome.INTERNAL_ERROR);
    // Issue #9: the answer names no class and leaks no message; the log has the exception.
    assertThat(r.message()).isEqualTo("internal error");
    assertThat(f.requests("http", Outcome.INTERNAL_ERROR)).isEqualTo(1);
  }

  @Test
  void outOfMemoryIsARetryableOverload() {
    ReceiverFixture f = new ReceiverFixture();
    ExportResult r;
    try (Exchange ex = f.ingestor.begin(Protocol.GRPC)) {
      r = ex.outOfMemory(new OutOfMemoryError("test"));
    }
    assertThat(r.outcome()).isEqualTo(Outcome.OVERLOADED);
    assertThat(r.outcome().retryable()).isTrue();
    assertThat(r.message()).contains("out of memory");
    assertThat(f.requests("grpc", Outcome.OVERLOADED)).isEqualTo(1);
  }

  @Test
  void failRefusesSuccessOutcomesAndTruncatesLongMessages() {
    ReceiverFixture f = new ReceiverFixture();
    try (Exchange ex = f.ingestor.begin(Protocol.HTTP)) {
      assertThatThrownBy(() -> ex.fail(Outcome.SUCCESS, "x"))
          .isInstanceOf(IllegalArgumentException.class);
      ExportResult r = ex.fail(Outcome.INVALID, "y".repeat(100_000));
      assertThat(r.message())
          .hasSizeLessThanOrEqualTo(OtlpIngestor.MAX_ERROR_MESSAGE_CHARS)
          .endsWith("(truncated)");
    }
    assertThat(f.requests("http", Outcome.INVALID)).isEqualTo(1);
  }

  @Test
  void countDataPointsMatchesTheTranslator() {
    ExportMetricsServiceRequest req =
        request(gauge("a", 1, 2, 3), counter("b", 1), gauge("c", new double[0]));
    assertThat(OtlpIngestor.countDataPoints(req)).isEqualTo(4);
    ReceiverFixture f = new ReceiverFixture();
    try (Exchange ex = f.ingestor.begin(Protocol.GRPC)) {
      assertThat(ex.export(req).translation().totalDataPoints()).isEqualTo(4);
    }
  }

  @Test
  void concurrentReservationsNeverExceedTheLimit() throws Exception {
    long limit = 10_000;
    ReceiverFixture f =
        new ReceiverFixture(ReceiverConfig.builder().maxInFlightBytes(limit).build());
    java.util.concurrent.atomic.AtomicLong maxSeen = new java.util.concurrent.atomic.AtomicLong();
    java.util.concurrent.atomic.AtomicInteger refused =
        new java.util.concurrent.atomic.AtomicInteger();
    long seed = System.nanoTime();
    Thread[] threads = new Thread[8];
    for (int t = 0; t < threads.length; t++) {
      java.util.SplittableRandom random = new java.util.SplittableRandom(seed + t);
      threads[t] =
          new Thread(
              () -> {
                for (int i = 0; i < 20_000; i++) {
                  try (Exchange ex = f.ingestor.begin(Protocol.GRPC)) {
                    boolean ok = ex.reserve(1 + random.nextInt(3000));
                    if (ok && random.nextBoolean()) {
                      ok = ex.reserve(random.nextInt(3000));
                    }
                    maxSeen.accumulateAndGet(f.ingestor.inFlightBytes(), Math::max);
                    if (!ok) {
                      refused.incrementAndGet();
                      ex.overloaded();
                    } else {
                      ex.fail(Outcome.CANCELLED, "test");
                    }
                  }
                }
              });
      threads[t].start();
    }
    for (Thread t : threads) {
      t.join();
    }
    assertThat(maxSeen.get()).as("seed " + seed).isLessThanOrEqualTo(limit);
    assertThat(refused.get()).as("seed " + seed).isPositive();
    assertThat(f.ingestor.inFlightBytes()).isZero();
    assertThat(f.requests("grpc", Outcome.OVERLOADED) + f.requests("grpc", Outcome.CANCELLED))
        .isEqualTo(8 * 20_000);
  }
}
