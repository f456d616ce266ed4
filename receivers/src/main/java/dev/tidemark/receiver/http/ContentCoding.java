package dev.tidemark.receiver.http;

import java.util.Locale;

/**
 * The request body codings the HTTP receivers accept ({@code Content-Encoding}), as the
 * OpenTelemetry Collector's HTTP receivers accept them: {@code gzip} ({@code x-gzip}), {@code
 * deflate} ({@code zlib}; zlib or raw deflate), {@code zstd}, {@code snappy} (block, or framed when
 * the body starts with the framed stream identifier) and {@code x-snappy-framed}, or none ({@code
 * identity}). Each decodes into the body's limit, so a compression bomb is stopped at the limit.
 */
enum ContentCoding {
  IDENTITY("identity"),
  GZIP("gzip"),
  DEFLATE("deflate"),
  ZSTD("zstd"),
  SNAPPY("snappy"),
  SNAPPY_FRAMED("x-snappy-framed");

  /** For {@code Accept-Encoding} on a 415 answer. */
  static final String ACCEPTED = "gzip, deflate, zstd, snappy, x-snappy-framed, identity";

  /** The coding's name in messages. */
  final String label;

  ContentCoding(String label) {
    this.label = label;
  }

  /**
   * The coding a {@code Content-Encoding} header names, or null if it is none of these (a list of
   * several codings included).
   */
  static ContentCoding of(String contentEncoding) {
    if (contentEncoding == null) {
      return IDENTITY;
    }
    return switch (contentEncoding.trim().toLowerCase(Locale.ROOT)) {
      case "", "identity" -> IDENTITY;
      case "gzip", "x-gzip" -> GZIP;
      case "deflate", "zlib" -> DEFLATE;
      case "zstd" -> ZSTD;
      case "snappy" -> SNAPPY;
      case "x-snappy-framed" -> SNAPPY_FRAMED;
      default -> null;
    };
  }

  /** A decoder into {@code out}, or null for {@link #IDENTITY}. */
  BodyDecoder decoder(BoundedBody out) {
    return switch (this) {
      case IDENTITY -> null;
      case GZIP -> new GzipDecoder(out);
      case DEFLATE -> new DeflateDecoder(out);
      case ZSTD -> new ZstdDecoder(out);
      case SNAPPY -> new SnappyDecoder(out, false);
      case SNAPPY_FRAMED -> new SnappyDecoder(out, true);
    };
  }
}
