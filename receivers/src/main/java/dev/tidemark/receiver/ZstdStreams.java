package dev.tidemark.receiver;

import com.github.luben.zstd.ZstdInputStreamNoFinalizer;
import java.io.IOException;
import java.io.InputStream;

/**
 * zstd decoding for every receiver (HTTP bodies, gRPC messages), by the reference library
 * (zstd-jni): frames back to back, skippable frames skipped (RFC 8878). The window a frame may ask
 * for is at most {@link #WINDOW_LOG_MAX} (16 MiB: zstd's levels 1–19 and the Go encoders the
 * OpenTelemetry Collector uses stay within 8 MiB), so a frame cannot make the decoder reserve more
 * native memory than that; the decoded size is the caller's limit to enforce.
 */
public final class ZstdStreams {
  /** The largest window, as a power of two, that a frame may ask for. */
  public static final int WINDOW_LOG_MAX = 24;

  private ZstdStreams() {}

  /** A stream of what {@code in} decodes to; close it (it holds native memory). */
  public static InputStream decoding(InputStream in) throws IOException {
    ZstdInputStreamNoFinalizer z = new ZstdInputStreamNoFinalizer(in);
    z.setLongMax(WINDOW_LOG_MAX);
    return z;
  }
}
