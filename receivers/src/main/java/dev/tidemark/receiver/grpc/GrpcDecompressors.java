package dev.tidemark.receiver.grpc;

import dev.tidemark.receiver.ZstdStreams;
import io.grpc.Decompressor;
import io.grpc.DecompressorRegistry;
import java.io.IOException;
import java.io.InputStream;
import org.xerial.snappy.SnappyFramedInputStream;

/**
 * The message encodings the OTLP/gRPC receiver accepts beside gRPC's own {@code gzip}: {@code zstd}
 * and {@code snappy}, under the names the OpenTelemetry Collector's gRPC exporters send (their
 * {@code compression: zstd} and {@code snappy}; snappy there is the framed format). Advertised in
 * {@code grpc-accept-encoding}. gRPC checks each decoded message against the server's {@code
 * maxInboundMessageSize} as it reads it, so a compression bomb stops at that limit; a zstd frame's
 * window is limited as for HTTP bodies.
 */
public final class GrpcDecompressors {
  private GrpcDecompressors() {}

  /** gRPC's defaults ({@code gzip}, {@code identity}) with {@code zstd} and {@code snappy}. */
  public static DecompressorRegistry registry() {
    return DecompressorRegistry.getDefaultInstance()
        .with(new Zstd(), true)
        .with(new Snappy(), true);
  }

  static final class Zstd implements Decompressor {
    @Override
    public String getMessageEncoding() {
      return "zstd";
    }

    @Override
    public InputStream decompress(InputStream is) throws IOException {
      return ZstdStreams.decoding(is);
    }
  }

  static final class Snappy implements Decompressor {
    @Override
    public String getMessageEncoding() {
      return "snappy";
    }

    @Override
    public InputStream decompress(InputStream is) throws IOException {
      return new SnappyFramedInputStream(is, true);
    }
  }
}
