/**
 * OTLP metrics → Prometheus-model samples, after {@code docs/otlp-translation.md} (the contract;
 * section numbers in the code refer to it).
 *
 * <p>Entry point: {@link dev.tidemark.translator.Translator#translate}, configured by an immutable
 * {@link dev.tidemark.translator.TranslatorConfig}; it writes through the tsdb-core {@code
 * Appender} and returns a {@link dev.tidemark.translator.TranslationResult} with one outcome per
 * OTLP data point (accepted, or a {@link dev.tidemark.translator.RejectionReason}) and the text for
 * OTLP partial success. Family metadata (TYPE, UNIT, HELP) accumulates in a {@link
 * dev.tidemark.tsdb.model.MetadataRegistry}. {@link dev.tidemark.translator.MetricNamer}, {@link
 * dev.tidemark.translator.LabelNamer} and {@link dev.tidemark.translator.FloatFormat} are the
 * naming rules on their own (checked against prometheus/otlptranslator's test tables); {@code le}
 * and {@code quantile} values are tsdb-core's {@code PromText}.
 *
 * <p>Everything public here is thread-safe or immutable.
 */
package dev.tidemark.translator;
