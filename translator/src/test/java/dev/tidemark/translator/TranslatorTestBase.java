package dev.tidemark.translator;

import dev.tidemark.tsdb.time.ManualClock;
import io.opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest;
import java.time.Duration;

/**
 * A translator over a {@link RecordingAppender} and a {@link ManualClock} one minute after {@link
 * Otlp#T0}.
 *
 * <p>Every request a test translates through {@link #translate} is also serialized and given to an
 * {@link Equivalence.Twin} (a tree-path and an in-place translator with the same config and clock,
 * appenders with the test appender's rules), which checks that both paths agree; a new {@link
 * #translator} gets a new twin. What the tests assert is unchanged: they see {@link #translator}
 * and {@link #appender} only.
 */
abstract class TranslatorTestBase {
  final ManualClock clock = new ManualClock(Otlp.T0_MS + Duration.ofMinutes(1).toMillis());
  final RecordingAppender appender = new RecordingAppender();
  Translator translator = new Translator(appender, config(), clock);

  /** Off for tests whose requests run concurrently (their interleaving is not reproducible). */
  boolean checkInPlace = true;

  private Translator twinOf;
  private Equivalence.Twin twin;

  TranslatorConfig config() {
    return TranslatorConfig.defaults();
  }

  void reconfigure(TranslatorConfig c) {
    translator = new Translator(appender, c, clock);
  }

  TranslationResult translate(ExportMetricsServiceRequest r) {
    if (!checkInPlace) {
      return translator.translate(r);
    }
    if (twinOf != translator) {
      twinOf = translator;
      twin = new Equivalence.Twin(translator.config(), clock, appender);
    }
    twin.translateBoth(r.toByteArray());
    return translator.translate(r);
  }
}
