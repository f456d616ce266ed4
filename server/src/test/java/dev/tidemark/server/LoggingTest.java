package dev.tidemark.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.tidemark.receiver.RateLimitedLogger;
import java.util.ArrayList;
import java.util.List;
import java.util.ResourceBundle;
import java.util.concurrent.atomic.AtomicLong;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import org.junit.jupiter.api.Test;

class LoggingTest {
  @Test
  void jsonFormatWritesOneObjectALineThatJacksonReadsBack() throws Exception {
    LogRecord r = new LogRecord(Level.WARNING, "bad \"value\"\nnext {0}");
    r.setParameters(new Object[] {"line"});
    r.setLoggerName("dev.tidemark.server.TidemarkServer");
    r.setThrown(new IllegalStateException("boom", new java.io.IOException("disk")));
    String line =
        Logging.LineHandler.json("2026-11-22T03:10:00.123Z", r, "TidemarkServer", "err text");
    assertThat(line).doesNotContain("\n").startsWith("{\"time\":\"2026-11-22T03:10:00.123Z\"");
    var node = new com.fasterxml.jackson.databind.ObjectMapper().readTree(line);
    assertThat(node.path("level").asText()).isEqualTo("WARN");
    assertThat(node.path("logger").asText()).isEqualTo("TidemarkServer");
    assertThat(node.path("msg").asText()).isEqualTo("bad \"value\"\nnext line");
    assertThat(node.path("err").asText()).isEqualTo("err text");
  }

  @Test
  void badGrpcConnectionsAreDroppedAndMentionedThroughTheRateLimitWithoutHexDumps() {
    List<String> lines = new ArrayList<>();
    AtomicLong now = new AtomicLong(1);
    Logging.BadConnectionFilter filter =
        new Logging.BadConnectionFilter(
            new RateLimitedLogger(capture(lines), 10_000_000_000L, now::get));

    for (int i = 0; i < 50; i++) {
      LogRecord r = new LogRecord(Level.INFO, "Transport failed");
      r.setThrown(
          new IllegalStateException(
              "io.grpc.netty.shaded.io.netty.handler.codec.http2.Http2Exception: HTTP/2 client preface string missing"
                  + " or corrupt. Hex dump for received bytes: e973a04969db00033c8562ef7e13f6c21b1ed9649e18399d"));
      assertThat(filter.isLoggable(r)).as("grpc-java's record is never printed").isFalse();
    }
    assertThat(lines)
        .singleElement()
        .satisfies(
            l ->
                assertThat(l)
                    .isEqualTo(
                        "closed a connection to a gRPC port that did not speak gRPC over HTTP/2:"
                            + " HTTP/2 client preface string missing or corrupt"));

    now.addAndGet(11_000_000_000L);
    LogRecord http1 = new LogRecord(Level.INFO, "Transport failed");
    http1.setThrown(new RuntimeException("Unexpected HTTP/1.x request: GET / "));
    filter.isLoggable(http1);
    assertThat(lines).hasSize(2);
    assertThat(lines.get(1))
        .endsWith("Unexpected HTTP/1.x request: GET / (49 similar messages suppressed)");
  }

  private static System.Logger capture(List<String> lines) {
    return new System.Logger() {
      @Override
      public String getName() {
        return "test";
      }

      @Override
      public boolean isLoggable(System.Logger.Level level) {
        return true;
      }

      @Override
      public void log(
          System.Logger.Level level, ResourceBundle bundle, String msg, Throwable thrown) {
        lines.add(msg);
      }

      @Override
      public void log(
          System.Logger.Level level, ResourceBundle bundle, String format, Object... params) {
        lines.add(format);
      }
    };
  }
}
