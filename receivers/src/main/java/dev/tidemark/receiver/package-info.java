/**
 * Receivers, by protocol and transport: {@code receiver.otlp} (OTLP's protocol core, shared by both
 * OTLP transports), {@code receiver.remotewrite} (Prometheus remote write 1.0 and 2.0), {@code
 * receiver.http} (the Jetty handlers of OTLP/HTTP and remote write, and their one request-body
 * path) and {@code receiver.grpc} (the OTLP/gRPC service). This package holds what every receiver
 * shares: {@link dev.tidemark.receiver.InFlightBytes} (admission control), {@link
 * dev.tidemark.receiver.HeapGuard}, {@link dev.tidemark.receiver.BufferPool}, {@link
 * dev.tidemark.receiver.Outcome} and {@link dev.tidemark.receiver.ReceiverConfig}. Contract: {@code
 * docs/otlp-translation.md} §5; remote write: {@code docs/architecture.md}, "Remote write".
 */
package dev.tidemark.receiver;
