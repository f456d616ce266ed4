package dev.tidemark.receiver.grpc;

import dev.tidemark.receiver.BufferPool;
import dev.tidemark.receiver.ErrorMessages;
import io.grpc.KnownLength;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.util.Arrays;

/**
 * An Export request as the gRPC runtime delivered it: the message bytes {@code bytes[0, length)}
 * (already decompressed and checked against {@code maxInboundMessageSize} by the runtime), or the
 * status of a failure to read them. Parsing happens in {@link OtlpGrpcService}, after admission, so
 * an undecodable message is answered with {@code INVALID_ARGUMENT} rather than grpc-java's {@code
 * UNKNOWN}. The bytes are in an array lent by the marshaller's {@link BufferPool}; the service
 * gives it back with {@link #release()} once the request is processed.
 */
record RawRequest(byte[] bytes, int length, Status error, BufferPool pool) {

  static RawRequest failed(Status error) {
    return new RawRequest(null, 0, error, null);
  }

  /** Gives the bytes back to the pool; they must not be used after this. */
  void release() {
    if (pool != null) {
      pool.giveBack(bytes);
    }
  }

  /**
   * Reads the whole message into a pooled array; never throws (failures become {@link #error()}).
   */
  static final class Marshaller implements MethodDescriptor.Marshaller<RawRequest> {
    private final BufferPool pool;

    Marshaller(BufferPool pool) {
      this.pool = pool;
    }

    @Override
    public InputStream stream(RawRequest value) {
      return new ByteArrayInputStream(value.bytes(), 0, value.length());
    }

    @Override
    public RawRequest parse(InputStream stream) {
      byte[] b = null;
      try {
        if (stream instanceof KnownLength) {
          // The runtime hands over the whole (decompressed) message: available() is its length.
          int n = stream.available();
          b = pool.borrow(n + 1);
          int r = stream.readNBytes(b, 0, n + 1);
          if (r <= n) {
            return new RawRequest(b, r, null, pool);
          }
          // More than available() said (not grpc-java's own streams): the rest, appended.
          byte[] rest = stream.readAllBytes();
          byte[] all = Arrays.copyOf(b, r + rest.length);
          System.arraycopy(rest, 0, all, r, rest.length);
          pool.giveBack(b);
          return new RawRequest(all, all.length, null, null);
        }
        byte[] all = stream.readAllBytes();
        return new RawRequest(all, all.length, null, null);
      } catch (StatusRuntimeException e) {
        pool.giveBack(b);
        // The runtime's own limit on the decompressed size (RESOURCE_EXHAUSTED).
        return failed(e.getStatus());
      } catch (IOException e) {
        pool.giveBack(b);
        return failed(
            Status.INVALID_ARGUMENT.withDescription(
                "cannot read the message: " + ErrorMessages.describe(e, "read failure")));
      }
    }
  }
}
