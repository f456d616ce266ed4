package dev.tidemark.receiver.otlp;

import dev.tidemark.receiver.Outcome;
import dev.tidemark.translator.TranslationResult;
import io.opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceResponse;
import java.util.Objects;

/**
 * The result of one request as the receivers answer it: the {@link Outcome}, and either the
 * response to send ({@link Outcome#SUCCESS}, {@link Outcome#PARTIAL_SUCCESS}) or a developer-facing
 * error message. Immutable.
 */
public final class ExportResult {
  private final Outcome outcome;
  private final ExportMetricsServiceResponse response;
  private final TranslationResult translation;
  private final String message;

  private ExportResult(
      Outcome outcome,
      ExportMetricsServiceResponse response,
      TranslationResult translation,
      String message) {
    this.outcome = Objects.requireNonNull(outcome, "outcome");
    this.response = response;
    this.translation = translation;
    this.message = message;
  }

  static ExportResult translated(
      Outcome outcome, ExportMetricsServiceResponse response, TranslationResult translation) {
    return new ExportResult(outcome, response, translation, "");
  }

  static ExportResult failed(Outcome outcome, String message) {
    return new ExportResult(outcome, null, null, message == null ? "" : message);
  }

  public Outcome outcome() {
    return outcome;
  }

  /**
   * The response to send with an OK status; null unless the outcome is SUCCESS or PARTIAL_SUCCESS.
   */
  public ExportMetricsServiceResponse response() {
    return response;
  }

  /**
   * The translator's per-point outcome; null when the request never reached the translator or it
   * failed.
   */
  public TranslationResult translation() {
    return translation;
  }

  /**
   * For failed outcomes, the developer-facing error message (for {@code
   * google.rpc.Status.message}); else empty.
   */
  public String message() {
    return message;
  }

  @Override
  public String toString() {
    return "ExportResult{" + outcome + (message.isEmpty() ? "" : ", " + message) + "}";
  }
}
