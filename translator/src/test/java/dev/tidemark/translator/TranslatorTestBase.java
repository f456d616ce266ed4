package dev.tidemark.translator;

import dev.tidemark.tsdb.time.ManualClock;
import io.opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest;
import java.time.Duration;

/** A translator over a {@link RecordingAppender} and a {@link ManualClock} one minute after {@link Otlp#T0}. */
abstract class TranslatorTestBase {
  final ManualClock clock = new ManualClock(Otlp.T0_MS + Duration.ofMinutes(1).toMillis());
  final RecordingAppender appender = new RecordingAppender();
  Translator translator = new Translator(appender, config(), clock);

  TranslatorConfig config() {
    return TranslatorConfig.defaults();
  }

  void reconfigure(TranslatorConfig c) {
    translator = new Translator(appender, c, clock);
  }

  TranslationResult translate(ExportMetricsServiceRequest r) {
    return translator.translate(r);
  }
}
