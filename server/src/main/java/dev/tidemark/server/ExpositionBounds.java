package dev.tidemark.server;

import dev.tidemark.tsdb.model.PromText;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;

/**
 * The {@code le} and {@code quantile} label values of {@code /metrics} in Prometheus' forms. The
 * Prometheus Java client writes them with {@link Double#toString} ({@code le="1.0E-4"}, {@code
 * le="5.0E-4"}, {@code le="1.0"}); the Go client, whose output Prometheus' own {@code /metrics}
 * shows, writes {@code le="0.0001"}, {@code le="0.0005"}, {@code le="1"} in the text format 0.0.4
 * ({@link PromText#formatExposition}) and {@code le="1.0"} in OpenMetrics ({@link
 * PromText#formatOpenMetrics}, the form Prometheus stores). This rewrites the client's text output
 * in one pass; the protobuf format carries doubles and is left alone. Stateless.
 *
 * <p>A label is found as {@code le="} or {@code quantile="} right after {@code {} or {@code ,}:
 * inside a label value a {@code "} is always escaped ({@code \"}), so such text cannot be part of
 * another label's value. A value that is not a number is kept as it is.
 */
final class ExpositionBounds {
  private ExpositionBounds() {}

  private static final byte[] LE = "le=\"".getBytes(StandardCharsets.US_ASCII);
  private static final byte[] QUANTILE = "quantile=\"".getBytes(StandardCharsets.US_ASCII);

  /**
   * {@code body} with every {@code le} and {@code quantile} value rewritten; {@code openMetrics}
   * picks OpenMetrics' form, else the text format's. Returns {@code body} itself when nothing
   * changes.
   */
  static byte[] rewrite(byte[] body, boolean openMetrics) {
    ByteArrayOutputStream out = null;
    int copied = 0;
    for (int i = 1; i < body.length; i++) {
      byte prev = body[i - 1];
      if (prev != '{' && prev != ',') {
        continue;
      }
      int start;
      if (startsWith(body, i, LE)) {
        start = i + LE.length;
      } else if (startsWith(body, i, QUANTILE)) {
        start = i + QUANTILE.length;
      } else {
        continue;
      }
      int end = start;
      while (end < body.length && body[end] != '"' && body[end] != '\n') {
        end++;
      }
      if (end == body.length || body[end] != '"') {
        continue;
      }
      String value = new String(body, start, end - start, StandardCharsets.US_ASCII);
      String formatted = format(value, openMetrics);
      if (formatted.equals(value)) {
        continue;
      }
      if (out == null) {
        out = new ByteArrayOutputStream(body.length + 64);
      }
      out.write(body, copied, start - copied);
      out.writeBytes(formatted.getBytes(StandardCharsets.US_ASCII));
      copied = end;
      i = end;
    }
    if (out == null) {
      return body;
    }
    out.write(body, copied, body.length - copied);
    return out.toByteArray();
  }

  private static String format(String value, boolean openMetrics) {
    double v;
    switch (value) {
      case "+Inf" -> v = Double.POSITIVE_INFINITY;
      case "-Inf" -> v = Double.NEGATIVE_INFINITY;
      case "NaN" -> v = Double.NaN;
      default -> {
        try {
          v = Double.parseDouble(value);
        } catch (NumberFormatException e) {
          return value;
        }
      }
    }
    return openMetrics ? PromText.formatOpenMetrics(v) : PromText.formatExposition(v);
  }

  private static boolean startsWith(byte[] body, int at, byte[] prefix) {
    if (at + prefix.length > body.length) {
      return false;
    }
    for (int k = 0; k < prefix.length; k++) {
      if (body[at + k] != prefix[k]) {
        return false;
      }
    }
    return true;
  }
}
