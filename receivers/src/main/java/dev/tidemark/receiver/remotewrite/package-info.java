/**
 * Prometheus remote write 1.0 and 2.0: the wire decoder ({@link
 * dev.tidemark.receiver.remotewrite.WriteDecoder}) and the protocol core ({@link
 * dev.tidemark.receiver.remotewrite.RemoteWriteIngestor}); the HTTP handler is {@link
 * dev.tidemark.receiver.http.RemoteWriteHandler}. Messages from Prometheus' definitions in {@code
 * src/main/proto} are generated into {@code dev.tidemark.receiver.remotewrite.proto} (tests and
 * clients build bodies with them; the receiver reads the wire itself).
 */
package dev.tidemark.receiver.remotewrite;
