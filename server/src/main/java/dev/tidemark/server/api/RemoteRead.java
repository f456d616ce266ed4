package dev.tidemark.server.api;

import com.google.protobuf.ByteString;
import com.google.protobuf.CodedOutputStream;
import dev.tidemark.receiver.remotewrite.proto.Chunk;
import dev.tidemark.receiver.remotewrite.proto.ChunkedReadResponse;
import dev.tidemark.receiver.remotewrite.proto.ChunkedSeries;
import dev.tidemark.receiver.remotewrite.proto.Label;
import dev.tidemark.receiver.remotewrite.proto.Query;
import dev.tidemark.receiver.remotewrite.proto.QueryResult;
import dev.tidemark.receiver.remotewrite.proto.ReadRequest;
import dev.tidemark.receiver.remotewrite.proto.ReadResponse;
import dev.tidemark.receiver.remotewrite.proto.Sample;
import dev.tidemark.receiver.remotewrite.proto.TimeSeries;
import dev.tidemark.tsdb.model.Labels;
import dev.tidemark.tsdb.query.LabelMatcher;
import dev.tidemark.tsdb.query.Querier;
import dev.tidemark.tsdb.query.QueryAbortedException;
import dev.tidemark.tsdb.query.QueryContext;
import dev.tidemark.tsdb.query.SampleIterator;
import dev.tidemark.tsdb.query.Series;
import dev.tidemark.tsdb.query.SeriesSet;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.CRC32C;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;
import org.xerial.snappy.Snappy;

/**
 * Prometheus' remote read, {@code POST /api/v1/read}, so that a Prometheus with {@code remote_read}
 * uses Tidemark as its long-term store: a snappy-compressed {@code ReadRequest} in, for each query
 * the series matching its matchers with their samples in {@code [start, end]}; answered in the
 * first of the request's {@code accepted_response_types} that exists ({@code SAMPLES} when none is
 * named): {@code SAMPLES} as one snappy-compressed {@code ReadResponse}, {@code
 * STREAMED_XOR_CHUNKS} as frames of one series each (a uvarint length, the big-endian CRC-32C of
 * the message, a {@code ChunkedReadResponse}) with the samples in Prometheus' XOR chunks of at most
 * 120 samples ({@link XorChunk}). Samples are sent as stored, staleness markers included, as
 * Prometheus does. A request over {@code --query-max-samples} samples gets 400 with the limit
 * named; a bad body or matcher 400; the read stops at the query timeout (503). Errors are a line of
 * text.
 */
final class RemoteRead {
  static final String ENDPOINT = "read";

  /** Largest compressed request body. */
  static final int MAX_BODY_BYTES = 8 * 1024 * 1024;

  /** Samples in one XOR chunk, as Prometheus cuts its own. */
  static final int SAMPLES_PER_CHUNK = 120;

  static final String STREAMED_CONTENT_TYPE =
      "application/x-streamed-protobuf; proto=prometheus.ChunkedReadResponse";

  private final Querier querier;
  private final long maxSamples;
  private final long timeoutMillis;

  RemoteRead(Querier querier, QueryConfig config) {
    this.querier = querier;
    this.maxSamples = config.maxSamples();
    this.timeoutMillis = config.timeout().toMillis();
  }

  void handle(Request request, Response response, Callback callback) {
    if (!request.getMethod().equals("POST")) {
      response.getHeaders().put(HttpHeader.ALLOW, "POST");
      Federation.text(response, callback, 405, "Method Not Allowed");
      return;
    }
    long arrived = System.nanoTime();
    Content.Source.asByteArrayAsync(request, MAX_BODY_BYTES)
        .whenComplete(
            (body, failure) -> {
              if (failure != null) {
                Federation.text(
                    response,
                    callback,
                    400,
                    "cannot read the request body: " + failure.getMessage());
                return;
              }
              try {
                answer(body, arrived, response, callback);
              } catch (RuntimeException | Error e) {
                callback.failed(e);
              }
            });
  }

  private void answer(byte[] body, long arrived, Response response, Callback callback) {
    ReadRequest req;
    try {
      req = ReadRequest.parseFrom(Snappy.uncompress(body));
    } catch (IOException | RuntimeException e) {
      Federation.text(response, callback, 400, "invalid remote read request: " + e.getMessage());
      return;
    }
    List<List<LabelMatcher>> queries = new ArrayList<>();
    for (Query q : req.getQueriesList()) {
      try {
        queries.add(matchers(q));
      } catch (IllegalArgumentException e) {
        Federation.text(response, callback, 400, e.getMessage());
        return;
      }
    }
    QueryContext ctx = QueryContext.withDeadline(arrived + timeoutMillis * 1_000_000);
    boolean streamed = false;
    for (ReadRequest.ResponseType t : req.getAcceptedResponseTypesList()) {
      if (t == ReadRequest.ResponseType.STREAMED_XOR_CHUNKS
          || t == ReadRequest.ResponseType.SAMPLES) {
        streamed = t == ReadRequest.ResponseType.STREAMED_XOR_CHUNKS;
        break;
      }
    }
    try {
      if (streamed) {
        response.setStatus(200);
        response.getHeaders().put(HttpHeader.CONTENT_TYPE, STREAMED_CONTENT_TYPE);
        try (OutputStream out = Content.Sink.asOutputStream(response)) {
          stream(req, queries, ctx, out);
        }
        callback.succeeded();
      } else {
        byte[] bytes = Snappy.compress(samples(req, queries, ctx).toByteArray());
        response.setStatus(200);
        response.getHeaders().put(HttpHeader.CONTENT_TYPE, "application/x-protobuf");
        response.getHeaders().put(HttpHeader.CONTENT_ENCODING, "snappy");
        response.write(true, ByteBuffer.wrap(bytes), callback);
      }
    } catch (TooManySamples e) {
      Federation.text(response, callback, 400, e.getMessage());
    } catch (QueryAbortedException e) {
      Federation.text(response, callback, 503, "remote read timed out");
    } catch (IOException e) {
      callback.failed(e);
    }
  }

  /** The SAMPLES answer. */
  ReadResponse samples(ReadRequest req, List<List<LabelMatcher>> queries, QueryContext ctx)
      throws TooManySamples {
    ReadResponse.Builder answer = ReadResponse.newBuilder();
    long total = 0;
    SampleIterator it = null;
    for (int i = 0; i < queries.size(); i++) {
      Query q = req.getQueries(i);
      QueryResult.Builder result = QueryResult.newBuilder();
      SeriesSet set =
          querier.select(q.getStartTimestampMs(), q.getEndTimestampMs(), queries.get(i), ctx);
      while (set.next()) {
        Series s = set.at();
        TimeSeries.Builder ts = TimeSeries.newBuilder().addAllLabels(labels(s.labels()));
        it = s.iterator(it);
        if (it.seek(q.getStartTimestampMs())) {
          do {
            if (it.timestampMillis() > q.getEndTimestampMs()) {
              break;
            }
            if (++total > maxSamples) {
              throw new TooManySamples(maxSamples);
            }
            ts.addSamples(
                Sample.newBuilder()
                    .setTimestamp(it.timestampMillis())
                    .setValue(Double.longBitsToDouble(it.valueBits())));
          } while (it.next());
        }
        ctx.check();
        if (ts.getSamplesCount() > 0) {
          result.addTimeseries(ts);
        }
      }
      answer.addResults(result);
    }
    return answer.build();
  }

  /** The STREAMED_XOR_CHUNKS answer: one frame a series. */
  void stream(ReadRequest req, List<List<LabelMatcher>> queries, QueryContext ctx, OutputStream out)
      throws IOException, TooManySamples {
    long total = 0;
    SampleIterator it = null;
    XorChunk chunk = new XorChunk();
    CRC32C crc = new CRC32C();
    for (int i = 0; i < queries.size(); i++) {
      Query q = req.getQueries(i);
      SeriesSet set =
          querier.select(q.getStartTimestampMs(), q.getEndTimestampMs(), queries.get(i), ctx);
      while (set.next()) {
        Series s = set.at();
        ChunkedSeries.Builder series = ChunkedSeries.newBuilder().addAllLabels(labels(s.labels()));
        it = s.iterator(it);
        chunk.reset();
        if (it.seek(q.getStartTimestampMs())) {
          do {
            if (it.timestampMillis() > q.getEndTimestampMs()) {
              break;
            }
            if (++total > maxSamples) {
              throw new TooManySamples(maxSamples);
            }
            chunk.append(it.timestampMillis(), it.valueBits());
            if (chunk.count() == SAMPLES_PER_CHUNK) {
              series.addChunks(chunk(chunk));
              chunk.reset();
            }
          } while (it.next());
        }
        if (chunk.count() > 0) {
          series.addChunks(chunk(chunk));
        }
        ctx.check();
        if (series.getChunksCount() > 0) {
          frame(
              ChunkedReadResponse.newBuilder().addChunkedSeries(series).setQueryIndex(i).build(),
              crc,
              out);
        }
      }
    }
  }

  private static Chunk chunk(XorChunk c) {
    return Chunk.newBuilder()
        .setMinTimeMs(c.minTime())
        .setMaxTimeMs(c.maxTime())
        .setType(Chunk.Encoding.XOR)
        .setData(ByteString.copyFrom(c.bytes()))
        .build();
  }

  /** One frame: uvarint length, big-endian CRC-32C of the message, the message. */
  static void frame(ChunkedReadResponse message, CRC32C crc, OutputStream out) throws IOException {
    byte[] data = message.toByteArray();
    crc.reset();
    crc.update(data);
    int c = (int) crc.getValue();
    CodedOutputStream head = CodedOutputStream.newInstance(out, 16);
    head.writeUInt32NoTag(data.length);
    head.flush();
    out.write(new byte[] {(byte) (c >>> 24), (byte) (c >>> 16), (byte) (c >>> 8), (byte) c});
    out.write(data);
  }

  private static List<LabelMatcher> matchers(Query q) {
    List<LabelMatcher> out = new ArrayList<>(q.getMatchersCount());
    for (dev.tidemark.receiver.remotewrite.proto.LabelMatcher m : q.getMatchersList()) {
      LabelMatcher.Op op =
          switch (m.getType()) {
            case EQ -> LabelMatcher.Op.EQUAL;
            case NEQ -> LabelMatcher.Op.NOT_EQUAL;
            case RE -> LabelMatcher.Op.REGEX;
            case NRE -> LabelMatcher.Op.NOT_REGEX;
            default ->
                throw new IllegalArgumentException("unknown matcher type " + m.getTypeValue());
          };
      out.add(LabelMatcher.of(m.getName(), op, m.getValue())); // a bad regex throws, naming it
    }
    return out;
  }

  private static List<Label> labels(Labels l) {
    List<Label> out = new ArrayList<>(l.size());
    for (int i = 0; i < l.size(); i++) {
      out.add(Label.newBuilder().setName(l.name(i)).setValue(l.value(i)).build());
    }
    return out;
  }

  /** Over the sample limit. */
  static final class TooManySamples extends Exception {
    private static final long serialVersionUID = 1L;

    TooManySamples(long limit) {
      super("exceeded sample limit (" + limit + ")", null, false, false);
    }
  }
}
