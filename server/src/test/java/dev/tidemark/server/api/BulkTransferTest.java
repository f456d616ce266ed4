package dev.tidemark.server.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.tidemark.tsdb.model.Labels;
import org.junit.jupiter.api.Test;

/**
 * The text-format lines {@code /api/v1/import/prometheus} reads (ExportImportIT: the round trip).
 */
class BulkTransferTest {

  @Test
  void textLinesWithEscapesTimestampsAndSpecialValues() {
    BulkTransfer.TextSample s =
        BulkTransfer.parseTextLine(
            "http_requests_total{code=\"200\",path=\"/a\\\"b\\\\c\\nd\"} 1027 1395066363000", 5);
    assertThat(s.labels())
        .isEqualTo(
            Labels.of("__name__", "http_requests_total", "code", "200", "path", "/a\"b\\c\nd"));
    assertThat(s.timestampMillis()).isEqualTo(1395066363000L);
    assertThat(s.value()).isEqualTo(1027);

    BulkTransfer.TextSample bare = BulkTransfer.parseTextLine("  up 1  ", 42);
    assertThat(bare.labels()).isEqualTo(Labels.of("__name__", "up"));
    assertThat(bare.timestampMillis()).as("no timestamp: now").isEqualTo(42);
    assertThat(BulkTransfer.parseTextLine("x{} NaN", 1).value()).isNaN();
    assertThat(BulkTransfer.parseTextLine("x{a=\"b\",} -Inf 7", 1).value())
        .isEqualTo(Double.NEGATIVE_INFINITY);
    assertThat(BulkTransfer.parseTextLine("# TYPE x counter", 1)).isNull();
  }

  @Test
  void badLinesSayWhatIsWrong() {
    assertThatThrownBy(() -> BulkTransfer.parseTextLine("{a=\"b\"} 1", 0))
        .hasMessage("no metric name");
    assertThatThrownBy(() -> BulkTransfer.parseTextLine("x{a=b} 1", 0))
        .hasMessageContaining("expected label=\"value\"");
    assertThatThrownBy(() -> BulkTransfer.parseTextLine("x{a=\"b} 1", 0))
        .hasMessageContaining("unterminated label value of a");
    assertThatThrownBy(() -> BulkTransfer.parseTextLine("x one", 0))
        .hasMessageContaining("\"one\" is not a number");
    assertThatThrownBy(() -> BulkTransfer.parseTextLine("x 1 soon", 0))
        .hasMessageContaining("timestamp soon");
    assertThatThrownBy(() -> BulkTransfer.parseTextLine("x", 0))
        .hasMessageContaining("expected a value");
  }
}
