package dev.tidemark.server.api;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Clock;
import java.time.Instant;

/**
 * The query log ({@code --query-log-file}), as Prometheus writes its {@code query_log_file}: one
 * JSON object a line for every PromQL query evaluated, with the client's request ({@code
 * httpRequest}: {@code clientIP}, {@code method}, {@code path}), the query's parameters ({@code
 * params}: {@code query}, {@code start} and {@code end} in RFC 3339, {@code step} in seconds, 0 for
 * an instant query), its timings and peak samples ({@code stats}) and the time it was logged
 * ({@code ts}). Appended to the file and flushed line by line; thread-safe.
 */
public final class QueryLog implements AutoCloseable {
  private static final JsonFactory JSON = new JsonFactory();

  private final Writer out;
  private final Clock clock;

  private QueryLog(Writer out, Clock clock) {
    this.out = out;
    this.clock = clock;
  }

  /** Opens {@code file} for appending (creating it and its folder). */
  public static QueryLog open(Path file, Clock clock) throws IOException {
    Path parent = file.toAbsolutePath().getParent();
    if (parent != null) {
      Files.createDirectories(parent);
    }
    return new QueryLog(
        new BufferedWriter(
            Files.newBufferedWriter(
                file,
                StandardCharsets.UTF_8,
                StandardOpenOption.CREATE,
                StandardOpenOption.APPEND,
                StandardOpenOption.WRITE)),
        clock);
  }

  /** Logs one evaluated query. */
  void log(
      QueryEndpoints.Plan plan,
      QueryEndpoints.RequestInfo request,
      long queuedNanos,
      long evalNanos,
      long peakSamples) {
    StringBuilder line = new StringBuilder(256);
    try (JsonGenerator g = JSON.createGenerator(new StringBuilderWriter(line))) {
      g.writeStartObject();
      g.writeObjectFieldStart("httpRequest");
      g.writeStringField("clientIP", request.clientIp());
      g.writeStringField("method", request.method());
      g.writeStringField("path", request.path());
      g.writeEndObject();
      g.writeObjectFieldStart("params");
      g.writeStringField("end", rfc3339(plan.end()));
      g.writeStringField("query", plan.query());
      g.writeStringField("start", rfc3339(plan.start()));
      g.writeNumberField("step", plan.range() ? plan.step() / 1000 : 0);
      g.writeEndObject();
      g.writeObjectFieldStart("stats");
      g.writeObjectFieldStart("timings");
      g.writeNumberField("evalTotalTime", evalNanos / 1e9);
      g.writeNumberField("resultSortTime", 0.0);
      g.writeNumberField("queryPreparationTime", 0.0);
      g.writeNumberField("innerEvalTime", evalNanos / 1e9);
      g.writeNumberField("execQueueTime", queuedNanos / 1e9);
      g.writeNumberField("execTotalTime", (queuedNanos + evalNanos) / 1e9);
      g.writeEndObject();
      g.writeObjectFieldStart("samples");
      g.writeNumberField("peakSamples", peakSamples);
      g.writeEndObject();
      g.writeEndObject();
      g.writeStringField("ts", Instant.ofEpochMilli(clock.millis()).toString());
      g.writeEndObject();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    line.append('\n');
    synchronized (this) {
      try {
        out.write(line.toString());
        out.flush();
      } catch (IOException e) {
        throw new UncheckedIOException("cannot write the query log", e);
      }
    }
  }

  /** Go's RFC 3339 with the fraction's trailing zeros dropped, as its JSON writes a time. */
  private static String rfc3339(long millis) {
    return Instant.ofEpochMilli(millis).toString();
  }

  @Override
  public synchronized void close() throws IOException {
    out.close();
  }

  /** A writer into a StringBuilder (Jackson writes its generator's output here). */
  private static final class StringBuilderWriter extends Writer {
    private final StringBuilder b;

    StringBuilderWriter(StringBuilder b) {
      this.b = b;
    }

    @Override
    public void write(char[] cbuf, int off, int len) {
      b.append(cbuf, off, len);
    }

    @Override
    public void flush() {}

    @Override
    public void close() {}
  }
}
