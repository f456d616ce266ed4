/**
 * OTLP/gRPC and OTLP/HTTP receivers. They arrive with the server issue; until then this module holds only this file.
 */
package dev.tidemark.receiver;
