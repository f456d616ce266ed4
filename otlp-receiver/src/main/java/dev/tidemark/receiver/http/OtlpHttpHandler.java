package dev.tidemark.receiver.http;

import com.google.protobuf.Any;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import com.google.protobuf.util.JsonFormat;
import com.google.rpc.Code;
import com.google.rpc.RetryInfo;
import dev.tidemark.receiver.ExportResult;
import dev.tidemark.receiver.OtlpIngestor;
import dev.tidemark.receiver.OtlpIngestor.Exchange;
import dev.tidemark.receiver.Outcome;
import dev.tidemark.receiver.ReceiverConfig;
import io.opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Locale;
import java.util.Objects;
import java.util.zip.GZIPInputStream;
import java.util.zip.GZIPOutputStream;
import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpMethod;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;

/**
 * OTLP/HTTP {@code POST /v1/metrics} as a Jetty 12 core handler over an {@link OtlpIngestor}
 * (contract: {@code docs/otlp-translation.md} §5.3, §5.4).
 *
 * <p><b>Routing.</b> Handles exactly its path ({@link #DEFAULT_PATH} unless given) and returns
 * {@code false} for every other path, so the server can chain handlers.
 *
 * <p><b>Request.</b> Content types {@code application/x-protobuf} and {@code application/json},
 * media-type parameters ignored ({@code application/json; charset=utf-8} is JSON; JSON is always
 * read as UTF-8). Content encodings {@code gzip} (also {@code x-gzip}) and {@code identity}. The
 * body is read with blocking reads and decompressed as a stream into one array, counted against
 * {@link ReceiverConfig#maxHttpBodyBytes()} after decompression and against the in-flight bytes
 * limit as the array grows; it is never buffered beyond the limit. JSON follows OTLP/JSON: unknown
 * fields ignored, 64-bit integers as strings or numbers, enums as integers, {@code traceId}/{@code
 * spanId} as hex (see {@link OtlpJson}).
 *
 * <p><b>Answers</b> (every error body is a {@code google.rpc.Status}; bodies use the request's
 * content type, or protobuf when that is not one of ours):
 *
 * <ul>
 *   <li>200 + {@code ExportMetricsServiceResponse}: full success (empty message, {@code {}} in
 *       JSON) or partial success ({@code partialSuccess.rejectedDataPoints}, a string in JSON, and
 *       {@code errorMessage});
 *   <li>400: body undecodable (garbage, truncated protobuf, malformed JSON, broken gzip, a body
 *       that could not be read);
 *   <li>405 + {@code Allow: POST}: any other method;
 *   <li>413: body over the limit after decompression (checked against {@code Content-Length}
 *       first when not compressed);
 *   <li>415: other content types; other content encodings (with {@code Accept-Encoding: gzip,
 *       identity}, RFC 9110 §15.5.16);
 *   <li>503 + {@code Retry-After} (seconds, {@link ReceiverConfig#retryAfterSeconds()}) and a
 *       {@code RetryInfo} detail: in-flight limit reached (or out of memory), storage unavailable;
 *   <li>500: unexpected failure (not retried by clients).
 * </ul>
 *
 * <p>The response is gzipped only if the request sent {@code Accept-Encoding: gzip} (and the body
 * is not empty). Before answering, whatever is left of the request body is read and discarded (at
 * most {@link ReceiverConfig#maxHttpBodyBytes()} more bytes, outside admission control) so that a
 * client answered early (405, 413, 415, 503) reads the answer instead of a broken pipe; a longer
 * body makes Jetty close the connection after the answer.
 *
 * <p><b>Threading.</b> The handler declares {@code BLOCKING} invocation (the {@link
 * Handler.Abstract} default), so Jetty runs it on its thread pool, never on a selector thread; it
 * blocks that thread while reading the body and until the accepted samples are durable. The pool
 * needs a thread per concurrent OTLP/HTTP request beyond Jetty's own (acceptors, selectors).
 * Thread-safe.
 */
public final class OtlpHttpHandler extends Handler.Abstract {
  public static final String DEFAULT_PATH = "/v1/metrics";
  public static final String PROTOBUF = "application/x-protobuf";
  public static final String JSON = "application/json";

  private static final int READ_CHUNK = 8192;
  private static final int INITIAL_BUFFER = 64 * 1024;
  private static final JsonFormat.Parser JSON_PARSER = JsonFormat.parser().ignoringUnknownFields();
  private static final JsonFormat.Printer JSON_PRINTER =
      JsonFormat.printer()
          .omittingInsignificantWhitespace()
          .usingTypeRegistry(JsonFormat.TypeRegistry.newBuilder().add(RetryInfo.getDescriptor()).build());

  private final OtlpIngestor ingestor;
  private final String path;
  private final long maxBodyBytes;
  private final String retryAfterSeconds;
  private final Any retryInfo;

  public OtlpHttpHandler(OtlpIngestor ingestor) {
    this(ingestor, DEFAULT_PATH);
  }

  /**
   * @param path the exact request path to serve (in the handler's context), e.g. {@code /v1/metrics}
   */
  public OtlpHttpHandler(OtlpIngestor ingestor, String path) {
    this.ingestor = Objects.requireNonNull(ingestor, "ingestor");
    Objects.requireNonNull(path, "path");
    if (!path.startsWith("/")) {
      throw new IllegalArgumentException("path must start with '/', was '" + path + "'");
    }
    this.path = path;
    ReceiverConfig config = ingestor.config();
    this.maxBodyBytes = config.maxHttpBodyBytes();
    this.retryAfterSeconds = Long.toString(config.retryAfterSeconds());
    java.time.Duration d = config.retryAfter();
    this.retryInfo =
        Any.pack(
            RetryInfo.newBuilder()
                .setRetryDelay(com.google.protobuf.Duration.newBuilder().setSeconds(d.getSeconds()).setNanos(d.getNano()))
                .build());
  }

  public String path() {
    return path;
  }

  @Override
  public boolean handle(Request request, Response response, Callback callback) {
    if (!path.equals(Request.getPathInContext(request))) {
      return false;
    }
    Encoding encoding = Encoding.of(request.getHeaders().get(HttpHeader.CONTENT_TYPE));
    SourceStream source = new SourceStream(Request.asInputStream(request));
    Reply reply;
    try (Exchange ex = ingestor.begin(OtlpIngestor.Protocol.HTTP)) {
      try {
        reply = process(ex, request, source, encoding);
      } catch (OutOfMemoryError e) {
        reply = error(ex.outOfMemory(e), encoding);
      } catch (RuntimeException | Error e) {
        reply = error(ex.internalError(e), encoding);
      }
    }
    long length = request.getLength();
    if (length < 0 || length - Request.getContentBytesRead(request) <= maxBodyBytes) {
      drain(source);
    }
    send(request, response, callback, reply);
    return true;
  }

  /**
   * Reads and discards what is left of the body (at most {@link ReceiverConfig#maxHttpBodyBytes()}
   * more bytes) so that a client still sending gets the answer rather than a broken pipe, e.g. a
   * 413 or 503 decided before the body was read. Beyond that Jetty closes the connection.
   */
  private void drain(SourceStream source) {
    byte[] scratch = new byte[READ_CHUNK];
    long left = maxBodyBytes;
    try {
      while (left > 0) {
        int r = source.read(scratch, 0, (int) Math.min(scratch.length, left));
        if (r < 0) {
          return;
        }
        left -= r;
      }
    } catch (IOException e) {
      // The client is gone or sent a broken body: Jetty closes the connection.
    }
  }

  private Reply process(Exchange ex, Request request, SourceStream source, Encoding encoding) {
    if (!HttpMethod.POST.is(request.getMethod())) {
      return error(ex.fail(Outcome.METHOD_NOT_ALLOWED, "method " + request.getMethod() + " not allowed; use POST"), encoding)
          .header(HttpHeader.ALLOW, "POST");
    }
    if (encoding == null) {
      String type = request.getHeaders().get(HttpHeader.CONTENT_TYPE);
      return error(ex.fail(Outcome.UNSUPPORTED_MEDIA_TYPE,
          "unsupported content type " + (type == null ? "(none)" : "\"" + type + "\"")
              + "; use " + PROTOBUF + " or " + JSON), null);
    }
    Boolean gzip = gzip(request.getHeaders().get(HttpHeader.CONTENT_ENCODING));
    if (gzip == null) {
      return error(ex.fail(Outcome.UNSUPPORTED_MEDIA_TYPE,
          "unsupported content encoding \"" + request.getHeaders().get(HttpHeader.CONTENT_ENCODING)
              + "\"; use gzip or identity"), encoding)
          .header(HttpHeader.ACCEPT_ENCODING, "gzip, identity");
    }
    long contentLength = request.getLength();
    if (!gzip && contentLength > maxBodyBytes) {
      return tooLarge(ex, encoding, contentLength);
    }

    Body body;
    try {
      body = readBody(ex, source, gzip, contentLength);
    } catch (BodyTooLarge e) {
      return tooLarge(ex, encoding, -1);
    } catch (Overloaded e) {
      return error(ex.overloaded(), encoding);
    } catch (ReadFailure e) {
      return error(ex.fail(Outcome.INVALID, "cannot read the request body: " + e.getCause()), encoding);
    } catch (IOException e) {
      return error(ex.fail(Outcome.INVALID, "invalid gzip body: " + e.getMessage()), encoding);
    }

    ExportMetricsServiceRequest otlp;
    try {
      otlp = decode(encoding, body);
    } catch (InvalidProtocolBufferException | RuntimeException | StackOverflowError e) {
      return error(ex.fail(Outcome.INVALID,
          "cannot decode " + (encoding == Encoding.JSON ? "JSON" : "protobuf") + " ExportMetricsServiceRequest ("
              + body.length + " bytes): " + e.getMessage()), encoding);
    }
    body = null; // the decoded message is all translation needs
    ExportResult result = ex.export(otlp);
    if (result.response() != null) {
      return new Reply(200, encoding, result.response());
    }
    return error(result, encoding);
  }

  private Reply tooLarge(Exchange ex, Encoding encoding, long contentLength) {
    String size = contentLength >= 0 ? contentLength + " bytes" : "more than " + maxBodyBytes + " bytes";
    return error(ex.fail(Outcome.TOO_LARGE,
        "request body of " + size + " (after decompression) exceeds the limit of " + maxBodyBytes + " bytes"), encoding);
  }

  private static ExportMetricsServiceRequest decode(Encoding encoding, Body body) throws InvalidProtocolBufferException {
    if (encoding == Encoding.PROTOBUF) {
      return ExportMetricsServiceRequest.parseFrom(ByteBuffer.wrap(body.bytes, 0, body.length));
    }
    return parseJson(new String(body.bytes, 0, body.length, StandardCharsets.UTF_8));
  }

  /** Parses OTLP/JSON: unknown fields ignored, hex {@code traceId}/{@code spanId} (see {@link OtlpJson}). */
  static ExportMetricsServiceRequest parseJson(String json) throws InvalidProtocolBufferException {
    ExportMetricsServiceRequest.Builder builder = ExportMetricsServiceRequest.newBuilder();
    JSON_PARSER.merge(OtlpJson.hexIdsToBase64(json), builder);
    return builder.build();
  }

  // ------------------------------------------------------------------ body

  private static final class Body {
    final byte[] bytes;
    final int length;

    Body(byte[] bytes, int length) {
      this.bytes = bytes;
      this.length = length;
    }
  }

  /** Over {@link ReceiverConfig#maxHttpBodyBytes()} after decompression. */
  private static final class BodyTooLarge extends Exception {
    private static final long serialVersionUID = 1L;

    BodyTooLarge() {
      super(null, null, false, false);
    }
  }

  /** Refused by the in-flight limit. */
  private static final class Overloaded extends Exception {
    private static final long serialVersionUID = 1L;

    Overloaded() {
      super(null, null, false, false);
    }
  }

  /** The connection failed (client gone, bad chunking): not a decoding problem. */
  private static final class ReadFailure extends IOException {
    private static final long serialVersionUID = 1L;

    ReadFailure(Throwable cause) {
      super(cause);
    }
  }

  /** Wraps the request stream so that its failures can be told from gzip's. */
  private static final class SourceStream extends InputStream {
    private final InputStream in;

    SourceStream(InputStream in) {
      this.in = in;
    }

    @Override
    public int read() throws IOException {
      try {
        return in.read();
      } catch (IOException | RuntimeException e) {
        throw new ReadFailure(e);
      }
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
      try {
        return in.read(b, off, len);
      } catch (IOException | RuntimeException e) {
        throw new ReadFailure(e);
      }
    }

    @Override
    public int available() throws IOException {
      try {
        return in.available();
      } catch (IOException | RuntimeException e) {
        throw new ReadFailure(e);
      }
    }

    @Override
    public void close() throws IOException {
      in.close();
    }
  }

  /**
   * Reads the (decompressed) body into one array of at most {@code maxBodyBytes + 1} bytes,
   * reserving its capacity against the in-flight limit as it grows.
   */
  private Body readBody(Exchange ex, InputStream source, boolean gzip, long contentLength)
      throws IOException, BodyTooLarge, Overloaded {
    long cap = maxBodyBytes + 1;
    int initial;
    if (contentLength >= 0 && !gzip) {
      initial = (int) Math.min(contentLength, cap);
    } else if (contentLength >= 0) {
      initial = (int) Math.min(cap, Math.max(READ_CHUNK, Math.min(contentLength, 4L << 20) * 4));
    } else {
      initial = (int) Math.min(cap, INITIAL_BUFFER);
    }
    if (!ex.reserve(initial)) {
      throw new Overloaded();
    }
    InputStream in = source;
    if (gzip) {
      in = new GZIPInputStream(in, READ_CHUNK);
    }
    byte[] buf = new byte[initial];
    int len = 0;
    while (true) {
      if (len == buf.length) {
        int next = in.read();
        if (next < 0) {
          break;
        }
        if (len >= maxBodyBytes) {
          throw new BodyTooLarge();
        }
        int newCap = (int) Math.min(cap, Math.max(READ_CHUNK, (long) buf.length * 2));
        if (!ex.reserve(newCap - buf.length)) {
          throw new Overloaded();
        }
        buf = Arrays.copyOf(buf, newCap);
        buf[len++] = (byte) next;
        continue;
      }
      int r = in.read(buf, len, buf.length - len);
      if (r < 0) {
        break;
      }
      len += r;
    }
    if (len > maxBodyBytes) {
      throw new BodyTooLarge();
    }
    return new Body(buf, len);
  }

  /** TRUE for gzip, FALSE for identity (or none), null for anything else. */
  private static Boolean gzip(String contentEncoding) {
    if (contentEncoding == null) {
      return Boolean.FALSE;
    }
    String e = contentEncoding.trim().toLowerCase(Locale.ROOT);
    if (e.isEmpty() || e.equals("identity")) {
      return Boolean.FALSE;
    }
    if (e.equals("gzip") || e.equals("x-gzip")) {
      return Boolean.TRUE;
    }
    return null;
  }

  // ------------------------------------------------------------------ answers

  /** The request's payload encoding, from its media type (parameters ignored). */
  enum Encoding {
    PROTOBUF(OtlpHttpHandler.PROTOBUF),
    JSON(OtlpHttpHandler.JSON);

    final String mediaType;

    Encoding(String mediaType) {
      this.mediaType = mediaType;
    }

    /** The encoding for a Content-Type header value, or null if not supported. */
    static Encoding of(String contentType) {
      if (contentType == null) {
        return null;
      }
      int semi = contentType.indexOf(';');
      String type = (semi < 0 ? contentType : contentType.substring(0, semi)).trim().toLowerCase(Locale.ROOT);
      return switch (type) {
        case OtlpHttpHandler.PROTOBUF -> PROTOBUF;
        case OtlpHttpHandler.JSON -> JSON;
        default -> null;
      };
    }
  }

  private static final class Reply {
    final int status;
    final Encoding encoding;
    final Message body;
    HttpField[] headers = new HttpField[0];

    Reply(int status, Encoding encoding, Message body) {
      this.status = status;
      this.encoding = encoding == null ? Encoding.PROTOBUF : encoding;
      this.body = body;
    }

    Reply header(HttpHeader name, String value) {
      headers = Arrays.copyOf(headers, headers.length + 1);
      headers[headers.length - 1] = new HttpField(name, value);
      return this;
    }
  }

  private Reply error(ExportResult result, Encoding encoding) {
    Outcome o = result.outcome();
    int status;
    Code code;
    switch (o) {
      case INVALID -> { status = 400; code = Code.INVALID_ARGUMENT; }
      case METHOD_NOT_ALLOWED -> { status = 405; code = Code.UNIMPLEMENTED; }
      case TOO_LARGE -> { status = 413; code = Code.RESOURCE_EXHAUSTED; }
      case UNSUPPORTED_MEDIA_TYPE -> { status = 415; code = Code.INVALID_ARGUMENT; }
      case OVERLOADED, STORAGE_UNAVAILABLE -> { status = 503; code = Code.UNAVAILABLE; }
      default -> { status = 500; code = Code.INTERNAL; }
    }
    com.google.rpc.Status.Builder body =
        com.google.rpc.Status.newBuilder().setCode(code.getNumber()).setMessage(result.message());
    if (o.retryable()) {
      body.addDetails(retryInfo);
    }
    Reply reply = new Reply(status, encoding, body.build());
    if (o.retryable()) {
      reply.header(HttpHeader.RETRY_AFTER, retryAfterSeconds);
    }
    return reply;
  }

  private static void send(Request request, Response response, Callback callback, Reply reply) {
    byte[] bytes;
    try {
      bytes = reply.encoding == Encoding.JSON
          ? JSON_PRINTER.print(reply.body).getBytes(StandardCharsets.UTF_8)
          : reply.body.toByteArray();
    } catch (InvalidProtocolBufferException e) {
      // Only Any with an unregistered type can fail, and the registry holds every detail we add.
      throw new IllegalStateException(e);
    }
    response.setStatus(reply.status);
    HttpFields.Mutable headers = response.getHeaders();
    headers.put(HttpHeader.CONTENT_TYPE, reply.encoding.mediaType);
    for (HttpField f : reply.headers) {
      headers.put(f);
    }
    if (bytes.length > 0 && acceptsGzip(request.getHeaders())) {
      bytes = gzip(bytes);
      headers.put(HttpHeader.CONTENT_ENCODING, "gzip");
    }
    headers.put(HttpHeader.CONTENT_LENGTH, Long.toString(bytes.length));
    response.write(true, ByteBuffer.wrap(bytes), callback);
  }

  /** True if {@code Accept-Encoding} lists gzip with a non-zero quality. */
  static boolean acceptsGzip(HttpFields headers) {
    for (String value : headers.getValuesList(HttpHeader.ACCEPT_ENCODING)) {
      for (String part : value.split(",")) {
        String[] params = part.split(";");
        if (!params[0].trim().equalsIgnoreCase("gzip")) {
          continue;
        }
        boolean zero = false;
        for (int i = 1; i < params.length; i++) {
          String p = params[i].trim().toLowerCase(Locale.ROOT);
          if (p.startsWith("q=")) {
            try {
              zero = Double.parseDouble(p.substring(2).trim()) <= 0;
            } catch (NumberFormatException e) {
              zero = true;
            }
          }
        }
        if (!zero) {
          return true;
        }
      }
    }
    return false;
  }

  private static byte[] gzip(byte[] bytes) {
    ByteArrayOutputStream out = new ByteArrayOutputStream(bytes.length / 2 + 32);
    try (GZIPOutputStream gz = new GZIPOutputStream(out)) {
      gz.write(bytes);
    } catch (IOException e) {
      throw new IllegalStateException(e); // in memory: cannot happen
    }
    return out.toByteArray();
  }
}
