/**
 * OTLP's protocol core, shared by OTLP/gRPC and OTLP/HTTP: {@link
 * dev.tidemark.receiver.otlp.OtlpIngestor} (admission, one call to the translator, the outcome and
 * the {@code tidemark_otlp_*} metrics) and {@link dev.tidemark.receiver.otlp.ExportResult} (what a
 * transport answers). Contract: {@code docs/otlp-translation.md} §5.
 */
package dev.tidemark.receiver.otlp;
