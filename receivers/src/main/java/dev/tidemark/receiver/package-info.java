/**
 * Receivers: {@link dev.tidemark.receiver.OtlpIngestor} (translation, outcome and metrics, shared
 * by both OTLP protocols), {@link dev.tidemark.receiver.InFlightBytes} (admission control shared by
 * every receiver), {@code receiver.grpc} (OTLP/gRPC service), {@code receiver.http} (the OTLP/HTTP
 * and remote-write Jetty handlers) and {@code receiver.remotewrite} (Prometheus remote write 1.0
 * and 2.0). Contract: {@code docs/otlp-translation.md} §5; remote write: {@code
 * docs/architecture.md}, "Remote write".
 */
package dev.tidemark.receiver;
