package dev.tidemark.receiver;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.EOFException;
import org.junit.jupiter.api.Test;

class ErrorMessagesTest {
  @Test
  void classNamesAreDroppedAndTheWordsKept() {
    assertThat(
            ErrorMessages.clean(
                "com.google.gson.stream.MalformedJsonException: Unterminated array at line 1 column 22 path $.a[0]",
                "x"))
        .isEqualTo("Unterminated array at line 1 column 22 path $.a[0]");
    assertThat(ErrorMessages.clean("java.io.EOFException: End of input at line 1 column 22", "x"))
        .isEqualTo("End of input at line 1 column 22");
    assertThat(
            ErrorMessages.clean(
                "dev.tidemark.tsdb.codec.CorruptRecordException: bad chunk header", "x"))
        .isEqualTo("bad chunk header");
    assertThat(ErrorMessages.clean("IllegalArgumentException: negative length", "x"))
        .isEqualTo("negative length");
    assertThat(ErrorMessages.clean("wrapped: java.lang.IllegalStateException: closed", "x"))
        .isEqualTo("wrapped: closed");
    assertThat(ErrorMessages.clean("Protocol message contained an invalid tag (zero).", "x"))
        .isEqualTo("Protocol message contained an invalid tag (zero).");
  }

  @Test
  void nothingLeftGivesTheFallback() {
    assertThat(ErrorMessages.describe(new EOFException(), "the connection failed"))
        .isEqualTo("the connection failed");
    assertThat(ErrorMessages.clean("java.util.concurrent.TimeoutException", "timed out"))
        .isEqualTo("timed out");
    assertThat(
            ErrorMessages.describe(new RuntimeException(new IllegalStateException("inner")), "x"))
        .isEqualTo("inner");
  }
}
