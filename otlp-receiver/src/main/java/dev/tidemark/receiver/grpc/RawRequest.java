package dev.tidemark.receiver.grpc;

import dev.tidemark.receiver.ErrorMessages;
import io.grpc.KnownLength;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;

/**
 * An Export request as the gRPC runtime delivered it: the message bytes (already decompressed and
 * checked against {@code maxInboundMessageSize} by the runtime), or the status of a failure to read
 * them. Parsing happens in {@link OtlpGrpcService}, after admission, so an undecodable message is
 * answered with {@code INVALID_ARGUMENT} rather than grpc-java's {@code UNKNOWN}.
 */
record RawRequest(byte[] bytes, Status error) {

  static RawRequest failed(Status error) {
    return new RawRequest(null, error);
  }

  /** Reads the whole message; never throws (failures become {@link #error()}). */
  enum Marshaller implements MethodDescriptor.Marshaller<RawRequest> {
    INSTANCE;

    @Override
    public InputStream stream(RawRequest value) {
      return new ByteArrayInputStream(value.bytes());
    }

    @Override
    public RawRequest parse(InputStream stream) {
      try {
        return new RawRequest(readAll(stream), null);
      } catch (StatusRuntimeException e) {
        // The runtime's own limit on the decompressed size (RESOURCE_EXHAUSTED).
        return failed(e.getStatus());
      } catch (IOException e) {
        return failed(
            Status.INVALID_ARGUMENT.withDescription(
                "cannot read the message: " + ErrorMessages.describe(e, "read failure")));
      }
    }

    private static byte[] readAll(InputStream in) throws IOException {
      if (in instanceof KnownLength) {
        int n = in.available();
        byte[] b = new byte[n];
        int r = in.readNBytes(b, 0, n);
        if (r == n) {
          int next = in.read();
          if (next < 0) {
            return b;
          }
          byte[] rest = in.readAllBytes();
          byte[] all = new byte[n + 1 + rest.length];
          System.arraycopy(b, 0, all, 0, n);
          all[n] = (byte) next;
          System.arraycopy(rest, 0, all, n + 1, rest.length);
          return all;
        }
        byte[] shorter = new byte[r];
        System.arraycopy(b, 0, shorter, 0, r);
        return shorter;
      }
      return in.readAllBytes();
    }
  }
}
