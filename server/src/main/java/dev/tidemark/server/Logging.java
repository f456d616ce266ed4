package dev.tidemark.server;

import java.io.PrintStream;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogManager;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/**
 * Logging for the {@code tidemark} command: {@code java.util.logging} (behind {@link
 * System.Logger}, gRPC, and Jetty through slf4j-jdk14), one line per record on standard output:
 * {@code 2026-11-22T03:10:00.123Z INFO  TidemarkServer: message}.
 *
 * <p>{@link ShutdownSafeLogManager} keeps the handlers in place while the shutdown hook runs: the
 * JDK's own {@code LogManager} resets (closes) every handler in a shutdown hook of its own, which
 * would swallow the log lines of the graceful stop.
 *
 * <p>A {@code java.util.logging.config.file} given by the operator replaces all of this.
 */
final class Logging {

  private static final DateTimeFormatter TIME =
      DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSS'Z'").withZone(ZoneOffset.UTC);

  private Logging() {}

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
    Logger.getLogger("io.grpc.netty.shaded").setLevel(Level.WARNING);
    Logger.getLogger("org.eclipse.jetty").setLevel(Level.WARNING);
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

  private static final class LineHandler extends Handler {
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
      StringBuilder sb = new StringBuilder(160);
      sb.append(TIME.format(Instant.ofEpochMilli(r.getMillis())))
          .append(' ')
          .append(level(r.getLevel()))
          .append(' ')
          .append(dot < 0 ? logger : logger.substring(dot + 1))
          .append(": ")
          .append(message(r));
      if (r.getThrown() != null) {
        sb.append(": ").append(r.getThrown());
        for (Throwable c = r.getThrown().getCause(); c != null; c = c.getCause()) {
          sb.append("; caused by ").append(c);
        }
      }
      synchronized (out) {
        out.println(sb);
        out.flush();
      }
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
