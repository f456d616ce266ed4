package dev.tidemark.receiver.http;

import dev.tidemark.receiver.BufferPool;
import dev.tidemark.receiver.Outcome;
import dev.tidemark.receiver.ReceiverConfig;
import dev.tidemark.receiver.remotewrite.RemoteWriteIngestor;
import dev.tidemark.receiver.remotewrite.RemoteWriteIngestor.Exchange;
import dev.tidemark.receiver.remotewrite.RemoteWriteIngestor.Version;
import dev.tidemark.receiver.remotewrite.RemoteWriteIngestor.WriteResult;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Objects;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpMethod;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;
import org.xerial.snappy.Snappy;

/**
 * Prometheus remote write 1.0 and 2.0, {@code POST /api/v1/write}, as a Jetty 12 core handler over
 * a {@link RemoteWriteIngestor}. Returns false for other paths so that the server can chain it.
 *
 * <p><b>Request</b> (as Prometheus' receiver checks it, with its messages):
 *
 * <ul>
 *   <li>{@code Content-Type}: {@code application/x-protobuf}, optionally with {@code
 *       proto=prometheus.WriteRequest} (1.0, also when there is no header or no {@code proto}) or
 *       {@code proto=io.prometheus.write.v2.Request} (2.0); anything else is 415;
 *   <li>{@code Content-Encoding}: {@code snappy} (block format, the protocol's; framed when the
 *       body starts with the framed stream identifier), or none (snappy is assumed, as Prometheus
 *       does); also {@code zstd}, {@code gzip}, {@code deflate} and {@code x-snappy-framed} ({@link
 *       ContentCoding}), decoded as the body is read into the same limit; anything else is 415 with
 *       {@code Accept-Encoding};
 *   <li>the body is read without blocking into a {@link BoundedBody} admitted against the shared
 *       in-flight limit, then decompressed; compressed and decompressed sizes are both bounded by
 *       {@link ReceiverConfig#maxHttpBodyBytes()} (413; the decompressed size is read from the
 *       snappy header before anything is allocated for it).
 * </ul>
 *
 * <p><b>Answers</b>: 204 when everything was written; 400 with one line per refusal when the body
 * cannot be used (bad snappy, bad protobuf: nothing written) or some samples were refused (the rest
 * written, see {@link RemoteWriteIngestor}); 405 + {@code Allow: POST}; 413; 415; 503 with {@code
 * Retry-After} when the in-flight limit is reached, the store cannot take writes, or the body could
 * not be read (a failure of the connection, not of the client's data): the sender retries; 500 on
 * an unexpected failure. Error bodies are {@code text/plain} lines, as Go's {@code http.Error}
 * writes them. 2.0 answers to a body that was decompressed, errors included, carry {@code
 * X-Prometheus-Remote-Write-Samples-Written}, {@code -Histograms-Written} (native histograms
 * stored) and {@code -Exemplars-Written} (always 0).
 *
 * <p><b>Threading</b>: as {@link OtlpHttpHandler}, through the same {@link BodyReader}: no thread
 * waits for a silent client; the thread that reads the last bytes decodes and writes, and answers
 * once the written samples are durable; an answer decided before the body is whole is sent at once,
 * and the rest of the body drained after it.
 */
public final class RemoteWriteHandler extends Handler.Abstract {
  public static final String PATH = "/api/v1/write";
  public static final String PROTOBUF = "application/x-protobuf";

  static final String SAMPLES_WRITTEN = "X-Prometheus-Remote-Write-Samples-Written";
  static final String HISTOGRAMS_WRITTEN = "X-Prometheus-Remote-Write-Histograms-Written";
  static final String EXEMPLARS_WRITTEN = "X-Prometheus-Remote-Write-Exemplars-Written";

  private final RemoteWriteIngestor ingestor;
  private final long maxBodyBytes;
  private final String retryAfterSeconds;

  /** The arrays bodies are decompressed into. */
  private final BufferPool buffers = BufferPool.forRequestBodies();

  public RemoteWriteHandler(RemoteWriteIngestor ingestor, ReceiverConfig config) {
    this.ingestor = Objects.requireNonNull(ingestor, "ingestor");
    this.maxBodyBytes = config.maxHttpBodyBytes();
    this.retryAfterSeconds = Long.toString(config.retryAfterSeconds());
  }

  @Override
  public boolean handle(Request request, Response response, Callback callback) {
    if (!PATH.equals(Request.getPathInContext(request))) {
      return false;
    }
    new Call(request, response, callback).start();
    return true;
  }

  /**
   * The message a {@code Content-Type} selects, or throws {@link IllegalArgumentException} with
   * Prometheus' 415 message.
   */
  static Version version(String contentType) {
    if (contentType == null || contentType.isBlank()) {
      return Version.V1;
    }
    String ct = contentType.trim();
    String[] parts = ct.split(";");
    if (!parts[0].trim().equals(PROTOBUF)) {
      throw new IllegalArgumentException(
          "expected " + PROTOBUF + " as the first (media) part, got " + ct + " content-type");
    }
    for (int i = 1; i < parts.length; i++) {
      String[] pair = parts[i].split("=", -1);
      if (pair.length != 2) {
        throw new IllegalArgumentException(
            "as per https://www.rfc-editor.org/rfc/rfc9110#parameter expected parameters to be"
                + " key-values, got "
                + parts[i]
                + " in "
                + ct
                + " content-type");
      }
      if (pair[0].trim().equals("proto")) {
        String proto = pair[1].trim();
        for (Version v : Version.values()) {
          if (v.message().equals(proto)) {
            return v;
          }
        }
        throw new IllegalArgumentException(
            "got "
                + ct
                + " content type; unknown type for remote write protobuf message "
                + proto
                + ", supported: "
                + Version.V1.message()
                + ", "
                + Version.V2.message());
      }
    }
    return Version.V1;
  }

  /**
   * How the reader reads a body of coding {@code c}: snappy raw (decoded here), the rest decoded.
   */
  private static ContentCoding readAs(ContentCoding c) {
    return c == ContentCoding.SNAPPY ? ContentCoding.IDENTITY : c;
  }

  /** One request: header checks, the body read by its {@link BodyReader}, the write, the answer. */
  private final class Call implements BodyReader.Ends<WriteResult> {
    private final Request request;
    private final Response response;
    private final Exchange ex;
    private final BodyReader<WriteResult> reader;

    /** The body's coding; snappy (or none, read as snappy) is decoded here, the rest as read. */
    private ContentCoding coding = ContentCoding.SNAPPY;

    Call(Request request, Response response, Callback callback) {
      this.request = request;
      this.response = response;
      this.ex = ingestor.begin(Version.V1);
      this.reader = new BodyReader<>(request, callback, maxBodyBytes, this);
    }

    void start() {
      WriteResult r;
      try {
        r = checkHeaders();
      } catch (RuntimeException | Error e) {
        r = failed(e);
      }
      if (r == null) {
        reader.read(readAs(coding), ex::reserve);
      } else {
        reader.answer(r);
      }
    }

    private WriteResult checkHeaders() {
      if (!HttpMethod.POST.is(request.getMethod())) {
        response.getHeaders().put(HttpHeader.ALLOW, "POST");
        return ex.fail(
            Outcome.METHOD_NOT_ALLOWED, "method " + request.getMethod() + " not allowed; use POST");
      }
      try {
        ex.version(version(request.getHeaders().get(HttpHeader.CONTENT_TYPE)));
      } catch (IllegalArgumentException e) {
        return ex.fail(Outcome.UNSUPPORTED_MEDIA_TYPE, e.getMessage());
      }
      String enc = request.getHeaders().get(HttpHeader.CONTENT_ENCODING);
      ContentCoding c = ContentCoding.of(enc);
      if (c == null) {
        response.getHeaders().put(HttpHeader.ACCEPT_ENCODING, ContentCoding.ACCEPTED);
        return ex.fail(
            Outcome.UNSUPPORTED_MEDIA_TYPE,
            enc
                + " encoding (compression) is not accepted by this server; accepted: snappy"
                + " (the protocol's), zstd, gzip, deflate, x-snappy-framed");
      }
      coding = c == ContentCoding.IDENTITY ? ContentCoding.SNAPPY : c;
      return null;
    }

    @Override
    public WriteResult tooLarge(long declaredLength) {
      return tooLarge(
          declaredLength >= 0 ? declaredLength + " bytes" : "more than " + maxBodyBytes + " bytes");
    }

    @Override
    public WriteResult overloaded() {
      return ex.overloaded();
    }

    @Override
    public WriteResult invalidBody(ContentCoding c, CorruptBodyException e) {
      return ex.fail(Outcome.INVALID, c.label + ": " + e.getMessage());
    }

    @Override
    public WriteResult unreadable(String why) {
      return ex.fail(
          Outcome.BODY_UNREADABLE, "cannot read the request body: " + why + "; retry later");
    }

    @Override
    public WriteResult failed(Throwable t) {
      return t instanceof OutOfMemoryError
          ? ex.fail(Outcome.OVERLOADED, "receiver out of memory; retry later")
          : ex.fail(Outcome.INTERNAL_ERROR, "internal error");
    }

    @Override
    public WriteResult complete(BoundedBody body) {
      return ingest(body);
    }

    private WriteResult ingest(BoundedBody body) {
      byte[] compressed = body.contiguous();
      int compressedLength = (int) body.length();
      if (compressed == null) {
        compressed = body.bytes().toByteArray(); // several segments (no Content-Length) or none
      }
      if (coding != ContentCoding.SNAPPY) {
        return ex.write(compressed, compressedLength); // decoded as it was read
      }
      if (SnappyDecoder.isFramed(compressed, compressedLength)) {
        return ingestFramed(compressed, compressedLength);
      }
      int length;
      try {
        length = Snappy.uncompressedLength(compressed, 0, compressedLength);
      } catch (IOException | RuntimeException e) {
        return ex.fail(Outcome.INVALID, "snappy: corrupt input");
      }
      if (length < 0 || length > maxBodyBytes) {
        return tooLarge(
            (length < 0 ? "more than 2 GiB" : length + " bytes") + " after decompression");
      }
      if (!ex.reserve(length)) {
        return ex.overloaded();
      }
      byte[] raw = buffers.borrow(length);
      try {
        try {
          int n = Snappy.uncompress(compressed, 0, compressedLength, raw, 0);
          if (n != length) {
            return ex.fail(Outcome.INVALID, "snappy: corrupt input");
          }
        } catch (IOException | RuntimeException e) {
          return ex.fail(Outcome.INVALID, "snappy: corrupt input");
        }
        compressed = null;
        return ex.write(raw, length);
      } finally {
        buffers.giveBack(raw);
      }
    }

    /** A framed snappy body (sent as {@code snappy}): decoded into a body of its own. */
    private WriteResult ingestFramed(byte[] compressed, int length) {
      BoundedBody decoded =
          new BoundedBody(maxBodyBytes, BoundedBody.FIRST_SEGMENT_BYTES, ex::reserve);
      try (SnappyDecoder d = new SnappyDecoder(decoded, true)) {
        d.write(ByteBuffer.wrap(compressed, 0, length));
        d.finish();
      } catch (CorruptBodyException e) {
        return invalidBody(ContentCoding.SNAPPY_FRAMED, e);
      } catch (BoundedBody.BodyTooLarge e) {
        return tooLarge("more than " + maxBodyBytes + " bytes after decompression");
      } catch (BoundedBody.Overloaded e) {
        return ex.overloaded();
      }
      byte[] raw = decoded.contiguous();
      if (raw == null) {
        raw = decoded.bytes().toByteArray();
      }
      return ex.write(raw, (int) decoded.length());
    }

    private WriteResult tooLarge(String size) {
      return ex.fail(
          Outcome.TOO_LARGE,
          "request body of " + size + " exceeds the limit of " + maxBodyBytes + " bytes");
    }

    /** Closes the exchange (releasing its in-flight bytes), then writes {@code r}. */
    @Override
    public void send(WriteResult r, Callback done) {
      ex.close();
      write(r, done);
    }

    private void write(WriteResult r, Callback callback) {
      HttpFields.Mutable h = response.getHeaders();
      if (r.version() == Version.V2 && r.decoded()) {
        h.put(SAMPLES_WRITTEN, Long.toString(r.samplesWritten()));
        h.put(HISTOGRAMS_WRITTEN, Long.toString(r.histogramsWritten()));
        h.put(EXEMPLARS_WRITTEN, "0");
      }
      if (r.success()) {
        response.setStatus(204);
        response.write(true, null, callback);
        return;
      }
      int status =
          switch (r.outcome()) {
            case PARTIAL_SUCCESS, INVALID -> 400;
            case METHOD_NOT_ALLOWED -> 405;
            case TOO_LARGE -> 413;
            case UNSUPPORTED_MEDIA_TYPE -> 415;
            case OVERLOADED, STORAGE_UNAVAILABLE, BODY_UNREADABLE -> 503;
            default -> 500;
          };
      if (status == 503) {
        h.put(HttpHeader.RETRY_AFTER, retryAfterSeconds);
      }
      byte[] bytes = (r.message() + "\n").getBytes(StandardCharsets.UTF_8);
      response.setStatus(status);
      h.put(HttpHeader.CONTENT_TYPE, "text/plain; charset=utf-8");
      h.put("X-Content-Type-Options", "nosniff");
      h.put(HttpHeader.CONTENT_LENGTH, Long.toString(bytes.length));
      response.write(true, ByteBuffer.wrap(bytes), callback);
    }
  }
}
