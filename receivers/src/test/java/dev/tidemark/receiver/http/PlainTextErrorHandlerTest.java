package dev.tidemark.receiver.http;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class PlainTextErrorHandlerTest {
  @Test
  void oneLineOfTextPerStatus() {
    assertThat(PlainTextErrorHandler.text(404, "Not Found")).isEqualTo("404 page not found\n");
    assertThat(PlainTextErrorHandler.text(400, "Bad Request")).isEqualTo("400 Bad Request\n");
    assertThat(PlainTextErrorHandler.text(400, "Illegal character SPACE=' '"))
        .isEqualTo("400 Bad Request: Illegal character SPACE=' '\n");
    assertThat(PlainTextErrorHandler.text(431, null))
        .isEqualTo("431 Request Header Fields Too Large\n");
    assertThat(
            PlainTextErrorHandler.text(
                400, "org.eclipse.jetty.http.BadMessageException: 400: bad\nline"))
        .isEqualTo("400 Bad Request: 400: bad line\n");
    assertThat(PlainTextErrorHandler.text(500, "java.lang.IllegalStateException: secret"))
        .isEqualTo("500 Server Error\n");
  }
}
