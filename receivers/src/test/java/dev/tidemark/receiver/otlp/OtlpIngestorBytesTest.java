package dev.tidemark.receiver.otlp;

import static dev.tidemark.receiver.otlp.Otlp.counter;
import static dev.tidemark.receiver.otlp.Otlp.dp;
import static dev.tidemark.receiver.otlp.Otlp.gauge;
import static dev.tidemark.receiver.otlp.Otlp.request;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.InvalidProtocolBufferException;
import dev.tidemark.receiver.Outcome;
import dev.tidemark.receiver.ReceiverFixture;
import dev.tidemark.receiver.otlp.OtlpIngestor.Exchange;
import dev.tidemark.receiver.otlp.OtlpIngestor.Protocol;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/** {@link Exchange#export(byte[])}: the in-place path the protobuf receivers use. */
class OtlpIngestorBytesTest {

  @Test
  void serializedRequestIsTranslatedAndCountedAsTheDecodedOne() throws Exception {
    ReceiverFixture f = new ReceiverFixture();
    ExportResult r;
    try (Exchange ex = f.ingestor.begin(Protocol.GRPC)) {
      r =
          ex.export(
              request(gauge("temp", 1, 2, 3), counter("hits", 7), gauge("no_time", dp(0, 1)))
                  .toByteArray());
    }
    assertThat(r.outcome()).isEqualTo(Outcome.PARTIAL_SUCCESS);
    assertThat(r.response().getPartialSuccess().getRejectedDataPoints()).isEqualTo(1);
    assertThat(f.appender.named("temp")).hasSize(3);
    assertThat(f.appender.named("hits_total")).hasSize(1);
    assertThat(f.counter("tidemark_otlp_data_points_received", "protocol", "grpc")).isEqualTo(5);
    assertThat(f.counter("tidemark_otlp_data_points_accepted", "protocol", "grpc")).isEqualTo(4);
  }

  @Test
  void undecodableBytesThrowProtobufsExceptionAndRecordNothing() {
    ReceiverFixture f = new ReceiverFixture();
    byte[] bytes = request(gauge("temp", 1, 2, 3)).toByteArray();
    byte[] cut = Arrays.copyOf(bytes, bytes.length - 3);
    try (Exchange ex = f.ingestor.begin(Protocol.HTTP)) {
      assertThatThrownBy(() -> ex.export(cut))
          .isInstanceOf(InvalidProtocolBufferException.class)
          .hasMessageContaining("truncated");
      ex.fail(Outcome.INVALID, "test");
    }
    assertThat(f.appender.named("temp")).isEmpty();
    assertThat(f.counter("tidemark_otlp_data_points_received", "protocol", "http")).isZero();
  }

  @Test
  void storageUnavailableCountsTheRequestsPoints() throws Exception {
    ReceiverFixture f = new ReceiverFixture();
    f.appender.unavailable(true);
    ExportResult r;
    try (Exchange ex = f.ingestor.begin(Protocol.GRPC)) {
      r = ex.export(request(gauge("temp", 1, 2, 3), counter("hits", 7)).toByteArray());
    }
    assertThat(r.outcome()).isEqualTo(Outcome.STORAGE_UNAVAILABLE);
    assertThat(r.message()).contains("storage unavailable").contains("test: storage unavailable");
    assertThat(f.counter("tidemark_otlp_data_points_received", "protocol", "grpc")).isEqualTo(4);
  }
}
