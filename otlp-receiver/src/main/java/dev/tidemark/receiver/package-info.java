/**
 * OTLP receivers: {@link dev.tidemark.receiver.OtlpIngestor} (admission control, translation,
 * outcome and metrics, shared by both protocols), {@code receiver.grpc} (OTLP/gRPC service) and
 * {@code receiver.http} (OTLP/HTTP Jetty handler). Contract: {@code docs/otlp-translation.md} §5.
 */
package dev.tidemark.receiver;
