package dev.tidemark.receiver.http;

import com.google.protobuf.Any;
import com.google.protobuf.ByteString;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import com.google.protobuf.util.JsonFormat;
import com.google.rpc.Code;
import com.google.rpc.RetryInfo;
import dev.tidemark.receiver.ErrorMessages;
import dev.tidemark.receiver.Outcome;
import dev.tidemark.receiver.ReceiverConfig;
import dev.tidemark.receiver.otlp.ExportResult;
import dev.tidemark.receiver.otlp.OtlpIngestor;
import dev.tidemark.receiver.otlp.OtlpIngestor.Exchange;
import io.opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Locale;
import java.util.Objects;
import java.util.zip.GZIPOutputStream;
import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpMethod;
import org.eclipse.jetty.io.Content;
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
 * read as UTF-8). Content encodings as {@link ContentCoding} lists them ({@code gzip}, {@code
 * deflate}, {@code zstd}, {@code snappy}, {@code x-snappy-framed}, {@code identity}). The body is
 * read without blocking and, if compressed, decoded by its {@link BodyDecoder} (gzip and deflate as
 * they arrive, the others once the body is whole) into a {@link BoundedBody}: segments allocated
 * only as bytes arrive, counted against the in-flight bytes limit as they are allocated and against
 * {@link ReceiverConfig#maxHttpBodyBytes()} after decompression. Decoding stops the moment the body
 * passes the limit, so one body never holds more than the limit plus one byte, compression bomb or
 * not. JSON follows OTLP/JSON: unknown fields ignored, 64-bit integers as strings or numbers, enums
 * as integers, {@code traceId}/{@code spanId} as hex (see {@link OtlpJson}).
 *
 * <p><b>Answers</b> (every error body is a {@code google.rpc.Status}; bodies use the request's
 * content type, or protobuf when that is not one of ours):
 *
 * <ul>
 *   <li>200 + {@code ExportMetricsServiceResponse}: full success (empty message, {@code {}} in
 *       JSON) or partial success ({@code partialSuccess.rejectedDataPoints}, a string in JSON, and
 *       {@code errorMessage});
 *   <li>400: a body read in full but undecodable (garbage, truncated protobuf, malformed JSON, a
 *       broken compressed stream);
 *   <li>405 + {@code Allow: POST}: any other method;
 *   <li>413: body over the limit after decompression (checked against {@code Content-Length} first
 *       when not compressed);
 *   <li>415: other content types; other content encodings (with {@code Accept-Encoding} listing the
 *       accepted ones, RFC 9110 §15.5.16);
 *   <li>503 + {@code Retry-After} (seconds, {@link ReceiverConfig#retryAfterSeconds()}) and a
 *       {@code RetryInfo} detail: in-flight limit reached (or out of memory), storage unavailable,
 *       or the body could not be read to its end ({@link Outcome#BODY_UNREADABLE}: the connection
 *       reset or closed mid-body, a client silent for the connection's idle timeout while sending
 *       it, an I/O failure; the body was never whole, so the client must send it again, and OTLP
 *       exporters do not retry a 400);
 *   <li>500: unexpected failure (not retried by clients).
 * </ul>
 *
 * <p>Every message is plain English: no Java class name (see {@link
 * dev.tidemark.receiver.ErrorMessages}). The response is gzipped only if the request sent {@code
 * Accept-Encoding: gzip} (and the body is not empty). A client answered early (405, 413, 415, 503)
 * gets the answer at once; after it, whatever is left of the request body is read and discarded,
 * also without blocking (at most {@link ReceiverConfig#maxHttpBodyBytes()} more bytes, outside
 * admission control), so that a client still sending reads the answer instead of a broken pipe; a
 * longer body makes Jetty close the connection after the answer ({@link BodyReader}).
 *
 * <p><b>Threading.</b> The handler declares {@code BLOCKING} invocation (the {@link
 * Handler.Abstract} default), so Jetty calls it on its thread pool, never on a selector thread.
 * {@link #handle} checks the request line and headers and reads the body with the non-blocking
 * {@link Content.Source} API: {@code request.read()} until it returns null, then {@code
 * request.demand(callback)} and return. No thread waits while the client is silent: a slow or
 * stalled client costs a socket and the bytes it has sent, not a thread, so any number of them
 * cannot delay a fast client. Jetty runs the demand callback on a pool thread when bytes arrive (a
 * plain {@code Runnable} is {@code BLOCKING} too). The thread that reads the last bytes decodes the
 * body and runs the export, and blocks until the accepted samples are durable; only then is the
 * answer sent. So the pool needs a thread per request being decoded or made durable, not per open
 * connection. A connection that stays silent for the connector's idle timeout while sending its
 * body gets a 503 with {@code Retry-After} and is closed (Jetty delivers the timeout to the pending
 * read); one reset or closed mid-body gets the same answer if it can still read it, and in every
 * case the bytes it held are released and the request is counted as {@code body_unreadable}.
 * Thread-safe; the steps of one request run one after the other, each on whichever pool thread
 * Jetty picks.
 */
public final class OtlpHttpHandler extends Handler.Abstract {
  public static final String DEFAULT_PATH = "/v1/metrics";
  public static final String PROTOBUF = "application/x-protobuf";
  public static final String JSON = "application/json";

  private static final JsonFormat.Parser JSON_PARSER = JsonFormat.parser().ignoringUnknownFields();
  private static final JsonFormat.Printer JSON_PRINTER =
      JsonFormat.printer()
          .omittingInsignificantWhitespace()
          .usingTypeRegistry(
              JsonFormat.TypeRegistry.newBuilder().add(RetryInfo.getDescriptor()).build());

  private final OtlpIngestor ingestor;
  private final String path;
  private final long maxBodyBytes;
  private final String retryAfterSeconds;
  private final Any retryInfo;

  public OtlpHttpHandler(OtlpIngestor ingestor) {
    this(ingestor, DEFAULT_PATH);
  }

  /**
   * @param path the exact request path to serve (in the handler's context), e.g. {@code
   *     /v1/metrics}
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
                .setRetryDelay(
                    com.google.protobuf.Duration.newBuilder()
                        .setSeconds(d.getSeconds())
                        .setNanos(d.getNano()))
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
    new Call(request, response, callback).start();
    return true;
  }

  /**
   * One request: header checks, then the body read by its {@link BodyReader} (non-blocking), then
   * decoding and the export on the thread that read the last bytes, then the answer. Its steps run
   * one after the other, never at once (Jetty calls a demand callback only after the previous read
   * returned null); Jetty's demand hand-off orders their memory effects.
   */
  private final class Call implements BodyReader.Ends<Reply> {
    private final Request request;
    private final Response response;
    private final Encoding encoding;
    private final Exchange ex;
    private final BodyReader<Reply> reader;
    private ContentCoding coding = ContentCoding.IDENTITY;

    Call(Request request, Response response, Callback callback) {
      this.request = request;
      this.response = response;
      this.encoding = Encoding.of(request.getHeaders().get(HttpHeader.CONTENT_TYPE));
      this.ex = ingestor.begin(OtlpIngestor.Protocol.HTTP);
      this.reader = new BodyReader<>(request, callback, maxBodyBytes, this);
    }

    void start() {
      Reply reply;
      try {
        reply = checkHeaders();
      } catch (RuntimeException | Error e) {
        reply = failed(e);
      }
      if (reply == null) {
        reader.read(coding, ex::reserve);
      } else {
        reader.answer(reply);
      }
    }

    /** A refusal decided from the request line and headers alone, or null to read the body. */
    private Reply checkHeaders() {
      if (!HttpMethod.POST.is(request.getMethod())) {
        return error(
                ex.fail(
                    Outcome.METHOD_NOT_ALLOWED,
                    "method " + request.getMethod() + " not allowed; use POST"),
                encoding)
            .header(HttpHeader.ALLOW, "POST");
      }
      if (encoding == null) {
        String type = request.getHeaders().get(HttpHeader.CONTENT_TYPE);
        return error(
            ex.fail(
                Outcome.UNSUPPORTED_MEDIA_TYPE,
                "unsupported content type "
                    + (type == null ? "(none)" : "\"" + type + "\"")
                    + "; use "
                    + PROTOBUF
                    + " or "
                    + JSON),
            null);
      }
      ContentCoding c = ContentCoding.of(request.getHeaders().get(HttpHeader.CONTENT_ENCODING));
      if (c == null) {
        return error(
                ex.fail(
                    Outcome.UNSUPPORTED_MEDIA_TYPE,
                    "unsupported content encoding \""
                        + request.getHeaders().get(HttpHeader.CONTENT_ENCODING)
                        + "\"; use one of "
                        + ContentCoding.ACCEPTED),
                encoding)
            .header(HttpHeader.ACCEPT_ENCODING, ContentCoding.ACCEPTED);
      }
      coding = c;
      return null;
    }

    @Override
    public Reply tooLarge(long declaredLength) {
      return OtlpHttpHandler.this.tooLarge(ex, encoding, declaredLength);
    }

    @Override
    public Reply overloaded() {
      return error(ex.overloaded(), encoding);
    }

    @Override
    public Reply invalidBody(ContentCoding c, CorruptBodyException e) {
      return error(
          ex.fail(Outcome.INVALID, "invalid " + c.label + " body: " + e.getMessage()), encoding);
    }

    /**
     * The answer when the body could not be read to its end: {@link Outcome#BODY_UNREADABLE}, 503
     * with {@code Retry-After}. The failure is the connection's or ours (reset, closed before the
     * body was complete, silent for the idle timeout, an I/O failure): the body was never whole,
     * nothing was written, and the same request can pass when sent again, while OTLP exporters drop
     * a request answered 400. (Jetty reports a chunked body whose framing the client broke as the
     * same early end of stream, so it is answered 503 too.)
     */
    @Override
    public Reply unreadable(String why) {
      return error(
          ex.fail(Outcome.BODY_UNREADABLE, "cannot read the request body: " + why + "; retry"),
          encoding);
    }

    @Override
    public Reply failed(Throwable t) {
      return t instanceof OutOfMemoryError oom
          ? error(ex.outOfMemory(oom), encoding)
          : error(ex.internalError(t), encoding);
    }

    /** Decodes the complete body and exports it; returns once the accepted samples are durable. */
    @Override
    public Reply complete(BoundedBody body) {
      long length = body.length();
      ByteString bytes = body.bytes();
      if (encoding == Encoding.PROTOBUF) {
        // Decoded in place, straight into the translator (one copy of the body into one array).
        byte[] raw = bytes.toByteArray();
        bytes = null;
        ExportResult result;
        try {
          result = ex.export(raw);
        } catch (InvalidProtocolBufferException e) {
          return error(
              ex.fail(
                  Outcome.INVALID,
                  "cannot decode protobuf ExportMetricsServiceRequest ("
                      + length
                      + " bytes): "
                      + ErrorMessages.describe(e, "malformed")),
              encoding);
        }
        return result.response() != null
            ? new Reply(200, encoding, result.response())
            : error(result, encoding);
      }
      ExportMetricsServiceRequest otlp;
      try {
        otlp = decode(encoding, bytes);
      } catch (InvalidProtocolBufferException | RuntimeException | StackOverflowError e) {
        String why =
            e instanceof StackOverflowError
                ? "nested too deeply"
                : ErrorMessages.describe(e, "malformed");
        return error(
            ex.fail(
                Outcome.INVALID,
                "cannot decode "
                    + (encoding == Encoding.JSON ? "JSON" : "protobuf")
                    + " ExportMetricsServiceRequest ("
                    + length
                    + " bytes): "
                    + why),
            encoding);
      }
      bytes = null;
      ExportResult result = ex.export(otlp);
      if (result.response() != null) {
        return new Reply(200, encoding, result.response());
      }
      return error(result, encoding);
    }

    /** Closes the exchange (releasing its in-flight bytes), then writes {@code reply}. */
    @Override
    public void send(Reply reply, Callback done) {
      ex.close();
      write(request, response, done, reply);
    }
  }

  private Reply tooLarge(Exchange ex, Encoding encoding, long contentLength) {
    String size =
        contentLength >= 0 ? contentLength + " bytes" : "more than " + maxBodyBytes + " bytes";
    return error(
        ex.fail(
            Outcome.TOO_LARGE,
            "request body of "
                + size
                + " (after decompression) exceeds the limit of "
                + maxBodyBytes
                + " bytes"),
        encoding);
  }

  private static ExportMetricsServiceRequest decode(Encoding encoding, ByteString body)
      throws InvalidProtocolBufferException {
    if (encoding == Encoding.PROTOBUF) {
      return ExportMetricsServiceRequest.parseFrom(body);
    }
    return parseJson(body.toStringUtf8());
  }

  /**
   * Parses OTLP/JSON: unknown fields ignored, hex {@code traceId}/{@code spanId}, the sign of
   * {@code -0.0} kept (see {@link OtlpJson}).
   */
  static ExportMetricsServiceRequest parseJson(String json) throws InvalidProtocolBufferException {
    ExportMetricsServiceRequest.Builder builder = ExportMetricsServiceRequest.newBuilder();
    JSON_PARSER.merge(OtlpJson.hexIdsToBase64(json), builder);
    OtlpJson.restoreNegativeZeros(builder, OtlpJson.negativeZeros(json));
    return builder.build();
  }

  /** TRUE for gzip, FALSE for identity (or none), null for anything else. */
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
      String type =
          (semi < 0 ? contentType : contentType.substring(0, semi)).trim().toLowerCase(Locale.ROOT);
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
      case INVALID -> {
        status = 400;
        code = Code.INVALID_ARGUMENT;
      }
      case METHOD_NOT_ALLOWED -> {
        status = 405;
        code = Code.UNIMPLEMENTED;
      }
      case TOO_LARGE -> {
        status = 413;
        code = Code.RESOURCE_EXHAUSTED;
      }
      case UNSUPPORTED_MEDIA_TYPE -> {
        status = 415;
        code = Code.INVALID_ARGUMENT;
      }
      case OVERLOADED, STORAGE_UNAVAILABLE, BODY_UNREADABLE -> {
        status = 503;
        code = Code.UNAVAILABLE;
      }
      default -> {
        status = 500;
        code = Code.INTERNAL;
      }
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

  private static void write(Request request, Response response, Callback callback, Reply reply) {
    byte[] bytes;
    try {
      bytes =
          reply.encoding == Encoding.JSON
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
