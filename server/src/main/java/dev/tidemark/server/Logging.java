package dev.tidemark.server;

import dev.tidemark.receiver.ErrorMessages;
import dev.tidemark.receiver.RateLimitedLogger;
import java.io.PrintStream;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.logging.ConsoleHandler;
import java.util.logging.Filter;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogManager;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/**
 * Logging for the {@code tidemark} command: {@code java.util.logging} (behind {@link
 * System.Logger}, gRPC, and Jetty through slf4j-jdk14), one line per record on standard output:
 * {@code 2026-11-22T03:10:00.123Z INFO TidemarkServer: message}.
 *
 * <p>{@link ShutdownSafeLogManager} keeps the handlers in place while the shutdown hook runs: the
 * JDK's own {@code LogManager} resets (closes) every handler in a shutdown hook of its own, which
 * would swallow the log lines of the graceful stop.
 *
 * <p><b>Levels.</b> Netty (gRPC) and Jetty log at WARNING and above only. JUL holds loggers weakly:
 * a level set on a logger nobody references is lost when the logger is collected (the children then
 * inherit the root's INFO), so the configured loggers are kept in {@link #KEPT}.
 *
 * <p><b>Bad gRPC connections.</b> grpc-java logs every connection that fails below the call layer
 * (a client speaking HTTP/1.1 or sending random bytes to a gRPC port) on {@value
 * #GRPC_CONNECTIONS_LOGGER} at INFO, with a hex dump of the bytes received. Those records are never
 * printed; instead at most one line per {@link RateLimitedLogger#DEFAULT_INTERVAL_NANOS} says that
 * such connections were closed, with the first reason (hex dump and class names cut) and the number
 * suppressed since the last line: a flood of garbage connections cannot flood the log.
 *
 * <p>A {@code java.util.logging.config.file} given by the operator replaces all of this.
 */
final class Logging {

  /**
   * grpc-java's per-connection failure logger (NettyServerTransport), as shaded in
   * grpc-netty-shaded.
   */
  static final String GRPC_CONNECTIONS_LOGGER =
      "io.grpc.netty.shaded.io.grpc.netty.NettyServerTransport.connections";

  /** Strong references to every logger configured here (see the class comment). */
  private static final List<Logger> KEPT = new ArrayList<>();

  private static final DateTimeFormatter TIME =
      DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSS'Z'").withZone(ZoneOffset.UTC);

  private Logging() {}

  /** How each record is written ({@code log-format}). */
  enum LogFormat {
    /** {@code 2026-11-22T03:10:00.123Z INFO TidemarkServer: message}. */
    TEXT,
    /**
     * One JSON object a line, as Prometheus' {@code --log.format=json}: {@code
     * {"time":"2026-11-22T03:10:00.123Z","level":"INFO","logger":"TidemarkServer","msg":"..."}},
     * with {@code "err"} when the record carries an exception.
     */
    JSON
  }

  private static volatile LogFormat format = LogFormat.TEXT;

  /** Writes every record in {@code f} from now on (the server's {@code log-format}). */
  static void format(LogFormat f) {
    format = f;
  }

  /** Must run before anything touches {@code java.util.logging}: first thing in {@code main}. */
  static void install() {
    if (System.getProperty("java.util.logging.config.file") != null
        || System.getProperty("java.util.logging.config.class") != null) {
      return;
    }
    if (System.getProperty("java.util.logging.manager") == null) {
      System.setProperty("java.util.logging.manager", ShutdownSafeLogManager.class.getName());
    }
    Logger root = LogManager.getLogManager().getLogger("");
    for (Handler h : root.getHandlers()) {
      root.removeHandler(h);
    }
    root.addHandler(new LineHandler(System.out));
    root.setLevel(Level.INFO);
    // Netty and Jetty are chatty at INFO about their own start and stop.
    keep("io.grpc.netty.shaded").setLevel(Level.WARNING);
    keep("org.eclipse.jetty").setLevel(Level.WARNING);
    Logger connections = keep(GRPC_CONNECTIONS_LOGGER);
    connections.setLevel(Level.INFO);
    connections.setFilter(
        new BadConnectionFilter(new RateLimitedLogger(System.getLogger(BAD_CONNECTIONS_LOGGER))));
  }

  /**
   * For a one-shot command ({@code tidemark admin ...}, {@code tidemark verify ...}): log records
   * go to standard error, warnings only, because standard output is the command's answer (a table,
   * JSON, a report) and a script may parse it. {@link Main} calls this for every subcommand but
   * {@code serve}, so the commands themselves need not know how the process logs.
   */
  static void quietForOneShotCommand() {
    Logger root = Logger.getLogger("");
    for (Handler h : root.getHandlers()) {
      root.removeHandler(h);
    }
    ConsoleHandler stderr = new ConsoleHandler();
    stderr.setLevel(Level.WARNING);
    root.addHandler(stderr);
    root.setLevel(Level.WARNING);
  }

  /** The logger of the rate-limited lines about bad gRPC connections. */
  static final String BAD_CONNECTIONS_LOGGER = "dev.tidemark.server.GrpcConnections";

  private static Logger keep(String name) {
    Logger logger = Logger.getLogger(name);
    synchronized (KEPT) {
      KEPT.add(logger);
    }
    return logger;
  }

  /**
   * Drops grpc-java's per-connection failure records (with their hex dumps) and says, through a
   * rate limit, that bad connections were closed.
   */
  static final class BadConnectionFilter implements Filter {
    private static final int MAX_REASON_CHARS = 120;
    private final RateLimitedLogger log;

    BadConnectionFilter(RateLimitedLogger log) {
      this.log = log;
    }

    @Override
    public boolean isLoggable(LogRecord r) {
      if (r.getLevel().intValue() >= Level.INFO.intValue()) {
        log.log(
            "bad_grpc_connection",
            System.Logger.Level.WARNING,
            () ->
                "closed a connection to a gRPC port that did not speak gRPC over HTTP/2: "
                    + reason(r));
      }
      return false;
    }

    /**
     * The record's cause in a few plain words: no class name, no hex dump, no control characters.
     */
    static String reason(LogRecord r) {
      Throwable t = r.getThrown();
      String m = t != null ? t.getMessage() : r.getMessage();
      if (m == null) {
        return "protocol error";
      }
      int hex = m.indexOf("Hex dump");
      if (hex >= 0) {
        m = m.substring(0, hex);
      }
      m = ErrorMessages.clean(m, "protocol error").replaceAll("[\\p{Cntrl}]", " ").strip();
      if (m.endsWith(".")) {
        m = m.substring(0, m.length() - 1);
      }
      return m.length() > MAX_REASON_CHARS ? m.substring(0, MAX_REASON_CHARS) + "..." : m;
    }
  }

  /** Flushes standard output and error (before the process halts). */
  static void flush() {
    System.out.flush();
    System.err.flush();
  }

  /** Ignores the reset of the JDK's shutdown hook, so the graceful stop can still log. */
  public static final class ShutdownSafeLogManager extends LogManager {
    @Override
    public void reset() {
      if (Thread.currentThread().getClass().getName().startsWith(LogManager.class.getName())) {
        return; // LogManager$Cleaner: the process is ending; handlers flush on every record
      }
      super.reset();
    }
  }

  private static final com.fasterxml.jackson.core.io.JsonStringEncoder JSON_TEXT =
      com.fasterxml.jackson.core.io.JsonStringEncoder.getInstance();

  static final class LineHandler extends Handler {
    private final PrintStream out;

    LineHandler(PrintStream out) {
      this.out = out;
    }

    @Override
    public void publish(LogRecord r) {
      if (!isLoggable(r)) {
        return;
      }
      String logger = r.getLoggerName() == null ? "" : r.getLoggerName();
      int dot = logger.lastIndexOf('.');
      String name = dot < 0 ? logger : logger.substring(dot + 1);
      String time = TIME.format(Instant.ofEpochMilli(r.getMillis()));
      String err = null;
      if (r.getThrown() != null) {
        StringBuilder e = new StringBuilder().append(r.getThrown());
        for (Throwable c = r.getThrown().getCause(); c != null; c = c.getCause()) {
          e.append("; caused by ").append(c);
        }
        err = e.toString();
      }
      String line = format == LogFormat.JSON ? json(time, r, name, err) : text(time, r, name, err);
      synchronized (out) {
        out.println(line);
        out.flush();
      }
    }

    private static String text(String time, LogRecord r, String name, String err) {
      StringBuilder sb = new StringBuilder(160);
      sb.append(time)
          .append(' ')
          .append(level(r.getLevel()))
          .append(' ')
          .append(name)
          .append(": ")
          .append(message(r));
      if (err != null) {
        sb.append(": ").append(err);
      }
      return sb.toString();
    }

    static String json(String time, LogRecord r, String name, String err) {
      StringBuilder sb = new StringBuilder(200);
      sb.append("{\"time\":\"").append(time);
      sb.append("\",\"level\":\"").append(level(r.getLevel()).strip());
      sb.append("\",\"logger\":\"").append(JSON_TEXT.quoteAsString(name));
      sb.append("\",\"msg\":\"").append(JSON_TEXT.quoteAsString(message(r)));
      if (err != null) {
        sb.append("\",\"err\":\"").append(JSON_TEXT.quoteAsString(err));
      }
      return sb.append("\"}").toString();
    }

    private static String level(Level l) {
      if (l.intValue() >= Level.SEVERE.intValue()) {
        return "ERROR";
      }
      if (l.intValue() >= Level.WARNING.intValue()) {
        return "WARN ";
      }
      if (l.intValue() >= Level.INFO.intValue()) {
        return "INFO ";
      }
      return "DEBUG";
    }

    private static String message(LogRecord r) {
      String m = r.getMessage();
      Object[] params = r.getParameters();
      if (m == null) {
        return "";
      }
      if (params == null || params.length == 0 || !m.contains("{")) {
        return m;
      }
      try {
        return java.text.MessageFormat.format(m, params);
      } catch (IllegalArgumentException e) {
        return m;
      }
    }

    @Override
    public void flush() {
      out.flush();
    }

    @Override
    public void close() {
      out.flush();
    }
  }
}
